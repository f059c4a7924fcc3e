//! The ids of a test: each observation's and op's async ids, mapped from
//! the model's numbers to Node's (`SHIFT`, `firstId`), and written as
//! JavaScript and as regular expressions.

use super::*;

/// The ids of an observation, in a fixed order.
pub(super) fn ids_of(o: &Observation) -> Vec<AsyncId> {
    let mut v = Vec::new();
    map_ids(o, &mut |id| {
        v.push(id);
        id
    });
    v
}

pub(super) fn map_view(r: &ResourceView, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> ResourceView {
    match *r {
        ResourceView::TickObject(id) => ResourceView::TickObject(f(id)),
        ResourceView::Immediate(id) => ResourceView::Immediate(f(id)),
        ResourceView::Microtask(id) => ResourceView::Microtask(f(id)),
        ResourceView::Promise(id) => ResourceView::Promise(f(id)),
        ResourceView::Timeout(id) => ResourceView::Timeout(f(id)),
        other => other,
    }
}

/// `o` with each id replaced by `f(id)`, in [`ids_of`]'s order.
pub(super) fn map_ids(o: &Observation, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> Observation {
    use Observation as O;
    match o {
        O::ExecutionAsyncId(id) => O::ExecutionAsyncId(f(*id)),
        O::TriggerAsyncId(id) => O::TriggerAsyncId(f(*id)),
        O::DefaultTriggerAsyncId(id) => O::DefaultTriggerAsyncId(f(*id)),
        O::NewAsyncId(id) => O::NewAsyncId(f(*id)),
        O::ExecutionAsyncResource(r) => O::ExecutionAsyncResource(map_view(r, f)),
        O::Hook {
            hook,
            event,
            execution_async_id,
            trigger_async_id,
        } => {
            let event = match event {
                HookEvent::Init {
                    async_id,
                    type_name,
                    trigger_async_id,
                    resource,
                } => HookEvent::Init {
                    async_id: f(*async_id),
                    type_name: type_name.clone(),
                    trigger_async_id: f(*trigger_async_id),
                    resource: map_view(resource, f),
                },
                HookEvent::Before(id) => HookEvent::Before(f(*id)),
                HookEvent::After(id) => HookEvent::After(f(*id)),
                HookEvent::Destroy(id) => HookEvent::Destroy(f(*id)),
                HookEvent::PromiseResolve(id) => HookEvent::PromiseResolve(f(*id)),
            };
            O::Hook {
                hook: *hook,
                event,
                execution_async_id: f(*execution_async_id),
                trigger_async_id: f(*trigger_async_id),
            }
        }
        O::Tick {
            async_id,
            execution_async_id,
            trigger_async_id,
            resource,
        } => O::Tick {
            async_id: f(*async_id),
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
            resource: resource.as_ref().map(|r| map_view(r, f)),
        },
        O::TickStore {
            async_id,
            als,
            value,
        } => O::TickStore {
            async_id: f(*async_id),
            als: *als,
            value: *value,
        },
        O::UnhandledRejection {
            execution_async_id,
            trigger_async_id,
        } => O::UnhandledRejection {
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
        },
        O::RejectionHandled {
            execution_async_id,
            trigger_async_id,
        } => O::RejectionHandled {
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
        },
        O::Microtask {
            promise,
            execution_async_id,
            trigger_async_id,
        } => O::Microtask {
            promise: *promise,
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
        },
        O::CorruptedStack {
            actual,
            expected,
            abort,
        } => O::CorruptedStack {
            actual: f(*actual),
            expected: f(*expected),
            abort: *abort,
        },
        other => other.clone(),
    }
}

/// `op` with each id argument replaced by `f(id)`.
pub(super) fn map_op_ids(op: &Op, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> Op {
    let mut op = op.clone();
    match &mut op {
        Op::OpenScope { context, .. } => {
            context.async_id = f(context.async_id);
            context.trigger_async_id = f(context.trigger_async_id);
        }
        Op::EmitInit {
            async_id,
            trigger_async_id,
            ..
        }
        | Op::EmitBefore {
            async_id,
            trigger_async_id,
            ..
        }
        | Op::EnterRunInAsyncScope {
            async_id,
            trigger_async_id,
            ..
        } => {
            *async_id = f(*async_id);
            *trigger_async_id = f(*trigger_async_id);
        }
        Op::EmitAfter { async_id } | Op::EmitDestroy { async_id } | Op::ClearTimeout(async_id) => {
            *async_id = f(*async_id)
        }
        Op::EnterDefaultTriggerScope { trigger_async_id } => {
            *trigger_async_id = f(*trigger_async_id)
        }
        _ => {}
    }
    op
}

/// A model id as the test writes it.
pub(super) fn id_js(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        return id.to_string();
    }
    match id - HANDED - 2 {
        0 => "firstId".to_string(),
        k => format!("firstId + {k}"),
    }
}

/// A model id as the test's regexp of a crash message matches it.
pub(super) fn id_re(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        id.to_string()
    } else {
        "\\d+".to_string()
    }
}

/// The JS name of a trace resource, hook or storage.
pub(super) fn r(n: u32) -> String {
    format!("r{n}")
}
