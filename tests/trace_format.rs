//! The text trace format (`model::vocab::trace`): round trips, comments,
//! indentation, expectations, and exact error positions.

use model::vocab::trace::{self, ParseError, Step, Trace};
use model::vocab::{
    AlsId, AsyncContext, Holder, HookCallbacks, HookId, NativeResource, NodeVersion, Observation,
    Op, OpError, OpKind, RejectionsMode, ResourceId, ScopeFlags, ScopeKind,
};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn scope(
    kind: ScopeKind,
    async_id: i64,
    trigger_async_id: i64,
    holder: Holder,
    r: u32,
    skip_async_hooks: bool,
    skip_task_queues: bool,
) -> Op {
    Op::OpenScope {
        kind,
        context: AsyncContext {
            async_id,
            trigger_async_id,
        },
        resource: NativeResource {
            id: ResourceId(r),
            holder,
        },
        flags: ScopeFlags {
            skip_async_hooks,
            skip_task_queues,
        },
    }
}

/// Every op form, every optional part on and off, with its expected text.
fn every_form() -> Vec<(Op, &'static str)> {
    use Holder::{Global, Local};
    use ScopeKind::{BareMakeCallback, CallbackScope, MakeCallback};
    vec![
        (Op::NoForceAsyncHooksChecks, "no-force-async-hooks-checks"),
        (Op::EntryModule { tla: false }, "entry-module"),
        (Op::EntryModule { tla: true }, "entry-module tla"),
        (Op::TimersScope, "timers-scope"),
        (Op::CloseOuter { outer: 1 }, "close-outer 1"),
        (Op::CloseOuter { outer: 12 }, "close-outer 12"),
        (
            scope(CallbackScope, 5, 1, Local, 1, false, false),
            "callback-scope 5 1 R1",
        ),
        (
            scope(CallbackScope, 5, 1, Global, 2, true, true),
            "callback-scope 5 1 global R2 skip-hooks skip-queues",
        ),
        (
            scope(CallbackScope, -1, -2, Local, 0, true, false),
            "callback-scope -1 -2 R0 skip-hooks",
        ),
        (
            scope(MakeCallback, 7, 1, Local, 3, false, false),
            "make-callback 7 1 R3",
        ),
        (
            scope(MakeCallback, 7, 0, Global, 4, false, true),
            "make-callback 7 0 global R4 skip-queues",
        ),
        (
            scope(BareMakeCallback, 7, 1, Local, 3, false, false),
            "make-callback 7 1 R3 bare",
        ),
        (
            scope(
                MakeCallback,
                i64::MAX,
                i64::MIN,
                Local,
                u32::MAX,
                false,
                false,
            ),
            "make-callback 9223372036854775807 -9223372036854775808 R4294967295",
        ),
        (Op::CloseScope { threw: false }, "close"),
        (Op::CloseScope { threw: true }, "close threw"),
        (Op::ResetGlobal(ResourceId(2)), "reset-global R2"),
        (
            Op::CreateHook {
                hook: HookId(1),
                callbacks: HookCallbacks::ALL,
            },
            "create-hook H1 init before after destroy promiseResolve",
        ),
        (
            Op::CreateHook {
                hook: HookId(2),
                callbacks: HookCallbacks::default(),
            },
            "create-hook H2 none",
        ),
        (
            Op::CreateHook {
                hook: HookId(3),
                callbacks: HookCallbacks {
                    before: true,
                    promise_resolve: true,
                    ..HookCallbacks::default()
                },
            },
            "create-hook H3 before promiseResolve",
        ),
        (Op::EnableHook(HookId(1)), "enable-hook H1"),
        (Op::DisableHook(HookId(1)), "disable-hook H1"),
        (
            Op::EmitInit {
                async_id: 5,
                type_name: "event1".to_string(),
                trigger_async_id: 1,
                resource: None,
            },
            "emit-init 5 event1 1",
        ),
        (
            Op::EmitInit {
                async_id: 6,
                type_name: "My_Type.v-2".to_string(),
                trigger_async_id: -1,
                resource: Some(ResourceId(4)),
            },
            "emit-init 6 My_Type.v-2 -1 R4",
        ),
        (
            Op::EmitBefore {
                async_id: 5,
                trigger_async_id: 1,
                resource: None,
            },
            "emit-before 5 1",
        ),
        (
            Op::EmitBefore {
                async_id: 5,
                trigger_async_id: 1,
                resource: Some(ResourceId(4)),
            },
            "emit-before 5 1 R4",
        ),
        (Op::EmitAfter { async_id: 5 }, "emit-after 5"),
        (Op::EmitDestroy { async_id: 5 }, "emit-destroy 5"),
        (
            Op::EnterRunInAsyncScope {
                async_id: 7,
                trigger_async_id: 1,
                resource: ResourceId(2),
            },
            "run-in-async-scope 7 1 R2",
        ),
        (Op::ExitRunInAsyncScope, "end-run-in-async-scope"),
        (
            Op::EnterDefaultTriggerScope {
                trigger_async_id: 9,
            },
            "default-trigger-scope 9",
        ),
        (Op::ExitDefaultTriggerScope, "end-default-trigger-scope"),
        (
            Op::NextTick {
                query_resource: false,
            },
            "next-tick",
        ),
        (
            Op::NextTick {
                query_resource: true,
            },
            "next-tick resource",
        ),
        (Op::TickCallback, "tick-callback"),
        (Op::ExecutionAsyncId, "execution-async-id"),
        (Op::TriggerAsyncId, "trigger-async-id"),
        (Op::ExecutionAsyncResource, "execution-async-resource"),
        (Op::DefaultTriggerAsyncId, "default-trigger-async-id"),
        (Op::NewAsyncId, "new-async-id"),
        (
            Op::UncaughtException { handled: true },
            "uncaught-exception handled",
        ),
        (
            Op::UncaughtException { handled: false },
            "uncaught-exception unhandled",
        ),
        (Op::ClearAsyncIdStack, "clear-async-id-stack"),
        (Op::Catch, "catch"),
        (Op::Stop, "stop"),
        (Op::NodeVersion(NodeVersion::V20), "node-version 20"),
        (Op::NodeVersion(NodeVersion::V26), "node-version 26"),
        (
            Op::AlsRun {
                als: AlsId(1),
                store: 3,
            },
            "als-run A1 3",
        ),
        (Op::AlsExit(AlsId(2)), "als-exit A2"),
        (Op::EndAlsRun, "end-als-run"),
        (
            Op::AlsEnterWith {
                als: AlsId(0),
                store: 4294967295,
            },
            "als-enter-with A0 4294967295",
        ),
        (Op::AlsGetStore(AlsId(7)), "als-get-store A7"),
        (Op::AsyncResource(ResourceId(3)), "async-resource R3"),
        (Op::NextTickBody, "next-tick-body"),
        (Op::EndTick, "end-tick"),
        (Op::QueueMicrotask, "queue-microtask"),
        (Op::PromiseThen, "promise-then"),
        (Op::PromiseReject, "promise-reject"),
        (Op::QueueMicrotaskBody, "queue-microtask-body"),
        (Op::PromiseThenBody, "promise-then-body"),
        (Op::EndMicrotask, "end-microtask"),
        (
            Op::AlsDefault {
                als: AlsId(2),
                value: 9,
            },
            "als-default A2 9",
        ),
        // Issue 24: native scopes that enter a stored frame.
        (Op::NapiAsyncInit(ResourceId(2)), "napi-async-init R2"),
        (Op::NapiMakeCallback(ResourceId(2)), "napi-make-callback R2"),
        // Issue 24: `als.disable()`.
        (Op::AlsDisable(AlsId(3)), "als-disable A3"),
        // Issue 25: `--unhandled-rejections` and the program's listeners.
        (
            Op::UnhandledRejections {
                mode: RejectionsMode::Strict,
                listener: false,
                uncaught_listener: true,
            },
            "unhandled-rejections strict on-uncaught-exception",
        ),
        (
            Op::UnhandledRejections {
                mode: RejectionsMode::WarnWithErrorCode,
                listener: true,
                uncaught_listener: false,
            },
            "unhandled-rejections warn-with-error-code on-unhandled-rejection",
        ),
        (Op::AbortOnUncaughtException, "abort-on-uncaught-exception"),
        (Op::PromiseCatch, "promise-catch"),
        (Op::UncaughtExceptionListener, "uncaught-exception-listener"),
        (Op::EndListener, "end-listener"),
        // Issue 53: Timeouts.
        (Op::SetTimeout, "set-timeout"),
        (Op::Timer, "timer"),
        (Op::EndTimer, "end-timer"),
        (Op::ClearTimeout(7), "clear-timeout 7"),
    ]
}

