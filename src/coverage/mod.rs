//! Coverage: the named situations a run reached, read off the lazy side's
//! state before and after each op. Random testing that never reaches the hard
//! situations proves nothing, so the runner counts them, in how many cases
//! each was reached too, and a test fails when a situation falls below its
//! floor (`tests/lockstep.rs`).
//!
//! The classification ([`classify_before`], [`classify_after`]) reports each
//! situation by its index in [`SITUATIONS`] to a [`Sink`]: [`Coverage`]
//! (counts by name, what the explorer reads) or [`Tally`] (fixed arrays and
//! a bit set per case, what the random check keeps: no map look-up per op).

use lazy::async_hooks::Top;
use lazy::{LazyStore, Path};
use model::env::callback_scope::InternalCallbackScope;
use model::env::microtasks::{Microtask, RunningMicrotask};
use model::env::resources::NativeSlot;
use model::env::{AlsRestore, Frame};
use model::vocab::{Observation, Op, OpKind, ResourceView};
use model::Environment;
use serde::Serialize;
use std::collections::BTreeMap;

mod situations;
use situation as s;
pub use situations::{exists_on, situation, SITUATIONS, SITUATION_COUNT};

/// Where the classification reports what it sees.
pub trait Sink {
    /// Situation `index` (into [`SITUATIONS`]) was met.
    fn hit(&mut self, index: usize);
    /// An op of kind `kind` was applied.
    fn op(&mut self, kind: OpKind);
}

/// Node version 20 with no storage enabled: a `run` or `enterWith` now
/// enables `storageHook` and reads `executionAsyncResource()`.
fn v20_first_store<S: LazyStore>(before: &Environment<S>) -> bool {
    before.version == model::vocab::NodeVersion::V20
        && !(before.js_objects.resource_stores()).is_some_and(|s| s.hook_enabled())
}

fn innermost_native<S: LazyStore>(lazy: &Environment<S>) -> Option<&InternalCallbackScope<S>> {
    match lazy.frames.last() {
        Some(Frame::Native(s)) => Some(s),
        _ => None,
    }
}

