//! Random lockstep checking: generated op sequences run on both sides, the
//! first divergence shrunk to a minimal trace.
//!
//! Each case is generated while it runs: [`crate::generate::CaseGen`] draws
//! the next op from the eager side of the pair, the pair applies it, the
//! refinement relation and the coverage classification look at the states
//! after it. Nothing is generated that is not run, and nothing is kept of a
//! passing case. Only once a case fails is it shrunk ([`minimize`]).
//!
//! Case `i` of a run depends on the seed and `i` alone
//! ([`crate::generate::case_rng`]), so `--shard I/N` runs the cases `i` with
//! `i % N == I - 1` and the shards of a run add up to the whole run
//! ([`ShardSummary::merge`]).

use crate::coverage::{self, Coverage, Tally};
use crate::generate::CaseGen;
use crate::lockstep::{self, Counterexample, Divergence, FoundBy, Pair};
use lazy::mutant::{Mutant, Mutated};
use lazy::{LazyStack, LazyStore};
use model::vocab::{trace, NodeVersion, Op, OpError};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
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
    /// Which part of the cases to run.
    pub shard: Shard,
    /// The node version both sides run on (`--node-version`; 26 by
    /// default): on 20 every case starts with the op `node-version 20`.
    pub node_version: NodeVersion,
}

/// A part of a run: of the cases `0..cases`, those whose index is
/// `index - 1` modulo `count` (`--shard index/count`, 1-based as written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, 1..=count.
    pub index: u32,
    /// How many shards the run is split into.
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 1, count: 1 }
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `I/N` with 1 <= I <= N.
    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("expected I/N (shard I of N), got `{s}`"))?;
        let index: u32 = i.trim().parse().map_err(|e| format!("shard `{i}`: {e}"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|e| format!("shard count `{n}`: {e}"))?;
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index}/{count}: need 1 <= I <= N"));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// The case indices of this shard, of the run's `cases`.
    pub fn cases(self, cases: u32) -> impl Iterator<Item = u64> {
        (u64::from(self.index) - 1..u64::from(cases)).step_by(self.count as usize)
    }

    /// How many cases of the run's `cases` this shard runs.
    pub fn len(self, cases: u32) -> u64 {
        let first = u64::from(self.index) - 1;
        u64::from(cases)
            .saturating_sub(first)
            .div_ceil(u64::from(self.count))
    }

    /// Whether this shard runs no case of the run's `cases`.
    pub fn is_empty(self, cases: u32) -> bool {
        self.len(cases) == 0
    }
}

impl CheckConfig {
    /// The `scopecheck check` command line that runs this configuration:
    /// the same seed, cases, maximum length, refinement setting and mutant
    /// run the same sequences and shrink to the same counterexample.
    pub fn command(&self) -> String {
        // Shards are plumbing (`scopecheck plumbing check --shard I/N`).
        let sub = if self.shard.count > 1 {
            "plumbing check"
        } else {
            "check"
        };
        let mut cmd = format!(
            "scopecheck {sub} --seed {} --cases {} --max-len {}",
            self.seed, self.cases, self.max_len
        );
        if !self.refinement {
            cmd.push_str(" --no-refinement");
        }
        if let Some(m) = self.mutant {
            cmd.push_str(" --mutant ");
            cmd.push_str(&m.name());
        }
        if self.shard.count > 1 {
            cmd.push_str(&format!(" --shard {}", self.shard));
        }
        if self.node_version != NodeVersion::default() {
            cmd.push_str(&format!(" --node-version {}", self.node_version));
        }
        cmd
    }
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            cases: 100_000,
            seed: 66511,
            max_len: 120,
            mutant: None,
            refinement: true,
            shard: Shard::default(),
            node_version: NodeVersion::default(),
        }
    }
}

/// How the random check found a [`Counterexample`]: the run, the case, and
/// whether shrinking ran to its end.
#[derive(Clone, Debug)]
pub struct CaseFound {
    /// The whole configuration of the run that found it (seed, cases,
    /// maximum length, refinement, mutant, shard).
    pub config: CheckConfig,
    /// The index of the case that found it (before shrinking):
    /// [`crate::generate::case_ops`] with the seed and this index gives it.
    pub case: u64,
    /// Shrinking ran to its end (1-minimal); `false` when an interrupt
    /// stopped it, leaving the shortest failing sequence found so far.
    pub shrunk: bool,
}

