//! The documented mismatches (docs/conformance.md, "Mismatches found"): each
//! is a model bug or a difference the model owner has to decide on. A
//! mismatch is classified as one of them only when its shape is exactly the
//! documented one (node's observations are the model's plus precisely the
//! documented extras), so that a new kind of mismatch is never hidden.

use super::{Mismatch, NodeObservation};
use model::eager::resources::NativeSlot;
use model::vocab::{HookEvent, Observation, Op, ResourceView, Runtime};
use model::Eager;

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

/// Every documented mismatch.
pub const KNOWN: &[Known] = &[
    Known {
        id: "M2",
        title: "a handled uncaught exception in the main script does not mark the main script's scope failed: its close still runs the ticks",
        diverges: true,
    },
    Known {
        id: "M3",
        title: "executionAsyncResource() reads a native stack entry whose scope has returned (a wrong pop left it): Node reads a dangling Local, the model the object",
        diverges: false,
    },
];

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
/// instance of, if any: `"M2"` or `"M3"`. (M1, found first, is fixed in the
/// model: docs/conformance.md keeps its record.)
pub fn classify(ops: &[Op], m: &Mismatch) -> Option<&'static str> {
    let group = ops.get(m.ops.clone())?;
    if let [Op::ExecutionAsyncResource] = group {
        let model_saw_object = matches!(
            m.model.as_slice(),
            [Observation::ExecutionAsyncResource(ResourceView::Resource(
                _
            ))]
        );
        if model_saw_object && m.node.len() == 1 && dangling_native_read(ops, m.ops.start) {
            return Some("M3");
        }
        return None;
    }
    let handled = group
        .iter()
        .any(|op| matches!(op, Op::UncaughtException { handled: true }));
    if !handled {
        return None;
    }
    // M2: the group ends with the close of the main script's scope right
    // after an uncaught exception thrown in it; node shows the model's
    // observations, then the ticks the model skipped.
    let model: Vec<NodeObservation> = m
        .model
        .iter()
        .cloned()
        .map(NodeObservation::Known)
        .collect();
    let node = m.node.as_slice();
    let ends_main = matches!(
        group,
        [
            ..,
            Op::UncaughtException { handled: true },
            Op::CloseScope { .. }
        ]
    ) && main_is_innermost_at(ops, m.ops.end - 2);
    if ends_main
        && node.len() > model.len()
        && node.starts_with(&model)
        && node[model.len()..].iter().all(is_tick_processing)
    {
        return Some("M2");
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

/// Whether `executionAsyncResource()` at op `index` reads the native resource
/// of a stack entry whose native scope has already returned: replay the
/// model, remembering which open op pushed each native entry.
fn dangling_native_read(ops: &[Op], index: usize) -> bool {
    let mut env = Eager::new();
    // The op index of the native scope that pushed at each stack offset, and
    // whether it has closed; the open native scopes, innermost last.
    let mut pushed_by: Vec<Option<(usize, bool)>> = vec![None];
    let mut open: Vec<(usize, usize)> = Vec::new();
    for (i, op) in ops.iter().enumerate().take(index) {
        let offset = env.async_hooks.fields.k_stack_length as usize;
        let closes_native = matches!(op, Op::CloseScope { .. });
        if env.apply(op).is_err() {
            return false;
        }
        match op {
            Op::OpenScope { .. } => {
                if pushed_by.len() <= offset {
                    pushed_by.resize(offset + 1, None);
                }
                pushed_by[offset] = Some((i, false));
                open.push((i, offset));
            }
            _ if closes_native => {
                if let Some((_, at)) = open.pop() {
                    if let Some(Some(entry)) = pushed_by.get_mut(at) {
                        entry.1 = true;
                    }
                }
            }
            _ => {}
        }
    }
    let length = env.async_hooks.fields.k_stack_length as usize;
    if length == 0 {
        return false;
    }
    let top = length - 1;
    if env
        .async_hooks
        .js_execution_async_resources
        .get(top)
        .is_some()
    {
        return false;
    }
    let native = matches!(
        env.async_hooks.native_execution_async_resources.get(top),
        Some(Some(NativeSlot::Local(ResourceView::Resource(_))))
    );
    native && matches!(pushed_by.get(top), Some(Some((_, true))))
}
