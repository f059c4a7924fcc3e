//! Generators of op sequences that can happen in Node, biased toward what
//! breaks stacks. Each op is drawn directly from the state the eager model is
//! in (a [`CaseGen`] looks at the model after the ops so far), so every
//! drawn op is one the model accepts: no strategy objects, no rejection.
//!
//! **Swarm testing.** Each case first draws its own [`Swarm`]: a random
//! subset of the op kinds, each with a random weight, a length, and a target
//! nesting depth that the case builds up to before anything unwinds. One case
//! that never closes a scope and pushes from JavaScript reaches past 16
//! pairs; one that never calls `executionAsyncResource()` but enables a hook
//! and disables it again nests a lazy scope in an eager one; a uniform mix
//! does neither often. `docs/performance.md` ("Reach") gives the figures.
//!
//! **Randomness.** One [`rand_chacha::ChaCha8Rng`] per case, keyed by the
//! run's seed and put on its own stream by the case's index ([`case_rng`]):
//! the same seed runs the same cases, on any machine and in any order, so
//! a run can be split into disjoint shards whose results add up to the
//! whole run (`scopecheck check --shard I/N`). ChaCha8 is a well-kept,
//! portable generator whose output the `rand_chacha` crate keeps stable
//! across versions; drawing from it costs a few nanoseconds.

use model::env::microtasks::RunningMicrotask;
use model::env::Frame;
use model::vocab::{
    AlsId, AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, NodeVersion, Op,
    OpKind, ResourceId, Runtime, ScopeFlags, ScopeKind,
};
use model::Eager;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Resources the generators use: `R1`..`R4`.
pub const RESOURCES: u32 = 4;
/// Hooks the generators use: `H1`..`H3`.
pub const HOOKS: u32 = 3;

/// The random generator of case `case` of the run with `seed`: ChaCha8 keyed
/// by the seed, on stream `case`. Cases are independent of each other.
pub fn case_rng(seed: u64, case: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    // A fixed tag, so that these keys are not those of other tools' seeds.
    key[8..16].copy_from_slice(b"scopechk");
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(case);
    rng
}

/// `AsyncLocalStorage` instances the generators use: `A1`, `A2`.
pub const STORAGES: u32 = 2;
/// Store values the generators use: 1..=3.
pub const STORE_VALUES: u32 = 3;

/// What a kind does to the depth a case builds up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Opens a frame or pushes a context: favoured while a case builds up
    /// to its target depth.
    Deepens,
    /// Ends a frame, pops a context or ends the process: held back while a
    /// case builds up to its target depth.
    Unwinds,
    /// Ends a JS frame, a tick's or a microtask's callback: unwinds, and is
    /// kept in every phase (a case whose frames cannot end cannot do much
    /// else once one is open).
    EndsJs,
    /// Neither.
    Other,
}

/// The base weight of each kind in a uniform mix, and its [`Role`]. The
/// weights were tuned by measuring the share of cases that reach each
/// situation of `src/coverage.rs` (the JS frame ends and `emit-after` high,
/// so that a `runInAsyncScope` often ends with only lazy scopes left;
/// `execution-async-resource` low, since one call makes every later scope
/// eager; `no-force-async-hooks-checks` high, since cases without the
/// checks live longer): `docs/performance.md`, "Reach". `timers-scope` and
/// `node-version` have none: the first is drawn when no scope is open
/// ([`CaseGen`]'s `native_only`), the second now and then as a first op.
const fn mix(kind: OpKind) -> (u32, Role) {
    use OpKind as K;
    use Role::*;
    match kind {
        K::NoForceAsyncHooksChecks => (8, Other),
        K::CallbackScope => (4, Deepens),
        K::MakeCallback => (3, Deepens),
        // `close threw` one time in seven.
        K::CloseScope => (7, Unwinds),
        K::ResetGlobal => (1, Other),
        K::CreateHook => (3, Other),
        K::EnableHook => (4, Other),
        K::DisableHook => (8, Other),
        K::EmitInit => (1, Other),
        K::EmitBefore => (4, Deepens),
        K::EmitAfter => (6, Unwinds),
        K::EmitDestroy => (1, Other),
        K::EnterRunInAsyncScope => (5, Deepens),
        K::ExitRunInAsyncScope => (12, EndsJs),
        K::EnterDefaultTriggerScope => (1, Other),
        K::ExitDefaultTriggerScope => (6, EndsJs),
        K::NextTick => (2, Other),
        K::TickCallback => (1, Other),
        K::ExecutionAsyncId => (2, Other),
        K::TriggerAsyncId => (1, Other),
        K::ExecutionAsyncResource => (2, Other),
        K::DefaultTriggerAsyncId => (1, Other),
        K::NewAsyncId => (1, Other),
        K::UncaughtException => (4, Unwinds),
        K::ClearAsyncIdStack => (1, Unwinds),
        K::Stop => (1, Unwinds),
        K::EntryModule => (4, Other),
        K::TimersScope => (0, Other),
        K::CloseOuter => (5, Unwinds),
        K::NodeVersion => (0, Other),
        K::AlsRun => (2, Other),
        K::AlsExit => (1, Other),
        K::EndAlsRun => (6, EndsJs),
        K::AlsEnterWith => (1, Other),
        K::AlsGetStore => (1, Other),
        K::AsyncResource => (2, Other),
        K::NextTickBody => (2, Other),
        K::EndTick => (6, EndsJs),
        K::QueueMicrotask => (1, Other),
        K::PromiseThen => (10, Other),
        K::PromiseReject => (3, Other),
        K::QueueMicrotaskBody => (1, Other),
        K::PromiseThenBody => (7, Other),
        K::EndMicrotask => (8, EndsJs),
    }
}