#[test]
fn hand_written_list_covers_every_op_kind() {
    let kinds: BTreeSet<OpKind> = every_form().iter().map(|(op, _)| op.kind()).collect();
    let all: BTreeSet<OpKind> = OpKind::ALL.iter().copied().collect();
    assert_eq!(kinds, all);
}

#[test]
fn every_form_prints_as_written_and_parses_back() {
    for (op, text) in every_form() {
        assert_eq!(op.to_string(), text, "Display of {op:?}");
        let parsed = trace::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(parsed.ops(), vec![op.clone()], "parse of {text:?}");
        assert_eq!(text.parse::<Op>(), Ok(op));
    }
}

#[test]
fn print_then_parse_round_trips_the_whole_list() {
    let ops: Vec<Op> = every_form().into_iter().map(|(op, _)| op).collect();
    let text = trace::print(&ops);
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), ops.len());
    let parsed = trace::parse(&text).expect("printed trace parses");
    assert_eq!(parsed.ops(), ops);
    let lines: Vec<usize> = parsed.steps.iter().map(|s| s.line).collect();
    assert_eq!(lines, (1..=ops.len()).collect::<Vec<_>>());
}

#[test]
fn print_indents_two_spaces_per_open_frame() {
    let text = "callback-scope 5 1 R1\n\
                run-in-async-scope 7 5 R2\n\
                default-trigger-scope 9\n\
                execution-async-id\n\
                end-default-trigger-scope\n\
                end-run-in-async-scope\n\
                close\n\
                close\n\
                stop\n";
    let ops = trace::parse(text).expect("parses").ops();
    assert_eq!(
        trace::print(&ops),
        "callback-scope 5 1 R1\n\
         \x20 run-in-async-scope 7 5 R2\n\
         \x20   default-trigger-scope 9\n\
         \x20     execution-async-id\n\
         \x20   end-default-trigger-scope\n\
         \x20 end-run-in-async-scope\n\
         close\n\
         close\n\
         stop\n"
    );
    assert_eq!(trace::print(&[]), "");
}

