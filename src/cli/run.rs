//! `scopecheck run FILE [--json]`: run a trace on the eager model.

use super::input::load_trace;
use super::CliError;
use clap::Args;
use model::vocab::trace::Trace;
use model::vocab::{Observation, Op, Runtime};
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
    /// The trace's `=>` expectations for the op (not checked by `run`).
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
/// column 1, with the OpError text as the message.
pub fn run_trace(file: &Path, trace: &Trace) -> Result<RunReport, Box<RunFailed>> {
    let mut runtime = Eager::new();
    let mut report = RunReport {
        file: file.display().to_string(),
        steps: Vec::new(),
        terminated_at_line: None,
        not_run: 0,
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
            break;
        }
    }
    Ok(report)
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

/// `scopecheck run`: load, run, print. In text mode the ops that ran before
/// a rejected op are printed before the error is returned; in JSON mode
/// nothing is printed on error.
pub fn execute(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let trace = load_trace(&args.file)?;
    match run_trace(&args.file, &trace) {
        Ok(report) if args.json => {
            serde_json::to_writer_pretty(&mut *out, &report)
                .map_err(|e| CliError::Output(e.into()))?;
            writeln!(out)?;
            Ok(())
        }
        Ok(report) => Ok(write_text(&report, out)?),
        Err(failed) => {
            if !args.json {
                write_text(&failed.partial, out)?;
            }
            Err(failed.error)
        }
    }
}