/// Report the situations `op` meets in `before` (the lazy state before it),
/// and the op's kind unless the process had ended.
pub fn classify_before<S: LazyStore>(sink: &mut impl Sink, before: &Environment<S>, op: &Op) {
    // Each frame scan below runs only once the cheaper conditions of its
    // situation hold (`&&` from left to right): the check's hot path.
    let kind = op.kind();
    if !before.exited {
        sink.op(kind);
    }
    let ah = &before.async_hooks;
    let lazies = ah.store.lazy().k_lazy_scopes > 0;
    let top = lazy::async_hooks::top(ah);
    let current = ah.async_id_fields.k_execution_async_id;
    let pushes = matches!(op, Op::EmitBefore { .. } | Op::EnterRunInAsyncScope { .. });
    if pushes && top == Top::Lazy {
        sink.hit(s::JS_PUSH_ABOVE_LAZY);
    }
    if matches!(op, Op::ExecutionAsyncResource) {
        if top == Top::Lazy {
            sink.hit(s::RESOURCE_LAZY_INNERMOST);
        }
        if lazies && top == Top::Stack {
            sink.hit(s::RESOURCE_JS_ABOVE_LAZY);
        }
        if lazies && ah.fields.k_uses_execution_async_resource == 0 {
            sink.hit(s::FIRST_RESOURCE_IN_LAZY);
        }
    }
    if let Op::EmitAfter { async_id } = op {
        if top == Top::Lazy {
            if *async_id == current {
                sink.hit(s::JS_POP_LAZY_MATCHING);
            } else {
                sink.hit(s::JS_POP_LAZY_WRONG);
            }
        }
    }
    if matches!(op, Op::ExitRunInAsyncScope) && lazies && !before.is_stopping {
        if ah.fields.k_stack_length > 0 {
            sink.hit(s::RUN_IN_ASYNC_SCOPE_FINALLY_LAZY);
        } else {
            sink.hit(s::RUN_IN_ASYNC_SCOPE_FINALLY_ONLY_LAZY);
        }
    }
    // The handler's after loop and clear: at the throw, or once the
    // listener returns.
    let unwinds = matches!(op, Op::UncaughtException { handled: true })
        || (matches!(op, Op::EndListener) && !before.is_stopping);
    if unwinds {
        if lazies && ah.fields.k_after > 0 {
            sink.hit(s::UNCAUGHT_UNWIND_LAZY);
        }
        if lazies {
            sink.hit(s::CLEAR_WITH_LAZY);
        }
    }
    if let (Op::CloseOuter { outer }, false) = (op, before.is_stopping) {
        let closed = before
            .frames
            .iter()
            .rev()
            .filter_map(|f| match f {
                Frame::Native(s) => Some(s),
                _ => None,
            })
            .nth(*outer as usize);
        let passes = closed.is_some_and(|s| s.async_context.async_id == current);
        if closed.is_some_and(|s| s.entered == Path::Lazy) && passes {
            sink.hit(s::LAZY_CLOSE_OUT_OF_ORDER);
            let prior_has = closed.is_some_and(|s| s.prior_context_frame.has_stores());
            if prior_has || before.context_frame.has_stores() {
                sink.hit(s::LAZY_CLOSE_OUT_OF_ORDER_WITH_STORES);
            }
        }
    }
    if let Some(scope) = innermost_native(before) {
        if scope.handled_exception
            && !scope.threw
            && kind != OpKind::CloseScope
            && before.js_running()
        {
            sink.hit(s::JS_AFTER_HANDLED_EXCEPTION);
        }
        if kind == OpKind::Timer
            && scope.run_timers
            && scope.entered == Path::Lazy
            && scope.handled_exception
            && (before.context_frame.has_stores()
                || (before.timers.waiting.front()).is_some_and(|t| t.context_frame.has_stores()))
        {
            sink.hit(s::TIMER_STORE_AFTER_HANDLED_EXCEPTION);
        }
        if kind == OpKind::Timer
            && scope.run_timers
            && scope.entered == Path::Lazy
            && top == Top::Lazy
        {
            sink.hit(s::TIMER_PUSH_ABOVE_LAZY);
        }
    }
    let module_entry = before.frames.first().is_some_and(Frame::is_module_body);
    if module_entry && lazies && !before.is_stopping {
        sink.hit(s::MODULE_ENTRY_WITH_LAZY);
        if matches!(op, Op::TickCallback) && !before.microtasks.queue.is_empty() {
            sink.hit(s::MODULE_BODY_TICK_CALLBACK_WITH_LAZY);
        }
    }
    if matches!(op, Op::NextTick { .. } | Op::NextTickBody)
        && before.js_running()
        && (before.frames.iter()).any(|f| matches!(f, Frame::Tick { .. }))
    {
        sink.hit(s::NEXT_TICK_IN_TICK);
    }
    if matches!(op, Op::UncaughtException { .. })
        && matches!(before.frames.last(), Some(Frame::Tick { .. }))
        && before.js_running()
    {
        sink.hit(s::TICK_THREW);
        if lazies && before.catching_microtask().is_some() {
            sink.hit(s::TICK_THREW_IN_MICROTASK_WITH_LAZY);
        }
    }
    if let Op::UncaughtException { handled: true } = op {
        let callback = matches!(
            before.frames.last(),
            Some(Frame::Microtask {
                job: RunningMicrotask::Callback { .. },
                ..
            })
        );
        if lazies && callback {
            sink.hit(s::MICROTASK_THREW_WITH_LAZY);
        }
    }
    if matches!(op, Op::TickCallback)
        && lazies
        && !before.rejections.pending.is_empty()
        && before.rejections.throws()
        && before.rejections.uncaught_listener
        && before.js_running()
    {
        sink.hit(s::REJECTION_THROWN_WITH_LAZY);
    }
    if matches!(op, Op::ClearAsyncIdStack) && lazies {
        sink.hit(s::CLEAR_WITH_LAZY);
    }
    if matches!(op, Op::EnableHook(_)) && lazies && ah.fields.k_totals == 0 {
        sink.hit(s::HOOK_ENABLED_IN_LAZY);
    }
    if matches!(op, Op::Stop) && lazies && ah.fields.k_stack_length > 0 && !before.is_stopping {
        sink.hit(s::STOP_WITH_LAZY_AND_EAGER);
    }
    if let Op::ResetGlobal(r) = op {
        let held = before
            .frames
            .iter()
            .any(|f| matches!(f, Frame::Native(s) if s.resource == NativeSlot::Global(*r)));
        if held {
            sink.hit(s::GLOBAL_RESET_OPEN);
        }
    }
    if let (Op::CloseScope { threw: false }, Some(scope)) = (op, innermost_native(before)) {
        // The close runs the microtasks (the checkpoint, or runMicrotasks
        // after its ticks) with promise hooks installed and a reaction queued.
        let reaction =
            (before.microtasks.queue.iter()).any(|m| matches!(m, Microtask::Reaction { .. }));
        if before.async_callback_scope_depth == 1
            && !scope.failed
            && !scope.skip_task_queues
            && !before.is_stopping
            && before.microtasks.installed.is_some()
            && reaction
        {
            sink.hit(s::PROMISE_HOOKS_AT_OUTERMOST_CLOSE);
        }
        if before.async_callback_scope_depth == 1
            && !scope.failed
            && !scope.skip_task_queues
            && !before.is_stopping
            && !before.ticks.has_tick_scheduled
            && before.rejections.has_rejection_to_warn
        {
            sink.hit(s::REJECTION_AT_OUTERMOST_CLOSE);
        }
    }
    if let (Op::CloseScope { .. }, Some(scope)) = (op, innermost_native(before)) {
        if scope.entered == Path::Lazy && !before.is_stopping {
            let own = ah.store.lazy().lazy_scopes.last().map(|l| l.async_id)
                == Some(scope.async_context.async_id);
            if !lazies {
                sink.hit(s::LAZY_CLOSE_AFTER_CLEAR);
            } else if top != Top::Lazy || !own {
                sink.hit(s::LAZY_CLOSE_NOT_INNERMOST);
            }
        }
        if before.async_callback_scope_depth == 1 && ah.fields.k_totals > 0 && !before.is_stopping {
            sink.hit(s::OUTERMOST_CLOSE_WITH_HOOKS);
        }
    }
    if pushes && ah.fields.k_stack_length as usize >= ah.stack_capacity_pairs {
        sink.hit(s::JS_PUSH_PAST_16);
    }
    // Each arm asks whether JS runs in a lazy scope only once its op matched.
    let in_lazy = || {
        before.js_running()
            && innermost_native_scope(before).is_some_and(|s| s.entered == Path::Lazy)
    };
    match op {
        Op::AlsGetStore(_) if in_lazy() => sink.hit(s::ALS_GET_STORE_IN_LAZY),
        Op::AlsEnterWith { .. } if in_lazy() => {
            sink.hit(s::ALS_ENTER_WITH_IN_LAZY);
            if v20_first_store(before) {
                sink.hit(s::V20_STORAGE_ENABLED_IN_LAZY);
            }
        }
        Op::AlsRun { .. } if v20_first_store(before) && in_lazy() => {
            sink.hit(s::V20_STORAGE_ENABLED_IN_LAZY)
        }
        Op::NextTick { .. } if before.context_frame.has_stores() && in_lazy() => {
            sink.hit(s::TICK_STORE_FROM_LAZY)
        }
        Op::EnterRunInAsyncScope { resource, .. }
            if (before.js_objects.resource_frame(resource)).is_some_and(|f| f.has_stores())
                && in_lazy() =>
        {
            sink.hit(s::RESOURCE_FRAME_IN_LAZY)
        }
        _ => {}
    }
    if let (
        Op::EndMicrotask,
        Some(Frame::Microtask {
            job: RunningMicrotask::Reaction { promise },
            ..
        }),
    ) = (op, before.frames.last())
    {
        // promiseAfterHook pops only when the promise's id (tracked now if
        // it was not) is the execution id.
        let current_is_its = promise.is_some_and(|(id, _)| id == current);
        if !before.is_stopping && before.microtasks.installed.is_some() && !current_is_its {
            sink.hit(s::PROMISE_AFTER_NO_POP);
        }
    }
    if lazies
        && before.js_running()
        && !matches!(op, Op::EndMicrotask)
        && (before.frames.iter()).any(|f| matches!(f, Frame::Microtask { .. }))
    {
        sink.hit(s::JS_IN_CHECKPOINT_WITH_LAZY);
    }
    if let (Op::CloseScope { .. }, Some(scope)) = (op, innermost_native(before)) {
        let in_run = (before.frames.iter())
            .any(|f| matches!(f, Frame::AlsRun { restore, .. } if *restore != AlsRestore::Nothing));
        if scope.entered == Path::Lazy && scope.pushed_ids && in_run && !before.is_stopping {
            sink.hit(s::ALS_RUN_AROUND_LAZY_CLOSE);
        }
    }
}

