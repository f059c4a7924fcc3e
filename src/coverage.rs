//! Coverage: the named situations a run reached, read off the lazy side's
//! state before and after each op. Random testing that never reaches the hard
//! situations proves nothing, so the runner counts them and a test fails when
//! the default run misses any.

use lazy::async_hooks::Top;
use lazy::{Lazy, LazyStack, Path};
use model::env::callback_scope::InternalCallbackScope;
use model::env::resources::NativeSlot;
use model::env::Frame;
use model::vocab::{Observation, Op, ResourceView, OP_KINDS};
use std::collections::BTreeMap;

/// The situations of `lazy-scopes.md` (and a few more), each with its name.
pub const SITUATIONS: &[(&str, &str)] = &[
    (
        "js-push-above-lazy",
        "a JS context pushed above a lazy scope",
    ),
    ("lazy-above-js", "a lazy scope opened above JS contexts"),
    (
        "resource-lazy-innermost",
        "executionAsyncResource() whose innermost entry is a lazy scope",
    ),
    (
        "resource-js-above-lazy",
        "executionAsyncResource() with a JS context above a lazy scope",
    ),
    (
        "js-pop-lazy-matching",
        "JS pop (emitAfter) whose innermost entry is a lazy scope, matching id",
    ),
    (
        "js-pop-lazy-wrong",
        "JS pop (emitAfter) whose innermost entry is a lazy scope, wrong id",
    ),
    (
        "run-in-async-scope-finally-lazy",
        "runInAsyncScope's finally (hasAsyncIdStack) with lazy scopes under eager entries",
    ),
    (
        "run-in-async-scope-finally-only-lazy",
        "runInAsyncScope's finally when only lazy scopes remain (kStackLength 0)",
    ),
    (
        "uncaught-unwind-lazy",
        "the uncaught-exception unwinding loop with lazy scopes open",
    ),
    (
        "clear-with-lazy",
        "clearAsyncIdStack() while lazy scopes are open",
    ),
    (
        "lazy-close-after-clear",
        "a lazy scope closed after a clear",
    ),
    ("hook-enabled-in-lazy", "a hook enabled inside a lazy scope"),
    (
        "first-resource-in-lazy",
        "the first executionAsyncResource() inside a lazy scope",
    ),
    ("eager-in-lazy", "an eager scope nested in a lazy one"),
    ("lazy-in-eager", "a lazy scope nested in an eager one"),
    (
        "deep-with-lazy",
        "more than 16 entries with lazy scopes interleaved",
    ),
    (
        "js-push-past-16",
        "a JS push past 16 pairs (native fallback)",
    ),
    (
        "stop-with-lazy-and-eager",
        "the environment stopping with lazy and eager scopes nested",
    ),
    (
        "global-reset-open",
        "a Global resource reset while its scope is open",
    ),
    (
        "outermost-close-with-hooks",
        "the outermost close with kTotals != 0 (the CHECK)",
    ),
    (
        "lazy-close-not-innermost",
        "a lazy scope closed while another entry is innermost",
    ),
    (
        "corrupted-on-lazy-close",
        "a corrupted stack detected at a lazy scope's close",
    ),
    (
        "corrupted-on-js-pop",
        "a corrupted stack detected by a JS pop",
    ),
    ("check-failed", "a failed CHECK"),
    (
        "lazy-close-out-of-order",
        "napi_close_callback_scope on a lazy scope that is not the innermost native scope, the check passing",
    ),
    (
        "js-after-handled-exception",
        "JS running in a scope after a handled uncaught exception cleared the stack",
    ),
    (
        "module-entry-with-lazy",
        "an ES module entry (no main-script context) with a lazy scope open",
    ),
    (
        "unspecified-resource",
        "executionAsyncResource() reading a pointer into a scope that has returned",
    ),
    ("ticks-run", "nextTick callbacks run"),
];

