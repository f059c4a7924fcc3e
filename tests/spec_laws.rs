//! Laws of the spec, checked with quickcheck on the eager model.
//!
//! Each law states something Node guarantees about its async-context
//! machinery without saying how (no law re-implements the stack): it compares
//! what a program observes before and after, or across, generated op
//! sequences. The sequences are built by [`Arbitrary`] impls (`programs.rs`)
//! over a small tree of items (leaves, and frames that open, run a body and close in order), so
//! they are valid Node programs: scopes nest, every `emitBefore` has its
//! `emitAfter`, hooks are created before they are enabled.
//!
//! Every law is also run against a deliberately broken runtime (a wrapper
//! around the eager model, see [`Mutant`], `mutant.rs`) and must catch it: that is the
//! evidence that the law can fail.
//!
//! The last law is about the model itself rather than Node: enabling apart
//! from effect (`enabled.rs`).

use model::vocab::{
    AsyncId, HookEvent, Observation, Op, OpError, ResourceView, Runtime, ScopeKind,
};
use model::Eager;
use mutant::{Defect, Mutant};
use programs::{flatten, prefix_ops, DefaultTriggerWalk, Item, Nested, TickWalk, WrongAfter};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

mod enabled;
mod mutant;
mod programs;

// ---------------------------------------------------------------------------
// Running

/// Why a law did not hold, or why the case does not apply.
enum Verdict {
    Broken(String),
    /// An op was refused: a shrunk case can be an impossible program.
    NotAProgram,
}

type LawResult = Result<(), Verdict>;

fn to_test_result(r: LawResult) -> TestResult {
    match r {
        Ok(()) => TestResult::passed(),
        Err(Verdict::Broken(why)) => TestResult::error(why),
        Err(Verdict::NotAProgram) => TestResult::discard(),
    }
}

/// Apply one op; a refused op makes the case not a program; a terminal
/// observation is returned like any other.
fn apply(rt: &mut dyn Runtime, op: &Op) -> Result<Vec<Observation>, Verdict> {
    match rt.apply(op) {
        Ok(obs) => Ok(obs),
        Err(OpError::Impossible(_)) => Err(Verdict::NotAProgram),
        Err(other) => Err(Verdict::Broken(format!("`{op}`: {other}"))),
    }
}

/// Apply ops that must not end the process; return all observations.
fn run_alive(rt: &mut dyn Runtime, ops: &[Op]) -> Result<Vec<Observation>, Verdict> {
    let mut all = Vec::new();
    for op in ops {
        let obs = apply(rt, op)?;
        if let Some(t) = obs.iter().find(|o| o.is_terminal()) {
            return Err(Verdict::Broken(format!("`{op}` ended the process: {t}")));
        }
        all.extend(obs);
    }
    Ok(all)
}

/// The context as a program sees it: the three queries and the default
/// trigger id, as their observations.
fn context(rt: &mut dyn Runtime) -> Result<Vec<Observation>, Verdict> {
    run_alive(
        rt,
        &[
            Op::ExecutionAsyncId,
            Op::TriggerAsyncId,
            Op::ExecutionAsyncResource,
            Op::DefaultTriggerAsyncId,
        ],
    )
}