#[test]
fn flags_and_callbacks_in_any_order() {
    let a = trace::parse("callback-scope 5 1 global R2 skip-queues skip-hooks").expect("parses");
    assert_eq!(
        a.ops(),
        vec![scope(
            ScopeKind::CallbackScope,
            5,
            1,
            Holder::Global,
            2,
            true,
            true
        )]
    );
    let b = trace::parse("create-hook H7 promiseResolve destroy init").expect("parses");
    assert_eq!(
        b.ops(),
        vec![Op::CreateHook {
            hook: HookId(7),
            callbacks: HookCallbacks {
                init: true,
                destroy: true,
                promise_resolve: true,
                ..HookCallbacks::default()
            },
        }]
    );
}

#[test]
fn comments_blank_lines_indentation_and_expectations() {
    let text = "# a trace\n\
                \n\
                \tcallback-scope 5 1 R1   # open\n\
                \x20   execution-async-id\n\
                \x20   => executionAsyncId = 5   \n\
                \x20   =>triggerAsyncId = 1 # trailing comment\n\
                \x20 # only a comment\n\
                close\n\
                \x20  \t \n\
                new-async-id\n\
                => newAsyncId = 2";
    let parsed = trace::parse(text).expect("parses");
    assert_eq!(
        parsed,
        Trace {
            steps: vec![
                Step {
                    line: 3,
                    op: scope(
                        ScopeKind::CallbackScope,
                        5,
                        1,
                        Holder::Local,
                        1,
                        false,
                        false
                    ),
                    expected: vec![],
                },
                Step {
                    line: 4,
                    op: Op::ExecutionAsyncId,
                    expected: vec![
                        "executionAsyncId = 5".to_string(),
                        "triggerAsyncId = 1".to_string()
                    ],
                },
                Step {
                    line: 8,
                    op: Op::CloseScope { threw: false },
                    expected: vec![],
                },
                Step {
                    line: 10,
                    op: Op::NewAsyncId,
                    expected: vec!["newAsyncId = 2".to_string()],
                },
            ],
        }
    );
}

