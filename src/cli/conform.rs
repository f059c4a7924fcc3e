//! `scopecheck conform`: the eager model against the real node binary, on
//! random traces (`--cases`, `--seed`), on one trace file, or on every
//! scenario; `--keep DIR` leaves the generated programs on disk; `--node`
//! and `--headers` choose the binary (default: `$SCOPECHECK_NODE`, else
//! `node` on `PATH`).

use super::input::load_trace;
use super::CliError;
use crate::conform::{ConformError, Harness, NodeSelection, Verdict};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `scopecheck conform`.
#[derive(Debug, Args)]
pub struct ConformArgs {
    /// Random traces to run (ignored with FILE or --scenarios).
    #[arg(long, default_value_t = 300)]
    pub cases: usize,
    /// Seed of the random traces.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Leave each generated program, node's output and the verdict here.
    #[arg(long)]
    pub keep: Option<PathBuf>,
    /// Run every scenario of tests/scenarios instead of random traces.
    #[arg(long)]
    pub scenarios: bool,
    /// The node binary to run (default: $SCOPECHECK_NODE, else `node` on PATH).
    #[arg(long, value_name = "PATH")]
    pub node: Option<PathBuf>,
    /// Node's C++ headers for that binary, its `include/node` directory
    /// (default: PREFIX/include/node, PREFIX being the binary's `../..`).
    #[arg(long, value_name = "DIR")]
    pub headers: Option<PathBuf>,
    /// Run this one trace file instead of random traces.
    pub file: Option<PathBuf>,
}

/// The harness for the chosen binary: the shared one (built once per
/// process) when neither --node nor --headers is given.
fn harness(args: &ConformArgs) -> Result<Harness, CliError> {
    let built = if args.node.is_none() && args.headers.is_none() {
        Harness::shared().cloned()
    } else {
        let selection = NodeSelection {
            node: args.node.clone(),
            headers: args.headers.clone(),
        };
        Harness::with_node(&selection, &crate::conform::default_build_dir())
    };
    built.map_err(|e| CliError::Verdict(format!("conformance cannot run: {e}")))
}

/// Why a scenario did not run, in a few words: the kind of refusal.
fn not_run_reason(e: &ConformError) -> String {
    match e {
        ConformError::Unsupported(u) => format!("the binary cannot express it: {u}"),
        ConformError::ModelRejected { .. } => format!("not a Node program: {e}"),
        other => format!("error: {other}"),
    }
}

fn report(out: &mut dyn Write, name: &str, v: &Verdict) -> std::io::Result<bool> {
    let ok = v.is_equal() || v.is_explained();
    writeln!(out, "{name}: {v}")?;
    Ok(ok)
}

/// Run `scopecheck conform`.
pub fn execute(args: &ConformArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let keep = args.keep.as_deref();
    let harness = harness(args)?;
    writeln!(out, "against {}", harness.describe())?;
    if let Some(file) = &args.file {
        let trace = load_trace(file)?;
        let v = harness
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
        let mut equal = 0usize;
        let mut documented = 0usize;
        let mut not_run = Vec::new();
        for p in &paths {
            let trace = load_trace(p)?;
            let dir = keep.map(|k| {
                k.join(
                    p.file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )
            });
            match harness.conform_trace(&trace.ops(), dir.as_deref()) {
                Ok(v) => {
                    if v.is_equal() {
                        equal += 1;
                    } else if v.is_explained() {
                        documented += 1;
                    }
                    if !report(out, &p.display().to_string(), &v)? {
                        bad.push(p.display().to_string());
                    }
                }
                Err(e) => {
                    let reason = not_run_reason(&e);
                    writeln!(out, "{}: NOT RUN: {reason}", p.display())?;
                    not_run.push((p.display().to_string(), reason));
                }
            }
        }
        writeln!(
            out,
            "scenarios: {} in all; {} run: {equal} equal, {documented} with documented differences only, {} mismatched; {} not run",
            paths.len(),
            paths.len() - not_run.len(),
            bad.len(),
            not_run.len()
        )?;
        for (name, reason) in &not_run {
            writeln!(out, "  not run: {name}: {reason}")?;
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
    let summary = harness.conform_random(args.cases, args.seed, keep);
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