/// Most phases a case is split into.
pub const MAX_PHASES: usize = 5;

/// One phase of a case: the kinds it uses and how often, and how deep it
/// builds the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// The op (index in the case) at which the phase ends.
    pub until: usize,
    /// Weight of each [`OpKind`], by `kind as usize` (0: this phase never
    /// draws it).
    pub weights: [u32; OpKind::COUNT],
    /// Nesting (eager stack entries plus open frames) to build up to at the
    /// start of the phase: until it is reached, the kinds that deepen are
    /// favoured and those that unwind are not drawn; 0 for none.
    pub target_depth: usize,
}

impl Phase {
    /// A phase ending at `until`: a uniform mix of every kind (one phase in
    /// three), or a random half of the kinds (the ends of JS frames always
    /// kept: a case whose frames cannot end cannot do much else once one is
    /// open), each weight scaled by 1, 2, 4 or 8; one phase in three builds
    /// a stack 4 to 80 deep first (past 16 pairs, and past 48 when lazy
    /// scopes made the stack grow early).
    fn draw(rng: &mut ChaCha8Rng, until: usize) -> Phase {
        let mut weights = [0u32; OpKind::COUNT];
        let uniform = rng.random_ratio(1, 3);
        for &kind in OpKind::ALL {
            let (base, role) = mix(kind);
            weights[kind as usize] = if uniform {
                base
            } else {
                let kept = role == Role::EndsJs || rng.random_ratio(1, 2);
                if kept {
                    base << rng.random_range(0..4)
                } else {
                    0
                }
            };
        }
        let target_depth = if rng.random_ratio(1, 3) {
            rng.random_range(4..=80)
        } else {
            0
        };
        Phase {
            until,
            weights,
            target_depth,
        }
    }
}

/// What one case draws before its first op (swarm testing): how long it is,
/// and its phases, each with its own mix of op kinds. A case in phases can
/// set something up in one (create and enable hooks, open eager scopes) and
/// use it in another (disable them, open lazy scopes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swarm {
    /// Ops to draw (the case stops earlier if the process ends).
    pub len: usize,
    /// The phases, in order; only the first `phase_count` are used.
    pub phases: [Phase; MAX_PHASES],
    /// How many phases the case has (1..=[`MAX_PHASES`]).
    pub phase_count: usize,
    /// Out of 8: how often an id argument is the "expected" one (the current
    /// id for `emit-after`) rather than any.
    pub id_care: u32,
}

impl Swarm {
    /// The swarm of a case: its length (most cases run to `max_len`: deep
    /// stacks need long ones), 1 to 5 phases of random lengths, each drawn
    /// by [`Phase::draw`].
    pub fn draw(rng: &mut ChaCha8Rng, max_len: usize) -> Swarm {
        let max_len = max_len.max(1);
        let len = if rng.random_ratio(2, 3) {
            max_len
        } else {
            rng.random_range(1..=max_len)
        };
        let phase_count = rng.random_range(1..=MAX_PHASES);
        // Phase ends at random points; the last phase ends with the case.
        let mut ends = [len; MAX_PHASES];
        for end in ends.iter_mut().take(phase_count - 1) {
            *end = rng.random_range(0..=len);
        }
        ends[..phase_count].sort_unstable();
        let mut phases = [Phase {
            until: len,
            weights: [0; OpKind::COUNT],
            target_depth: 0,
        }; MAX_PHASES];
        for (phase, end) in phases.iter_mut().zip(ends).take(phase_count) {
            *phase = Phase::draw(rng, end);
        }
        Swarm {
            len,
            phases,
            phase_count,
            id_care: rng.random_range(6..=8),
        }
    }
}