/// Counts of situations and op kinds reached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Situation name → times reached.
    pub situations: BTreeMap<&'static str, u64>,
    /// Op kind → times applied.
    pub ops: BTreeMap<&'static str, u64>,
}

fn innermost_native(lazy: &Lazy) -> Option<&InternalCallbackScope<LazyStack>> {
    match lazy.frames.last() {
        Some(Frame::Native(s)) => Some(s),
        _ => None,
    }
}

impl Coverage {
    fn hit(&mut self, name: &'static str) {
        *self.situations.entry(name).or_default() += 1;
    }

    /// Record the situations `op` meets in `before` (the lazy state before it).
    pub fn before_op(&mut self, before: &Lazy, op: &Op) {
        if !before.exited {
            *self.ops.entry(op.kind()).or_default() += 1;
        }
        let ah = &before.async_hooks;
        let lazies = ah.store.k_lazy_scopes > 0;
        let top = lazy::async_hooks::top(ah);
        let current = ah.async_id_fields.k_execution_async_id;
        let pushes = matches!(op, Op::EmitBefore { .. } | Op::EnterRunInAsyncScope { .. });
        if pushes && top == Top::Lazy {
            self.hit("js-push-above-lazy");
        }
        if matches!(op, Op::ExecutionAsyncResource) {
            if top == Top::Lazy {
                self.hit("resource-lazy-innermost");
            }
            if lazies && top == Top::Stack {
                self.hit("resource-js-above-lazy");
            }
            if lazies && ah.fields.k_uses_execution_async_resource == 0 {
                self.hit("first-resource-in-lazy");
            }
        }
        if let Op::EmitAfter { async_id } = op {
            if top == Top::Lazy {
                if *async_id == current {
                    self.hit("js-pop-lazy-matching");
                } else {
                    self.hit("js-pop-lazy-wrong");
                }
            }
        }
        if matches!(op, Op::ExitRunInAsyncScope) && lazies && !before.is_stopping {
            if ah.fields.k_stack_length > 0 {
                self.hit("run-in-async-scope-finally-lazy");
            } else {
                self.hit("run-in-async-scope-finally-only-lazy");
            }
        }
        if let Op::UncaughtException { handled: true } = op {
            if lazies && ah.fields.k_after > 0 {
                self.hit("uncaught-unwind-lazy");
            }
            if lazies {
                self.hit("clear-with-lazy");
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
                self.hit("lazy-close-out-of-order");
            }
        }
        if let Some(scope) = innermost_native(before) {
            if scope.handled_exception
                && !scope.threw
                && op.kind() != "close"
                && before.js_running()
            {
                self.hit("js-after-handled-exception");
            }
        }
        let module_entry = matches!(before.frames.first(), Some(Frame::Native(m)) if m.main_script && !m.pushed_ids);
        if module_entry && lazies && !before.is_stopping {
            self.hit("module-entry-with-lazy");
        }
        if matches!(op, Op::ClearAsyncIdStack) && lazies {
            self.hit("clear-with-lazy");
        }
        if matches!(op, Op::EnableHook(_)) && lazies && ah.fields.k_totals == 0 {
            self.hit("hook-enabled-in-lazy");
        }
        if matches!(op, Op::Stop) && lazies && ah.fields.k_stack_length > 0 && !before.is_stopping {
            self.hit("stop-with-lazy-and-eager");
        }
        if let Op::ResetGlobal(r) = op {
            let held = before
                .frames
                .iter()
                .any(|f| matches!(f, Frame::Native(s) if s.resource == NativeSlot::Global(*r)));
            if held {
                self.hit("global-reset-open");
            }
        }
        if let (Op::CloseScope { .. }, Some(scope)) = (op, innermost_native(before)) {
            if scope.entered == Path::Lazy && !before.is_stopping {
                let own = ah.store.lazy_scopes.last().map(|l| l.async_id)
                    == Some(scope.async_context.async_id);
                if !lazies {
                    self.hit("lazy-close-after-clear");
                } else if top != Top::Lazy || !own {
                    self.hit("lazy-close-not-innermost");
                }
            }
            if before.async_callback_scope_depth == 1
                && ah.fields.k_totals > 0
                && !before.is_stopping
            {
                self.hit("outermost-close-with-hooks");
            }
        }
        if matches!(op, Op::EmitBefore { .. } | Op::EnterRunInAsyncScope { .. })
            && ah.fields.k_stack_length as usize >= ah.stack_capacity_pairs
        {
            self.hit("js-push-past-16");
        }
    }

