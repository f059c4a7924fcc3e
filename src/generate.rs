//! Generators of op sequences that can happen in Node, biased toward what
//! breaks stacks. The eager model is the reference state machine
//! (`proptest-state-machine`): each op is drawn from the current state, and
//! kept only if the model accepts it, so that shrinking keeps sequences valid.

use crate::lockstep::Answer;
use model::env::Frame;
use model::vocab::{
    AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, Op, ResourceId, Runtime,
    ScopeFlags, ScopeKind,
};
use model::Eager;
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Just, Strategy};
use proptest_state_machine::ReferenceStateMachine;

/// The reference state: the eager model after the ops so far, and the answer
/// to the last op.
#[derive(Clone, Debug)]
pub struct RefState {
    /// The eager model.
    pub eager: Eager,
    /// What the last op answered.
    pub last: Option<Answer>,
    /// This sequence nests deep (past 16 entries) before it unwinds.
    pub deep: bool,
}

/// The eager model as a `proptest-state-machine` reference machine.
pub struct EagerMachine;

/// Resources the generators use: `R1`..`R4`.
pub const RESOURCES: u32 = 4;
/// Hooks the generators use: `H1`..`H3`.
pub const HOOKS: u32 = 3;

/// Ids worth trying now: those of open scopes and JS contexts, the current
/// execution and trigger ids, destroyed ids, 0, -1, a few fresh ones.
pub fn interesting_ids(eager: &Eager) -> Vec<AsyncId> {
    let mut ids = vec![0, -1];
    let f = &eager.async_hooks.async_id_fields;
    ids.push(f.k_execution_async_id);
    ids.push(f.k_trigger_async_id);
    for frame in &eager.frames {
        match frame {
            Frame::Native(s) => {
                ids.push(s.async_context.async_id);
                ids.push(s.async_context.trigger_async_id);
            }
            Frame::RunInAsyncScope { async_id } => ids.push(*async_id),
            Frame::DefaultTriggerScope { .. } => {}
        }
    }
    let depth = eager.async_hooks.fields.k_stack_length as usize;
    for (e, t) in eager.async_hooks.async_ids_stack.iter().take(depth) {
        ids.push(*e);
        ids.push(*t);
    }
    ids.extend(eager.destroy_async_id_list.iter().copied());
    let counter = f.k_async_id_counter;
    ids.extend([counter, counter + 1, counter + 2, counter + 7]);
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn id_strategy(ids: &[AsyncId]) -> BoxedStrategy<AsyncId> {
    let ids = ids.to_vec();
    prop_oneof![
        8 => proptest::sample::select(ids),
        1 => -2i64..12,
    ]
    .boxed()
}

/// One of `hooks` (H1 when there are none: the caller gives that choice
/// weight 0 then, so it is never drawn).
/// One of `items`, or `fallback` when there is none (its weight is then 0).
fn pick_or<T: Clone + std::fmt::Debug + 'static>(items: Vec<T>, fallback: T) -> BoxedStrategy<T> {
    if items.is_empty() {
        Just(fallback).boxed()
    } else {
        proptest::sample::select(items).boxed()
    }
}

fn pick(hooks: Vec<HookId>) -> BoxedStrategy<HookId> {
    pick_or(hooks, HookId(1))
}

fn resource_strategy() -> BoxedStrategy<ResourceId> {
    (1..=RESOURCES).prop_map(ResourceId).boxed()
}

fn callbacks_strategy() -> BoxedStrategy<HookCallbacks> {
    prop_oneof![
        3 => Just(HookCallbacks::ALL),
        2 => any::<(bool, bool, bool, bool, bool)>().prop_map(|(init, before, after, destroy, promise_resolve)| {
            HookCallbacks { init, before, after, destroy, promise_resolve }
        }),
    ]
    .boxed()
}

fn open_scope_strategy(ids: BoxedStrategy<AsyncId>) -> BoxedStrategy<Op> {
    let flags = prop_oneof![
        6 => Just(ScopeFlags::default()),
        1 => any::<(bool, bool)>().prop_map(|(skip_async_hooks, skip_task_queues)| ScopeFlags {
            skip_async_hooks,
            skip_task_queues
        }),
    ];
    (
        prop_oneof![3 => Just(ScopeKind::CallbackScope), 2 => Just(ScopeKind::MakeCallback)],
        ids.clone(),
        ids,
        resource_strategy(),
        prop_oneof![4 => Just(Holder::Local), 1 => Just(Holder::Global)],
        flags,
    )
        .prop_map(|(kind, async_id, trigger_async_id, id, holder, flags)| {
            let (holder, flags) = match kind {
                ScopeKind::MakeCallback => (Holder::Local, ScopeFlags::default()),
                ScopeKind::CallbackScope => (holder, flags),
            };
            Op::OpenScope {
                kind,
                context: AsyncContext {
                    async_id,
                    trigger_async_id,
                },
                resource: NativeResource { id, holder },
                flags,
            }
        })
        .boxed()
}