/// How deep the eager model is nested: stack entries plus open frames.
fn nesting(eager: &Eager) -> usize {
    eager.async_hooks.fields.k_stack_length as usize + eager.frames.len()
}

/// One case's generator: its random stream and its swarm.
pub struct CaseGen {
    rng: ChaCha8Rng,
    swarm: Swarm,
    drawn: usize,
    phase: usize,
    /// The current phase has reached its target depth (or has none).
    built: bool,
    /// The last op was a `close-outer`: it may have left the closed scope's
    /// entry on top, whose resource is then read through freed memory.
    after_close_outer: bool,
    /// The last op was a `disable-hook`: if it left no hook enabled, a scope
    /// opened now is lazy inside the scopes opened while hooks were on.
    after_disable: bool,
}

impl CaseGen {
    /// The generator of case `case` of the run with `seed`, with sequences
    /// up to `max_len` ops.
    pub fn new(seed: u64, case: u64, max_len: usize) -> CaseGen {
        let mut rng = case_rng(seed, case);
        let swarm = Swarm::draw(&mut rng, max_len);
        let built = swarm.phases[0].target_depth == 0;
        CaseGen {
            rng,
            swarm,
            drawn: 0,
            phase: 0,
            built,
            after_close_outer: false,
            after_disable: false,
        }
    }

    /// This case's swarm.
    pub fn swarm(&self) -> &Swarm {
        &self.swarm
    }

    /// The next op, drawn from the state `eager` is in (the eager model
    /// after the ops drawn so far); `None` when the case is done: its length
    /// reached, or the process ended.
    pub fn next_op(&mut self, eager: &Eager) -> Option<Op> {
        if self.drawn >= self.swarm.len || eager.exited {
            return None;
        }
        while self.phase + 1 < self.swarm.phase_count
            && self.drawn >= self.swarm.phases[self.phase].until
        {
            self.phase += 1;
            self.built = self.swarm.phases[self.phase].target_depth == 0;
        }
        self.drawn += 1;
        Some(self.draw(eager))
    }