#[test]
fn empty_and_blank_inputs_are_empty_traces() {
    for text in ["", "\n", "   \n\t\n", "# nothing\n  # at all", "\r\n"] {
        assert_eq!(trace::parse(text), Ok(Trace::default()), "{text:?}");
    }
}

#[test]
fn crlf_line_endings_are_accepted() {
    let parsed =
        trace::parse("execution-async-id\r\n=> executionAsyncId = 1\r\nstop\r\n").expect("parses");
    assert_eq!(parsed.ops(), vec![Op::ExecutionAsyncId, Op::Stop]);
    assert_eq!(parsed.steps[0].expected, vec!["executionAsyncId = 1"]);
}

#[test]
fn cr_only_line_endings_and_a_byte_order_mark_are_accepted() {
    // Old Mac line endings: every lone CR ends a line, so line numbers count them.
    let parsed =
        trace::parse("execution-async-id\r=> executionAsyncId = 1\r\rstop\r").expect("parses");
    assert_eq!(parsed.ops(), vec![Op::ExecutionAsyncId, Op::Stop]);
    assert_eq!(parsed.steps[0].expected, vec!["executionAsyncId = 1"]);
    assert_eq!(parsed.steps[1].line, 4);
    // Mixed endings, and a final line without one.
    let parsed = trace::parse("stop\r\nstop\rstop\nstop").expect("parses");
    let lines: Vec<usize> = parsed.steps.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![1, 2, 3, 4]);
    // A UTF-8 byte-order mark before the first op.
    let parsed = trace::parse("\u{feff}execution-async-id\n").expect("parses");
    assert_eq!(parsed.ops(), vec![Op::ExecutionAsyncId]);
    // Elsewhere it is not whitespace: an error at its place.
    let e = trace::parse("stop\n\u{feff}stop\n").expect_err("a BOM inside the text");
    assert_eq!((e.line, e.column), (2, 1), "{e}");
}

#[test]
fn print_stops_indenting_at_the_cap() {
    let deep = trace::MAX_PRINT_INDENT + 10;
    let mut ops = vec![
        Op::EnterDefaultTriggerScope {
            trigger_async_id: 1
        };
        deep
    ];
    ops.push(Op::ExecutionAsyncId);
    let text = trace::print(&ops);
    let widest = text.lines().map(|l| l.len() - l.trim_start().len()).max();
    assert_eq!(widest, Some(2 * trace::MAX_PRINT_INDENT));
    assert_eq!(trace::parse(&text).expect("parses").ops(), ops);
}

#[test]
fn a_step_meets_its_expectations_exactly() {
    let t = trace::parse("execution-async-id\n=> executionAsyncId = 1\nnew-async-id\n")
        .expect("parses");
    let one = [Observation::ExecutionAsyncId(1)];
    assert_eq!(t.steps[0].meets(Ok(&one)), Ok(()));
    // A different value, a missing or an extra observation: unmet.
    let unmet = t.steps[0]
        .meets(Ok(&[Observation::ExecutionAsyncId(2)]))
        .expect_err("wrong value");
    assert_eq!(unmet.line, 1);
    assert_eq!(unmet.expected, vec!["executionAsyncId = 1"]);
    assert_eq!(unmet.observed, vec!["executionAsyncId = 2"]);
    assert!(!unmet.refused);
    assert!(t.steps[0].meets(Ok(&[])).is_err());
    let two = [Observation::ExecutionAsyncId(1), Observation::NewAsyncId(2)];
    assert!(t.steps[0].meets(Ok(&two)).is_err());
    // An op that did not run meets no expectation, not even "nothing".
    let refused = t.steps[1]
        .meets(Err(&OpError::Exited))
        .expect_err("not run");
    assert!(refused.refused);
    assert!(refused.to_string().contains("not run"), "{refused}");
    assert_eq!(t.steps[1].meets(Ok(&[])), Ok(()));
    assert_eq!(t.expectations(), 1);
}