/// Ops drawn from the state `eager` is in; `deep` favours opening over closing
/// until the stack is past 16 entries.
pub fn op_strategy(eager: &Eager, deep: bool) -> BoxedStrategy<Op> {
    if let Some(Frame::Native(scope)) = eager.frames.last() {
        if scope.threw {
            // The callback threw and returned: only its close can follow.
            return if scope.main_script {
                Just(Op::CloseScope { threw: false }).boxed()
            } else {
                prop_oneof![
                    Just(Op::CloseScope { threw: true }),
                    Just(Op::CloseScope { threw: false })
                ]
                .boxed()
            };
        }
    }
    if !eager.js_running() {
        return native_only_strategy(eager);
    }
    let ids = id_strategy(&interesting_ids(eager));
    let current = eager.async_hooks.async_id_fields.k_execution_async_id;
    let after_ids = prop_oneof![6 => Just(current), 1 => ids.clone()].boxed();
    let nesting =
        deep && eager.frames.len() + (eager.async_hooks.fields.k_stack_length as usize) < 24;
    let (open_weight, push_weight) = if nesting { (16, 10) } else { (7, 4) };
    let innermost = eager.frames.last();
    let close_weight = match innermost {
        Some(Frame::Native(_)) if nesting => 1,
        Some(Frame::Native(_)) => 6,
        _ => 0,
    };
    let exit_run_weight = u32::from(matches!(innermost, Some(Frame::RunInAsyncScope { .. }))) * 6;
    let exit_default_weight =
        u32::from(matches!(innermost, Some(Frame::DefaultTriggerScope { .. }))) * 6;
    let first = !eager.program_started;
    // napi_close_callback_scope on a node::CallbackScope that is not the
    // innermost native scope: how many native scopes are inside it.
    let natives: Vec<_> = eager
        .frames
        .iter()
        .filter_map(|f| match f {
            Frame::Native(s) => Some(s),
            _ => None,
        })
        .collect();
    let outer_choices: Vec<u32> = (1..natives.len())
        .filter(|&k| {
            let s = natives[natives.len() - 1 - k];
            !s.is_bare() && s.kind == model::vocab::ScopeKind::CallbackScope
        })
        .map(|k| k as u32)
        .collect();
    let created: Vec<HookId> = eager.hooks.created.keys().copied().collect();
    let uncreated: Vec<HookId> = (1..=HOOKS)
        .map(HookId)
        .filter(|h| !eager.hooks.created.contains_key(h))
        .collect();
    let choices: Vec<(u32, BoxedStrategy<Op>)> = vec![
        (u32::from(first) * 2, Just(Op::NoForceAsyncHooksChecks).boxed()),
        (u32::from(first) * 2, Just(Op::EntryModule).boxed()),
        (close_weight.min(3) * u32::from(!outer_choices.is_empty()), pick_or(outer_choices, 1).prop_map(|outer| Op::CloseOuter { outer }).boxed()),
        (open_weight, open_scope_strategy(ids.clone()).boxed()),
        (close_weight, prop_oneof![9 => Just(Op::CloseScope { threw: false }), 1 => Just(Op::CloseScope { threw: true })].boxed()),
        (1, resource_strategy().prop_map(Op::ResetGlobal).boxed()),
        (2 * u32::from(!uncreated.is_empty()), (pick(uncreated), callbacks_strategy()).prop_map(|(hook, callbacks)| Op::CreateHook { hook, callbacks }).boxed()),
        (3 * u32::from(!created.is_empty()), pick(created.clone()).prop_map(Op::EnableHook).boxed()),
        (2 * u32::from(!created.is_empty()), pick(created).prop_map(Op::DisableHook).boxed()),
        (1, (ids.clone(), ids.clone(), proptest::option::of(resource_strategy())).prop_map(|(async_id, trigger_async_id, resource)| Op::EmitInit {
            async_id,
            type_name: "event".to_string(),
            trigger_async_id,
            resource,
        }).boxed()),
        (push_weight, (ids.clone(), ids.clone(), proptest::option::of(resource_strategy())).prop_map(|(async_id, trigger_async_id, resource)| Op::EmitBefore {
            async_id,
            trigger_async_id,
            resource
        }).boxed()),
        (4, after_ids.prop_map(|async_id| Op::EmitAfter { async_id }).boxed()),
        (1, ids.clone().prop_map(|async_id| Op::EmitDestroy { async_id }).boxed()),
        (3, (ids.clone(), ids.clone(), resource_strategy()).prop_map(|(async_id, trigger_async_id, resource)| Op::EnterRunInAsyncScope {
            async_id,
            trigger_async_id,
            resource
        }).boxed()),
        (exit_run_weight, Just(Op::ExitRunInAsyncScope).boxed()),
        (1, ids.clone().prop_map(|trigger_async_id| Op::EnterDefaultTriggerScope { trigger_async_id }).boxed()),
        (exit_default_weight, Just(Op::ExitDefaultTriggerScope).boxed()),
        (2, any::<bool>().prop_map(|query_resource| Op::NextTick { query_resource }).boxed()),
        (1, Just(Op::TickCallback).boxed()),
        (2, Just(Op::ExecutionAsyncId).boxed()),
        (1, Just(Op::TriggerAsyncId).boxed()),
        (4, Just(Op::ExecutionAsyncResource).boxed()),
        (1, Just(Op::DefaultTriggerAsyncId).boxed()),
        (1, Just(Op::NewAsyncId).boxed()),
        (u32::from(matches!(innermost, Some(Frame::Native(_)))), prop_oneof![5 => Just(Op::UncaughtException { handled: true }), 1 => Just(Op::UncaughtException { handled: false })].boxed()),
        (1, Just(Op::ClearAsyncIdStack).boxed()),
        // Rare: nothing but closes can follow it.
        (u32::from(eager.frames.len() > 1), Just(Op::Stop).boxed()),
    ];
    let choices: Vec<(u32, BoxedStrategy<Op>)> =
        choices.into_iter().filter(|(w, _)| *w > 0).collect();
    proptest::strategy::Union::new_weighted(choices).boxed()
}