impl FoundBy for CaseFound {
    /// The full command that finds it again ([`CheckConfig::command`]).
    fn header(&self) -> String {
        format!(
            "Counterexample found by `{}` (case {}{}).",
            self.config.command(),
            self.case,
            if self.shrunk {
                ""
            } else {
                "; shrinking was interrupted: not minimal"
            },
        )
    }
}

/// What a check run saw.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Sequences run (up to and including a failing one; shrinking
    /// attempts are not counted).
    pub cases: u64,
    /// Ops applied on each side.
    pub ops: u64,
    /// Wall time of the check, without the calibration's own runs and
    /// without shrinking.
    pub elapsed: Duration,
    /// Situations and op kinds reached, with the cases that reached each.
    pub coverage: Coverage,
    /// The minimal counterexample, if the sides ever differed.
    pub counterexample: Option<Counterexample<CaseFound>>,
    /// Cases run up to and including the first failing one, and the time it
    /// took (before shrinking).
    pub first_failure: Option<(u64, Duration)>,
    /// The bare pair's rate on ops of this run, measured during it.
    pub calibration: Option<Calibration>,
    /// Drawn ops the eager model rejected (a generator bug if not 0; the
    /// case stops there).
    pub rejected: u64,
    /// The node version the run was on.
    pub node_version: NodeVersion,
    /// The signal (SIGINT, SIGTERM) that stopped the run before its last
    /// case ([`crate::interrupt`]); the counts are of the cases run.
    pub interrupted: Option<i32>,
}

impl CheckReport {
    /// Ops per second of the check.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The check's rate as a share of the bare pair's (1.0: as fast as
    /// stepping the pair alone), when calibrated.
    pub fn ratio_to_bare(&self) -> Option<f64> {
        self.calibration
            .as_ref()
            .filter(|c| c.ops > 0)
            .map(|c| self.ops_per_sec() / c.ops_per_sec())
    }
}

/// The bare lockstep pair (`Pair::step` on each op, as `benches/lockstep.rs`
/// runs it: no generation, no refinement check, no coverage) timed on a
/// sample of the run's own cases, in slices spread over the run so that load
/// that drifts hits the check and the calibration alike.
#[derive(Clone, Debug, Default)]
pub struct Calibration {
    /// Ops replayed.
    pub ops: u64,
    /// Time the bare pair took on them.
    pub elapsed: Duration,
}

impl Calibration {
    /// The bare pair's ops per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One case of every this many is kept for the calibration.
const CALIBRATION_EVERY: u64 = 4;
/// The kept cases are replayed bare once they hold this many ops.
const CALIBRATION_SLICE: usize = 8_192;
/// Progress is reported every this many cases.
const PROGRESS_EVERY: u64 = 256;

#[derive(Default)]
struct Calibrator {
    kept: Vec<Vec<Op>>,
    kept_ops: usize,
    result: Calibration,
}

impl Calibrator {
    fn keep(&mut self, ops: &[Op]) {
        self.kept.push(ops.to_vec());
        self.kept_ops += ops.len();
        if self.kept_ops >= CALIBRATION_SLICE {
            self.replay();
        }
    }