#[test]
fn every_step_is_checked_and_the_first_unmet_one_reported() {
    let text = "execution-async-id\n=> executionAsyncId = 1\nnew-async-id\nexecution-async-id\n=> executionAsyncId = 9\n";
    let t = trace::parse(text).expect("parses");
    // new-async-id shows `newAsyncId = 2` but has no `=>` line: checking
    // every step, that is the first unmet one.
    let unmet = trace::meets_every_step(&mut model::Eager::new(), &t).expect_err("unmet");
    assert_eq!(unmet.line, 3);
    assert_eq!(unmet.observed, vec!["newAsyncId = 2"]);
    let fixed = text.replace("new-async-id\n", "new-async-id\n=> newAsyncId = 2\n");
    let t = trace::parse(&fixed).expect("parses");
    let unmet = trace::meets_every_step(&mut model::Eager::new(), &t).expect_err("unmet");
    assert_eq!(unmet.line, 5);
    assert_eq!(unmet.expected, vec!["executionAsyncId = 9"]);
    assert_eq!(unmet.observed, vec!["executionAsyncId = 1"]);
}

/// Parse `text`, expecting an error at exactly `line`, `column`, whose
/// message contains `fragment`.
fn assert_error(text: &str, line: usize, column: usize, fragment: &str) {
    match trace::parse(text) {
        Ok(t) => panic!("{text:?} parsed as {t:?}, expected an error"),
        Err(e) => {
            assert_eq!(
                (e.line, e.column),
                (line, column),
                "position of the error for {text:?}: {e}"
            );
            assert!(
                e.message.contains(fragment),
                "message for {text:?} is {:?}, expected it to contain {fragment:?}",
                e.message
            );
        }
    }
}

#[test]
fn error_display_names_line_and_column() {
    let e = trace::parse("stop\n\ncallback-scope x 1 R1").expect_err("bad id");
    assert_eq!(
        e.to_string(),
        "line 3, column 16: expected an async id (an integer), found \"x\""
    );
    let as_error: &dyn std::error::Error = &e;
    assert!(as_error.to_string().starts_with("line 3, column 16: "));
}