/// The innermost open native scope, JS frames inside it skipped.
fn innermost_native_scope<S: LazyStore>(
    lazy: &Environment<S>,
) -> Option<&InternalCallbackScope<S>> {
    lazy.frames.iter().rev().find_map(|f| match f {
        Frame::Native(s) => Some(s),
        _ => None,
    })
}

/// Report the situations visible after `op` (`after` is the lazy state,
/// `observations` what it showed); `closing_lazy`: the op closed a scope
/// that took the lazy path.
pub fn classify_after<S: LazyStore>(
    sink: &mut impl Sink,
    closing_lazy: bool,
    after: &Environment<S>,
    op: &Op,
    observations: &[Observation],
) {
    let ah = &after.async_hooks;
    if let (Op::NapiMakeCallback(_), Some(scope)) = (op, innermost_native(after)) {
        if scope.entered == Path::Lazy && !after.context_frame.is_undefined() {
            sink.hit(s::LAZY_SCOPE_ENTERS_STORED_FRAME);
        }
    }
    if matches!(op, Op::OpenScope { .. } | Op::NapiMakeCallback(_)) {
        if let Some(scope) = innermost_native(after) {
            let outer = || after.frames.iter().rev().skip(1);
            if scope.entered == Path::Lazy {
                if ah
                    .store
                    .lazy()
                    .lazy_scopes
                    .last()
                    .is_some_and(|l| l.stack_position > 0)
                {
                    sink.hit(s::LAZY_ABOVE_JS);
                }
                if outer().any(|f| matches!(f, Frame::Tick { .. })) {
                    sink.hit(s::LAZY_SCOPE_IN_TICK);
                }
                if outer().any(|f| matches!(f, Frame::Timer { .. })) {
                    sink.hit(s::LAZY_SCOPE_IN_TIMER);
                }
                if outer().any(|f| matches!(f, Frame::Microtask { .. })) {
                    sink.hit(s::JS_IN_CHECKPOINT_WITH_LAZY);
                }
                let outer_has_eager = outer().any(
                    |f| matches!(f, Frame::Native(s) if s.entered != Path::Lazy && s.pushed_ids),
                );
                if outer_has_eager {
                    sink.hit(s::LAZY_IN_EAGER);
                }
                if outer().any(|f| matches!(f, Frame::Listener))
                    && outer().any(|f| matches!(f, Frame::Native(s) if s.entered == Path::Lazy))
                {
                    sink.hit(s::LISTENER_OPENS_LAZY_WITH_LAZY);
                }
            } else if scope.pushed_ids {
                let outer_has_lazy =
                    outer().any(|f| matches!(f, Frame::Native(s) if s.entered == Path::Lazy));
                if outer_has_lazy {
                    sink.hit(s::EAGER_IN_LAZY);
                }
            }
        }
    }
    if ah.store.lazy().k_lazy_scopes > 0 && ah.fields.k_stack_length > 0 && ah.depth() > 16 {
        sink.hit(s::DEEP_WITH_LAZY);
    }
    let microtask = observations
        .iter()
        .any(|o| matches!(o, Observation::Microtask { .. }));
    if microtask && ah.store.lazy().k_lazy_scopes > 0 {
        sink.hit(s::MICROTASK_IN_LAZY);
    }
    let rejection =
        (observations.iter()).any(|o| matches!(o, Observation::UnhandledRejection { .. }));
    if rejection && ah.store.lazy().k_lazy_scopes > 0 {
        sink.hit(s::REJECTION_IN_LAZY);
    }
    let lazy_open = ah.store.lazy().k_lazy_scopes > 0;
    if matches!(op, Op::CloseScope { threw: true }) && after.exception_in_flight && lazy_open {
        sink.hit(s::BARE_THROW_TO_CALLER_WITH_LAZY);
    }
    for o in observations {
        match o {
            Observation::ExceptionLost if lazy_open => sink.hit(s::LOST_EXCEPTION_WITH_LAZY),
            Observation::CorruptedStack { .. } => match op {
                Op::CloseScope { .. } if closing_lazy => sink.hit(s::CORRUPTED_ON_LAZY_CLOSE),
                Op::CloseScope { .. } => {}
                _ => sink.hit(s::CORRUPTED_ON_JS_POP),
            },
            Observation::CheckFailed(_) => sink.hit(s::CHECK_FAILED),
            Observation::ExecutionAsyncResource(ResourceView::Unspecified)
            | Observation::Tick {
                resource: Some(ResourceView::Unspecified),
                ..
            } => sink.hit(s::UNSPECIFIED_RESOURCE),
            Observation::Tick { .. } => sink.hit(s::TICKS_RUN),
            _ => {}
        }
    }
}