    fn draw(&mut self, eager: &Eager) -> Op {
        let follow_up = std::mem::take(&mut self.after_close_outer);
        let after_disable = std::mem::take(&mut self.after_disable);
        let f = &eager.async_hooks.fields;
        if after_disable
            && f.k_totals == 0
            && f.k_uses_execution_async_resource == 0
            && eager.frames.len() > 1
            && eager.js_running()
            && self.rng.random_ratio(1, 3)
        {
            return self.open_scope(eager);
        }
        // Now and then a case names its profile explicitly first (the same
        // program: `node-version 26` is the default).
        if eager.ops_applied == 0 && self.rng.random_ratio(1, 32) {
            return Op::NodeVersion(eager.version);
        }
        // A first executionAsyncResource() makes every later scope eager:
        // rarer while the case has not made one yet.
        let odds = if eager.async_hooks.fields.k_uses_execution_async_resource == 0 {
            5
        } else {
            1
        };
        if follow_up && eager.js_running() && self.rng.random_ratio(1, odds) {
            return Op::ExecutionAsyncResource;
        }
        let innermost = eager.frames.last();
        if let Some(Frame::Native(scope)) = innermost {
            if scope.threw {
                // The callback threw: only its close can follow.
                let threw = !scope.main_script && self.rng.random_ratio(1, 2);
                return Op::CloseScope { threw };
            }
        }
        if !eager.js_running() {
            return self.native_only(eager);
        }
        let native_innermost = matches!(innermost, Some(Frame::Native(_)));
        let tick_innermost = matches!(innermost, Some(Frame::Tick { .. }));
        let microtask_innermost = matches!(innermost, Some(Frame::Microtask { .. }));
        let reaction_without_hooks = eager.microtasks.installed.is_none()
            && matches!(
                innermost,
                Some(Frame::Microtask {
                    job: RunningMicrotask::Reaction { .. },
                    ..
                })
            );
        // The model refuses an exception that leaves a microtask's callback.
        let in_microtask = (eager.frames.iter()).any(|f| matches!(f, Frame::Microtask { .. }));
        let module_entry_open = !eager.program_started
            && matches!(eager.frames.as_slice(), [Frame::Native(m)] if m.pushed_ids);
        let phase = &self.swarm.phases[self.phase];
        if !self.built && nesting(eager) >= phase.target_depth {
            self.built = true;
        }
        let building = !self.built;
        let created = eager.hooks.created.len() as u32;
        // `no-force-async-hooks-checks` applies while the program has not
        // started (only header ops so far) and it was not given yet.
        let first = !eager.program_started && eager.async_hooks.fields.k_check == 1;
        let mut weights = [0u32; OpKind::COUNT];
        let mut total = 0u32;
        for &kind in OpKind::ALL {
            let allowed = match kind {
                OpKind::NoForceAsyncHooksChecks => first,
                OpKind::EntryModule => module_entry_open,
                OpKind::CloseOuter => !outer_scopes(eager).is_empty(),
                OpKind::CloseScope => native_innermost,
                OpKind::UncaughtException => native_innermost || (tick_innermost && !in_microtask),
                OpKind::EndTick => tick_innermost,
                OpKind::EndMicrotask => microtask_innermost,
                OpKind::ExitRunInAsyncScope => {
                    matches!(innermost, Some(Frame::RunInAsyncScope { .. }))
                }
                OpKind::ExitDefaultTriggerScope => {
                    matches!(innermost, Some(Frame::DefaultTriggerScope { .. }))
                }
                OpKind::CreateHook => created < HOOKS,
                OpKind::EnableHook | OpKind::DisableHook => created > 0,
                OpKind::Stop => eager.frames.len() > 1,
                OpKind::EndAlsRun => matches!(innermost, Some(Frame::AlsRun { .. })),
                OpKind::QueueMicrotask | OpKind::QueueMicrotaskBody => {
                    !eager.queue_microtask_throws()
                }
                // Global holders and ALS exist on the 26 profile only.
                kind => kind.exists_on(eager.version),
            };
            if !allowed {
                continue;
            }
            let mut w = phase.weights[kind as usize];
            // In a reaction's body that started without promise hooks,
            // enabling one is what makes promiseAfterHook skip its pop.
            if kind == OpKind::EnableHook && reaction_without_hooks {
                w *= 8;
            }
            if building {
                match mix(kind).1 {
                    Role::Deepens => w *= 8,
                    Role::Unwinds | Role::EndsJs => w = 0,
                    Role::Other => {}
                }
            }
            weights[kind as usize] = w;
            total += w;
        }
        if total == 0 {
            // The swarm left nothing for this state: fall back to the base
            // weights of whatever is allowed (the innermost frame's end is
            // always among them, or an open).
            return self.fallback(eager);
        }
        let mut pick = self.rng.random_range(0..total);
        for &kind in OpKind::ALL {
            let w = weights[kind as usize];
            if pick < w {
                return self.op_of(kind, eager);
            }
            pick -= w;
        }
        unreachable!("pick < total")
    }

    /// When no swarm weight applies: end the innermost frame, or open a scope.
    fn fallback(&mut self, eager: &Eager) -> Op {
        match eager.frames.last() {
            Some(Frame::Native(_)) => Op::CloseScope { threw: false },
            Some(Frame::RunInAsyncScope { .. }) => Op::ExitRunInAsyncScope,
            Some(Frame::DefaultTriggerScope { .. }) => Op::ExitDefaultTriggerScope,
            Some(Frame::AlsRun { .. }) => Op::EndAlsRun,
            Some(Frame::Tick { .. }) => Op::EndTick,
            Some(Frame::Microtask { .. }) => Op::EndMicrotask,
            None => self.open_from_event_loop(eager),
        }
    }

    /// From the event loop, with no scope open: a native callback's scope,
    /// or `Environment::RunTimers`' (one in four).
    fn open_from_event_loop(&mut self, eager: &Eager) -> Op {
        if self.rng.random_ratio(1, 4) {
            Op::TimersScope
        } else {
            self.open_scope(eager)
        }
    }