#[test]
fn malformed_inputs_report_line_column_and_what_was_expected() {
    // Unknown op, listing the known ones.
    assert_error("foo", 1, 1, "unknown op \"foo\"; expected one of");
    assert_error(
        "stop\n   frobnicate 1",
        2,
        4,
        "callback-scope, make-callback",
    );
    // A bad id, in each position.
    assert_error(
        "callback-scope 5 x R1",
        1,
        18,
        "expected a trigger async id (an integer), found \"x\"",
    );
    assert_error(
        "emit-after 5.0",
        1,
        12,
        "expected an async id (an integer), found \"5.0\"",
    );
    assert_error("emit-destroy +5", 1, 14, "expected an async id");
    assert_error("emit-destroy -", 1, 14, "expected an async id");
    // Out-of-range integers.
    assert_error("emit-destroy 9223372036854775808", 1, 14, "out of range");
    assert_error("reset-global R4294967296", 1, 14, "out of range");
    // The last hook number is Node's own (v20's storageHook): issue 51.
    for op in ["create-hook", "enable-hook", "disable-hook"] {
        let text = format!("{op} H4294967295 init");
        let column = op.len() + 2;
        assert_error(&text, 1, column, "Node's own hook");
    }
    assert_error("create-hook H4294967296 init", 1, 13, "out of range");
    assert_error(
        "node-version 22",
        1,
        14,
        "expected a node version (20 or 26)",
    );
    assert_error("als-run R1 2", 1, 9, "expected an AsyncLocalStorage (A<n>)");
    assert_error(
        "unhandled-rejections loud",
        1,
        22,
        "expected a mode (throw, strict, warn, none, warn-with-error-code), found \"loud\"",
    );
    assert_error(
        "unhandled-rejections none on-uncaught-exception on-unhandled-rejection",
        1,
        49,
        "expected on-unhandled-rejection, then on-uncaught-exception, or end of line",
    );
    assert_error(
        "unhandled-rejections none on-uncaught-exception on-uncaught-exception",
        1,
        49,
        "given twice",
    );
    assert_error("als-run A1 -2", 1, 12, "expected a store value");
    assert_error("als-enter-with A1 4294967296", 1, 19, "out of range");
    assert_error(
        "als-get-store A1 2",
        1,
        18,
        "unexpected \"2\" after als-get-store",
    );
    // A missing token is reported just past the end of the line.
    assert_error(
        "emit-before 5",
        1,
        14,
        "expected a trigger async id (an integer), found end of line",
    );
    assert_error(
        "  run-in-async-scope 7 1",
        1,
        25,
        "expected a resource (R<n>), found end of line",
    );
    assert_error(
        "uncaught-exception",
        1,
        19,
        "expected \"handled\" or \"unhandled\"",
    );
    // Bad resource and hook names.
    assert_error(
        "callback-scope 5 1 X1",
        1,
        20,
        "expected a resource (R<n>) or \"global\", found \"X1\"",
    );
    assert_error(
        "callback-scope 5 1 global global",
        1,
        27,
        "expected a resource (R<n>), found \"global\"",
    );
    assert_error("reset-global R", 1, 14, "expected a resource (R<n>)");
    assert_error("reset-global R+1", 1, 14, "expected a resource (R<n>)");
    assert_error(
        "enable-hook R1",
        1,
        13,
        "expected a hook (H<n>), found \"R1\"",
    );
    // Flags.
    assert_error(
        "callback-scope 5 1 R1 skip-hooks skip-hooks",
        1,
        34,
        "flag \"skip-hooks\" given twice",
    );
    assert_error(
        "make-callback 5 1 R1 skip-all",
        1,
        22,
        "expected a flag (skip-hooks, skip-queues, bare) or end of line",
    );
    // `bare` is a make-callback's only, and once.
    assert_error(
        "callback-scope 5 1 R1 bare",
        1,
        23,
        "expected a flag (skip-hooks, skip-queues) or end of line",
    );
    assert_error(
        "make-callback 5 1 R1 bare bare",
        1,
        27,
        "flag \"bare\" given twice",
    );
    // Hook callbacks.
    assert_error("create-hook H1", 1, 15, "or \"none\", found end of line");
    assert_error(
        "create-hook H1 init init",
        1,
        21,
        "callback \"init\" given twice",
    );
    assert_error("create-hook H1 init none", 1, 21, "\"none\" stands alone");
    assert_error(
        "create-hook H1 none init",
        1,
        21,
        "unexpected \"init\" after create-hook",
    );
    assert_error("create-hook H1 init resolve", 1, 21, "expected a callback");
    // Type names.
    assert_error("emit-init 5 a/b 1", 1, 13, "expected a type name");
    // Trailing tokens.
    assert_error(
        "execution-async-id 5",
        1,
        20,
        "unexpected \"5\" after execution-async-id; expected end of line",
    );
    assert_error(
        "close threw threw",
        1,
        13,
        "unexpected \"threw\" after close",
    );
    assert_error(
        "close now",
        1,
        7,
        "expected \"threw\" or end of line, found \"now\"",
    );
    assert_error(
        "next-tick R1",
        1,
        11,
        "expected \"resource\" or end of line",
    );
    assert_error(
        "emit-before 5 1 R4 R5",
        1,
        20,
        "unexpected \"R5\" after emit-before",
    );
    assert_error(
        "emit-before 5 1 x",
        1,
        17,
        "expected a resource (R<n>) or end of line",
    );
    assert_error(
        "execution-async-id => executionAsyncId = 1",
        1,
        20,
        "an expectation goes on its own line",
    );
    // Expectations.
    assert_error(
        "# header\n  => executionAsyncId = 1\nstop",
        2,
        3,
        "before any op",
    );
    assert_error(
        "stop\n  =>   # nothing",
        2,
        5,
        "expected an observation after \"=>\"",
    );
}

