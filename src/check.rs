//! Random lockstep checking: generated op sequences run on both sides, the
//! first divergence shrunk to a minimal trace.

use crate::coverage::Coverage;
use crate::generate::{EagerMachine, RefState};
use crate::lockstep::{self, Divergence, Pair};
use lazy::mutant::Mutant;
use model::vocab::{trace, Op};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use proptest_state_machine::ReferenceStateMachine;
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// What `check` is asked to do.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// Generated sequences to run.
    pub cases: u32,
    /// Seed of the generator: the same seed runs the same sequences.
    pub seed: u64,
    /// Longest sequence.
    pub max_len: usize,
    /// The deliberate mistake switched on in the lazy side, if any.
    pub mutant: Option<Mutant>,
    /// Check the refinement relation after every op too.
    pub refinement: bool,
}

impl CheckConfig {
    /// The `scopecheck check` command line that runs this configuration:
    /// the same seed, cases, maximum length, refinement setting and mutant
    /// run the same sequences and shrink to the same counterexample.
    pub fn command(&self) -> String {
        let mut cmd = format!(
            "scopecheck check --seed {} --cases {} --max-len {}",
            self.seed, self.cases, self.max_len
        );
        if !self.refinement {
            cmd.push_str(" --no-refinement");
        }
        if let Some(m) = self.mutant {
            cmd.push_str(" --mutant ");
            cmd.push_str(&m.name());
        }
        cmd
    }
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            cases: 100_000,
            seed: 66511,
            max_len: 80,
            mutant: None,
            refinement: true,
        }
    }
}

/// A minimal counterexample.
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The shrunk trace, up to and including the diverging op.
    pub ops: Vec<Op>,
    /// Where and how the two sides differ.
    pub divergence: Box<Divergence>,
    /// The seed that found it.
    pub seed: u64,
    /// The whole configuration of the run that found it (seed, cases,
    /// maximum length, refinement, mutant).
    pub found_by: CheckConfig,
}

impl Counterexample {
    /// The trace in the text format, with a header giving the full command
    /// that finds it again ([`CheckConfig::command`]) and the divergence.
    pub fn trace_text(&self) -> String {
        let mut out = format!(
            "# Counterexample found by `{}`.\n# {}\n",
            self.found_by.command(),
            self.divergence.to_string().trim_end().replace('\n', "\n# ")
        );
        out.push_str(&trace::print(&self.ops));
        out
    }
}

/// What a check run saw.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Sequences run (including shrinking attempts after a failure).
    pub cases: u64,
    /// Ops applied on each side.
    pub ops: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Situations and op kinds reached.
    pub coverage: Coverage,
    /// The minimal counterexample, if the sides ever differed.
    pub counterexample: Option<Counterexample>,
    /// Cases run up to and including the first failing one, and the time it
    /// took (before shrinking).
    pub first_failure: Option<(u64, Duration)>,
}

/// Run `ops` in lockstep, recording coverage; the divergence if any.
pub fn run_with_coverage(
    ops: &[Op],
    mutant: Option<Mutant>,
    refinement: bool,
    coverage: &mut Coverage,
) -> Result<u64, Box<Divergence>> {
    let mut pair = Pair::with_mutant(mutant);
    let mut applied = 0;
    for (index, op) in ops.iter().enumerate() {
        if pair.eager.exited {
            break;
        }
        coverage.before_op(&pair.lazy, op);
        let closing_lazy = matches!(op, Op::CloseScope { .. })
            && matches!(pair.lazy.frames.last(), Some(lazy::Frame::Native(s)) if s.lazy);
        let answer = pair.checked_step(index, op, refinement)?;
        applied += 1;
        if let Ok(obs) = &answer {
            coverage.after_op(closing_lazy, &pair.lazy, op, obs);
        }
    }
    Ok(applied)
}

fn runner(seed: u64, cases: u32) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 100_000,
        max_local_rejects: u32::MAX,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// The strategy of whole sequences: initial state, ops, (unused) counter.
pub fn sequences(
    max_len: usize,
) -> impl Strategy<
    Value = (
        RefState,
        Vec<Op>,
        Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
    ),
> {
    EagerMachine::sequential_strategy(1..=max_len.max(1))
}