    /// The kept cases on the bare pair over the pull request's store.
    fn replay(&mut self) {
        let start = Instant::now();
        for ops in &self.kept {
            let mut pair = Pair::new();
            for op in ops {
                let _ = black_box(pair.step(black_box(op)));
            }
        }
        self.result.elapsed += start.elapsed();
        self.result.ops += self.kept_ops as u64;
        self.kept.clear();
        self.kept_ops = 0;
    }
}

/// One case, generated while it runs: ops drawn from the eager side of a
/// fresh pair (its lazy side over a copy of `store`), applied to both, the
/// refinement relation checked after each (if asked), the coverage
/// classified into `tally`. The ops run are left in `ops`.
/// `Ok((ops applied, rejected))`, or the divergence.
pub fn run_case<S: LazyStore>(
    config: &CheckConfig,
    store: &S,
    case: u64,
    tally: &mut Tally,
    ops: &mut Vec<Op>,
) -> Result<(u64, bool), Box<Divergence>> {
    let mut gen = CaseGen::new(config.seed, case, config.max_len);
    let mut pair = Pair::with_store(store.clone());
    ops.clear();
    if config.node_version != NodeVersion::default() {
        // The node version is the trace's first op, so that a counterexample
        // replays on it.
        let op = Op::NodeVersion(config.node_version);
        coverage::classify_before(tally, &pair.lazy, &op);
        let _ = pair.checked_step(0, &op, config.refinement)?;
        ops.push(op);
    }
    while let Some(op) = gen.next_op(&pair.eager) {
        coverage::classify_before(tally, &pair.lazy, &op);
        let closing_lazy = coverage::closes_lazy_scope(&pair.lazy, &op);
        let index = ops.len();
        ops.push(op);
        let op = &ops[index];
        match pair.checked_step(index, op, config.refinement)? {
            Ok(obs) => coverage::classify_after(tally, closing_lazy, &pair.lazy, op, &obs),
            Err(OpError::Impossible(_)) => {
                ops.pop();
                return Ok((index as u64, true));
            }
            Err(_) => {}
        }
    }
    Ok((ops.len() as u64, false))
}

/// Run `ops` in lockstep, recording coverage; the divergence if any.
pub fn run_with_coverage(
    ops: &[Op],
    mutant: Option<Mutant>,
    refinement: bool,
    coverage: &mut Coverage,
) -> Result<u64, Box<Divergence>> {
    match mutant {
        None => run_on_with_coverage(Pair::new(), ops, refinement, coverage),
        Some(m) => run_on_with_coverage(Pair::mutated(m), ops, refinement, coverage),
    }
}

fn run_on_with_coverage<S: LazyStore>(
    mut pair: Pair<S>,
    ops: &[Op],
    refinement: bool,
    coverage: &mut Coverage,
) -> Result<u64, Box<Divergence>> {
    let mut applied = 0;
    for (index, op) in ops.iter().enumerate() {
        if pair.eager.exited {
            break;
        }
        coverage.before_op(&pair.lazy, op);
        let closing_lazy = coverage::closes_lazy_scope(&pair.lazy, op);
        let answer = pair.checked_step(index, op, refinement)?;
        applied += 1;
        if let Ok(obs) = &answer {
            coverage.after_op(closing_lazy, &pair.lazy, op, obs);
        }
    }
    Ok(applied)
}

/// Random lockstep check; `progress` is called every few hundred cases and
/// at the end with the number of cases done.
pub fn check(config: &CheckConfig, progress: &mut dyn FnMut(u64)) -> CheckReport {
    match config.mutant {
        None => check_on(config, &LazyStack::default(), progress),
        Some(m) => check_on(config, &Mutated::new(m), progress),
    }
}

/// [`check`] with the lazy side of every case over a copy of `store`.
fn check_on<S: LazyStore>(
    config: &CheckConfig,
    store: &S,
    progress: &mut dyn FnMut(u64),
) -> CheckReport {
    let start = Instant::now();
    let mut tally = Tally::default();
    let mut ops = Vec::with_capacity(config.max_len);
    let mut calibrator = Calibrator::default();
    let calibrate = config.mutant.is_none();
    let mut applied = 0u64;
    let mut rejected = 0u64;
    let mut cases = 0u64;
    let mut failure = None;
    let mut interrupted = None;
    for case in config.shard.cases(config.cases) {
        if let Some(signal) = crate::interrupt::requested() {
            interrupted = Some(signal);
            break;
        }
        let outcome = run_case(config, store, case, &mut tally, &mut ops);
        tally.end_case();
        cases += 1;
        match outcome {
            Ok((n, was_rejected)) => {
                applied += n;
                rejected += u64::from(was_rejected);
                // By the case's place in this run, not its index: a shard's
                // indices may all be odd.
                if calibrate && cases.is_multiple_of(CALIBRATION_EVERY) {
                    calibrator.keep(&ops);
                }
            }
            Err(d) => {
                applied += d.index as u64 + 1;
                failure = Some((case, cases, start.elapsed() - calibrator.result.elapsed));
                break;
            }
        }
        if cases.is_multiple_of(PROGRESS_EVERY) {
            progress(cases);
        }
    }
    if calibrate && calibrator.kept_ops > 0 {
        calibrator.replay();
    }
    progress(cases);
    let elapsed = start.elapsed() - calibrator.result.elapsed;
    let counterexample = failure.map(|(case, _, _)| {
        if lockstep::run_with(&ops, config.mutant, config.refinement).is_ok() {
            panic!(
                "case {case} failed but runs clean on its own:\n{}",
                trace::print(&ops)
            );
        }
        let (seq, shrunk) = minimize_until_interrupted(&ops, config.mutant, config.refinement);
        let divergence = lockstep::run_with(&seq, config.mutant, config.refinement)
            .expect_err("the shrunk sequence still diverges");
        let ops = seq[..=divergence.index].to_vec();
        Counterexample {
            ops,
            divergence,
            found_by: CaseFound {
                config: config.clone(),
                case,
                shrunk,
            },
        }
    });
    CheckReport {
        cases,
        ops: applied,
        elapsed,
        coverage: tally.coverage(),
        counterexample,
        first_failure: failure.map(|(_, n, t)| (n, t)),
        calibration: calibrate.then_some(calibrator.result),
        rejected,
        node_version: config.node_version,
        interrupted,
    }
}

/// The JSON summary of a run or a shard (`scopecheck check --json`): what
/// [`ShardSummary::merge`] adds up. Counts are by name, so that a summary reads
/// on its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardSummary {
    /// The tool that wrote it ([`tool_version`]): summaries of two builds
    /// are not merged, their generators may differ.
    pub tool: String,
    /// Seed of the run.
    pub seed: u64,
    /// Cases of the whole run (all shards).
    pub run_cases: u32,
    /// Longest sequence.
    pub max_len: usize,
    /// Refinement check on.
    pub refinement: bool,
    /// The node version.
    pub node_version: NodeVersion,
    /// The deliberate mistake switched on in the lazy side (its kebab-case
    /// name), if any.
    pub mutant: Option<String>,
    /// The shards this summary covers (one, or several once merged).
    pub shards: Vec<Shard>,
    /// Cases run.
    pub cases: u64,
    /// Ops applied on each side.
    pub ops: u64,
    /// Seconds of checking (added up over shards).
    pub seconds: f64,
    /// Situation → times reached.
    pub situations: std::collections::BTreeMap<String, u64>,
    /// Situation → cases that reached it.
    pub cases_reaching: std::collections::BTreeMap<String, u64>,
    /// Op kind → times applied.
    pub op_kinds: std::collections::BTreeMap<String, u64>,
    /// Counterexamples found (the shrunk trace, as text).
    pub counterexamples: Vec<String>,
    /// Why a shard stopped before its last case other than a counterexample
    /// (`interrupted by SIGINT`), one entry per such shard: the merged run
    /// is then not complete.
    pub stopped: Vec<String>,
}

