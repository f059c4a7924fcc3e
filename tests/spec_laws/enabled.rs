//! Enabling apart from effect: the model's `enabled` refuses exactly what
//! its `apply` refuses.

use super::{show, to_test_result, LawResult, Verdict};
use arbitrary::Unstructured;
use lazy::Lazy;
use model::vocab::{Holder, Op, OpError, OpKind, Runtime};
use model::Eager;
use quickcheck::{Gen, QuickCheck, TestResult};
use scopecheck::draw::{self, Choices};

/// `enabled` as the law sees it: `Ok`, or the refusal as `apply` reports it
/// and whether it is about the op's arguments.
type EnabledFn = fn(&Eager, &Op) -> Result<(), (String, bool)>;

/// The model's [`model::Environment::enabled`].
fn model_enabled(env: &Eager, op: &Op) -> Result<(), (String, bool)> {
    env.enabled(op)
        .map_err(|r| (OpError::from(r).to_string(), r.is_about_arguments()))
}

/// A broken `enabled`, for the law to catch: `end-tick` whatever frame is
/// innermost.
fn end_tick_anywhere(env: &Eager, op: &Op) -> Result<(), (String, bool)> {
    if *op == Op::EndTick && !env.exited && !env.frames.is_empty() {
        return Ok(());
    }
    model_enabled(env, op)
}

/// One probe: `enabled` refuses `op` exactly when `apply` does, with the
/// same text and leaving the state as it was; an op it enables runs on the
/// eager model and on the lazy implementation without a refusal (or a
/// panic, which fails the test); a refusal that is not about the arguments
/// refuses every other op of the kind drawn here too.
fn probe(
    enabled: EnabledFn,
    eager: &Eager,
    lazy: &Lazy,
    op: &Op,
    u: &mut Unstructured<'_>,
) -> LawResult {
    let verdict = enabled(eager, op);
    let mut after = eager.clone();
    let answer = after.apply(op);
    let lazy_answer = lazy.clone().apply(op);
    match (&verdict, &answer) {
        (Ok(()), Ok(_)) => {}
        (Ok(()), Err(e)) => {
            return Err(Verdict::Broken(format!(
                "`{op}` is enabled, but apply says: {e}"
            )));
        }
        (Err((why, _)), Ok(obs)) => {
            return Err(Verdict::Broken(format!(
                "`{op}` is refused ({why}), but apply ran it: {}",
                show(obs)
            )));
        }
        (Err((why, _)), Err(e)) if *why != e.to_string() => {
            return Err(Verdict::Broken(format!(
                "`{op}`: enabled says {why:?}, apply says {:?}",
                e.to_string()
            )));
        }
        (Err(_), Err(_)) if after != *eager => {
            return Err(Verdict::Broken(format!("refused `{op}` changed the state")));
        }
        (Err(_), Err(_)) => {}
    }
    if verdict.is_ok() != lazy_answer.is_ok() {
        return Err(Verdict::Broken(format!(
            "`{op}`: enabled says {verdict:?}, the lazy side {lazy_answer:?}"
        )));
    }
    if let Err((why, false)) = &verdict {
        for _ in 0..4 {
            let other = draw::draw_op(op.kind(), eager, u);
            if enabled(eager, &other).is_ok() {
                return Err(Verdict::Broken(format!(
                    "`{op}` is refused whatever its arguments ({why}), but `{other}` is enabled"
                )));
            }
        }
    }
    Ok(())
}

/// Now and then a native scope's holder or flags changed to what the
/// generators never draw (a Global on v20, a MakeCallback with a Global or
/// flags), so that their refusals are probed too.
fn vary(op: Op, u: &mut Unstructured<'_>) -> Op {
    let Op::OpenScope {
        kind,
        context,
        mut resource,
        mut flags,
    } = op
    else {
        return op;
    };
    if Choices::ratio(u, 1, 4) {
        resource.holder = Holder::Global;
    }
    if Choices::ratio(u, 1, 4) {
        flags.skip_task_queues = true;
    }
    Op::OpenScope {
        kind,
        context,
        resource,
        flags,
    }
}

/// Over a walk through random states (bytes choose, as the fuzz decoder's
/// do: one in four on node version 20, then ops the model enables), probe
/// an op of every kind in turn, its arguments drawn as the generators draw
/// them ([`vary`]ed) but not filtered ([`probe`]).
fn law_enabled_is_what_apply_refuses(enabled: EnabledFn, bytes: &[u8]) -> LawResult {
    let mut u = Unstructured::new(bytes);
    let (mut eager, mut lazy) = (Eager::new(), Lazy::new());
    if u.below(4) == 0 {
        let v20 = Op::NodeVersion(model::vocab::NodeVersion::V20);
        let _ = (eager.apply(&v20), lazy.apply(&v20));
    }
    let mut kinds = OpKind::ALL
        .iter()
        .cycle()
        .skip(u.below(OpKind::COUNT as u32) as usize);
    while !u.is_empty() && !eager.exited {
        let kind = *kinds.next().expect("a cycle");
        let op = vary(draw::draw_op(kind, &eager, &mut u), &mut u);
        probe(enabled, &eager, &lazy, &op, &mut u)?;
        let Some(next) = draw::enabled_op(&eager, &mut [1; OpKind::COUNT], &mut u) else {
            break;
        };
        let _ = (eager.apply(&next), lazy.apply(&next));
    }
    probe(enabled, &eager, &lazy, &Op::ExecutionAsyncId, &mut u)
}

#[test]
fn enabled_is_exactly_what_apply_refuses() {
    fn prop(bytes: Vec<u8>) -> TestResult {
        to_test_result(law_enabled_is_what_apply_refuses(model_enabled, &bytes))
    }
    QuickCheck::new()
        .rng(Gen::new(800))
        .tests(2_000)
        .quickcheck(prop as fn(Vec<u8>) -> TestResult);
}

#[test]
fn enabled_law_catches_an_end_tick_enabled_anywhere() {
    fn prop(bytes: Vec<u8>) -> TestResult {
        to_test_result(law_enabled_is_what_apply_refuses(end_tick_anywhere, &bytes))
    }
    let outcome = QuickCheck::new()
        .rng(Gen::new(800))
        .tests(2_000)
        .quicktest(prop as fn(Vec<u8>) -> TestResult);
    assert!(outcome.is_err(), "the law did not catch it: {outcome:?}");
}
