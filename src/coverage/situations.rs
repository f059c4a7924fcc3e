//! The named situations of [`super`]: each with its name and description
//! ([`SITUATIONS`]), its index ([`situation`]), and on which node versions
//! it can be reached ([`exists_on`]).

use model::vocab::OpKind;

/// The situations where the lazy design is easy to get wrong (the places
/// `docs/lazy-design.md` lists, and what real programs reach), each with its name.
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
    ("ticks-run", "nextTick callbacks run"),
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
    (
        "als-get-store-in-lazy",
        "AsyncLocalStorage getStore() while the innermost native scope is lazy",
    ),
    (
        "als-run-around-lazy-close",
        "a lazy scope closed inside an AsyncLocalStorage run (its close puts the run's frame back)",
    ),
    (
        "als-enter-with-in-lazy",
        "AsyncLocalStorage enterWith() inside a lazy scope (its close must drop the store)",
    ),
    (
        "tick-store-from-lazy",
        "a nextTick callback running in a frame with a store, scheduled inside a lazy scope",
    ),
    (
        "resource-frame-in-lazy",
        "runInAsyncScope inside a lazy scope of an AsyncResource that captured a store earlier",
    ),
    (
        "next-tick-in-tick",
        "process.nextTick() inside a tick's callback (the tick runs in the same run, or nested)",
    ),
    (
        "lazy-scope-in-tick",
        "a lazy scope opened inside a tick's callback, above the tick's JS entry",
    ),
    ("tick-threw", "a tick's callback threw (its emitAfter skipped)"),
    (
        "microtask-in-lazy",
        "a microtask (queueMicrotask, promise reaction) run while a lazy scope is open",
    ),
    (
        "promise-hooks-at-outermost-close",
        "a promise reaction run with promise hooks in the checkpoint of the outermost close",
    ),
    (
        "rejection-at-outermost-close",
        "the outermost close calls the tick callback for an unhandled rejection alone (kHasRejectionToWarn, no tick scheduled)",
    ),
    (
        "rejection-in-lazy",
        "an unhandled rejection reported (its promise's context pushed and popped by JS) while a lazy scope is open",
    ),
    (
        "promise-after-no-pop",
        "promiseAfterHook finds its promise's id is not the current one (a hook enabled in the reaction's body, or a JS context left on top): no pop",
    ),
    (
        "js-in-checkpoint-with-lazy",
        "JS in a microtask's body while a lazy scope is open, or a scope opened there that takes the lazy path",
    ),
    // Issue 24: the frame a native scope enters.
    (
        "lazy-scope-enters-stored-frame",
        "a lazy scope entering a stored frame (napi_make_callback on an async context made where a frame object was current)",
    ),
    (
        "lazy-close-out-of-order-with-stores",
        "napi_close_callback_scope on a lazy scope that is not the innermost native scope, the check passing, with a store in the frame it puts back (its caller's) or in the current one",
    ),
    // Issue 25: exceptions and checkpoints.
    (
        "microtask-threw-with-lazy",
        "a queueMicrotask callback threw, handled (the handler's after loop and clear run in the checkpoint) while a lazy scope is open",
    ),
    (
        "rejection-thrown-with-lazy",
        "process._tickCallback() reports a rejection as an uncaught exception (--unhandled-rejections strict, or throw without a listener), handled, while a lazy scope is open",
    ),
    (
        "tick-threw-in-microtask-with-lazy",
        "a tick that process._tickCallback() ran in a microtask's callback threw, out of that callback (its emitAfter skipped, its entry left on the stack), while a lazy scope is open",
    ),
    (
        "listener-opens-lazy-with-lazy",
        "a lazy scope opened in the uncaughtException listener (before the handler's after loop and clear) while another lazy scope is open",
    ),
    // Issue 24: v20's AsyncLocalStorage, on async hooks.
    (
        "v20-storage-enabled-in-lazy",
        "node version 20: the first AsyncLocalStorage run or enterWith (its init hook enabled, executionAsyncResource() read, the store written on the lazy scope's resource) inside a lazy scope",
    ),
    // Issue 50: the ES module body is a microtask job.
    (
        "module-body-tick-callback-with-lazy",
        "process._tickCallback() in an ES module's body (a microtask job: it runs the ticks and no microtask) with microtasks queued and a lazy scope open",
    ),
    // Issue 53: Timeouts, whose callbacks run in their own frames.
    (
        "timer-store-after-handled-exception",
        "a Timeout's callback run in a lazy RunTimers scope after a handled exception there, with a store in its frame or in the one it replaces (a throwing Timeout's, left current)",
    ),
    (
        "timer-push-above-lazy",
        "a Timeout's emitBefore (listOnTimeout's JS push) right above RunTimers' lazy scope",
    ),
    (
        "lazy-scope-in-timer",
        "a native scope opened lazy inside a Timeout's callback",
    ),
    // Issue 55: where a bare make-callback's exception goes.
    (
        "lost-exception-with-lazy",
        "a bare make-callback's exception lost (Node 26: its close's pop shortened the JS resource array, a V8 call with the exception pending) while a lazy scope is open",
    ),
    (
        "bare-throw-to-caller-with-lazy",
        "a bare make-callback's exception handed back to the JavaScript that called it (catch or uncaught-exception next) while a lazy scope is open",
    ),
];