/// Whether `op` closes a scope that took the lazy path (`lazy` is the
/// state before it): what [`classify_after`] takes as `closing_lazy`.
pub fn closes_lazy_scope<S: LazyStore>(lazy: &Environment<S>, op: &Op) -> bool {
    matches!(op, Op::CloseScope { .. })
        && matches!(lazy.frames.last(), Some(Frame::Native(s)) if s.entered == Path::Lazy)
}

/// A lazy side the situations are read off, whichever its store (the pull
/// request's or a mutant's): what the explorer holds its side as.
pub trait LazySide {
    /// [`Coverage::before_op`] on this state.
    fn before_op(&self, coverage: &mut Coverage, op: &Op);
    /// [`Coverage::after_op`] on this state.
    fn after_op(&self, coverage: &mut Coverage, closing_lazy: bool, op: &Op, obs: &[Observation]);
    /// [`closes_lazy_scope`] on this state.
    fn closes_lazy_scope(&self, op: &Op) -> bool;
}

impl<S: LazyStore> LazySide for Environment<S> {
    fn before_op(&self, coverage: &mut Coverage, op: &Op) {
        coverage.before_op(self, op);
    }

    fn after_op(&self, coverage: &mut Coverage, closing_lazy: bool, op: &Op, obs: &[Observation]) {
        coverage.after_op(closing_lazy, self, op, obs);
    }

