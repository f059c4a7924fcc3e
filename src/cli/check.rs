//! `scopecheck check`: random lockstep equivalence with a progress bar, a
//! summary, the bare pair's rate beside the check's, and the coverage table;
//! a counterexample is shrunk, printed, saved under `tests/regressions/` and
//! replayable. Its scale-out (`--shard I/N`, `--json FILE`, and the merge
//! of shards' summaries) is `scopecheck plumbing check` and `plumbing
//! merge` ([`super::plumbing`]).
//!
//! Nothing is lost: the save directory and the summary's file are checked
//! before the first case; the counterexample is printed before it is saved,
//! and saved before the summary is written; files are written whole and
//! renamed into place ([`crate::files`]) under a name no other shard,
//! mutant, budget or process takes. SIGINT or SIGTERM stops the run
//! between cases: the summary of the cases run is printed (and written),
//! a counterexample found is kept, and the exit code is 128 + the signal.

use super::CliError;
use crate::check::{check, CaseFound, CheckConfig, CheckReport, Shard, ShardSummary};
use crate::coverage::Coverage;
use crate::files;
use crate::lockstep::Counterexample;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lazy::mutant::Mutant;
use model::vocab::NodeVersion;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The share of cases every named situation must reach at the default
/// budget (`tests/lockstep.rs` enforces it at the CI budget).
pub const FLOOR_PERCENT: f64 = 1.0;

/// Arguments of `scopecheck check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Generated op sequences to run (at least 1; of the whole run, when sharded).
    #[arg(long, default_value_t = CheckConfig::default().cases,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub cases: u32,
    /// Seed: the same seed runs the same sequences.
    #[arg(long, default_value_t = CheckConfig::default().seed)]
    pub seed: u64,
    /// Longest op sequence (at least 1).
    #[arg(long, default_value_t = CheckConfig::default().max_len,
          value_parser = parse_max_len)]
    pub max_len: usize,
    /// Switch on this deliberate mistake in the lazy side (a name from
    /// `scopecheck mutants`): the check should find it.
    #[arg(long, value_parser = super::parse_mutant)]
    pub mutant: Option<Mutant>,
    /// The Node.js version both sides run on: 26 (the release line
    /// the pull request lands on) or 20 (no Global<Object>* scopes, no
    /// AsyncLocalStorage ops). `docs/spec.md`, "Node versions".
    #[arg(long, default_value_t = NodeVersion::default())]
    pub node_version: NodeVersion,
    /// Where to save a counterexample (created if missing).
    #[arg(long, default_value = "tests/regressions")]
    pub save_dir: PathBuf,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Compare observations only, without the refinement check after each op.
    #[arg(long)]
    pub no_refinement: bool,
}

/// `--max-len`: a positive number of ops.
fn parse_max_len(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("the longest op sequence must be at least 1 op".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("expected a number of ops: {e}")),
    }
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and version.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The file name (without `.trace`) of a counterexample:
/// `seed-SEED[-MUTANT]-HASH`, `HASH` 12 hex digits of the saved text, whose
/// header names the whole command (cases, maximum length, shard, node version):
/// two shards, mutants, budgets or processes that find different traces,
/// or the same trace with different commands, save different files.
pub fn counterexample_stem(cx: &Counterexample<CaseFound>) -> String {
    let hash = fnv1a(cx.trace_text().as_bytes()) >> 16;
    let config = &cx.found_by.config;
    match config.mutant {
        None => format!("seed-{}-{hash:012x}", config.seed),
        Some(m) => format!("seed-{}-{}-{hash:012x}", config.seed, m.name()),
    }
}

/// Save `cx` in `dir` (created if missing) under [`counterexample_stem`],
/// never over another file ([`files::write_new`]).
pub fn save_counterexample(
    dir: &Path,
    cx: &Counterexample<CaseFound>,
) -> std::io::Result<files::Saved> {
    files::write_new(
        dir,
        &counterexample_stem(cx),
        "trace",
        cx.trace_text().as_bytes(),
    )
}

/// The coverage table and what was missed or below the floor.
fn write_coverage(
    out: &mut dyn Write,
    coverage: &Coverage,
    version: NodeVersion,
) -> std::io::Result<()> {
    write!(out, "{}", coverage.table())?;
    let (missing, absent): (Vec<&str>, Vec<&str>) = (coverage.missing().into_iter())
        .partition(|name| crate::coverage::exists_on(version, name));
    if !absent.is_empty() {
        writeln!(
            out,
            "
not on node version {version} (never reachable there): {}",
            absent.join(", ")
        )?;
    }
    if missing.is_empty() {
        writeln!(out, "\nevery named situation and op kind was reached")?;
    } else {
        writeln!(out, "\nNOT reached: {}", missing.join(", "))?;
    }
    let below: Vec<(&str, f64)> = (coverage.below(FLOOR_PERCENT).into_iter())
        .filter(|(name, _)| crate::coverage::exists_on(version, name))
        .collect();
    if coverage.cases > 0 {
        if below.is_empty() {
            writeln!(
                out,
                "every named situation was reached in at least {FLOOR_PERCENT} % of cases"
            )?;
        } else {
            let list: Vec<String> = below
                .iter()
                .map(|(n, p)| format!("{n} ({p:.2} %)"))
                .collect();
            writeln!(out, "below {FLOOR_PERCENT} % of cases: {}", list.join(", "))?;
        }
    }
    Ok(())
}