/// Whether the situation or op kind `name` exists on the node version
/// `version`: on 20 there are no Global holders and no `AsyncContextFrame`
/// (`docs/spec.md`, "Node versions"), so what needs them is never reached
/// there; v20's `AsyncLocalStorage` on async hooks is not Node 26's.
pub fn exists_on(version: model::vocab::NodeVersion, name: &str) -> bool {
    const SITUATIONS_ONLY_ON_20: &[&str] = &["v20-storage-enabled-in-lazy"];
    if version == model::vocab::NodeVersion::V26 {
        return !SITUATIONS_ONLY_ON_20.contains(&name);
    }
    // A lazy scope cannot close inside a v20 `run` that stored: after the
    // store every scope is eager, and one opened before it closes after it.
    const SITUATIONS_ONLY_ON_26: &[&str] = &[
        "global-reset-open",
        "als-run-around-lazy-close",
        "tick-store-from-lazy",
        "resource-frame-in-lazy",
        "lazy-scope-enters-stored-frame",
        "lazy-close-out-of-order-with-stores",
        "timer-store-after-handled-exception",
        // v20's V8 keeps the exception aside (docs/node-findings.md F8).
        "lost-exception-with-lazy",
    ];
    !(SITUATIONS_ONLY_ON_26.contains(&name)
        || OpKind::from_name(name).is_some_and(|k| !k.exists_on(version)))
}

