//! The explorer's alphabet: the letters an exploration draws its ops from
//! ([`alphabet`], [`deep_letters`], [`frame_letters`]), the ops applied
//! before exploring ([`init_ops`]), and the bounds that keep the state
//! space finite ([`Bounds`]).

use super::ExploreConfig;
use model::vocab::{
    AlsId, AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, Op, ResourceId,
    ScopeFlags, ScopeKind,
};
use std::fmt;

/// The hook every exploration starts with (created, not enabled).
pub const HOOK: HookId = HookId(1);
/// The resource native scopes hold as a `Local`.
pub const LOCAL: ResourceId = ResourceId(1);
/// The resource native scopes hold as a `Global` (and `reset-global` resets).
pub const GLOBAL: ResourceId = ResourceId(2);

/// The ops applied to both sides before exploring: `create-hook H1` with all
/// five callbacks. They are printed at the head of every trace.
pub fn init_ops() -> Vec<Op> {
    init_ops_for(1)
}

/// The ops applied before exploring with `hooks` hooks ([`Bounds::hooks`]):
/// `create-hook H1` ... `create-hook Hn`, each with all five callbacks.
pub fn init_ops_for(hooks: usize) -> Vec<Op> {
    (1..=hooks.max(1))
        .map(|h| Op::CreateHook {
            hook: HookId(h as u32),
            callbacks: HookCallbacks::ALL,
        })
        .collect()
}

/// The largest async id any letter names (`callback-scope 3 2 ...`,
/// `emit-after 3`): ids up to it are kept as they are by the fixpoint
/// explorer's renaming ([`crate::canonical`]).
pub const ALPHABET_MAX_ID: AsyncId = 3;

/// Bounds of the state space beyond nesting, the fixpoint explorer's
/// (`explore --fixpoint`): with them the states reachable are finitely many.
/// `None`: no bound (the depth-bounded explorer's default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// `next-tick` and `next-tick-body` are enabled only while fewer ticks
    /// are queued.
    pub max_ticks: Option<usize>,
    /// `queue-microtask`, `promise-then` and `promise-reject` are enabled
    /// only while fewer microtasks are queued and rejections pending.
    pub max_microtasks: Option<usize>,
    /// `emit-before` and `run-in-async-scope` are enabled only while fewer
    /// id-stack entries were pushed by JS.
    pub max_js: Option<usize>,
    /// Hooks created before exploring (`create-hook H1` ... `Hn`), each with
    /// its `enable-hook` and `disable-hook` letters.
    pub hooks: usize,
    /// `AsyncLocalStorage` instances of the `--frames` letters (`A1` ...
    /// `An`), each with its `als-run`, `als-enter-with` and `als-get-store`.
    pub storages: usize,
    /// The lowest trigger id a letter names: below -1 adds the letter
    /// `emit-before 2 MIN` (an id Node's native push refuses, its JS push
    /// does not check).
    pub min_id: AsyncId,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_ticks: None,
            max_microtasks: None,
            max_js: None,
            hooks: 1,
            storages: 1,
            min_id: -1,
        }
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = |b: Option<usize>| b.map_or("any".to_string(), |n| n.to_string());
        write!(
            f,
            "queued ticks <= {}, queued microtasks and pending rejections <= {}, JS entries <= {}, hooks {}, storages {}, ids from {} to {}",
            bound(self.max_ticks),
            bound(self.max_microtasks),
            bound(self.max_js),
            self.hooks,
            self.storages,
            self.min_id,
            ALPHABET_MAX_ID
        )
    }
}