/// Random lockstep check; `progress` is called after every case with the
/// number of cases done.
pub fn check(config: &CheckConfig, progress: &mut dyn FnMut(u64)) -> CheckReport {
    let start = Instant::now();
    let coverage = RefCell::new(Coverage::default());
    let ops = RefCell::new(0u64);
    let cases = RefCell::new(0u64);
    let progress = RefCell::new(progress);
    let first_failure = RefCell::new(None);
    let mut runner = runner(config.seed, config.cases);
    let result = runner.run(&sequences(config.max_len), |(_, seq, seen)| {
        *cases.borrow_mut() += 1;
        let n = *cases.borrow();
        (progress.borrow_mut())(n);
        let outcome = run_with_coverage(
            &seq,
            config.mutant,
            config.refinement,
            &mut coverage.borrow_mut(),
        );
        // Tell the shrinker how many ops ran, so that it drops the rest first.
        let ran = match &outcome {
            Ok(applied) => *applied as usize,
            Err(d) => d.index + 1,
        };
        if let Some(seen) = seen {
            seen.fetch_add(ran, std::sync::atomic::Ordering::SeqCst);
        }
        match outcome {
            Ok(applied) => {
                *ops.borrow_mut() += applied;
                Ok(())
            }
            Err(d) => {
                first_failure
                    .borrow_mut()
                    .get_or_insert((n, start.elapsed()));
                Err(TestCaseError::fail(d.to_string()))
            }
        }
    });
    let counterexample = match result {
        Err(TestError::Fail(reason, (_, seq, _))) => {
            if lockstep::run_with(&seq, config.mutant, config.refinement).is_ok() {
                panic!(
                    "proptest failed a case that runs clean on its own: {reason}\n{}",
                    trace::print(&seq)
                );
            }
            let seq = minimize(&seq, config.mutant, config.refinement);
            let divergence = lockstep::run_with(&seq, config.mutant, config.refinement)
                .expect_err("the shrunk sequence still diverges");
            let ops = seq[..=divergence.index].to_vec();
            Some(Counterexample {
                ops,
                divergence,
                seed: config.seed,
                found_by: config.clone(),
            })
        }
        Err(TestError::Abort(why)) => panic!("the generator gave up: {why}"),
        Ok(()) => None,
    };
    CheckReport {
        cases: cases.into_inner(),
        ops: ops.into_inner(),
        elapsed: start.elapsed(),
        coverage: coverage.into_inner(),
        counterexample,
        first_failure: first_failure.into_inner(),
    }
}

/// Whether `ops` is a sequence Node could run (the eager model rejects none
/// of its ops before the process ends) that still diverges; the divergence.
fn still_fails(ops: &[Op], mutant: Option<Mutant>, refinement: bool) -> Option<Box<Divergence>> {
    let divergence = lockstep::run_with(ops, mutant, refinement).err()?;
    let valid = lockstep::run_with(&ops[..divergence.index], mutant, false)
        .map(|steps| {
            !steps
                .iter()
                .any(|s| matches!(s.answer, Err(model::vocab::OpError::Impossible(_))))
        })
        .unwrap_or(false);
    let eager_accepts = !matches!(divergence.eager, Err(model::vocab::OpError::Impossible(_)));
    (valid && eager_accepts).then_some(divergence)
}

/// Finish shrinking: proptest's state-machine shrinker deletes ops from the
/// back once; this deletes any op, or an open and its close together, while
/// the sequence stays valid and still diverges, until nothing more can go.
pub fn minimize(ops: &[Op], mutant: Option<Mutant>, refinement: bool) -> Vec<Op> {
    let Some(d) = still_fails(ops, mutant, refinement) else {
        return ops.to_vec();
    };
    let mut best = ops[..=d.index].to_vec();
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < best.len() {
            let mut candidates = vec![vec![i]];
            if best[i].opens_frame() {
                // The matching end of the frame opened at i.
                let mut depth = 0usize;
                for (j, op) in best.iter().enumerate().skip(i) {
                    if op.opens_frame() {
                        depth += 1;
                    } else if op.closes_frame() {
                        depth -= 1;
                        if depth == 0 {
                            candidates.push(vec![i, j]);
                            break;
                        }
                    }
                }
            }
            let mut removed = false;
            for remove in candidates.into_iter().rev() {
                let trial: Vec<Op> = best
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !remove.contains(k))
                    .map(|(_, op)| op.clone())
                    .collect();
                if let Some(d) = still_fails(&trial, mutant, refinement) {
                    best = trial[..=d.index].to_vec();
                    removed = true;
                    changed = true;
                    break;
                }
            }
            if !removed {
                i += 1;
            }
        }
        if !changed {
            return best;
        }
    }
}

/// One sequence from the generator, for tools that want samples (the fuzz
/// seed corpus, the conformance runner).
pub fn sample(seed: u64, max_len: usize) -> Vec<Op> {
    let mut runner = runner(seed, 1);
    let tree = sequences(max_len)
        .new_tree(&mut runner)
        .expect("the generator does not reject the start state");
    tree.current().1
}
