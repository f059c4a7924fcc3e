//! `scopecheck conform`: the eager model against the real node binary, on
//! random traces (`--cases`, `--seed`), on one trace file, or on every
//! scenario; `--keep DIR` leaves the generated programs on disk.

use super::input::load_trace;
use super::CliError;
use crate::conform::{Harness, Verdict};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `scopecheck conform`.
#[derive(Debug, Args)]
pub struct ConformArgs {
    /// Random traces to run (not with FILE or --scenarios).
    #[arg(long, default_value_t = 300, conflicts_with_all = ["file", "scenarios"],
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub cases: usize,
    /// Seed of the random traces (not with FILE or --scenarios).
    #[arg(long, default_value_t = 1, conflicts_with_all = ["file", "scenarios"])]
    pub seed: u64,
    /// Leave each generated program, node's output and the verdict here.
    #[arg(long)]
    pub keep: Option<PathBuf>,
    /// Run every scenario of tests/scenarios instead of random traces (not
    /// with FILE).
    #[arg(long, conflicts_with = "file")]
    pub scenarios: bool,
    /// Run this one trace file instead of random traces.
    pub file: Option<PathBuf>,
}

fn harness() -> Result<&'static Harness, CliError> {
    Harness::shared().map_err(|e| CliError::Verdict(format!("conformance cannot run: {e}")))
}

fn report(out: &mut dyn Write, name: &str, v: &Verdict) -> std::io::Result<bool> {
    let ok = v.is_equal() || v.is_explained();
    writeln!(out, "{name}: {v}")?;
    Ok(ok)
}

/// Run `scopecheck conform`.
pub fn execute(args: &ConformArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let keep = args.keep.as_deref();
    if let Some(file) = &args.file {
        let trace = load_trace(file)?;
        let v = harness()?
            .conform_trace(&trace.ops(), keep)
            .map_err(|e| CliError::Verdict(format!("{}: {e}", file.display())))?;
        return if report(out, &file.display().to_string(), &v)? {
            Ok(())
        } else {
            Err(CliError::Verdict(format!(
                "{}: node and the model disagree",
                file.display()
            )))
        };
    }
    if args.scenarios {
        let dir = PathBuf::from("tests/scenarios");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|source| CliError::Read {
                file: dir.clone(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "trace"))
            .collect();
        paths.sort();
        let mut bad = Vec::new();
        for p in &paths {
            let trace = load_trace(p)?;
            match harness()?.conform_trace(&trace.ops(), keep) {
                Ok(v) => {
                    if !report(out, &p.display().to_string(), &v)? {
                        bad.push(p.display().to_string());
                    }
                }
                Err(e) => writeln!(out, "{}: not run: {e}", p.display())?,
            }
        }
        return if bad.is_empty() {
            Ok(())
        } else {
            Err(CliError::Verdict(format!(
                "node and the model disagree on {}",
                bad.join(", ")
            )))
        };
    }
    let summary = harness()?.conform_random(args.cases, args.seed, keep);
    writeln!(out, "{summary}")?;
    let unknown = summary.unknown_mismatches().count();
    if unknown == 0 && summary.errors.is_empty() {
        Ok(())
    } else {
        Err(CliError::Verdict(format!(
            "{unknown} undocumented mismatch(es), {} error(s) against node",
            summary.errors.len()
        )))
    }
}