/// When no JavaScript can run (the environment is stopping, or every scope
/// is closed and the event loop is idle): only native ops.
fn native_only_strategy(eager: &Eager) -> BoxedStrategy<Op> {
    let ids = id_strategy(&interesting_ids(eager));
    match eager.frames.last() {
        Some(Frame::Native(_)) => prop_oneof![
            6 => Just(Op::CloseScope { threw: false }),
            1 => Just(Op::CloseScope { threw: true }),
            1 => resource_strategy().prop_map(Op::ResetGlobal),
            2 => open_scope_strategy(ids),
        ]
        .boxed(),
        Some(Frame::RunInAsyncScope { .. }) => Just(Op::ExitRunInAsyncScope).boxed(),
        Some(Frame::DefaultTriggerScope { .. }) => Just(Op::ExitDefaultTriggerScope).boxed(),
        None => prop_oneof![3 => open_scope_strategy(ids), 1 => Just(Op::TimersScope)].boxed(),
    }
}

/// Whether the eager model accepts `op` in `eager`'s state.
pub fn accepts(eager: &Eager, op: &Op) -> bool {
    !eager.exited && eager.clone().apply(op).is_ok()
}

impl ReferenceStateMachine for EagerMachine {
    type State = RefState;
    type Transition = Op;

    fn init_state() -> BoxedStrategy<RefState> {
        prop_oneof![3 => Just(false), 1 => Just(true)]
            .prop_map(|deep| RefState {
                eager: Eager::new(),
                last: None,
                deep,
            })
            .boxed()
    }

    fn transitions(state: &RefState) -> BoxedStrategy<Op> {
        op_strategy(&state.eager, state.deep)
    }

    fn apply(mut state: RefState, op: &Op) -> RefState {
        state.last = Some(state.eager.apply(op));
        state
    }

    /// Every op the model accepts; after the process ended every op is
    /// kept (both sides answer `Exited`) so generation never stalls.
    fn preconditions(state: &RefState, op: &Op) -> bool {
        state.eager.exited || accepts(&state.eager, op)
    }
}
