//! The documented mismatches (docs/conformance.md, "Mismatches found"): each
//! is a model bug or a difference the model owner has to decide on. A
//! mismatch is classified as one of them only when its shape is exactly the
//! documented one (node's observations are the model's plus precisely the
//! documented extras), so that a new kind of mismatch is never hidden.

use super::{Mismatch, NodeObservation};
use model::env::resources::NativeSlot;
use model::vocab::{Holder, NativeResource, Observation, Op, ResourceView, Runtime};
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

/// Every documented mismatch. `M*` are differences with the v20 binary
/// (and, where docs/conformance.md says so, with Node 26 too); `N*` are
/// documented Node 26 differences.
pub const KNOWN: &[Known] = &[
    Known {
        id: "M3",
        title: "executionAsyncResource() reads a native stack entry whose scope has returned (a wrong pop left it): Node reads a dangling Local (v20: garbage; v26: garbage or, often, a crash), the model the object",
        diverges: false,
    },
    Known {
        id: "N1",
        title: "Node 26: a callback scope opened on a Global<Object> that is already empty fails CHECK_IMPLIES(ptr != nullptr, !ptr->IsEmpty()) in push_async_context (src/env.cc:136) and aborts; the model opens it and reads undefined",
        diverges: true,
    },
];

/// The CHECK Node 26 fails on an empty Global (N1), as its abort message
/// prints it.
pub const EMPTY_GLOBAL_CHECK: &str = "CHECK failed: !(ptr != nullptr) || (!ptr->IsEmpty())";

/// The documented mismatch `m` (a difference found in the trace `ops`) is an
/// instance of, if any: `"M3"`, `"N1"`. (M1 and M2 are fixed in the model:
/// docs/conformance.md keeps their record.)
pub fn classify(ops: &[Op], m: &Mismatch) -> Option<&'static str> {
    let group = ops.get(m.ops.clone())?;
    // N1: node aborted at the open of a Global scope whose Global the trace
    // had already reset.
    if let [Op::OpenScope {
        resource: NativeResource {
            id,
            holder: Holder::Global,
        },
        ..
    }] = group
    {
        let aborted = matches!(
            m.node.as_slice(),
            [NodeObservation::Death(d)] if d == EMPTY_GLOBAL_CHECK
        );
        let reset_before = ops[..m.ops.start].contains(&Op::ResetGlobal(*id));
        if aborted && reset_before {
            return Some("N1");
        }
    }
    // M3: node returned something else for a read of a dangling native entry.
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
    }
    None
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