    /// Record the situations visible after `op` (`after` is the lazy state,
    /// `observations` what it showed);
    /// `closing_lazy`: the op closed a scope that took the lazy path.
    pub fn after_op(
        &mut self,
        closing_lazy: bool,
        after: &Lazy,
        op: &Op,
        observations: &[Observation],
    ) {
        let ah = &after.async_hooks;
        if let Op::OpenScope { .. } = op {
            if let Some(scope) = innermost_native(after) {
                let outer_has_lazy = after
                    .frames
                    .iter()
                    .rev()
                    .skip(1)
                    .any(|f| matches!(f, Frame::Native(s) if s.entered == Path::Lazy));
                let outer_has_eager = after.frames.iter().rev().skip(1).any(
                    |f| matches!(f, Frame::Native(s) if s.entered != Path::Lazy && s.pushed_ids),
                );
                if scope.entered == Path::Lazy {
                    if ah
                        .store
                        .lazy_scopes
                        .last()
                        .is_some_and(|l| l.stack_position > 0)
                    {
                        self.hit("lazy-above-js");
                    }
                    if outer_has_eager {
                        self.hit("lazy-in-eager");
                    }
                } else if scope.pushed_ids && outer_has_lazy {
                    self.hit("eager-in-lazy");
                }
            }
        }
        if ah.depth() > 16 && ah.store.k_lazy_scopes > 0 && ah.fields.k_stack_length > 0 {
            self.hit("deep-with-lazy");
        }
        for o in observations {
            match o {
                Observation::CorruptedStack { .. } => match op {
                    Op::CloseScope { .. } if closing_lazy => self.hit("corrupted-on-lazy-close"),
                    Op::CloseScope { .. } => {}
                    _ => self.hit("corrupted-on-js-pop"),
                },
                Observation::CheckFailed(_) => self.hit("check-failed"),
                Observation::ExecutionAsyncResource(ResourceView::Unspecified)
                | Observation::Tick {
                    resource: Some(ResourceView::Unspecified),
                    ..
                } => self.hit("unspecified-resource"),
                Observation::Tick { .. } => self.hit("ticks-run"),
                _ => {}
            }
        }
    }

    /// Add another run's counts.
    pub fn merge(&mut self, other: &Coverage) {
        for (k, v) in &other.situations {
            *self.situations.entry(k).or_default() += v;
        }
        for (k, v) in &other.ops {
            *self.ops.entry(k).or_default() += v;
        }
    }

    /// Situations and op kinds never reached.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut missing: Vec<&'static str> = SITUATIONS
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| !self.situations.contains_key(name))
            .collect();
        missing.extend(
            OP_KINDS
                .iter()
                .copied()
                .filter(|k| !self.ops.contains_key(k)),
        );
        missing
    }

    /// The coverage table, one row per situation and op kind.
    pub fn table(&self) -> String {
        let mut out = String::from("situation                              times  description\n");
        for (name, what) in SITUATIONS {
            let n = self.situations.get(name).copied().unwrap_or(0);
            out.push_str(&format!("{name:<38} {n:>6}  {what}\n"));
        }
        out.push_str("\nop kind                                times\n");
        for k in OP_KINDS {
            let n = self.ops.get(k).copied().unwrap_or(0);
            out.push_str(&format!("{k:<38} {n:>6}\n"));
        }
        out
    }
}
