//! Generators of op sequences that can happen in Node, biased toward what
//! breaks stacks. Each op is drawn from the state the eager model is in (a
//! [`CaseGen`] looks at the model after the ops so far) and the model
//! enables it ([`model::Environment::enabled`], asked by
//! [`crate::draw::enabled_op`]): every drawn op is one the model accepts,
//! and the generator keeps no copy of the model's rules, only bounds of its
//! own (`stop` only with a scope open above the main script's; hooks
//! `H1`..`H3`).
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

use crate::draw::{self, Choices, Role};
use model::env::microtasks::{Microtask, RunningMicrotask};
use model::env::Frame;
use model::vocab::{NodeVersion, Op, OpKind, Runtime, ScopeKind};
use model::Eager;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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

/// Most phases a case is split into.
pub const MAX_PHASES: usize = 5;

/// How much likelier `uncaught-exception` is in a `queueMicrotask`
/// callback's body than elsewhere: enough for `microtask-threw-with-lazy`
/// to be met in 1 % of the default check's cases.
const MICROTASK_THROW_FACTOR: u32 = 64;

/// How much rarer the ALS ops are on node version 20 than their weights
/// say: drawn in one draw in this many (`run` and `enterWith` make the rest
/// of the case eager there).
const V20_ALS_DIVISOR: u32 = 16;

/// The kinds [`V20_ALS_DIVISOR`] applies to (not `end-als-run`, which ends
/// a frame).
const V20_RARER: [OpKind; 6] = [
    OpKind::AlsRun,
    OpKind::AlsExit,
    OpKind::AlsEnterWith,
    OpKind::AlsGetStore,
    OpKind::AlsDisable,
    OpKind::AlsDefault,
];

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
            let draw::Weight {
                random: base, role, ..
            } = draw::weights(kind);
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
    /// The current phase's weights with the building factors applied
    /// ([`building_weights`]), while it builds.
    building: [u32; OpKind::COUNT],
    /// The last op was a `close-outer`: it may have left the closed scope's
    /// entry on top, whose resource is then read through freed memory.
    after_close_outer: bool,
    /// The last op was a `disable-hook`: if it left no hook enabled, a scope
    /// opened now is lazy inside the scopes opened while hooks were on.
    after_disable: bool,
    /// The last op queued a microtask with a body: a `tick-callback` next
    /// runs it inside the scopes open now (lazy ones, with no hook on).
    after_queue_body: bool,
    /// The last op was a `promise-reject`.
    after_reject: bool,
    /// On node version 20 the ALS ops are drawn in one draw in this many
    /// ([`V20_ALS_DIVISOR`] unless [`CaseGen::with_v20_als_one_in`]).
    v20_als_one_in: u32,
}

/// `phase`'s weights while it builds its stack: the kinds that deepen
/// eight times as likely, those that unwind or end JS never drawn.
fn building_weights(phase: &Phase) -> [u32; OpKind::COUNT] {
    let mut weights = phase.weights;
    for &kind in OpKind::ALL {
        let w = &mut weights[kind as usize];
        match draw::weights(kind).role {
            Role::Deepens => *w *= 8,
            Role::Unwinds | Role::EndsJs => *w = 0,
            Role::Other => {}
        }
    }
    weights
}

impl CaseGen {
    /// The generator of case `case` of the run with `seed`, with sequences
    /// up to `max_len` ops.
    pub fn new(seed: u64, case: u64, max_len: usize) -> CaseGen {
        let mut rng = case_rng(seed, case);
        let swarm = Swarm::draw(&mut rng, max_len);
        let built = swarm.phases[0].target_depth == 0;
        let building = building_weights(&swarm.phases[0]);
        CaseGen {
            rng,
            swarm,
            drawn: 0,
            phase: 0,
            built,
            building,
            after_close_outer: false,
            after_disable: false,
            after_queue_body: false,
            after_reject: false,
            v20_als_one_in: V20_ALS_DIVISOR,
        }
    }