    /// When no JavaScript can run (the environment is stopping, or every
    /// scope is closed and the event loop is idle): only native ops.
    fn native_only(&mut self, eager: &Eager) -> Op {
        match eager.frames.last() {
            Some(Frame::Native(s)) => match self.rng.random_range(0..10) {
                0..=5 => Op::CloseScope { threw: false },
                6 if !s.is_bare() => Op::CloseScope { threw: true },
                6 => Op::CloseScope { threw: false },
                7 if eager.version == NodeVersion::V26 => Op::ResetGlobal(self.resource()),
                _ => self.open_scope(eager),
            },
            Some(Frame::RunInAsyncScope { .. }) => Op::ExitRunInAsyncScope,
            Some(Frame::DefaultTriggerScope { .. }) => Op::ExitDefaultTriggerScope,
            Some(Frame::AlsRun { .. }) => Op::EndAlsRun,
            Some(Frame::Tick { .. }) => Op::EndTick,
            Some(Frame::Microtask { .. }) => Op::EndMicrotask,
            None => self.open_from_event_loop(eager),
        }
    }

    fn storage(&mut self) -> AlsId {
        AlsId(self.rng.random_range(1..=STORAGES))
    }

    fn resource(&mut self) -> ResourceId {
        ResourceId(self.rng.random_range(1..=RESOURCES))
    }

    fn maybe_resource(&mut self) -> Option<ResourceId> {
        if self.rng.random_ratio(1, 2) {
            Some(self.resource())
        } else {
            None
        }
    }

    /// A created hook; mostly one that is `enabled` (for a disable) or not
    /// (for an enable), so that hooks go on and off.
    fn hook(&mut self, eager: &Eager, enabled: bool) -> HookId {
        let created = &eager.hooks.created;
        let active = &eager.hooks.active;
        let fitting = created
            .keys()
            .filter(|h| active.contains(h) == enabled)
            .count();
        if fitting > 0 && self.rng.random_ratio(3, 4) {
            let n = self.rng.random_range(0..fitting);
            return *created
                .keys()
                .filter(|h| active.contains(h) == enabled)
                .nth(n)
                .expect("n < fitting");
        }
        let n = self.rng.random_range(0..created.len());
        *created.keys().nth(n).expect("n < created.len()")
    }

    /// An id worth trying now: one of an open scope or JS context, a saved
    /// stack entry, the current execution or trigger id, a destroyed id, 0,
    /// -1, a fresh one, or (rarely) any small number.
    pub fn id(&mut self, eager: &Eager) -> AsyncId {
        let f = &eager.async_hooks.async_id_fields;
        match self.rng.random_range(0..16) {
            0..=2 => f.k_execution_async_id,
            3 => f.k_trigger_async_id,
            4..=6 => match eager.frames.len() {
                0 => f.k_execution_async_id,
                n => match &eager.frames[self.rng.random_range(0..n)] {
                    Frame::Native(s) if self.rng.random_ratio(1, 2) => {
                        s.async_context.trigger_async_id
                    }
                    Frame::Native(s) => s.async_context.async_id,
                    Frame::RunInAsyncScope { async_id, .. } => *async_id,
                    Frame::AlsRun { .. } => f.k_execution_async_id,
                    Frame::DefaultTriggerScope {
                        old_default_trigger_async_id,
                    } => *old_default_trigger_async_id,
                    Frame::Tick { tick, .. } => tick.async_id,
                    Frame::Microtask { .. } => f.k_execution_async_id,
                },
            },
            7 => {
                let ah = &eager.async_hooks;
                match ah.fields.k_stack_length as usize {
                    0 => 0,
                    n => {
                        let (e, t) = ah.async_ids_stack[self.rng.random_range(0..n)];
                        if self.rng.random_ratio(1, 2) {
                            e
                        } else {
                            t
                        }
                    }
                }
            }
            8 => match eager.destroy_async_id_list.len() {
                0 => -1,
                n => eager.destroy_async_id_list[self.rng.random_range(0..n)],
            },
            9 => 0,
            10 => -1,
            11..=13 => f.k_async_id_counter + [0, 1, 2, 7][self.rng.random_range(0..4usize)],
            _ => self.rng.random_range(-2..12),
        }
    }

    fn callbacks(&mut self) -> HookCallbacks {
        if self.rng.random_ratio(3, 5) {
            HookCallbacks::ALL
        } else {
            let bits: u8 = self.rng.random();
            HookCallbacks {
                init: bits & 1 != 0,
                before: bits & 2 != 0,
                after: bits & 4 != 0,
                destroy: bits & 8 != 0,
                promise_resolve: bits & 16 != 0,
            }
        }
    }