#[test]
fn columns_count_characters_not_bytes() {
    // "é" is two bytes but one column.
    let e = trace::parse("emit-init 5 é 1").expect_err("non-ASCII type name");
    assert_eq!((e.line, e.column), (1, 13));
    // U+3000 (ideographic space) is whitespace of three bytes.
    let e = trace::parse("emit-init\u{3000}5 t x").expect_err("bad trigger");
    assert_eq!((e.line, e.column), (1, 15));
}

#[test]
fn op_from_str_parses_one_line() {
    assert_eq!(
        "  close threw  # c".parse::<Op>(),
        Ok(Op::CloseScope { threw: true })
    );
    let e: ParseError = "".parse::<Op>().expect_err("empty");
    assert!(e.message.contains("expected an op"), "{e}");
    let e = "stop\nstop".parse::<Op>().expect_err("two lines");
    assert_eq!((e.line, e.column), (1, 5));
    let e = "=> x".parse::<Op>().expect_err("expectation");
    assert_eq!((e.line, e.column), (1, 1));
}

// ---------------------------------------------------------------------------
// Property: print then parse is the identity on op sequences.

fn arb_id() -> impl Strategy<Value = i64> {
    prop_oneof![-3i64..20, any::<i64>()]
}

fn arb_resource() -> impl Strategy<Value = ResourceId> {
    prop_oneof![0u32..6, any::<u32>()].prop_map(ResourceId)
}

fn arb_hook() -> impl Strategy<Value = HookId> {
    prop_oneof![0u32..4, any::<u32>()].prop_map(HookId)
}

fn arb_type_name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.-]{1,12}"
}

