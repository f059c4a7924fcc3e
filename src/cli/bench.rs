//! `scopecheck bench --node OLD --node NEW`: Node's
//! `benchmark/napi/make_callback` on two real binaries (the three kinds of
//! call, at each `--n`), `--runs` fresh processes of each, alternated, and
//! the table of `benchmark/compare.R` (src/bench). A reviewer runs it as
//! `--node <base build> --node <pull request build>`. `--measure
//! instructions` counts each call's instructions under valgrind instead of
//! timing it; `--json FILE` writes the table's figures, every run's rate
//! included. Exit codes: 0 the table printed; 2 bad arguments; 3 a binary,
//! its headers, the compiler or valgrind missing or failing, or the JSON
//! file not written; 128 + the signal on SIGINT / SIGTERM (the runs so far
//! are dropped: a row needs all of its runs).

use super::CliError;
use crate::bench::runner::{self, Bench, Variant};
use crate::bench::table::{self, Measure};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `scopecheck bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The two node binaries, old first (`--node BASE --node PR`); each
    /// needs its C++ headers at PREFIX/include/node.
    #[arg(long, value_name = "PATH", num_args = 1, required = true)]
    pub node: Vec<PathBuf>,
    /// Runs of each binary for each kind and size [default: 30 (Node's
    /// benchmark compare), 10 with a variant other than none; 3 with
    /// --measure instructions, whose counts barely move, 2 with a variant]
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub runs: Option<u32>,
    /// Calls per run; several give several rows [default: 1000000 10000000
    /// (Node's), 1000000 with a variant other than none; 100000 with
    /// --measure instructions, whose runs make n and 2n calls]
    #[arg(long = "n", value_name = "N", num_args = 1.., value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub n: Vec<u64>,
    /// What a rate is computed from.
    #[arg(long, value_enum, default_value_t = Measure::Wall)]
    pub measure: Measure,
    /// The set-ups before the calls (several give several rows each): a
    /// variant other than `none` runs alternately with `none` runs of its
    /// own on each binary, and is compared with them too (issue 56).
    #[arg(long, value_enum, num_args = 1.., default_values_t = [Variant::None])]
    pub variant: Vec<Variant>,
    /// Also write the table's figures, and every run's rate, to FILE as
    /// JSON (replaced whole).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The time limit of one run, in seconds.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
}

/// Run `scopecheck bench`.
pub fn execute(args: &BenchArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.node.len() != 2 {
        return Err(CliError::Usage(format!(
            "give two binaries, old then new (--node OLD --node NEW); {} given",
            args.node.len()
        )));
    }
    if let Some(path) = &args.json {
        crate::files::check_file(path, "--json").map_err(CliError::Usage)?;
    }
    let instructions = args.measure == Measure::Instructions;
    let (runs, sizes) = table::default_budget(
        args.measure,
        &args.variant,
        args.runs.map(|r| r as usize),
        &args.n,
    );
    let valgrind = if instructions {
        Some(
            runner::valgrind()
                .map_err(|e| CliError::Environment(format!("bench cannot run: {e}")))?,
        )
    } else {
        None
    };
    crate::interrupt::install()
        .map_err(|e| CliError::Environment(format!("cannot catch SIGINT and SIGTERM: {e}")))?;
    let dir = crate::conform::default_build_dir();
    let timeout = Duration::from_secs(args.timeout);
    let prepare = |node: &PathBuf| {
        Bench::prepare(node, None, &dir, timeout).map_err(|e| stopped_or(&e.to_string()))
    };
    let old = prepare(&args.node[0])?;
    let new = prepare(&args.node[1])?;
    let per_row: usize = (args.variant.iter())
        .map(|&v| table::runs_per_row(v, runs))
        .sum();
    let total = (sizes.len() * 3 * per_row * 2) as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let result = table::run(
        [&old, &new],
        &sizes,
        &args.variant,
        runs,
        args.measure,
        valgrind.as_deref(),
        &mut || bar.inc(1),
        &|| crate::interrupt::requested().is_some(),
    );
    bar.finish_and_clear();
    match result {
        Ok(Some(table)) => {
            write!(out, "{table}")?;
            if let Some(path) = &args.json {
                let json = serde_json::to_vec_pretty(&table.to_json())
                    .map_err(|e| CliError::Environment(format!("--json: {e}")))?;
                crate::files::replace(path, &json).map_err(|e| {
                    CliError::Environment(format!("--json {}: {e}", path.display()))
                })?;
            }
            Ok(())
        }
        Ok(None) => Err(stopped_or("interrupted")),
        Err(e) => Err(stopped_or(&e.to_string())),
    }
}

/// Interrupted (exit 128 + the signal), or the environment failed (3).
fn stopped_or(why: &str) -> CliError {
    match crate::interrupt::requested() {
        Some(signal) => CliError::Interrupted {
            signal,
            what: "bench stopped (no table: a row needs all of its runs)".to_string(),
        },
        None => CliError::Environment(format!("bench cannot run: {why}")),
    }
}