fn start(rt: &mut dyn Runtime, no_force: bool) -> LawResult {
    if no_force {
        run_alive(rt, &[Op::NoForceAsyncHooksChecks])?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The laws

/// A balanced sequence of nested native scopes, JS contexts
/// (`emitBefore`/`emitAfter`, `runInAsyncScope`), default-trigger scopes and
/// hook toggles leaves `executionAsyncId()`, `triggerAsyncId()`,
/// `executionAsyncResource()` (and `getDefaultTriggerAsyncId()`) as they were,
/// at any depth, with or without forced checks.
fn law_balanced_block_restores_context(rt: &mut dyn Runtime, case: &Nested) -> LawResult {
    start(rt, case.no_force)?;
    run_alive(rt, &prefix_ops(&case.prefix))?;
    let before = context(rt)?;
    let mut block = Vec::new();
    flatten(&case.block, &mut block);
    run_alive(rt, &block)?;
    let after = context(rt)?;
    if before != after {
        return Err(Verdict::Broken(format!(
            "the context changed across a balanced block\n  before: {}\n  after:  {}",
            show(&before),
            show(&after)
        )));
    }
    Ok(())
}

/// `clearAsyncIdStack()` at any depth leaves the context (0, 0) and
/// `executionAsyncResource()` = `topLevelResource`, and shows nothing.
fn law_clear_resets_to_top_level(rt: &mut dyn Runtime, case: &Nested) -> LawResult {
    start(rt, case.no_force)?;
    run_alive(rt, &prefix_ops(&case.prefix))?;
    let mut block = Vec::new();
    flatten(&case.block, &mut block);
    run_alive(rt, &block)?;
    let shown = run_alive(rt, &[Op::ClearAsyncIdStack])?;
    if !shown.is_empty() {
        return Err(Verdict::Broken(format!(
            "clear-async-id-stack showed {}",
            show(&shown)
        )));
    }
    let seen = run_alive(
        rt,
        &[
            Op::ExecutionAsyncId,
            Op::TriggerAsyncId,
            Op::ExecutionAsyncResource,
        ],
    )?;
    let expected = vec![
        Observation::ExecutionAsyncId(0),
        Observation::TriggerAsyncId(0),
        Observation::ExecutionAsyncResource(ResourceView::TopLevel),
    ];
    if seen != expected {
        return Err(Verdict::Broken(format!(
            "after clear-async-id-stack: {}",
            show(&seen)
        )));
    }
    Ok(())
}

/// A tick runs with `executionAsyncId()` = its own id, `triggerAsyncId()` =
/// what `getDefaultTriggerAsyncId()` returned when `nextTick` was called, and
/// `executionAsyncResource()` = its tick object; ticks run in the order they
/// were scheduled, and all of them run.
fn law_tick_sees_its_scheduling_context(rt: &mut dyn Runtime, case: &TickWalk) -> LawResult {
    start(rt, case.no_force)?;
    let mut ops = prefix_ops(&case.groups);
    if case.close_all {
        for group in case.groups.iter().rev() {
            if let Some(close) = &group.close {
                ops.extend(close.iter().cloned());
            }
        }
        ops.push(Op::CloseScope { threw: false });
    } else {
        ops.push(Op::TickCallback);
    }
    // What getDefaultTriggerAsyncId() said right before each next-tick, in
    // scheduling order, and every tick that ran, in running order.
    let mut scheduled = Vec::new();
    let mut ticks = Vec::new();
    for op in &ops {
        if let Op::NextTick { .. } = op {
            let seen = run_alive(rt, &[Op::DefaultTriggerAsyncId])?;
            let [Observation::DefaultTriggerAsyncId(d)] = seen.as_slice() else {
                return Err(Verdict::Broken(format!("unexpected {}", show(&seen))));
            };
            scheduled.push(*d);
        }
        for o in run_alive(rt, std::slice::from_ref(op))? {
            if let Observation::Tick { .. } = o {
                ticks.push(o);
            }
        }
    }
    if ticks.len() != scheduled.len() {
        return Err(Verdict::Broken(format!(
            "{} ticks scheduled, {} ran: {}",
            scheduled.len(),
            ticks.len(),
            show(&ticks)
        )));
    }
    let mut last_id = AsyncId::MIN;
    for (tick, trigger) in ticks.iter().zip(scheduled) {
        let Observation::Tick {
            async_id,
            execution_async_id,
            trigger_async_id,
            resource,
        } = tick
        else {
            unreachable!()
        };
        if *execution_async_id != *async_id {
            return Err(Verdict::Broken(format!("{tick}: not its own id")));
        }
        if *trigger_async_id != trigger {
            return Err(Verdict::Broken(format!(
                "{tick}: getDefaultTriggerAsyncId() was {trigger} when it was scheduled"
            )));
        }
        if let Some(r) = resource {
            if *r != ResourceView::TickObject(*async_id) {
                return Err(Verdict::Broken(format!(
                    "{tick}: the resource is not its tick object"
                )));
            }
        }
        if *async_id <= last_id {
            return Err(Verdict::Broken(format!("{tick}: ran out of order")));
        }
        last_id = *async_id;
    }
    Ok(())
}

/// `getDefaultTriggerAsyncId()` is `executionAsyncId()` unless a
/// default-trigger scope is open, and then the innermost one's id, whatever
/// native scopes or JS contexts were opened inside it.
fn law_default_trigger(rt: &mut dyn Runtime, case: &DefaultTriggerWalk) -> LawResult {
    fn walk(rt: &mut dyn Runtime, items: &[Item], open: &mut Vec<AsyncId>) -> LawResult {
        for item in items {
            match item {
                Item::Leaf(ops) => {
                    run_alive(rt, ops)?;
                }
                Item::Check => {
                    let seen = run_alive(rt, &[Op::DefaultTriggerAsyncId, Op::ExecutionAsyncId])?;
                    let (Observation::DefaultTriggerAsyncId(d), Observation::ExecutionAsyncId(e)) =
                        (&seen[0], &seen[1])
                    else {
                        return Err(Verdict::Broken(format!("unexpected {}", show(&seen))));
                    };
                    let expected = open.last().copied().unwrap_or(*e);
                    if *d != expected {
                        return Err(Verdict::Broken(format!(
                            "getDefaultTriggerAsyncId() = {d}, executionAsyncId() = {e}, open default-trigger scopes {open:?}"
                        )));
                    }
                }
                Item::Frame {
                    open: o,
                    body,
                    close,
                } => {
                    run_alive(rt, o)?;
                    let pushed = match o.as_slice() {
                        [Op::EnterDefaultTriggerScope { trigger_async_id }] => {
                            open.push(*trigger_async_id);
                            true
                        }
                        _ => false,
                    };
                    walk(rt, body, open)?;
                    run_alive(rt, close)?;
                    if pushed {
                        open.pop();
                    }
                }
            }
        }
        Ok(())
    }
    let mut open = Vec::new();
    for group in &case.groups {
        walk(rt, &group.items, &mut open)?;
        // A frame left open by the prefix.
        if group.close.is_some() {
            if let [Item::Leaf(ops)] = group.items.as_slice() {
                if let [Op::EnterDefaultTriggerScope { trigger_async_id }] = ops.as_slice() {
                    open.push(*trigger_async_id);
                }
            }
        }
    }
    Ok(())
}

/// `newAsyncId()` is strictly increasing, and the ids ticks take from the
/// same counter (their TickObject init) interleave with it in order.
fn law_new_async_id_increases(rt: &mut dyn Runtime, case: &Nested) -> LawResult {
    start(rt, case.no_force)?;
    let mut ops = prefix_ops(&case.prefix);
    flatten(&case.block, &mut ops);
    let mut ids = Vec::new();
    for op in &ops {
        // Every op is followed by a newAsyncId(), so that the law always
        // has ids to compare.
        for o in run_alive(rt, &[op.clone(), Op::NewAsyncId])? {
            match o {
                Observation::NewAsyncId(id) => ids.push(id),
                Observation::Hook {
                    event:
                        HookEvent::Init {
                            async_id,
                            ref type_name,
                            ..
                        },
                    ..
                } if type_name == "TickObject" && ids.last() != Some(&async_id) => {
                    // Every hook with an init callback reports the same
                    // allocation: count it once.
                    ids.push(async_id)
                }
                _ => {}
            }
        }
    }
    for w in ids.windows(2) {
        if w[1] <= w[0] {
            return Err(Verdict::Broken(format!(
                "id {} came after {}: {ids:?}",
                w[1], w[0]
            )));
        }
    }
    Ok(())
}

/// With no hook and the checks forced, `emitAfter(id)` with an id that is not
/// the current execution id ends the process with exactly
/// `CorruptedStack { actual: executionAsyncId(), expected: id }`.
fn law_wrong_emit_after_dies(rt: &mut dyn Runtime, case: &WrongAfter) -> LawResult {
    run_alive(rt, &prefix_ops(&case.groups))?;
    let seen = run_alive(rt, &[Op::ExecutionAsyncId])?;
    let [Observation::ExecutionAsyncId(current)] = seen.as_slice() else {
        return Err(Verdict::Broken(format!("unexpected {}", show(&seen))));
    };
    let wrong = current + case.delta;
    let obs = apply(rt, &Op::EmitAfter { async_id: wrong })?;
    let expected = vec![Observation::CorruptedStack {
        actual: *current,
        expected: wrong,
        abort: false,
    }];
    if obs != expected {
        return Err(Verdict::Broken(format!(
            "emit-after {wrong} with executionAsyncId() = {current}: {}",
            show(&obs)
        )));
    }
    if rt.apply(&Op::ExecutionAsyncId) != Err(OpError::Exited) {
        return Err(Verdict::Broken("the process went on".to_string()));
    }
    Ok(())
}

fn show(obs: &[Observation]) -> String {
    let v: Vec<String> = obs.iter().map(ToString::to_string).collect();
    format!("[{}]", v.join(" | "))
}

// ---------------------------------------------------------------------------
// The tests: each law holds on the eager model and catches its mutant.

macro_rules! law_tests {
    ($holds:ident, $catches:ident, $law:ident, $case:ty, $defect:expr) => {
        #[test]
        fn $holds() {
            fn prop(case: $case) -> TestResult {
                to_test_result($law(&mut Eager::new(), &case))
            }
            QuickCheck::new()
                .tests(300)
                .max_tests(30_000)
                .quickcheck(prop as fn($case) -> TestResult);
        }

        #[test]
        fn $catches() {
            fn prop(case: $case) -> TestResult {
                to_test_result($law(&mut Mutant::new($defect), &case))
            }
            let outcome = QuickCheck::new()
                .tests(1_000)
                .max_tests(100_000)
                .quicktest(prop as fn($case) -> TestResult);
            assert!(
                outcome.is_err(),
                "{} did not catch {:?} in {:?} cases",
                stringify!($law),
                $defect,
                outcome
            );
        }
    };
}

law_tests!(
    balanced_block_restores_context,
    balanced_block_law_catches_a_leaky_close,
    law_balanced_block_restores_context,
    Nested,
    Defect::LeakyClose
);
law_tests!(
    clear_async_id_stack_resets_to_top_level,
    clear_law_catches_a_clear_that_does_nothing,
    law_clear_resets_to_top_level,
    Nested,
    Defect::NoClear
);
law_tests!(
    tick_sees_its_id_and_scheduling_trigger,
    tick_law_catches_ticks_scheduled_in_the_wrong_context,
    law_tick_sees_its_scheduling_context,
    TickWalk,
    Defect::TickInJsContext
);
law_tests!(
    default_trigger_is_execution_id_or_innermost_scope,
    default_trigger_law_catches_an_off_by_one_scope,
    law_default_trigger,
    DefaultTriggerWalk,
    Defect::OffByOneDefaultTrigger
);
law_tests!(
    new_async_id_strictly_increases,
    new_async_id_law_catches_a_repeated_id,
    law_new_async_id_increases,
    Nested,
    Defect::RepeatingIds
);
law_tests!(
    wrong_emit_after_dies_with_corrupted_stack,
    wrong_emit_after_law_catches_unforced_checks,
    law_wrong_emit_after_dies,
    WrongAfter,
    Defect::NoForcedChecks
);

/// The generators build programs: unshrunk cases are never refused by the
/// eager model and never end the process (so the laws' discards only ever
/// come from shrinking).
#[test]
fn generated_programs_are_valid() {
    let mut g = Gen::new(60);
    let mut deepest = 0;
    let mut trampolines = 0;
    for _ in 0..300 {
        let case = Nested::arbitrary(&mut g);
        let mut rt = Eager::new();
        let mut ops = Vec::new();
        if case.no_force {
            ops.push(Op::NoForceAsyncHooksChecks);
        }
        ops.extend(prefix_ops(&case.prefix));
        flatten(&case.block, &mut ops);
        for op in &ops {
            let obs = rt
                .apply(op)
                .unwrap_or_else(|e| panic!("`{op}` refused: {e}\n{case:?}"));
            assert!(
                !obs.iter().any(Observation::is_terminal),
                "`{op}` ended the process: {}\n{case:?}",
                show(&obs)
            );
            deepest = deepest.max(rt.async_hooks.fields.k_stack_length);
            if matches!(
                op,
                Op::OpenScope {
                    kind: ScopeKind::MakeCallback,
                    ..
                }
            ) && rt.hooks.trampoline_installed
            {
                trampolines += 1;
            }
        }
    }
    // The generator reaches the JS fallback to the native push (more than
    // 16 entries) and MakeCallback with the trampoline installed.
    assert!(deepest > 16, "deepest stack only {deepest}");
    assert!(trampolines > 0, "no MakeCallback with hooks enabled");
    for _ in 0..300 {
        let walk = TickWalk::arbitrary(&mut g);
        let mut rt = Eager::new();
        assert!(matches!(
            law_tick_sees_its_scheduling_context(&mut rt, &walk),
            Ok(()) | Err(Verdict::Broken(_))
        ));
    }
}