/// Print the summary and coverage table of a run.
pub fn write_summary(out: &mut dyn Write, report: &CheckReport) -> std::io::Result<()> {
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    writeln!(
        out,
        "{} cases, {} ops in {:.2} s: {:.0} cases/s, {:.0} ops/s (each op on both sides)",
        report.cases,
        report.ops,
        secs,
        report.cases as f64 / secs,
        report.ops_per_sec()
    )?;
    if let (Some(c), Some(ratio)) = (&report.calibration, report.ratio_to_bare()) {
        writeln!(
            out,
            "bare lockstep pair on {} ops of this run, timed during it: {:.0} ops/s; check / bare = {ratio:.3} (1/{:.1})",
            c.ops,
            c.ops_per_sec(),
            1.0 / ratio.max(1e-9)
        )?;
    }
    if report.rejected > 0 {
        writeln!(
            out,
            "GENERATOR BUG: {} drawn ops were rejected by the eager model",
            report.rejected
        )?;
    }
    writeln!(out)?;
    write_coverage(out, &report.coverage, report.node_version)
}

/// Read a summary written by `plumbing check --json`; a file that is not
/// one is bad input, at the line and column serde found.
fn read_summary(path: &Path) -> Result<ShardSummary, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::Read {
        file: path.to_path_buf(),
        source: e,
    })?;
    serde_json::from_str(&text).map_err(|e| CliError::At {
        file: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: format!(
            "not a check summary of {} (`scopecheck plumbing check --json`): {e}",
            crate::check::tool_version()
        ),
    })
}

/// `plumbing merge`: add up the summaries, print the whole run's table.
/// Summaries of different runs, builds or configurations are refused
/// (exit code 2, naming the file and what differs); a counterexample in a
/// shard, a missing shard or a shard stopped early is a verdict (exit 1).
pub fn merge(paths: &[PathBuf], out: &mut dyn Write) -> Result<(), CliError> {
    let parts = paths
        .iter()
        .map(|p| read_summary(p))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = ShardSummary::merge(&parts).map_err(|e| {
        let file = e.part.and_then(|i| paths.get(i));
        CliError::Usage(match file {
            Some(f) => format!("{}: cannot merge: {}", f.display(), e.reason),
            None => format!("cannot merge: {}", e.reason),
        })
    })?;
    let shards: Vec<String> = merged.shards.iter().map(Shard::to_string).collect();
    writeln!(
        out,
        "merged {} summaries of seed {} ({} cases, max length {}; {}): shards {}",
        parts.len(),
        merged.seed,
        merged.run_cases,
        merged.max_len,
        merged.tool,
        shards.join(", ")
    )?;
    writeln!(
        out,
        "{} cases, {} ops, {:.2} s of checking in all",
        merged.cases, merged.ops, merged.seconds
    )?;
    for why in &merged.stopped {
        writeln!(out, "STOPPED EARLY: {why}")?;
    }
    writeln!(out)?;
    let coverage = merged.coverage();
    write_coverage(out, &coverage, merged.node_version)?;
    for cx in &merged.counterexamples {
        writeln!(out, "\nCOUNTEREXAMPLE:\n{cx}")?;
    }
    if !merged.counterexamples.is_empty() {
        return Err(CliError::Verdict(format!(
            "{} shard(s) found a divergence",
            merged.counterexamples.len()
        )));
    }
    if !merged.complete() {
        return Err(CliError::Verdict(format!(
            "the shards do not make up the whole run (have {}{})",
            shards.join(", "),
            if merged.stopped.is_empty() {
                ""
            } else {
                "; some stopped early"
            }
        )));
    }
    Ok(())
}

/// Writes to the terminal that go on after one fails: the first error is
/// kept, so that the counterexample is still saved and the summary still
/// written when standard output is gone.
struct Report<'a> {
    out: &'a mut dyn Write,
    failed: Option<std::io::Error>,
}

impl Report<'_> {
    fn print(&mut self, f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
        if self.failed.is_none() {
            if let Err(e) = f(self.out) {
                self.failed = Some(e);
            }
        }
    }
}

/// Run `scopecheck check`.
pub fn execute(args: &CheckArgs, out: &mut dyn Write) -> Result<(), CliError> {
    run(args, Shard::default(), None, out)
}