    fn closes_lazy_scope(&self, op: &Op) -> bool {
        closes_lazy_scope(self, op)
    }
}

/// Counts of situations and op kinds reached, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Situation name → times reached.
    pub situations: BTreeMap<&'static str, u64>,
    /// Op kind → times applied.
    pub ops: BTreeMap<&'static str, u64>,
    /// Situation name → cases that reached it at least once (filled by
    /// [`Tally::coverage`]; empty when nobody counted cases).
    pub cases_reaching: BTreeMap<&'static str, u64>,
    /// Cases run (0 when nobody counted cases).
    pub cases: u64,
}

impl Sink for Coverage {
    fn hit(&mut self, index: usize) {
        *self.situations.entry(SITUATIONS[index].0).or_default() += 1;
    }

    fn op(&mut self, kind: OpKind) {
        *self.ops.entry(kind.name()).or_default() += 1;
    }
}

impl Coverage {
    /// Record the situations `op` meets in `before` (the lazy state before it).
    pub fn before_op<S: LazyStore>(&mut self, before: &Environment<S>, op: &Op) {
        classify_before(self, before, op);
    }

    /// Record the situations visible after `op` (`after` is the lazy state,
    /// `observations` what it showed);
    /// `closing_lazy`: the op closed a scope that took the lazy path.
    pub fn after_op<S: LazyStore>(
        &mut self,
        closing_lazy: bool,
        after: &Environment<S>,
        op: &Op,
        observations: &[Observation],
    ) {
        classify_after(self, closing_lazy, after, op, observations);
    }

    /// Add another run's counts.
    pub fn merge(&mut self, other: &Coverage) {
        for (k, v) in &other.situations {
            *self.situations.entry(k).or_default() += v;
        }
        for (k, v) in &other.ops {
            *self.ops.entry(k).or_default() += v;
        }
        for (k, v) in &other.cases_reaching {
            *self.cases_reaching.entry(k).or_default() += v;
        }
        self.cases += other.cases;
    }