fn arb_op() -> impl Strategy<Value = Op> {
    let open = (
        any::<bool>(),
        arb_id(),
        arb_id(),
        arb_resource(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mc, a, t, r, global, sh, sq)| Op::OpenScope {
            kind: if mc {
                ScopeKind::MakeCallback
            } else {
                ScopeKind::CallbackScope
            },
            context: AsyncContext {
                async_id: a,
                trigger_async_id: t,
            },
            resource: NativeResource {
                id: r,
                holder: if global {
                    Holder::Global
                } else {
                    Holder::Local
                },
            },
            flags: ScopeFlags {
                skip_async_hooks: sh,
                skip_task_queues: sq,
            },
        });
    let callbacks = any::<[bool; 5]>().prop_map(|b| HookCallbacks {
        init: b[0],
        before: b[1],
        after: b[2],
        destroy: b[3],
        promise_resolve: b[4],
    });
    prop_oneof![
        Just(Op::NoForceAsyncHooksChecks),
        any::<bool>().prop_map(|tla| Op::EntryModule { tla }),
        Just(Op::TimersScope),
        (1u32..1000).prop_map(|outer| Op::CloseOuter { outer }),
        open,
        any::<bool>().prop_map(|threw| Op::CloseScope { threw }),
        arb_resource().prop_map(Op::ResetGlobal),
        (arb_hook(), callbacks).prop_map(|(hook, callbacks)| Op::CreateHook { hook, callbacks }),
        arb_hook().prop_map(Op::EnableHook),
        arb_hook().prop_map(Op::DisableHook),
        (
            arb_id(),
            arb_type_name(),
            arb_id(),
            proptest::option::of(arb_resource())
        )
            .prop_map(
                |(async_id, type_name, trigger_async_id, resource)| Op::EmitInit {
                    async_id,
                    type_name,
                    trigger_async_id,
                    resource,
                }
            ),
        (arb_id(), arb_id(), proptest::option::of(arb_resource())).prop_map(
            |(async_id, trigger_async_id, resource)| Op::EmitBefore {
                async_id,
                trigger_async_id,
                resource,
            }
        ),
        arb_id().prop_map(|async_id| Op::EmitAfter { async_id }),
        arb_id().prop_map(|async_id| Op::EmitDestroy { async_id }),
        (arb_id(), arb_id(), arb_resource()).prop_map(|(async_id, trigger_async_id, resource)| {
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            }
        }),
        Just(Op::ExitRunInAsyncScope),
        arb_id().prop_map(|trigger_async_id| Op::EnterDefaultTriggerScope { trigger_async_id }),
        Just(Op::ExitDefaultTriggerScope),
        any::<bool>().prop_map(|query_resource| Op::NextTick { query_resource }),
        Just(Op::TickCallback),
        Just(Op::NextTickBody),
        Just(Op::EndTick),
        Just(Op::QueueMicrotask),
        Just(Op::PromiseThen),
        Just(Op::PromiseReject),
        Just(Op::QueueMicrotaskBody),
        Just(Op::PromiseThenBody),
        Just(Op::EndMicrotask),
        Just(Op::ExecutionAsyncId),
        Just(Op::TriggerAsyncId),
        Just(Op::ExecutionAsyncResource),
        Just(Op::DefaultTriggerAsyncId),
        Just(Op::NewAsyncId),
        any::<bool>().prop_map(|handled| Op::UncaughtException { handled }),
        Just(Op::ClearAsyncIdStack),
        Just(Op::Catch),
        Just(Op::Stop),
        prop_oneof![Just(NodeVersion::V20), Just(NodeVersion::V26)].prop_map(Op::NodeVersion),
        (any::<u32>(), any::<u32>()).prop_map(|(a, store)| Op::AlsRun {
            als: AlsId(a),
            store
        }),
        any::<u32>().prop_map(|a| Op::AlsExit(AlsId(a))),
        Just(Op::EndAlsRun),
        (any::<u32>(), any::<u32>()).prop_map(|(a, store)| Op::AlsEnterWith {
            als: AlsId(a),
            store
        }),
        any::<u32>().prop_map(|a| Op::AlsGetStore(AlsId(a))),
        arb_resource().prop_map(Op::AsyncResource),
        (any::<u32>(), any::<u32>()).prop_map(|(a, value)| Op::AlsDefault {
            als: AlsId(a),
            value
        }),
        arb_resource().prop_map(Op::NapiAsyncInit),
        arb_resource().prop_map(Op::NapiMakeCallback),
        any::<u32>().prop_map(|a| Op::AlsDisable(AlsId(a))),
        (
            proptest::sample::select(RejectionsMode::ALL.to_vec()),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(
                |(mode, listener, uncaught_listener)| Op::UnhandledRejections {
                    mode,
                    listener,
                    uncaught_listener
                }
            ),
        Just(Op::AbortOnUncaughtException),
        Just(Op::PromiseCatch),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn print_parse_round_trip(ops in proptest::collection::vec(arb_op(), 0..40)) {
        let text = trace::print(&ops);
        let parsed = trace::parse(&text);
        prop_assert!(parsed.is_ok(), "{:?} on\n{}", parsed, text);
        let parsed = parsed.unwrap_or_default();
        prop_assert_eq!(parsed.ops(), ops);
    }

    #[test]
    fn each_op_round_trips_through_display_and_from_str(op in arb_op()) {
        prop_assert_eq!(op.to_string().parse::<Op>(), Ok(op));
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = trace::parse(&text);
    }

    #[test]
    fn parse_never_panics_on_op_like_text(
        lines in proptest::collection::vec(
            "[ \t]{0,3}(=>|#|[a-z-]{1,12}|R[0-9]{0,12}|H[0-9]{0,12}|-?[0-9]{1,25}| ){0,6}",
            0..8,
        )
    ) {
        let text = lines.join("\n");
        if let Err(e) = trace::parse(&text) {
            prop_assert!(e.line >= 1 && e.line <= lines.len());
            prop_assert!(e.column >= 1);
        }
    }
}

#[test]
fn close_outer_needs_a_count_of_one_or_more() {
    for (text, column) in [
        ("close-outer", 12),
        ("close-outer 0", 13),
        ("close-outer -1", 13),
        ("close-outer x", 13),
        ("close-outer +2", 13),
    ] {
        let e = trace::parse(text).expect_err(text);
        assert_eq!((e.line, e.column), (1, column), "{text}: {e}");
        assert!(
            e.message
                .contains("native scopes are inside the one closed"),
            "{text}: {e}"
        );
    }
}