/// The letters of an exploration: [`alphabet`] (or [`deep_letters`] with
/// `config.deep`), the hooks beyond H1, [`frame_letters`] with
/// `config.frames`, and the low-id letter of [`Bounds::min_id`].
pub fn letters(config: &ExploreConfig) -> Vec<Letter> {
    let b = &config.bounds;
    let mut letters = if config.deep {
        deep_letters()
    } else {
        alphabet()
    };
    if !config.deep {
        for h in 2..=b.hooks {
            let hook = HookId(h as u32);
            letters.push(Letter::Op(Op::EnableHook(hook)));
            letters.push(Letter::Op(Op::DisableHook(hook)));
        }
    }
    if config.frames {
        letters.extend(frame_letters_for(b.storages));
    }
    if b.min_id < -1 {
        letters.push(Letter::Op(Op::EmitBefore {
            async_id: 2,
            trigger_async_id: b.min_id,
            resource: None,
        }));
    }
    letters
}

/// The letters of `explore --deep`, few enough that nesting 17 deep (past
/// the id stack's 16 pairs) has few states: `callback-scope 2 1 R1`,
/// `close`, `execution-async-resource` (after which scopes open eagerly);
/// JS pushes come from [`Bounds::min_id`]'s letter. No `emit-after`: a JS
/// pop of any entry under open frames gives every level four ways to be
/// (lazy or eager, popped or not), too many states 17 deep.
pub fn deep_letters() -> Vec<Letter> {
    vec![
        Letter::Op(scope(ScopeKind::CallbackScope, 2, 1, LOCAL, Holder::Local)),
        Letter::Op(Op::CloseScope { threw: false }),
        Letter::Op(Op::ExecutionAsyncResource),
    ]
}

fn scope(
    kind: ScopeKind,
    async_id: i64,
    trigger_async_id: i64,
    id: ResourceId,
    holder: Holder,
) -> Op {
    Op::OpenScope {
        kind,
        context: AsyncContext {
            async_id,
            trigger_async_id,
        },
        resource: NativeResource { id, holder },
        flags: ScopeFlags::default(),
    }
}

/// One letter of the alphabet: a fixed op, or an `emit-after` whose id is
/// chosen from the state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Letter {
    /// This op.
    Op(Op),
    /// `emit-after` naming the current execution id (a matching pop).
    EmitAfterRight,
    /// `emit-after` naming another id: 3, or 2 when the current id is 3.
    EmitAfterWrong,
}

impl Letter {
    /// The op this letter is when the execution id is `current`.
    pub fn op(&self, current: AsyncId) -> Op {
        match self {
            Letter::Op(op) => op.clone(),
            Letter::EmitAfterRight => Op::EmitAfter { async_id: current },
            Letter::EmitAfterWrong => Op::EmitAfter {
                async_id: if current == 3 { 2 } else { 3 },
            },
        }
    }

    /// The letter only reads: in the eager model it leaves the state as it
    /// was, so the fixpoint explorer checks its answers in every state
    /// instead of taking it as a step (issue 57, point 3), and checks that
    /// the side under test was left as it was too. Such readers are
    /// `execution-async-id` and, among the `--frames` letters,
    /// `als-get-store` (Node 26 reads the frame; the letter is not enabled
    /// on 20); `execution-async-resource` is not: it turns the pull
    /// request's lazy scopes off
    /// (`the_letters_that_only_read_leave_the_state_as_it_was`).
    pub fn only_reads(&self) -> bool {
        matches!(self, Letter::Op(Op::ExecutionAsyncId | Op::AlsGetStore(_)))
    }
}

impl fmt::Display for Letter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Letter::Op(op) => write!(f, "{op}"),
            Letter::EmitAfterRight => f.write_str("emit-after <current id>"),
            Letter::EmitAfterWrong => f.write_str("emit-after <another id>"),
        }
    }
}

