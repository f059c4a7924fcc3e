//! `scopecheck run FILE [--json] [--no-expect]`: run a trace on the eager
//! model and check its `=>` expectations (exit code 1 when one is not met).

use super::input::load_trace;
use super::CliError;
use clap::Args;
use model::vocab::trace::{Trace, Unmet};
use model::vocab::{Observation, Op, OpError, Runtime};
use model::Eager;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scopecheck run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Do not check the trace's `=>` expectation lines.
    #[arg(long)]
    pub no_expect: bool,
    /// Run on this Node.js version profile (20 or 26; the default is the
    /// trace's own `node-version`, else 26).
    #[arg(long)]
    pub node_version: Option<model::vocab::NodeVersion>,
}

/// One op that ran, and what it showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RanStep {
    /// The 1-based line of the op in the trace file.
    pub line: usize,
    /// The op's text in the trace syntax.
    pub text: String,
    /// The op.
    pub op: Op,
    /// The trace's `=>` expectations for the op (checked unless
    /// `--no-expect`: see [`RunReport::unmet`]).
    pub expected: Vec<String>,
    /// What the op showed, in order.
    pub observations: Vec<Observation>,
}

/// The result of running a whole trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunReport {
    /// The trace file.
    pub file: String,
    /// The ops that ran, in order.
    pub steps: Vec<RanStep>,
    /// Set when an op ended the process: the line of that op.
    pub terminated_at_line: Option<usize>,
    /// Ops of the trace that did not run because the process had ended.
    pub not_run: usize,
    /// The ops with `=>` lines whose observations differ from them (an op
    /// with `=>` lines that did not run because the process had ended is
    /// one too). Empty when the expectations were not checked.
    pub unmet: Vec<Unmet>,
}

/// A run that stopped at an op the model rejected.
#[derive(Debug)]
pub struct RunFailed {
    /// The ops that ran before the rejected one.
    pub partial: RunReport,
    /// The rejection, at the op's line, column 1.
    pub error: CliError,
}

/// Run `trace` (read from `file`) on a fresh [`Eager`] model. Stops after a
/// terminal observation. An op the model rejects is an error at its line,
/// column 1, with the OpError text as the message. With `expect`, every op
/// that has `=>` lines is checked against them ([`RunReport::unmet`]).
pub fn run_trace(file: &Path, trace: &Trace, expect: bool) -> Result<RunReport, Box<RunFailed>> {
    let mut runtime = Eager::new();
    let mut report = RunReport {
        file: file.display().to_string(),
        steps: Vec::new(),
        terminated_at_line: None,
        not_run: 0,
        unmet: Vec::new(),
    };
    for (index, step) in trace.steps.iter().enumerate() {
        let observations = match runtime.apply(&step.op) {
            Ok(observations) => observations,
            Err(e) => {
                let error = CliError::At {
                    file: file.to_path_buf(),
                    line: step.line,
                    column: 1,
                    message: e.to_string(),
                };
                return Err(Box::new(RunFailed {
                    partial: report,
                    error,
                }));
            }
        };
        let terminal = observations.iter().any(Observation::is_terminal);
        if expect && !step.expected.is_empty() {
            if let Err(unmet) = step.check(Ok(&observations)) {
                report.unmet.push(unmet);
            }
        }
        report.steps.push(RanStep {
            line: step.line,
            text: step.op.to_string(),
            op: step.op.clone(),
            expected: step.expected.clone(),
            observations,
        });
        if terminal {
            report.terminated_at_line = Some(step.line);
            report.not_run = trace.steps.len() - index - 1;
            if expect {
                let later = trace.steps[index + 1..].iter();
                report.unmet.extend(
                    later
                        .filter(|s| !s.expected.is_empty())
                        .filter_map(|s| s.check(Err(&OpError::Exited)).err()),
                );
            }
            break;
        }
    }
    Ok(report)
}

/// Print the unmet expectations of a run, each with its line, the expected
/// text and what was observed.
pub fn write_unmet(unmet: &[Unmet], out: &mut dyn Write) -> std::io::Result<()> {
    for u in unmet {
        writeln!(out, "EXPECTATION NOT MET at {u}")?;
    }
    Ok(())
}

/// The verdict for unmet expectations in `file`: exit code 1, naming the
/// first one's line, its expected text and what was observed.
pub fn unmet_verdict(file: &Path, unmet: &[Unmet]) -> CliError {
    let first = &unmet[0];
    CliError::Verdict(format!(
        "{}:{}: {} expectation(s) not met, the first: {} (--no-expect skips the check)",
        file.display(),
        first.line,
        unmet.len(),
        brief(first)
    ))
}

/// One line for an unmet expectation: the op, what was expected and what
/// was observed.
pub fn brief(u: &Unmet) -> String {
    format!(
        "`{}` expected {}, observed {}",
        u.op,
        show(&u.expected),
        if u.refused {
            format!("not run: {}", u.observed.join("; "))
        } else {
            show(&u.observed)
        }
    )
}

fn show(lines: &[String]) -> String {
    if lines.is_empty() {
        "nothing".to_string()
    } else {
        lines
            .iter()
            .map(|l| format!("{l:?}"))
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// Print `report` as text: each op as `LINE: op`, then its observations as
/// `  => observation`.
pub fn write_text(report: &RunReport, out: &mut dyn Write) -> std::io::Result<()> {
    for step in &report.steps {
        writeln!(out, "{}: {}", step.line, step.text)?;
        for obs in &step.observations {
            writeln!(out, "  => {obs}")?;
        }
    }
    if let Some(line) = report.terminated_at_line {
        writeln!(
            out,
            "stopped: the process ended at line {line}; {} later op(s) not run",
            report.not_run
        )?;
    }
    Ok(())
}

/// `scopecheck run`: load, run, print, then the unmet expectations (exit
/// code 1 if there are any). In text mode the ops that ran before a rejected
/// op are printed before the error is returned; in JSON mode nothing is
/// printed on error, and the unmet expectations are the `unmet` field.
pub fn execute(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let trace = super::on_profile(load_trace(&args.file)?, args.node_version, &args.file)?;
    match run_trace(&args.file, &trace, !args.no_expect) {
        Ok(report) => {
            if args.json {
                serde_json::to_writer_pretty(&mut *out, &report)
                    .map_err(|e| CliError::Output(e.into()))?;
                writeln!(out)?;
            } else {
                write_text(&report, out)?;
                write_unmet(&report.unmet, out)?;
            }
            if report.unmet.is_empty() {
                Ok(())
            } else {
                Err(unmet_verdict(&args.file, &report.unmet))
            }
        }
        Err(failed) => {
            if !args.json {
                write_text(&failed.partial, out)?;
            }
            Err(failed.error)
        }
    }
}
