//! The documented mismatches (docs/conformance.md, "Mismatches found"): each
//! is a model bug or a difference the model owner has to decide on. A
//! mismatch is classified as one of them only when its shape is exactly the
//! documented one (node's observations are the model's plus precisely the
//! documented extras), so that a new kind of mismatch is never hidden.

use super::{Mismatch, NodeObservation};
use model::vocab::{HookEvent, Observation, Op};

/// A documented mismatch: its id (as in docs/conformance.md) and title.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// `M1`, `M2`, ...
    pub id: &'static str,
    /// One line.
    pub title: &'static str,
}

/// Every documented mismatch.
pub const KNOWN: &[Known] = &[
    Known {
        id: "M1",
        title: "a handled uncaught exception schedules an Immediate (setImmediate(noop)): init hooks see it, the model does not",
    },
    Known {
        id: "M2",
        title: "a handled uncaught exception in the main script does not mark the main script's scope failed: its close still runs the ticks",
    },
];

/// Node's text for the `init` of the Immediate that
/// `onGlobalUncaughtException` schedules (see `observe.rs`).
fn is_immediate_init(o: &NodeObservation) -> bool {
    match o {
        NodeObservation::Other(s) => {
            s.starts_with('H')
                && s.contains(".init(")
                && s.contains(", Immediate, ..) with resource other:object:Immediate in the hook")
        }
        NodeObservation::Known(_) => false,
    }
}

/// What processing ticks shows: the ticks and their before/after hooks.
fn is_tick_processing(o: &NodeObservation) -> bool {
    matches!(
        o,
        NodeObservation::Known(Observation::Tick { .. })
            | NodeObservation::Known(Observation::Hook {
                event: HookEvent::Before(_) | HookEvent::After(_),
                ..
            })
    )
}

/// The documented mismatch `m` (a difference found in the trace `ops`) is an
/// instance of, if any: `"M1"`, `"M2"`, or `"M1+M2"` when one group shows both.
pub fn classify(ops: &[Op], m: &Mismatch) -> Option<&'static str> {
    let group = ops.get(m.ops.clone())?;
    let handled = group
        .iter()
        .any(|op| matches!(op, Op::UncaughtException { handled: true }));
    if !handled {
        return None;
    }
    // M1: strip the Immediate inits (they come first: the handler schedules
    // the Immediate before its emitAfter loop).
    let first_other = m
        .node
        .iter()
        .position(|o| !is_immediate_init(o))
        .unwrap_or(m.node.len());
    let m1 = first_other > 0;
    let rest = &m.node[first_other..];
    let model: Vec<NodeObservation> = m
        .model
        .iter()
        .cloned()
        .map(NodeObservation::Known)
        .collect();
    if rest == model.as_slice() {
        return m1.then_some("M1");
    }
    // M2: the group ends with the close of the main script's scope right
    // after an uncaught exception thrown in it; node shows the model's
    // observations, then the ticks the model skipped.
    let ends_main = m.ops.end == ops.len()
        && matches!(group.last(), Some(Op::CloseScope { .. }))
        && matches!(
            group,
            [
                ..,
                Op::UncaughtException { handled: true },
                Op::CloseScope { .. }
            ]
        )
        && main_is_innermost_at(ops, m.ops.end - 2);
    if ends_main
        && rest.len() > model.len()
        && rest.starts_with(&model)
        && rest[model.len()..].iter().all(is_tick_processing)
    {
        return Some(if m1 { "M1+M2" } else { "M2" });
    }
    None
}

/// Whether only the main script's scope is open before op `index`.
fn main_is_innermost_at(ops: &[Op], index: usize) -> bool {
    let mut depth = 0usize;
    for op in ops.iter().take(index) {
        if op.opens_frame() {
            depth += 1;
        } else if op.closes_frame() {
            depth = depth.saturating_sub(1);
        }
    }
    depth == 0
}