/// The alphabet, in the order actions are tried: 21 letters, ids from
/// {0, 1, 2, 3, -1} (the main script's scope is `1 0`), R1 held as a Local,
/// R2 as a Global:
///
/// ```text
/// callback-scope 2 1 R1, callback-scope 3 2 global R2, make-callback 3 1 R1
/// close, close threw, enable-hook H1, disable-hook H1
/// emit-before 3 2 R1, emit-before 2 -1
/// emit-after <current id>, emit-after <another id>
/// run-in-async-scope 3 1 R1, end-run-in-async-scope
/// execution-async-resource, execution-async-id, next-tick, tick-callback
/// uncaught-exception handled, clear-async-id-stack, reset-global R2, stop
/// ```
///
/// [`frame_letters`] are added with [`ExploreConfig::frames`].
pub fn alphabet() -> Vec<Letter> {
    let ops = [
        scope(ScopeKind::CallbackScope, 2, 1, LOCAL, Holder::Local),
        scope(ScopeKind::CallbackScope, 3, 2, GLOBAL, Holder::Global),
        scope(ScopeKind::MakeCallback, 3, 1, LOCAL, Holder::Local),
        Op::CloseScope { threw: false },
        Op::CloseScope { threw: true },
        Op::EnableHook(HOOK),
        Op::DisableHook(HOOK),
        Op::EmitBefore {
            async_id: 3,
            trigger_async_id: 2,
            resource: Some(LOCAL),
        },
        Op::EmitBefore {
            async_id: 2,
            trigger_async_id: -1,
            resource: None,
        },
    ];
    let more = [
        Op::EnterRunInAsyncScope {
            async_id: 3,
            trigger_async_id: 1,
            resource: LOCAL,
        },
        Op::ExitRunInAsyncScope,
        Op::ExecutionAsyncResource,
        Op::ExecutionAsyncId,
        Op::NextTick {
            query_resource: false,
        },
        Op::TickCallback,
        Op::UncaughtException { handled: true },
        Op::ClearAsyncIdStack,
        Op::ResetGlobal(GLOBAL),
        Op::Stop,
    ];
    let mut letters: Vec<Letter> = ops.into_iter().map(Letter::Op).collect();
    letters.push(Letter::EmitAfterRight);
    letters.push(Letter::EmitAfterWrong);
    letters.extend(more.into_iter().map(Letter::Op));
    letters
}

/// The letters `--frames` adds to [`alphabet`], after it: the
/// `AsyncLocalStorage` ops (node version 26) and ticks and microtasks that
/// run JS (issue 14), and the native scopes of issue 24 that enter a stored
/// frame or close out of order:
///
/// ```text
/// als-run A1 1, end-als-run, als-enter-with A1 2, als-get-store A1
/// next-tick-body, end-tick, queue-microtask, promise-then, promise-reject
/// napi-async-init R1, napi-make-callback R1, close-outer 1
/// ```
pub fn frame_letters() -> Vec<Letter> {
    frame_letters_for(1)
}

/// [`frame_letters`] with `storages` instances of `AsyncLocalStorage`
/// (`A1` ... `An`): `als-run`, `als-enter-with` and `als-get-store` for each.
pub fn frame_letters_for(storages: usize) -> Vec<Letter> {
    let mut ops = Vec::new();
    for a in 1..=storages.max(1) {
        let als = AlsId(a as u32);
        ops.push(Op::AlsRun { als, store: 1 });
        if a == 1 {
            ops.push(Op::EndAlsRun);
        }
        ops.push(Op::AlsEnterWith { als, store: 2 });
        ops.push(Op::AlsGetStore(als));
    }
    ops.extend([
        Op::NextTickBody,
        Op::EndTick,
        Op::QueueMicrotask,
        Op::PromiseThen,
        Op::PromiseReject,
        // Issue 24: a native scope entering a stored frame, and one closed
        // out of order.
        Op::NapiAsyncInit(LOCAL),
        Op::NapiMakeCallback(LOCAL),
        Op::CloseOuter { outer: 1 },
    ]);
    ops.into_iter().map(Letter::Op).collect()
}

/// Whether `op` nests the program one level deeper (opens a frame or pushes
/// a JS context): such ops are enabled only below the nesting bound.
pub fn nests(op: &Op) -> bool {
    op.opens_frame() || matches!(op, Op::EmitBefore { .. })
}