/// The tool version a [`ShardSummary`] carries: the package version and the
/// commit the binary was built from (`unknown` outside a git checkout).
pub fn tool_version() -> String {
    format!(
        "scopecheck {} (commit {})",
        env!("CARGO_PKG_VERSION"),
        env!("SCOPECHECK_COMMIT")
    )
}

/// Why [`ShardSummary::merge`] refused its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeError {
    /// The 0-based index of the summary at fault, when one is.
    pub part: Option<usize>,
    /// What is wrong, with the values that differ.
    pub reason: String,
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.part {
            Some(i) => write!(f, "summary {}: {}", i + 1, self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for MergeError {}

impl ShardSummary {
    /// The summary of `report`, a run of `config`.
    pub fn of(config: &CheckConfig, report: &CheckReport) -> ShardSummary {
        let names = |m: &std::collections::BTreeMap<&'static str, u64>| {
            m.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        ShardSummary {
            tool: tool_version(),
            seed: config.seed,
            run_cases: config.cases,
            max_len: config.max_len,
            refinement: config.refinement,
            node_version: config.node_version,
            mutant: config.mutant.map(|m| m.name()),
            shards: vec![config.shard],
            cases: report.cases,
            ops: report.ops,
            seconds: report.elapsed.as_secs_f64(),
            situations: names(&report.coverage.situations),
            cases_reaching: names(&report.coverage.cases_reaching),
            op_kinds: names(&report.coverage.ops),
            counterexamples: report
                .counterexample
                .iter()
                .map(Counterexample::trace_text)
                .collect(),
            stopped: report
                .interrupted
                .map(|s| {
                    format!(
                        "shard {} interrupted by signal {s} after {} of its {} cases",
                        config.shard,
                        report.cases,
                        config.shard.len(config.cases)
                    )
                })
                .into_iter()
                .collect(),
        }
    }

    /// The configuration that must be the same in every shard of one run.
    fn run_identity(&self) -> String {
        format!(
            "{}; seed {}, {} cases, max-len {}, refinement {}, node-version {}, mutant {}",
            self.tool,
            self.seed,
            self.run_cases,
            self.max_len,
            if self.refinement { "on" } else { "off" },
            self.node_version,
            self.mutant.as_deref().unwrap_or("none")
        )
    }

    /// Refuse a summary that cannot be one run's: a shard out of range, of
    /// another count than `count`, more cases than its shards hold, a
    /// situation reached in more cases than ran, seconds that are not a
    /// duration.
    fn validate(&self, count: u32) -> Result<(), String> {
        if self.shards.is_empty() {
            return Err("it names no shard".to_string());
        }
        let mut capacity = 0u64;
        for s in &self.shards {
            if s.count == 0 || s.index == 0 || s.index > s.count {
                return Err(format!("shard {s}: need 1 <= I <= N"));
            }
            if s.count != count {
                return Err(format!(
                    "shard {s} is one of {} shards, the first summary's of {count}",
                    s.count
                ));
            }
            capacity += s.len(self.run_cases);
        }
        if self.cases > capacity {
            return Err(format!(
                "it claims {} cases, but its shards of a {}-case run hold {capacity}",
                self.cases, self.run_cases
            ));
        }
        for (name, n) in &self.cases_reaching {
            if *n > self.cases {
                return Err(format!(
                    "situation {name} reached in {n} cases, more than the {} run",
                    self.cases
                ));
            }
        }
        if !(self.seconds.is_finite() && self.seconds >= 0.0) {
            return Err(format!("seconds {} is not a duration", self.seconds));
        }
        Ok(())
    }

    /// Add up summaries of shards of one run: the same seed, cases, maximum
    /// length and refinement setting, each shard once, all of the same
    /// count. The result equals the summary of the unsharded run (counts,
    /// coverage, counterexamples), except for the seconds, which add up.
    ///
    /// Refused, naming the summary and the values that differ: another
    /// tool version or configuration ([`tool_version`], seed, cases,
    /// maximum length, refinement, node version, mutant), a shard twice, counts
    /// that cannot be a run's, or a sum past `u64`.
    pub fn merge(parts: &[ShardSummary]) -> Result<ShardSummary, MergeError> {
        let first = parts.first().ok_or(MergeError {
            part: None,
            reason: "nothing to merge".to_string(),
        })?;
        let count = first.shards.first().map_or(0, |s| s.count);
        let identity = first.run_identity();
        let mut out = ShardSummary {
            shards: Vec::new(),
            cases: 0,
            ops: 0,
            seconds: 0.0,
            situations: Default::default(),
            cases_reaching: Default::default(),
            op_kinds: Default::default(),
            counterexamples: Vec::new(),
            stopped: Vec::new(),
            ..first.clone()
        };
        for (i, p) in parts.iter().enumerate() {
            let refuse = |reason: String| MergeError {
                part: Some(i),
                reason,
            };
            let theirs = p.run_identity();
            if theirs != identity {
                return Err(refuse(format!(
                    "not a shard of the same run as summary 1: {theirs}, against {identity}"
                )));
            }
            p.validate(count).map_err(refuse)?;
            for s in &p.shards {
                if out.shards.contains(s) {
                    return Err(refuse(format!("shard {s} appears twice")));
                }
                out.shards.push(*s);
            }
            let overflow = |what: &str| refuse(format!("the {what} add up past {}", u64::MAX));
            out.cases = out
                .cases
                .checked_add(p.cases)
                .ok_or_else(|| overflow("cases"))?;
            out.ops = out.ops.checked_add(p.ops).ok_or_else(|| overflow("ops"))?;
            out.seconds += p.seconds;
            for (into, from) in [
                (&mut out.situations, &p.situations),
                (&mut out.cases_reaching, &p.cases_reaching),
                (&mut out.op_kinds, &p.op_kinds),
            ] {
                for (k, v) in from {
                    let slot = into.entry(k.clone()).or_default();
                    *slot = slot
                        .checked_add(*v)
                        .ok_or_else(|| overflow(&format!("counts of {k}")))?;
                }
            }
            out.counterexamples
                .extend(p.counterexamples.iter().cloned());
            out.stopped.extend(p.stopped.iter().cloned());
        }
        out.shards.sort_by_key(|s| (s.count, s.index));
        Ok(out)
    }

    /// Whether the shards cover the whole run: every shard of one count,
    /// none stopped early.
    pub fn complete(&self) -> bool {
        let Some(n) = self.shards.first().map(|s| s.count) else {
            return false;
        };
        self.stopped.is_empty()
            && self.shards.len() == n as usize
            && self
                .shards
                .iter()
                .enumerate()
                .all(|(i, s)| s.count == n && s.index as usize == i + 1)
    }

    /// The coverage these counts stand for (names not in
    /// [`crate::coverage::SITUATIONS`] or [`OpKind::ALL`](model::vocab::OpKind::ALL) are dropped).
    pub fn coverage(&self) -> Coverage {
        let mut c = Coverage {
            cases: self.cases,
            ..Coverage::default()
        };
        for (name, _) in crate::coverage::SITUATIONS {
            if let Some(v) = self.situations.get(*name) {
                c.situations.insert(name, *v);
            }
            if let Some(v) = self.cases_reaching.get(*name) {
                c.cases_reaching.insert(name, *v);
            }
        }
        for name in model::vocab::OpKind::ALL.iter().map(|k| k.name()) {
            if let Some(v) = self.op_kinds.get(name) {
                c.ops.insert(name, *v);
            }
        }
        c
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

/// Shrink a failing sequence (delta debugging, one op at a time): cut it
/// after the diverging op, then delete any op, or an open and its close
/// together (with the `catch` after a bare make-callback's `close threw`),
/// while the sequence stays valid and still diverges, until nothing more
/// can go. The result is 1-minimal: no single op (or open/close pair) can
/// be deleted.
pub fn minimize(ops: &[Op], mutant: Option<Mutant>, refinement: bool) -> Vec<Op> {
    minimize_until_interrupted(ops, mutant, refinement).0
}

/// [`minimize`], stopping early when SIGINT or SIGTERM asks the run to stop
/// ([`crate::interrupt`]): the shortest failing sequence found so far, and
/// whether shrinking ran to its end.
pub fn minimize_until_interrupted(
    ops: &[Op],
    mutant: Option<Mutant>,
    refinement: bool,
) -> (Vec<Op>, bool) {
    let Some(d) = still_fails(ops, mutant, refinement) else {
        return (ops.to_vec(), true);
    };
    let mut best = ops[..=d.index].to_vec();
    // A leading `node-version` stays: the counterexample is for that node version.
    let pinned = usize::from(matches!(best.first(), Some(Op::NodeVersion(_))));
    loop {
        let mut changed = false;
        let mut i = pinned;
        while i < best.len() {
            if crate::interrupt::requested().is_some() {
                return (best, false);
            }
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
                            // With the `catch` of what a bare
                            // make-callback's close handed back.
                            let mut frame = vec![i, j];
                            if best.get(j + 1) == Some(&Op::Catch) {
                                frame.push(j + 1);
                            }
                            candidates.push(frame);
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
            return (best, true);
        }
    }
}

/// One sequence from the generator, for tools that want samples (the fuzz
/// seed corpus, the benchmarks): case 0 of the run with `seed`.
pub fn sample(seed: u64, max_len: usize) -> Vec<Op> {
    crate::generate::case_ops(seed, 0, max_len)
}
