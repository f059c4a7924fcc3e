//! The documented mismatches (docs/conformance.md, "Mismatches found"): each
//! is a model bug or a difference the model owner has to decide on. A
//! mismatch is classified as one of them only when its shape is exactly the
//! documented one, so that a new kind of mismatch is never hidden.

use super::Mismatch;
use model::vocab::Op;

/// A documented mismatch: its id (as in docs/conformance.md) and title.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// `M1`, `M2`, ...
    pub id: &'static str,
    /// One line.
    pub title: &'static str,
}

/// Every documented mismatch.
pub const KNOWN: &[Known] = &[];

/// The documented mismatch `m` is an instance of, if any.
pub fn classify(_ops: &[Op], _m: &Mismatch) -> Option<&'static str> {
    None
}
