//! `scopecheck check`: random lockstep equivalence with a progress bar, a
//! summary and the coverage table; a counterexample is shrunk, printed,
//! saved under `tests/regressions/` and replayable.

use super::CliError;
use crate::check::{check, CheckConfig, CheckReport, Counterexample};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lazy::mutant::Mutant;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scopecheck check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Generated op sequences to run (at least 1).
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
    /// Switch on this deliberate mistake in the lazy side (a name from
    /// `scopecheck mutants`): the check should find it.
    #[arg(long, value_parser = super::parse_mutant)]
    pub mutant: Option<Mutant>,
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
        report.ops as f64 / secs
    )?;
    writeln!(out)?;
    write!(out, "{}", report.coverage.table())?;
    let missing = report.coverage.missing();
    if missing.is_empty() {
        writeln!(out, "\nevery named situation and op kind was reached")?;
    } else {
        writeln!(out, "\nNOT reached: {}", missing.join(", "))?;
    }
    Ok(())
}

/// Run `scopecheck check`.
pub fn execute(args: &CheckArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let config = CheckConfig {
        cases: args.cases,
        seed: args.seed,
        max_len: args.max_len,
        mutant: args.mutant,
        refinement: !args.no_refinement,
    };
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(u64::from(args.cases))
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} cases {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = check(&config, &mut |n| {
        bar.set_position(n.min(u64::from(config.cases)))
    });
    bar.finish_and_clear();
    write_summary(out, &report)?;
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
    Ok(())
}
