//! The documented mismatches (docs/conformance.md, "Mismatches found"): each
//! is a model bug or a difference the model owner has to decide on. A
//! mismatch is classified as one of them only when its shape is exactly the
//! documented one (node's observations are the model's plus precisely the
//! documented extras), so that a new kind of mismatch is never hidden.

use super::Mismatch;
use model::vocab::Op;

/// A documented mismatch: its id (as in docs/conformance.md) and title.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// `M1`, `M2`, ...
    pub id: &'static str,
    /// One line.
    pub title: &'static str,
    /// After it the two sides' states differ (not just what one op showed),
    /// so later differences are its consequences and are not looked for.
    pub diverges: bool,
}

/// Whether the documented mismatch `id` leaves the two sides in different
/// states (see [`Known::diverges`]).
pub fn diverges(id: &str) -> bool {
    KNOWN.iter().any(|k| k.id == id && k.diverges)
}

/// Every documented mismatch: none at present. M3 (a read through a
/// dangling native entry) is now an unspecified answer of the model, which
/// admits anything node does there, and N1 (Node 26's CHECK on an empty
/// Global) a CHECK the model knows; docs/conformance.md keeps their record,
/// with M1 and M2, which were model bugs.
pub const KNOWN: &[Known] = &[];

/// The documented mismatch `m` (a difference found in the trace `ops`) is an
/// instance of, if any (none at present: see [`KNOWN`]).
pub fn classify(ops: &[Op], m: &Mismatch) -> Option<&'static str> {
    let _ = (ops, m);
    None
}