    /// Situations and op kinds never reached.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut missing: Vec<&'static str> = SITUATIONS
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| !self.situations.contains_key(name))
            .collect();
        missing.extend(
            (OpKind::ALL.iter())
                .map(|k| k.name())
                .filter(|k| !self.ops.contains_key(k)),
        );
        missing
    }

    /// The percentage of cases that reached `name` (`None` when cases were
    /// not counted).
    pub fn case_percent(&self, name: &str) -> Option<f64> {
        (self.cases > 0).then(|| {
            100.0 * self.cases_reaching.get(name).copied().unwrap_or(0) as f64 / self.cases as f64
        })
    }

    /// Situations reached in fewer than `floor_percent` % of the cases, with
    /// their percentage (empty when cases were not counted).
    pub fn below(&self, floor_percent: f64) -> Vec<(&'static str, f64)> {
        SITUATIONS
            .iter()
            .filter_map(|(name, _)| {
                let p = self.case_percent(name)?;
                (p < floor_percent).then_some((*name, p))
            })
            .collect()
    }

    /// The coverage table, one row per situation and op kind; with the
    /// cases counted, how many cases reached each situation and what share
    /// of all cases that is.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "situation                                times    cases  % cases  description\n",
        );
        for (name, what) in SITUATIONS {
            let n = self.situations.get(name).copied().unwrap_or(0);
            let (cases, percent) = match self.case_percent(name) {
                Some(p) => (
                    self.cases_reaching
                        .get(name)
                        .copied()
                        .unwrap_or(0)
                        .to_string(),
                    format!("{p:.2}"),
                ),
                None => ("-".to_string(), "-".to_string()),
            };
            out.push_str(&format!(
                "{name:<38} {n:>8} {cases:>8} {percent:>8}  {what}\n"
            ));
        }
        out.push_str("\nop kind                                   times\n");
        for k in OpKind::ALL.iter().map(|k| k.name()) {
            let n = self.ops.get(k).copied().unwrap_or(0);
            out.push_str(&format!("{k:<38} {n:>8}\n"));
        }
        out
    }
}

/// What the random check keeps while it runs: counts in fixed arrays, and
/// the situations the current case met as a bit set, so that each case
/// counts once per situation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Times each situation was met.
    pub times: [u64; SITUATION_COUNT],
    /// Cases that met each situation.
    pub cases_reaching: [u64; SITUATION_COUNT],
    /// Ops applied, by kind.
    pub ops: [u64; OpKind::COUNT],
    /// Cases ended.
    pub cases: u64,
    current: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            times: [0; SITUATION_COUNT],
            cases_reaching: [0; SITUATION_COUNT],
            ops: [0; OpKind::COUNT],
            cases: 0,
            current: 0,
        }
    }
}

impl Sink for Tally {
    fn hit(&mut self, index: usize) {
        self.times[index] += 1;
        self.current |= 1 << index;
    }

    fn op(&mut self, kind: OpKind) {
        self.ops[kind as usize] += 1;
    }
}

