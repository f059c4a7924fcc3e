//! `scopecheck check`: random lockstep equivalence with a progress bar, a
//! summary, the bare pair's rate beside the check's, and the coverage table;
//! a counterexample is shrunk, printed, saved under `tests/regressions/` and
//! replayable. `--shard I/N` runs a part of the cases, `--json FILE` writes
//! the summary of the run or shard, and `--merge FILE...` adds shards'
//! summaries up to the whole run's.

use super::CliError;
use crate::check::{check, CheckConfig, CheckReport, Counterexample, Shard, Summary};
use crate::coverage::Coverage;
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
    /// Where to save a counterexample.
    #[arg(long, default_value = "tests/regressions")]
    pub save_dir: PathBuf,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Compare observations only, without the refinement check after each op.
    #[arg(long)]
    pub no_refinement: bool,
    /// Run only shard I of N (1-based): the cases whose index is I-1 modulo
    /// N. The N shards of a run are disjoint and together are the run.
    #[arg(long, default_value = "1/1")]
    pub shard: Shard,
    /// Write the run's summary (counts and coverage by name, any
    /// counterexample) as JSON to this file, for `--merge`.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run nothing: add up these JSON summaries of shards of one run and
    /// print the whole run's coverage table (fails on a counterexample or a
    /// missing shard).
    #[arg(long, num_args = 1.., conflicts_with_all = ["shard", "json"])]
    pub merge: Vec<PathBuf>,
    /// Switch on this deliberate mistake in the lazy side (a name from
    /// `scopecheck mutants`): the check should find it.
    #[arg(long, value_parser = super::parse_mutant)]
    pub mutant: Option<Mutant>,
    /// The Node.js version profile both sides run on: 26 (the release line
    /// the pull request lands on) or 20 (no Global<Object>* scopes, no
    /// AsyncLocalStorage ops). `docs/spec.md`, "Version profiles".
    #[arg(long, default_value_t = NodeVersion::default())]
    pub node_version: NodeVersion,
}

/// `--max-len`: a positive number of ops.
fn parse_max_len(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("the longest op sequence must be at least 1 op".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("expected a number of ops: {e}")),
    }
}

/// Save `cx` as `DIR/seed-SEED.trace` (`DIR/seed-SEED-MUTANT.trace` when a
/// mutant found it); the path.
pub fn save_counterexample(dir: &Path, cx: &Counterexample) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let name = match cx.found_by.mutant {
        None => format!("seed-{}.trace", cx.seed),
        Some(m) => format!("seed-{}-{}.trace", cx.seed, m.name()),
    };
    let path = dir.join(name);
    std::fs::write(&path, cx.trace_text())?;
    Ok(path)
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
not on the {version} profile (never reachable there): {}",
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

fn read_summary(path: &Path) -> Result<Summary, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::Read {
        file: path.to_path_buf(),
        source: e,
    })?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{}: not a check summary: {e}", path.display())))
}

/// `--merge`: add up the summaries, print the whole run's table.
fn merge(paths: &[PathBuf], out: &mut dyn Write) -> Result<(), CliError> {
    let parts = paths
        .iter()
        .map(|p| read_summary(p))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = Summary::merge(&parts).map_err(CliError::Verdict)?;
    let shards: Vec<String> = merged.shards.iter().map(Shard::to_string).collect();
    writeln!(
        out,
        "merged {} summaries of seed {} ({} cases, max length {}): shards {}",
        parts.len(),
        merged.seed,
        merged.run_cases,
        merged.max_len,
        shards.join(", ")
    )?;
    writeln!(
        out,
        "{} cases, {} ops, {:.2} s of checking in all",
        merged.cases, merged.ops, merged.seconds
    )?;
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
            "the shards do not make up the whole run (have {})",
            shards.join(", ")
        )));
    }
    Ok(())
}

/// Run `scopecheck check`.
pub fn execute(args: &CheckArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if !args.merge.is_empty() {
        return merge(&args.merge, out);
    }
    let config = CheckConfig {
        cases: args.cases,
        seed: args.seed,
        max_len: args.max_len,
        mutant: args.mutant,
        refinement: !args.no_refinement,
        shard: args.shard,
        node_version: args.node_version,
    };
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
    if config.shard.count > 1 {
        writeln!(out, "shard {} of seed {}", config.shard, config.seed)?;
    }
    write_summary(out, &report)?;
    if let Some(path) = &args.json {
        let summary = Summary::of(&config, &report);
        let text = serde_json::to_string_pretty(&summary).expect("a summary serialises");
        std::fs::write(path, text + "\n").map_err(CliError::Output)?;
    }
    if let Some(cx) = &report.counterexample {
        writeln!(out, "\nCOUNTEREXAMPLE ({} ops, shrunk):\n", cx.ops.len())?;
        write!(out, "{}", cx.trace_text())?;
        writeln!(out, "\n{}", cx.divergence)?;
        let saved = save_counterexample(&args.save_dir, cx).map_err(CliError::Output)?;
        if args.mutant.is_some() {
            writeln!(
                out,
                "saved to {} (found with a mutant switched on: `cargo test` replays it on the real lazy side, where it must not diverge)",
                saved.display()
            )?;
        } else {
            writeln!(out, "saved to {}; `cargo test` re-runs it", saved.display())?;
        }
        let mutant = args
            .mutant
            .map(|m| format!(" --mutant {}", m.name()))
            .unwrap_or_default();
        writeln!(
            out,
            "replay: cargo run --release -- replay {}{mutant}",
            saved.display()
        )?;
        return Err(CliError::Verdict(format!(
            "the lazy implementation diverges from the eager model (seed {})",
            cx.seed
        )));
    }
    if report.rejected > 0 {
        return Err(CliError::Verdict(format!(
            "the generator drew {} ops the eager model rejects",
            report.rejected
        )));
    }
    Ok(())
}
