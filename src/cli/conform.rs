//! `scopecheck conform`: the eager model against the real node binary, on
//! random traces (`--cases`, `--seed`), on one trace file, or on every
//! scenario; `--keep DIR` leaves the generated programs on disk; `--node`
//! and `--headers` choose the binary (default: `$SCOPECHECK_NODE`, else
//! `node` on `PATH`). A trace file's `=>` expectations are checked against
//! the model's observations (which node's equal, unless the verdict says
//! otherwise; `--no-expect` skips the check); a trace node cannot run (an op
//! it cannot express, nesting deeper than node's stack holds, more than
//! [`crate::conform::MAX_OPS`] ops, an op the model rejects) is refused with
//! exit code 2, naming the line, before node runs.
//!
//! A missing or broken binary or compiler is exit code 3, with what to
//! install; each node run and probe has a time limit
//! (`$SCOPECHECK_CONFORM_TIMEOUT` seconds, 60 by default) and a bound on its
//! output, and a binary that does not start the program on
//! [`crate::conform::harness::BROKEN_AFTER`] cases in a row stops the run.
//! SIGINT or SIGTERM stops it too: the cases run so far are summed up, the
//! node processes killed, the programs removed, and the exit code is
//! 128 + the signal.

use super::input::load_trace;
use super::CliError;
use crate::conform::{ConformError, Harness, NodeSelection, Verdict};
use clap::Args;
use model::vocab::trace::{Step, Unmet};
use model::vocab::{Op, OpError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scopecheck conform`.
#[derive(Debug, Args)]
pub struct ConformArgs {
    /// Random traces to run (at least 1; not with FILE or --scenarios).
    #[arg(long, default_value_t = 300, conflicts_with_all = ["file", "scenarios"],
          value_parser = parse_cases)]
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
    /// The node binary to run (default: $SCOPECHECK_NODE, else `node` on PATH).
    #[arg(long, value_name = "PATH")]
    pub node: Option<PathBuf>,
    /// Node's C++ headers for that binary, its `include/node` directory
    /// (default: PREFIX/include/node, PREFIX being the binary's `../..`).
    #[arg(long, value_name = "DIR")]
    pub headers: Option<PathBuf>,
    /// Do not check the `=>` expectation lines of FILE (or of the
    /// scenarios).
    #[arg(long)]
    pub no_expect: bool,
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
    built.map_err(|e| cannot_run(&e))
}

/// The error for a harness that cannot go on: interrupted (exit 128 +
/// the signal), or a missing or broken tool (exit 3).
fn cannot_run(e: &ConformError) -> CliError {
    match crate::interrupt::requested() {
        Some(signal) => CliError::Interrupted {
            signal,
            what: format!("conform stopped: {e}"),
        },
        None => CliError::Environment(format!("conformance cannot run: {e}")),
    }
}

fn report(out: &mut dyn Write, name: &str, v: &Verdict) -> std::io::Result<bool> {
    let ok = v.is_equal() || v.is_explained();
    writeln!(out, "{name}: {v}")?;
    Ok(ok)
}

/// `--cases`: at least one trace.
fn parse_cases(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("at least 1 case".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("expected a number of cases: {e}")),
    }
}

/// Run `scopecheck conform`.
pub fn execute(args: &ConformArgs, out: &mut dyn Write) -> Result<(), CliError> {
    run(args, false, out)
}

/// `conform`, and `plumbing conform` with `local_resources_only`: generate
/// and translate as for a binary without Global<Object>* callback scopes.
pub fn run(
    args: &ConformArgs,
    local_resources_only: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let keep = args.keep.as_deref();
    // An unusable --keep is refused before the first case (exit 2); one
    // that fills up stops the run (exit 3, Harness::keep_write).
    if let Some(dir) = keep {
        crate::files::check_dir(dir).map_err(CliError::Usage)?;
    }
    crate::interrupt::install()
        .map_err(|e| CliError::Environment(format!("cannot catch SIGINT and SIGTERM: {e}")))?;
    let mut harness = harness(args)?;
    if local_resources_only {
        harness.capabilities.global_callback_scope = false;
    }
    writeln!(out, "against {}", harness.describe())?;
    if let Some(file) = &args.file {
        return conform_file(&harness, file, keep, !args.no_expect, out);
    }
    if args.scenarios {
        let mut report = harness
            .conform_scenarios(Path::new("tests/scenarios"), keep)
            .map_err(|e| cannot_run(&e))?;
        if args.no_expect {
            report.unmet.clear();
        }
        write!(out, "{report}")?;
        if let Some(why) = harness.stop_reason() {
            return Err(stopped(why, "the scenarios not yet run were skipped"));
        }
        let bad: Vec<String> = report
            .mismatched()
            .iter()
            .chain(report.errors().iter().map(|(p, _)| p))
            .map(|p| p.display().to_string())
            .chain(
                report
                    .unmet
                    .iter()
                    .map(|(p, u)| format!("{}:{} (expectation)", p.display(), u.line)),
            )
            .collect();
        return if bad.is_empty() {
            Ok(())
        } else {
            Err(CliError::Verdict(format!(
                "node and the model disagree on, could not run, or do not meet the expectations of {}",
                bad.join(", ")
            )))
        };
    }
    let summary = harness.conform_random(args.cases, args.seed, keep);
    writeln!(out, "{summary}")?;
    if let Some(why) = &summary.stopped {
        return Err(stopped(
            why.clone(),
            &format!("{} of {} cases run", summary.run, summary.cases),
        ));
    }
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

/// A run stopped early: interrupted (exit 128 + the signal) or a broken
/// binary (exit 3); `done` says what was done.
fn stopped(why: String, done: &str) -> CliError {
    match crate::interrupt::requested() {
        Some(signal) => CliError::Interrupted {
            signal,
            what: format!("conform stopped ({done})"),
        },
        None => CliError::Environment(format!("{why} ({done})")),
    }
}

/// A trace read for `conform`: its ops, the line of each, and the steps that
/// have `=>` lines (by index).
struct Loaded {
    ops: Vec<Op>,
    lines: Vec<usize>,
    annotated: Vec<(usize, Step)>,
}

fn load(file: &Path) -> Result<Loaded, CliError> {
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
            Some(obs) => step.meets(Ok(obs)).err(),
            None => step.meets(Err(&OpError::Exited)).err(),
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
        other => return cannot_run(&other),
    };
    let line = lines.get(index).or(lines.last()).copied().unwrap_or(1);
    CliError::At {
        file: file.to_path_buf(),
        line,
        column: 1,
        message,
    }
}

/// `conform FILE`: the verdict, then the trace's expectations.
fn conform_file(
    harness: &Harness,
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
    let v = harness
        .conform_trace(&ops, keep)
        .map_err(|e| refused(file, &lines, e))?;
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