    /// `callback-scope` or `make-callback`.
    fn open_scope(&mut self, eager: &Eager) -> Op {
        let kind = if self.rng.random_ratio(2, 5) {
            ScopeKind::MakeCallback
        } else {
            ScopeKind::CallbackScope
        };
        self.open(kind, eager)
    }

    fn open(&mut self, kind: ScopeKind, eager: &Eager) -> Op {
        let async_id = self.id(eager);
        let trigger_async_id = self.id(eager);
        let id = self.resource();
        let (holder, flags) = match kind {
            ScopeKind::MakeCallback => (Holder::Local, ScopeFlags::default()),
            ScopeKind::CallbackScope => {
                let holder = if self.rng.random_ratio(1, 5) && eager.version == NodeVersion::V26 {
                    Holder::Global
                } else {
                    Holder::Local
                };
                let flags = if self.rng.random_ratio(1, 7) {
                    ScopeFlags {
                        skip_async_hooks: self.rng.random(),
                        skip_task_queues: self.rng.random(),
                    }
                } else {
                    ScopeFlags::default()
                };
                (holder, flags)
            }
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
    }

    fn op_of(&mut self, kind: OpKind, eager: &Eager) -> Op {
        match kind {
            OpKind::NoForceAsyncHooksChecks => Op::NoForceAsyncHooksChecks,
            OpKind::CallbackScope => self.open(ScopeKind::CallbackScope, eager),
            OpKind::MakeCallback => self.open(ScopeKind::MakeCallback, eager),
            OpKind::CloseScope => {
                let bare = matches!(eager.frames.last(), Some(Frame::Native(s)) if s.is_bare());
                Op::CloseScope {
                    threw: !bare && self.rng.random_ratio(1, 7),
                }
            }
            OpKind::TimersScope => Op::TimersScope,
            OpKind::NodeVersion => Op::NodeVersion(eager.version),
            OpKind::ResetGlobal => Op::ResetGlobal(self.resource()),
            OpKind::CreateHook => {
                let free = (1..=HOOKS)
                    .map(HookId)
                    .filter(|h| !eager.hooks.created.contains_key(h))
                    .count();
                let n = self.rng.random_range(0..free);
                let hook = (1..=HOOKS)
                    .map(HookId)
                    .filter(|h| !eager.hooks.created.contains_key(h))
                    .nth(n)
                    .expect("n < free");
                Op::CreateHook {
                    hook,
                    callbacks: self.callbacks(),
                }
            }
            OpKind::EnableHook => Op::EnableHook(self.hook(eager, false)),
            OpKind::DisableHook => {
                self.after_disable = true;
                Op::DisableHook(self.hook(eager, true))
            }
            OpKind::EmitInit => Op::EmitInit {
                async_id: self.id(eager),
                type_name: "event".to_string(),
                trigger_async_id: self.id(eager),
                resource: self.maybe_resource(),
            },
            OpKind::EmitBefore => Op::EmitBefore {
                async_id: self.id(eager),
                trigger_async_id: self.id(eager),
                resource: self.maybe_resource(),
            },
            OpKind::EmitAfter => {
                let async_id = if self.rng.random_range(0..8) < self.swarm.id_care {
                    eager.async_hooks.async_id_fields.k_execution_async_id
                } else {
                    self.id(eager)
                };
                Op::EmitAfter { async_id }
            }
            OpKind::EmitDestroy => Op::EmitDestroy {
                async_id: self.id(eager),
            },
            OpKind::EnterRunInAsyncScope => Op::EnterRunInAsyncScope {
                async_id: self.id(eager),
                trigger_async_id: self.id(eager),
                resource: self.resource(),
            },
            OpKind::ExitRunInAsyncScope => Op::ExitRunInAsyncScope,
            OpKind::EnterDefaultTriggerScope => Op::EnterDefaultTriggerScope {
                trigger_async_id: self.id(eager),
            },
            OpKind::ExitDefaultTriggerScope => Op::ExitDefaultTriggerScope,
            OpKind::NextTick => Op::NextTick {
                query_resource: self.rng.random(),
            },
            OpKind::TickCallback => Op::TickCallback,
            OpKind::NextTickBody => Op::NextTickBody,
            OpKind::EndTick => Op::EndTick,
            OpKind::QueueMicrotask => Op::QueueMicrotask,
            OpKind::PromiseThen => Op::PromiseThen,
            OpKind::PromiseReject => Op::PromiseReject,
            OpKind::QueueMicrotaskBody => Op::QueueMicrotaskBody,
            OpKind::PromiseThenBody => Op::PromiseThenBody,
            OpKind::EndMicrotask => Op::EndMicrotask,
            OpKind::ExecutionAsyncId => Op::ExecutionAsyncId,
            OpKind::TriggerAsyncId => Op::TriggerAsyncId,
            OpKind::ExecutionAsyncResource => Op::ExecutionAsyncResource,
            OpKind::DefaultTriggerAsyncId => Op::DefaultTriggerAsyncId,
            OpKind::NewAsyncId => Op::NewAsyncId,
            OpKind::UncaughtException => Op::UncaughtException {
                handled: !self.rng.random_ratio(1, 6),
            },
            OpKind::ClearAsyncIdStack => Op::ClearAsyncIdStack,
            OpKind::Stop => Op::Stop,
            OpKind::EntryModule => Op::EntryModule,
            OpKind::AlsRun => Op::AlsRun {
                als: self.storage(),
                store: self.rng.random_range(1..=STORE_VALUES),
            },
            OpKind::AlsExit => Op::AlsExit(self.storage()),
            OpKind::EndAlsRun => Op::EndAlsRun,
            OpKind::AlsEnterWith => Op::AlsEnterWith {
                als: self.storage(),
                store: self.rng.random_range(1..=STORE_VALUES),
            },
            OpKind::AlsGetStore => Op::AlsGetStore(self.storage()),
            OpKind::AsyncResource => Op::AsyncResource(self.resource()),
            OpKind::CloseOuter => {
                // Mostly a scope whose id is current: its check passes and
                // the case goes on with the scope's entry left dangling.
                let all = outer_scopes(eager);
                let current = eager.async_hooks.async_id_fields.k_execution_async_id;
                let natives: Vec<_> = (eager.frames.iter().rev())
                    .filter_map(|f| match f {
                        Frame::Native(s) => Some(s.async_context.async_id),
                        _ => None,
                    })
                    .collect();
                let passing: Vec<u32> = (all.iter().copied())
                    .filter(|&k| natives[k as usize] == current)
                    .collect();
                let pool = if !passing.is_empty() && self.rng.random_ratio(3, 4) {
                    passing
                } else {
                    all
                };
                self.after_close_outer = true;
                Op::CloseOuter {
                    outer: pool[self.rng.random_range(0..pool.len())],
                }
            }
        }
    }
}

/// The `close-outer K` the model accepts now: each `K` such that the native
/// scope with `K` native scopes inside it is a `node::CallbackScope` an addon
/// opened (not the main script's, a MakeCallback's or RunTimers').
pub fn outer_scopes(eager: &Eager) -> Vec<u32> {
    let natives: Vec<_> = eager
        .frames
        .iter()
        .filter_map(|f| match f {
            Frame::Native(s) => Some(s),
            _ => None,
        })
        .collect();
    (1..natives.len())
        .filter(|&k| {
            let s = natives[natives.len() - 1 - k];
            !s.is_bare() && s.kind == ScopeKind::CallbackScope
        })
        .map(|k| k as u32)
        .collect()
}

/// The ops of case `case` of the run with `seed`, drawn against the eager
/// model alone (the lazy side does not influence generation).
pub fn case_ops(seed: u64, case: u64, max_len: usize) -> Vec<Op> {
    case_ops_on(NodeVersion::V26, seed, case, max_len)
}

/// [`case_ops`] on a version profile: on 20 the case starts with
/// `node-version 20` and draws only what that profile has.
pub fn case_ops_on(version: NodeVersion, seed: u64, case: u64, max_len: usize) -> Vec<Op> {
    let mut gen = CaseGen::new(seed, case, max_len);
    let mut eager = Eager::new();
    let mut ops = Vec::new();
    if version != NodeVersion::V26 {
        let op = Op::NodeVersion(version);
        let _ = eager.apply(&op);
        ops.push(op);
    }
    while let Some(op) = gen.next_op(&eager) {
        let _ = eager.apply(&op);
        ops.push(op);
    }
    ops
}

/// Whether the eager model accepts `op` in `eager`'s state.
pub fn accepts(eager: &Eager, op: &Op) -> bool {
    !eager.exited && eager.clone().apply(op).is_ok()
}