/// The index of each situation in [`SITUATIONS`], by name.
#[allow(missing_docs)]
pub mod situation {
    pub const JS_PUSH_ABOVE_LAZY: usize = 0;
    pub const LAZY_ABOVE_JS: usize = 1;
    pub const RESOURCE_LAZY_INNERMOST: usize = 2;
    pub const RESOURCE_JS_ABOVE_LAZY: usize = 3;
    pub const JS_POP_LAZY_MATCHING: usize = 4;
    pub const JS_POP_LAZY_WRONG: usize = 5;
    pub const RUN_IN_ASYNC_SCOPE_FINALLY_LAZY: usize = 6;
    pub const RUN_IN_ASYNC_SCOPE_FINALLY_ONLY_LAZY: usize = 7;
    pub const UNCAUGHT_UNWIND_LAZY: usize = 8;
    pub const CLEAR_WITH_LAZY: usize = 9;
    pub const LAZY_CLOSE_AFTER_CLEAR: usize = 10;
    pub const HOOK_ENABLED_IN_LAZY: usize = 11;
    pub const FIRST_RESOURCE_IN_LAZY: usize = 12;
    pub const EAGER_IN_LAZY: usize = 13;
    pub const LAZY_IN_EAGER: usize = 14;
    pub const DEEP_WITH_LAZY: usize = 15;
    pub const JS_PUSH_PAST_16: usize = 16;
    pub const STOP_WITH_LAZY_AND_EAGER: usize = 17;
    pub const GLOBAL_RESET_OPEN: usize = 18;
    pub const OUTERMOST_CLOSE_WITH_HOOKS: usize = 19;
    pub const LAZY_CLOSE_NOT_INNERMOST: usize = 20;
    pub const CORRUPTED_ON_LAZY_CLOSE: usize = 21;
    pub const CORRUPTED_ON_JS_POP: usize = 22;
    pub const CHECK_FAILED: usize = 23;
    pub const TICKS_RUN: usize = 24;
    pub const LAZY_CLOSE_OUT_OF_ORDER: usize = 25;
    pub const JS_AFTER_HANDLED_EXCEPTION: usize = 26;
    pub const MODULE_ENTRY_WITH_LAZY: usize = 27;
    pub const UNSPECIFIED_RESOURCE: usize = 28;
    pub const ALS_GET_STORE_IN_LAZY: usize = 29;
    pub const ALS_RUN_AROUND_LAZY_CLOSE: usize = 30;
    pub const ALS_ENTER_WITH_IN_LAZY: usize = 31;
    pub const TICK_STORE_FROM_LAZY: usize = 32;
    pub const RESOURCE_FRAME_IN_LAZY: usize = 33;
    pub const NEXT_TICK_IN_TICK: usize = 34;
    pub const LAZY_SCOPE_IN_TICK: usize = 35;
    pub const TICK_THREW: usize = 36;
    pub const MICROTASK_IN_LAZY: usize = 37;
    pub const PROMISE_HOOKS_AT_OUTERMOST_CLOSE: usize = 38;
    pub const REJECTION_AT_OUTERMOST_CLOSE: usize = 39;
    pub const REJECTION_IN_LAZY: usize = 40;
    pub const PROMISE_AFTER_NO_POP: usize = 41;
    pub const JS_IN_CHECKPOINT_WITH_LAZY: usize = 42;
    // Issue 24: the frame a native scope enters.
    pub const LAZY_SCOPE_ENTERS_STORED_FRAME: usize = 43;
    pub const LAZY_CLOSE_OUT_OF_ORDER_WITH_STORES: usize = 44;
    // Issue 25: exceptions and checkpoints.
    pub const MICROTASK_THREW_WITH_LAZY: usize = 45;
    pub const REJECTION_THROWN_WITH_LAZY: usize = 46;
    pub const TICK_THREW_IN_MICROTASK_WITH_LAZY: usize = 47;
    pub const LISTENER_OPENS_LAZY_WITH_LAZY: usize = 48;
    // Issue 24: v20's AsyncLocalStorage.
    pub const V20_STORAGE_ENABLED_IN_LAZY: usize = 49;
    // Issue 50: the ES module body is a microtask job.
    pub const MODULE_BODY_TICK_CALLBACK_WITH_LAZY: usize = 50;
    // Issue 53: Timeouts, whose callbacks run in their own frames.
    pub const TIMER_STORE_AFTER_HANDLED_EXCEPTION: usize = 51;
    pub const TIMER_PUSH_ABOVE_LAZY: usize = 52;
    pub const LAZY_SCOPE_IN_TIMER: usize = 53;
    pub const LOST_EXCEPTION_WITH_LAZY: usize = 54;
    pub const BARE_THROW_TO_CALLER_WITH_LAZY: usize = 55;
}

/// Number of named situations.
pub const SITUATION_COUNT: usize = 56;
// The per-case bit set of [`Tally`] is a u64.
const _: () = assert!(SITUATION_COUNT <= 64);