impl Tally {
    /// End the current case: each situation it met counts one case.
    pub fn end_case(&mut self) {
        let mut bits = std::mem::take(&mut self.current);
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            self.cases_reaching[i] += 1;
            bits &= bits - 1;
        }
        self.cases += 1;
    }

    /// The situations the current case met so far, as a bit set over
    /// [`SITUATIONS`].
    pub fn current_case(&self) -> u64 {
        self.current
    }

    /// Add another tally's counts (of ended cases).
    pub fn merge(&mut self, other: &Tally) {
        for i in 0..SITUATION_COUNT {
            self.times[i] += other.times[i];
            self.cases_reaching[i] += other.cases_reaching[i];
        }
        for i in 0..OpKind::COUNT {
            self.ops[i] += other.ops[i];
        }
        self.cases += other.cases;
    }

    /// The same counts by name (situations and op kinds never reached are
    /// left out, as [`Coverage`] counts them).
    pub fn coverage(&self) -> Coverage {
        let mut c = Coverage {
            cases: self.cases,
            ..Coverage::default()
        };
        for (i, (name, _)) in SITUATIONS.iter().enumerate() {
            if self.times[i] > 0 {
                c.situations.insert(name, self.times[i]);
                c.cases_reaching.insert(name, self.cases_reaching[i]);
            }
        }
        for (i, kind) in OpKind::ALL.iter().enumerate() {
            if self.ops[i] > 0 {
                c.ops.insert(kind.name(), self.ops[i]);
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_constants_follow_situations() {
        assert_eq!(SITUATIONS.len(), SITUATION_COUNT);
        let named = [
            (s::JS_PUSH_ABOVE_LAZY, "js-push-above-lazy"),
            (s::LAZY_ABOVE_JS, "lazy-above-js"),
            (s::RESOURCE_LAZY_INNERMOST, "resource-lazy-innermost"),
            (s::RESOURCE_JS_ABOVE_LAZY, "resource-js-above-lazy"),
            (s::JS_POP_LAZY_MATCHING, "js-pop-lazy-matching"),
            (s::JS_POP_LAZY_WRONG, "js-pop-lazy-wrong"),
            (
                s::RUN_IN_ASYNC_SCOPE_FINALLY_LAZY,
                "run-in-async-scope-finally-lazy",
            ),
            (
                s::RUN_IN_ASYNC_SCOPE_FINALLY_ONLY_LAZY,
                "run-in-async-scope-finally-only-lazy",
            ),
            (s::UNCAUGHT_UNWIND_LAZY, "uncaught-unwind-lazy"),
            (s::CLEAR_WITH_LAZY, "clear-with-lazy"),
            (s::LAZY_CLOSE_AFTER_CLEAR, "lazy-close-after-clear"),
            (s::HOOK_ENABLED_IN_LAZY, "hook-enabled-in-lazy"),
            (s::FIRST_RESOURCE_IN_LAZY, "first-resource-in-lazy"),
            (s::EAGER_IN_LAZY, "eager-in-lazy"),
            (s::LAZY_IN_EAGER, "lazy-in-eager"),
            (s::DEEP_WITH_LAZY, "deep-with-lazy"),
            (s::JS_PUSH_PAST_16, "js-push-past-16"),
            (s::STOP_WITH_LAZY_AND_EAGER, "stop-with-lazy-and-eager"),
            (s::GLOBAL_RESET_OPEN, "global-reset-open"),
            (s::OUTERMOST_CLOSE_WITH_HOOKS, "outermost-close-with-hooks"),
            (s::LAZY_CLOSE_NOT_INNERMOST, "lazy-close-not-innermost"),
            (s::CORRUPTED_ON_LAZY_CLOSE, "corrupted-on-lazy-close"),
            (s::CORRUPTED_ON_JS_POP, "corrupted-on-js-pop"),
            (s::CHECK_FAILED, "check-failed"),
            (s::TICKS_RUN, "ticks-run"),
            (s::LAZY_CLOSE_OUT_OF_ORDER, "lazy-close-out-of-order"),
            (s::JS_AFTER_HANDLED_EXCEPTION, "js-after-handled-exception"),
            (s::MODULE_ENTRY_WITH_LAZY, "module-entry-with-lazy"),
            (s::UNSPECIFIED_RESOURCE, "unspecified-resource"),
            (s::ALS_GET_STORE_IN_LAZY, "als-get-store-in-lazy"),
            (s::ALS_RUN_AROUND_LAZY_CLOSE, "als-run-around-lazy-close"),
            (s::ALS_ENTER_WITH_IN_LAZY, "als-enter-with-in-lazy"),
            (s::TICK_STORE_FROM_LAZY, "tick-store-from-lazy"),
            (s::RESOURCE_FRAME_IN_LAZY, "resource-frame-in-lazy"),
            (s::NEXT_TICK_IN_TICK, "next-tick-in-tick"),
            (s::LAZY_SCOPE_IN_TICK, "lazy-scope-in-tick"),
            (s::TICK_THREW, "tick-threw"),
            (s::MICROTASK_IN_LAZY, "microtask-in-lazy"),
            (
                s::PROMISE_HOOKS_AT_OUTERMOST_CLOSE,
                "promise-hooks-at-outermost-close",
            ),
            (
                s::REJECTION_AT_OUTERMOST_CLOSE,
                "rejection-at-outermost-close",
            ),
            (s::REJECTION_IN_LAZY, "rejection-in-lazy"),
            (s::PROMISE_AFTER_NO_POP, "promise-after-no-pop"),
            (s::JS_IN_CHECKPOINT_WITH_LAZY, "js-in-checkpoint-with-lazy"),
            // Issue 24.
            (
                s::LAZY_SCOPE_ENTERS_STORED_FRAME,
                "lazy-scope-enters-stored-frame",
            ),
            (
                s::LAZY_CLOSE_OUT_OF_ORDER_WITH_STORES,
                "lazy-close-out-of-order-with-stores",
            ),
            (s::MICROTASK_THREW_WITH_LAZY, "microtask-threw-with-lazy"),
            (s::REJECTION_THROWN_WITH_LAZY, "rejection-thrown-with-lazy"),
            (
                s::TICK_THREW_IN_MICROTASK_WITH_LAZY,
                "tick-threw-in-microtask-with-lazy",
            ),
            (
                s::LISTENER_OPENS_LAZY_WITH_LAZY,
                "listener-opens-lazy-with-lazy",
            ),
            (
                s::V20_STORAGE_ENABLED_IN_LAZY,
                "v20-storage-enabled-in-lazy",
            ),
            (
                s::MODULE_BODY_TICK_CALLBACK_WITH_LAZY,
                "module-body-tick-callback-with-lazy",
            ),
            (
                s::TIMER_STORE_AFTER_HANDLED_EXCEPTION,
                "timer-store-after-handled-exception",
            ),
            (s::TIMER_PUSH_ABOVE_LAZY, "timer-push-above-lazy"),
            (s::LAZY_SCOPE_IN_TIMER, "lazy-scope-in-timer"),
            (s::LOST_EXCEPTION_WITH_LAZY, "lost-exception-with-lazy"),
            (
                s::BARE_THROW_TO_CALLER_WITH_LAZY,
                "bare-throw-to-caller-with-lazy",
            ),
        ];
        assert_eq!(named.len(), SITUATION_COUNT);
        for (i, name) in named {
            assert_eq!(SITUATIONS[i].0, name);
        }
    }

    #[test]
    fn a_case_counts_once_per_situation() {
        let mut t = Tally::default();
        t.hit(s::TICKS_RUN);
        t.hit(s::TICKS_RUN);
        t.hit(s::CHECK_FAILED);
        t.end_case();
        t.hit(s::TICKS_RUN);
        t.end_case();
        t.end_case();
        assert_eq!(t.times[s::TICKS_RUN], 3);
        assert_eq!(t.cases_reaching[s::TICKS_RUN], 2);
        assert_eq!(t.cases_reaching[s::CHECK_FAILED], 1);
        assert_eq!(t.cases, 3);
        let c = t.coverage();
        assert_eq!(c.case_percent("ticks-run"), Some(200.0 / 3.0));
        assert_eq!(c.case_percent("lazy-in-eager"), Some(0.0));
        assert!(c.below(1.0).iter().any(|(n, _)| *n == "lazy-in-eager"));
        assert!(!c.below(1.0).iter().any(|(n, _)| *n == "ticks-run"));
    }

    #[test]
    fn the_als_situations_are_met_where_they_are_named() {
        let text = "async-resource R3\ncallback-scope 5 1 R1\nals-enter-with A1 2\nals-get-store A1\nnext-tick\nals-run A2 1\ncallback-scope 6 1 R2\nclose\nend-als-run\nrun-in-async-scope 7 5 R3\nend-run-in-async-scope\nclose\n";
        let ops = model::vocab::trace::parse(text).expect("parses").ops();
        let mut c = Coverage::default();
        crate::check::run_with_coverage(&ops, None, true, &mut c).expect("no divergence");
        // R3 captured no store, so its runInAsyncScope is not the situation.
        for (name, times) in [
            ("als-enter-with-in-lazy", Some(&1)),
            ("als-get-store-in-lazy", Some(&1)),
            ("tick-store-from-lazy", Some(&1)),
            ("als-run-around-lazy-close", Some(&1)),
            ("resource-frame-in-lazy", None),
        ] {
            assert_eq!(c.situations.get(name), times, "{name}");
        }
        // On v20 the frame's situations do not exist; v20's own does, and
        // is met at its first store in a lazy scope, not at the second.
        use model::vocab::NodeVersion::{V20, V26};
        assert!(!exists_on(V20, "tick-store-from-lazy"));
        assert!(exists_on(V20, "als-get-store-in-lazy") && exists_on(V20, "lazy-in-eager"));
        assert!(exists_on(V20, "v20-storage-enabled-in-lazy"));
        assert!(!exists_on(V26, "v20-storage-enabled-in-lazy"));
        assert_eq!(c.situations.get("v20-storage-enabled-in-lazy"), None);
        let v20 = format!(
            "node-version 20\n{}",
            text.replace("async-resource R3\n", "")
        );
        let ops = model::vocab::trace::parse(&v20).expect("parses").ops();
        let mut c = Coverage::default();
        crate::check::run_with_coverage(&ops, None, true, &mut c).expect("no divergence");
        assert_eq!(c.situations.get("v20-storage-enabled-in-lazy"), Some(&1));
    }
}
