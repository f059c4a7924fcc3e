//! `scopecheck conform`: the eager model against the real node binary, on
//! random traces (`--cases`, `--seed`), on one trace file, or on every
//! scenario; `--keep DIR` leaves the generated programs on disk. A trace
//! file's `=>` expectations are checked against the model's observations
//! (which node's equal, unless the verdict says otherwise); a trace node
//! cannot run (an op it cannot express, nesting deeper than its stack, too
//! many ops) is refused with exit code 2, naming the line.

use super::input::load_trace;
use super::CliError;
use crate::conform::{ConformError, Harness, Verdict};
use clap::Args;
use model::vocab::trace::{Step, Unmet};
use model::vocab::{Op, OpError};
use std::io::Write;
use std::path::{Path, PathBuf};

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
    /// Do not check the `=>` expectation lines of FILE (or of the scenarios).
    #[arg(long)]
    pub no_expect: bool,
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
        return conform_file(file, keep, !args.no_expect, out);
    }
    if args.scenarios {
        return conform_scenarios(harness()?, keep, !args.no_expect, out);
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

/// A trace read for `conform`: its ops, the line of each, and the steps that
/// have `=>` lines (by index), without keeping the parsed trace twice.
struct Loaded {
    ops: Vec<Op>,
    lines: Vec<usize>,
    annotated: Vec<(usize, Step)>,
}

/// The largest trace file `conform` reads: a trace it can run has at most
/// [`crate::conform::MAX_OPS`] ops, far less than this even with comments.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;

fn load(file: &Path) -> Result<Loaded, CliError> {
    // Refuse a file too large to be a trace conform can run before reading it.
    if let Ok(meta) = std::fs::metadata(file) {
        if meta.len() > MAX_TRACE_BYTES {
            return Err(CliError::Usage(format!(
                "{}: {} bytes; conform reads trace files of at most {MAX_TRACE_BYTES} bytes (and runs at most {} ops)",
                file.display(),
                meta.len(),
                crate::conform::MAX_OPS
            )));
        }
    }
    let trace = load_trace(file)?;
    let n = trace.steps.len();
    let mut loaded = Loaded {
        ops: Vec::with_capacity(n),
        lines: Vec::with_capacity(n),
        annotated: Vec::new(),
    };
    for (i, step) in trace.steps.into_iter().enumerate() {
        loaded.lines.push(step.line);
        if !step.expected.is_empty() {
            loaded.annotated.push((i, step.clone()));
        }
        loaded.ops.push(step.op);
    }
    Ok(loaded)
}

/// The `=>` lines of `annotated` against what the model showed in `v` (an
/// op dropped because the process had ended meets none).
fn unmet(annotated: &[(usize, Step)], v: &Verdict) -> Vec<Unmet> {
    annotated
        .iter()
        .filter_map(|(i, step)| match v.model.get(*i).filter(|_| *i < v.given) {
            Some(obs) => step.check(Ok(obs)).err(),
            None => step.check(Err(&OpError::Exited)).err(),
        })
        .collect()
}

/// A refusal of the trace in `file` (exit code 2), at the line of op `index`
/// (the last line for a close the harness appended).
fn refused(file: &Path, lines: &[usize], e: ConformError) -> CliError {
    let (index, message) = match e {
        ConformError::Unsupported(u) => (
            u.index,
            format!("`{}` cannot run on node: {}", u.op, u.reason),
        ),
        ConformError::ModelRejected { index, op, error } => {
            (index, format!("the model rejects `{op}`: {error}"))
        }
        other => {
            return CliError::Verdict(format!("{}: {other}", file.display()));
        }
    };
    let line = lines.get(index).or(lines.last()).copied().unwrap_or(1);
    CliError::At {
        file: file.to_path_buf(),
        line,
        column: 1,
        message,
    }
}

/// `conform FILE`: the verdict, then the trace's expectations. The file is
/// read (and a bad one refused) before the harness is built.
fn conform_file(
    file: &Path,
    keep: Option<&Path>,
    expect: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let Loaded {
        ops,
        lines,
        annotated,
    } = load(file)?;
    let v = harness()?
        .conform_trace(&ops, keep)
        .map_err(|e| refused(file, &lines, e))?;
    drop(ops);
    let agree = report(out, &file.display().to_string(), &v)?;
    let unmet = if expect {
        unmet(&annotated, &v)
    } else {
        Vec::new()
    };
    super::run::write_unmet(&unmet, out)?;
    if !agree {
        return Err(CliError::Verdict(format!(
            "{}: node and the model disagree",
            file.display()
        )));
    }
    if !unmet.is_empty() {
        return Err(super::run::unmet_verdict(file, &unmet));
    }
    Ok(())
}

/// `conform --scenarios`: every scenario of tests/scenarios, each up to its
/// first op node cannot run (`Harness::conform_prefix`), its expectations
/// checked on the ops that ran.
fn conform_scenarios(
    harness: &Harness,
    keep: Option<&Path>,
    expect: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
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
    let (mut bad, mut whole, mut cut) = (Vec::new(), 0, 0);
    for p in &paths {
        let loaded = load(p)?;
        let name = p.display().to_string();
        let scenario_keep = keep.map(|k| k.join(p.file_stem().unwrap_or_default()));
        match harness.conform_prefix(&loaded.ops, scenario_keep.as_deref()) {
            Ok((v, refusal)) => {
                if !report(out, &name, &v)? {
                    bad.push(name.clone());
                }
                match &refusal {
                    None => whole += 1,
                    Some(u) => {
                        cut += 1;
                        let line = loaded.lines.get(u.index).copied().unwrap_or(0);
                        writeln!(
                            out,
                            "  ran its first {} of {} ops: line {line}, `{}`, cannot run on node: {}",
                            u.index,
                            loaded.ops.len(),
                            u.op,
                            u.reason
                        )?;
                    }
                }
                if expect {
                    let run: Vec<(usize, Step)> = loaded
                        .annotated
                        .iter()
                        .filter(|(i, _)| refusal.as_ref().is_none_or(|u| *i < u.index))
                        .cloned()
                        .collect();
                    let unmet = unmet(&run, &v);
                    super::run::write_unmet(&unmet, out)?;
                    if !unmet.is_empty() {
                        bad.push(format!("{name} (expectations)"));
                    }
                }
            }
            Err(e) => {
                writeln!(out, "{name}: not run: {e}")?;
                bad.push(name);
            }
        }
    }
    writeln!(
        out,
        "\n{} scenarios: {whole} run whole, {cut} up to their first op node cannot run; {} with a difference",
        paths.len(),
        bad.len()
    )?;
    if bad.is_empty() {
        Ok(())
    } else {
        Err(CliError::Verdict(format!(
            "node and the model disagree on, or the expectations fail in, {}",
            bad.join(", ")
        )))
    }
}