    /// The same generator drawing the ALS ops on node version 20 in one
    /// draw in `n` (at least 1) of those that could: the conformance run
    /// wants them as often as on 26 (`n` = 1), the check fewer.
    pub fn with_v20_als_one_in(mut self, n: u32) -> CaseGen {
        self.v20_als_one_in = n.max(1);
        self
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
            if !self.built {
                self.building = building_weights(&self.swarm.phases[self.phase]);
            }
        }
        self.drawn += 1;
        let op = self.draw(eager);
        self.after_close_outer = matches!(op, Op::CloseOuter { .. });
        self.after_disable = matches!(op, Op::DisableHook(_));
        self.after_queue_body = matches!(op, Op::QueueMicrotaskBody);
        self.after_reject = matches!(op, Op::PromiseReject);
        Some(op)
    }

    /// The generator's own moves first (each kept only if the model enables
    /// it), then a kind by the phase's weights among those the model
    /// enables ([`draw::enabled_op`]).
    fn draw(&mut self, eager: &Eager) -> Op {
        if let Some(op) = self.steer(eager) {
            if eager.enabled(&op).is_ok() {
                return op;
            }
        }
        if !eager.js_running() {
            return self.native_only(eager);
        }
        let innermost = eager.frames.last();
        let reaction_without_hooks = eager.microtasks.installed.is_none()
            && matches!(
                innermost,
                Some(Frame::Microtask {
                    job: RunningMicrotask::Reaction { .. },
                    ..
                })
            );
        let phase = &self.swarm.phases[self.phase];
        if !self.built && nesting(eager) >= phase.target_depth {
            self.built = true;
        }
        let mut weights = if self.built {
            phase.weights
        } else {
            self.building
        };
        // In a reaction's body that started without promise hooks,
        // enabling one is what makes promiseAfterHook skip its pop (the
        // factors commute with the building ones: the same weight as
        // applying both per kind).
        if reaction_without_hooks {
            weights[OpKind::EnableHook as usize] *= 8;
        }
        // In a queueMicrotask callback's body, a throw is what runs the
        // uncaught-exception handler inside the checkpoint (issue 25).
        let in_callback_body = matches!(
            innermost,
            Some(Frame::Microtask {
                job: RunningMicrotask::Callback { .. },
                ..
            })
        );
        // Near the id stack's 16 pairs, a JS push is what grows it past
        // them (the native fallback, `js-push-past-16`).
        let stack_length = eager.async_hooks.fields.k_stack_length;
        if (14..=16).contains(&stack_length) {
            weights[OpKind::EmitBefore as usize] *= 2;
            weights[OpKind::EnterRunInAsyncScope as usize] *= 2;
        }
        // A runInAsyncScope whose entry is gone (a JS pop, a clear): its
        // finally then runs on what is below it, where only lazy scopes may
        // remain (`run-in-async-scope-finally-only-lazy`).
        let current = eager.async_hooks.async_id_fields.k_execution_async_id;
        if matches!(innermost, Some(Frame::RunInAsyncScope { async_id, .. }) if *async_id != current)
        {
            weights[OpKind::ExitRunInAsyncScope as usize] *= 4;
        }
        // Not on a deep stack, which the handler would clear before it
        // grows past 16 pairs.
        let shallow = stack_length < 16;
        if in_callback_body && shallow {
            weights[OpKind::UncaughtException as usize] *= MICROTASK_THROW_FACTOR;
        }
        // With an after hook on and scopes nested (some opened lazy before
        // it, perhaps), a throw: the handler's after loop runs over them
        // (uncaught-unwind-lazy).
        if eager.async_hooks.fields.k_after > 0 && eager.frames.len() > 2 && shallow {
            weights[OpKind::UncaughtException as usize] *= 3;
        }
        // On node version 20 the first `run` or `enterWith` enables
        // AsyncLocalStorage's init hook and `executionAsyncResource()`:
        // every scope after it is eager. The ALS ops rarer there, so that
        // the cases keep their lazy scopes (each situation in 1 % of them).
        if eager.version == NodeVersion::V20 && !self.rng.random_ratio(1, self.v20_als_one_in) {
            for kind in V20_RARER {
                weights[kind as usize] = 0;
            }
        }
        // `stop` only with a scope open above the main script's: a case
        // that stops at once does little else.
        if eager.frames.len() <= 1 {
            weights[OpKind::Stop as usize] = 0;
        }
        match draw::enabled_op(eager, &mut weights, self) {
            Some(op) => op,
            // The swarm left nothing for this state: end the innermost
            // frame (or open a scope).
            None => self.fallback(eager),
        }
    }

    /// Moves that lead where the weights alone seldom go: after a
    /// `disable-hook` that left no hook on, a scope (lazy, inside the scopes
    /// opened while hooks were on); now and then `node-version` first (the
    /// same node version: the program is the same); after a `close-outer`, a
    /// read of the resource whose entry it may have left dangling; in a
    /// callback that threw, its close.
    fn steer(&mut self, eager: &Eager) -> Option<Op> {
        // With an exception in flight only `catch` or `uncaught-exception`
        // can follow: the weighted draw picks between them.
        if eager.exception_in_flight {
            return None;
        }
        let follow_up = std::mem::take(&mut self.after_close_outer);
        let after_disable = std::mem::take(&mut self.after_disable);
        let after_queue_body = std::mem::take(&mut self.after_queue_body);
        let after_reject = std::mem::take(&mut self.after_reject);
        let f = &eager.async_hooks.fields;
        if after_disable
            && f.k_totals == 0
            && f.k_uses_execution_async_resource == 0
            && eager.frames.len() > 1
            && eager.js_running()
            && self.ratio(1, 3)
        {
            return Some(self.open_scope(eager));
        }
        if after_queue_body && f.k_totals == 0 && self.ratio(1, 3) {
            return Some(Op::TickCallback);
        }
        if eager.ops_applied == 0 && self.ratio(1, 32) {
            return Some(Op::NodeVersion(eager.version));
        }
        // `--unhandled-rejections` first now and then (weight 1 alone seldom
        // draws a header op); after a rejection that will throw,
        // `tick-callback` reports it where it is, in whatever lazy scopes
        // are open (rejection-thrown-with-lazy).
        if !eager.program_started && self.ratio(1, 5) {
            return draw::draw_enabled(OpKind::UnhandledRejections, eager, self);
        }
        // `--abort-on-uncaught-exception` ends a case at its first uncaught
        // exception: seldom.
        if !eager.program_started && self.ratio(1, 48) {
            return Some(Op::AbortOnUncaughtException);
        }
        if after_reject && eager.rejections.throws() && self.ratio(3, 4) {
            return Some(Op::TickCallback);
        }
        // In a queueMicrotask callback's body with no hook on: a tick with a
        // body, process._tickCallback() to run it there, and a throw in it,
        // which leaves the callback (tick-threw-in-microtask-with-lazy).
        if f.k_totals == 0 {
            if let Some(op) = self.tick_throw_in_callback(eager) {
                return Some(op);
            }
        }
        // In an ES module's body with a native scope open and no hook on:
        // a job queued, then process._tickCallback(), which runs the ticks
        // and no microtask there (module-body-tick-callback-with-lazy).
        if f.k_totals == 0
            && eager.async_callback_scope_depth > 1
            && eager.frames.first().is_some_and(Frame::is_module_body)
            && eager.js_running()
        {
            if eager.microtasks.queue.is_empty() {
                if self.ratio(1, 8) {
                    return Some(Op::QueueMicrotask);
                }
            } else if self.ratio(1, 4) {
                return Some(Op::TickCallback);
            }
        }
        if let Some(op) = self.bare_throw(eager) {
            return Some(op);
        }
        // A reaction queued in the outermost scope with promise hooks on:
        // its close runs it in its checkpoint (promise-hooks-at-outermost-close).
        if eager.async_callback_scope_depth == 1
            && eager.microtasks.installed.is_some()
            && eager.microtasks.queue.is_empty()
            && eager.js_running()
            && self.ratio(1, 12)
        {
            return Some(Op::PromiseThen);
        }
        // ... and with one queued, now and then that close.
        let reaction_queued =
            || (eager.microtasks.queue.iter()).any(|m| matches!(m, Microtask::Reaction { .. }));
        if eager.async_callback_scope_depth == 1
            && eager.microtasks.installed.is_some()
            && matches!(eager.frames.last(), Some(Frame::Native(s)) if !s.threw)
            && reaction_queued()
            && self.ratio(1, 8)
        {
            return Some(Op::CloseScope { threw: false });
        }
        // A first executionAsyncResource() makes every later scope eager:
        // rarer while the case has not made one yet.
        let odds = if eager.async_hooks.fields.k_uses_execution_async_resource == 0 {
            2
        } else {
            1
        };
        if follow_up && self.ratio(1, odds) {
            return Some(Op::ExecutionAsyncResource);
        }
        // With a store current, now and then a Timeout that captures it; from
        // the event loop with Timeouts waiting, mostly RunTimers; in
        // RunTimers' scope with Timeouts waiting: often the next one
        // (`timer` is enabled nowhere else); in a Timeout's callback, now and
        // then a native scope, or a handled throw, which leaves its frame
        // current (timer-store-after-handled-exception).
        let stored_timeout = || (eager.timers.waiting.iter()).any(|t| t.context_frame.has_stores());
        if eager.context_frame.has_stores()
            && eager.timers.waiting.len() < 2
            && !stored_timeout()
            && eager.js_running()
            && self.ratio(1, 2)
        {
            return Some(Op::SetTimeout);
        }
        match eager.frames.last() {
            Some(Frame::Native(main))
                if main.main_script
                    && eager.frames.len() == 1
                    && stored_timeout()
                    && self.ratio(1, 3)
                    && eager.enabled(&Op::CloseScope { threw: false }).is_ok() =>
            {
                return Some(Op::CloseScope { threw: false });
            }
            None if !eager.timers.waiting.is_empty() && !eager.is_stopping && self.ratio(3, 4) => {
                return Some(Op::TimersScope);
            }
            Some(Frame::Native(scope))
                if scope.run_timers
                    && !eager.timers.waiting.is_empty()
                    && self.ratio(if scope.handled_exception { 3 } else { 2 }, 4)
                    && eager.enabled(&Op::Timer).is_ok() =>
            {
                return Some(Op::Timer);
            }
            // In a Timeout's callback, now and then a native scope, lazy
            // unless a hook or executionAsyncResource() made scopes eager
            // (lazy-scope-in-timer).
            Some(Frame::Timer { .. }) if self.ratio(1, 4) => {
                return Some(self.open_scope(eager));
            }
            Some(Frame::Timer { .. }) if self.ratio(1, 2) => {
                return Some(Op::UncaughtException { handled: true });
            }
            _ => {}
        }
        if let Some(Frame::Native(scope)) = eager.frames.last() {
            if scope.threw {
                // Half the time `close threw` (refused on a bare scope).
                let threw = Op::CloseScope { threw: true };
                if self.ratio(1, 2) && eager.enabled(&threw).is_ok() {
                    return Some(threw);
                }
                return Some(Op::CloseScope { threw: false });
            }
        }
        None
    }

    /// The next step of a tick that throws out of a queueMicrotask
    /// callback's body, each now and then (see [`Self::steer`]).
    fn tick_throw_in_callback(&mut self, eager: &Eager) -> Option<Op> {
        match eager.frames.last()? {
            Frame::Microtask {
                job: RunningMicrotask::Callback { .. },
                ..
            } => {
                if eager.ticks.queue.iter().any(|t| t.body) {
                    self.ratio(3, 4).then_some(Op::TickCallback)
                } else {
                    self.ratio(1, 5).then_some(Op::NextTickBody)
                }
            }
            Frame::Tick { .. } if eager.catching_microtask().is_some() => {
                let handled = self.ratio(1, 2);
                self.ratio(3, 4)
                    .then_some(Op::UncaughtException { handled })
            }
            _ => None,
        }
    }

    /// Now and then, with a native scope open below: a bare make-callback
    /// where its callback would run through the trampoline, and the throw
    /// of a bare make-callback's callback, which goes to its caller or is
    /// lost (Node 26) with whatever lazy scopes were open below
    /// (bare-throw-to-caller-with-lazy, lost-exception-with-lazy).
    fn bare_throw(&mut self, eager: &Eager) -> Option<Op> {
        let f = &eager.async_hooks.fields;
        let below = eager.async_callback_scope_depth > 1;
        if let Some(Frame::Native(s)) = eager.frames.last() {
            let throw = Op::CloseScope { threw: true };
            if s.kind == ScopeKind::BareMakeCallback
                && !s.threw
                && below
                && self.ratio(1, 3)
                && eager.enabled(&throw).is_ok()
            {
                return Some(throw);
            }
        }
        let trampoline = eager.hooks.trampoline_installed
            && f.k_before + f.k_after + f.k_uses_execution_async_resource > 0;
        if trampoline && below && eager.js_running() && self.ratio(1, 12) {
            let op = draw::draw_op(OpKind::MakeCallback, eager, self);
            let op = draw::with_make_callback_kind(op, ScopeKind::BareMakeCallback);
            return Some(op).filter(|op| eager.enabled(op).is_ok());
        }
        None
    }

    /// When no swarm weight applies: end the innermost frame, or open a scope.
    fn fallback(&mut self, eager: &Eager) -> Op {
        match eager.unwinding_op() {
            Some(op) => op,
            None => self.open_from_event_loop(eager),
        }
    }

    /// From the event loop, with no scope open: a native callback's scope,
    /// or `Environment::RunTimers`' (one in four).
    fn open_from_event_loop(&mut self, eager: &Eager) -> Op {
        if self.ratio(1, 4) {
            Op::TimersScope
        } else {
            self.open_scope(eager)
        }
    }

    /// When no JavaScript can run (the environment is stopping, or every
    /// scope is closed and the event loop is idle): only native ops, most
    /// often the innermost scope's close.
    fn native_only(&mut self, eager: &Eager) -> Op {
        let Some(Frame::Native(_)) = eager.frames.last() else {
            return self.fallback(eager);
        };
        let kind = match self.below(10) {
            0..=6 => OpKind::CloseScope,
            7 => OpKind::ResetGlobal,
            _ => return self.open_scope(eager),
        };
        (draw::draw_enabled(kind, eager, self)).unwrap_or_else(|| self.open_scope(eager))
    }

    /// `callback-scope` or `make-callback` (two in five; not a bare one
    /// under `--abort-on-uncaught-exception`, where the model refuses it).
    fn open_scope(&mut self, eager: &Eager) -> Op {
        let kind = if self.ratio(2, 5) {
            OpKind::MakeCallback
        } else {
            OpKind::CallbackScope
        };
        let op = draw::draw_op(kind, eager, self);
        if eager.async_hooks.abort_on_uncaught_exception {
            return draw::with_make_callback_kind(op, ScopeKind::MakeCallback);
        }
        op
    }
}

impl Choices for CaseGen {
    fn below(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }

    fn ratio(&mut self, num: u32, den: u32) -> bool {
        self.rng.random_ratio(num, den)
    }

    fn id_care(&self) -> u32 {
        self.swarm.id_care
    }
}

/// The ops of case `case` of the run with `seed`, drawn against the eager
/// model alone (the lazy side does not influence generation).
pub fn case_ops(seed: u64, case: u64, max_len: usize) -> Vec<Op> {
    case_ops_on(NodeVersion::V26, seed, case, max_len)
}

/// [`case_ops`] on a node version: on 20 the case starts with
/// `node-version 20` and draws only what that node version has.
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