/// The check of `args`, on `shard`, writing its summary to `json` when
/// given (`plumbing check`).
pub fn run(
    args: &CheckArgs,
    shard: Shard,
    json: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let config = CheckConfig {
        cases: args.cases,
        seed: args.seed,
        max_len: args.max_len,
        mutant: args.mutant,
        refinement: !args.no_refinement,
        shard,
        node_version: args.node_version,
    };
    // Every destination before the first case.
    files::check_dir(&args.save_dir).map_err(CliError::Usage)?;
    if let Some(path) = json {
        files::check_file(path, "the summary").map_err(CliError::Usage)?;
    }
    crate::interrupt::install()
        .map_err(|e| CliError::Environment(format!("cannot catch SIGINT and SIGTERM: {e}")))?;
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(config.shard.len(config.cases))
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} cases {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = check(&config, &mut |n| bar.set_position(n));
    bar.finish_and_clear();
    let mut terminal = Report { out, failed: None };
    if config.shard.count > 1 {
        terminal.print(|o| writeln!(o, "shard {} of seed {}", config.shard, config.seed));
    }
    if let Some(signal) = report.interrupted {
        terminal.print(|o| {
            writeln!(
                o,
                "INTERRUPTED (signal {signal}) after {} of {} cases: the figures below are of the cases run",
                report.cases,
                config.shard.len(config.cases)
            )
        });
    }
    terminal.print(|o| write_summary(o, &report));
    // The counterexample first: printed, then saved, then the summary.
    let mut failures: Vec<CliError> = Vec::new();
    let mut saved = None;
    if let Some(cx) = &report.counterexample {
        terminal.print(|o| {
            writeln!(
                o,
                "\nCOUNTEREXAMPLE ({} ops, {}):\n",
                cx.ops.len(),
                if cx.found_by.shrunk {
                    "shrunk"
                } else {
                    "shrinking interrupted"
                }
            )?;
            write!(o, "{}", cx.trace_text())?;
            writeln!(o, "\n{}", cx.divergence)
        });
        match save_counterexample(&args.save_dir, cx) {
            Ok(s) => saved = Some(s),
            Err(source) => failures.push(CliError::Write {
                path: args
                    .save_dir
                    .join(format!("{}.trace", counterexample_stem(cx))),
                what: "the counterexample",
                source,
            }),
        }
        if let Some(s) = &saved {
            terminal.print(|o| write_saved(o, s, args.mutant));
        }
    }
    if let Some(path) = json {
        let summary = ShardSummary::of(&config, &report);
        let text = serde_json::to_string_pretty(&summary).expect("a summary serialises") + "\n";
        if let Err(source) = files::replace(path, text.as_bytes()) {
            failures.push(CliError::Write {
                path: path.to_path_buf(),
                what: "the summary",
                source,
            });
        }
    }
    if let Some(e) = terminal.failed.take() {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            failures.push(CliError::Output(e));
        }
    }
    let verdict = if let Some(cx) = &report.counterexample {
        Some(CliError::Verdict(format!(
            "the lazy implementation diverges from the eager model (seed {}, case {}){}",
            cx.found_by.config.seed,
            cx.found_by.case,
            match &saved {
                Some(s) => format!("; saved to {}", s.path.display()),
                None => "; NOT saved (see above)".to_string(),
            }
        )))
    } else if let Some(signal) = report.interrupted {
        Some(CliError::Interrupted {
            signal,
            what: format!(
                "check stopped after {} of {} cases, no divergence in them",
                report.cases,
                config.shard.len(config.cases)
            ),
        })
    } else if report.rejected > 0 {
        Some(CliError::Verdict(format!(
            "the generator drew {} ops the eager model rejects",
            report.rejected
        )))
    } else {
        None
    };
    finish(verdict, failures)
}

/// The error to exit with: the verdict if there is one (the failures are
/// printed first, on stderr), else the first failure.
pub fn finish(verdict: Option<CliError>, mut failures: Vec<CliError>) -> Result<(), CliError> {
    match verdict {
        Some(v) => {
            for f in &failures {
                let _ = writeln!(std::io::stderr(), "error: {f}");
            }
            Err(v)
        }
        None if failures.is_empty() => Ok(()),
        None => {
            let first = failures.remove(0);
            for f in &failures {
                let _ = writeln!(std::io::stderr(), "error: {f}");
            }
            Err(first)
        }
    }
}

/// The lines after a saved counterexample: where, and how to replay it.
fn write_saved(
    out: &mut dyn Write,
    saved: &files::Saved,
    mutant: Option<Mutant>,
) -> std::io::Result<()> {
    let path = saved.path.display();
    let how = if saved.new {
        "saved to"
    } else {
        "already saved (the same text) as"
    };
    if mutant.is_some() {
        writeln!(
            out,
            "{how} {path} (found with a mutant switched on: `cargo test` replays it on the real lazy side, where it must not diverge)"
        )?;
    } else {
        writeln!(out, "{how} {path}; `cargo test` re-runs it")?;
    }
    let mutant = mutant
        .map(|m| format!(" --mutant {}", m.name()))
        .unwrap_or_default();
    writeln!(out, "replay: cargo run --release -- replay {path}{mutant}")
}
