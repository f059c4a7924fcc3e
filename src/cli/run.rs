//! `scopecheck run FILE [--json] [--no-expect]`: run a trace on the eager
//! model and check its `=>` expectations (exit code 1 when one is not met).
//! The trace is read as it runs ([`super::input::TraceFile`]): a trace of
//! a million ops takes the memory of the model's state, not of the trace.

use super::input::TraceFile;
use super::CliError;
use clap::Args;
use model::vocab::trace::{Step, Unmet};
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
    /// Run on this Node.js version (20 or 26; the default is the
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

/// How `run` prints: as text, or as one JSON document written as the
/// trace runs.
trait Printer {
    /// Before the first op.
    fn start(&mut self, out: &mut dyn Write, file: &Path) -> std::io::Result<()>;
    /// An op that ran, and what it showed.
    fn step(
        &mut self,
        out: &mut dyn Write,
        step: &Step,
        observations: &[Observation],
    ) -> std::io::Result<()>;
    /// After the last op: where the process ended and how many ops were
    /// not run, the unmet expectations, the op the model rejected.
    fn end(&mut self, out: &mut dyn Write, end: &RunEnd) -> std::io::Result<()>;
}

/// How a run ended.
#[derive(Debug, Default)]
pub struct RunEnd {
    /// Set when an op ended the process: the line of that op.
    pub terminated_at_line: Option<usize>,
    /// Ops of the trace that did not run because the process had ended.
    pub not_run: usize,
    /// The ops with `=>` lines whose observations differ from them (an op
    /// with `=>` lines that did not run because the process had ended is
    /// one too). Empty when the expectations were not checked.
    pub unmet: Vec<Unmet>,
    /// The op the model rejected, and why: its line, and the message.
    pub rejected: Option<(usize, String)>,
}

/// Each op as `LINE: op`, then its observations as `  => observation`.
struct Text;

impl Printer for Text {
    fn start(&mut self, _: &mut dyn Write, _: &Path) -> std::io::Result<()> {
        Ok(())
    }

    fn step(
        &mut self,
        out: &mut dyn Write,
        step: &Step,
        observations: &[Observation],
    ) -> std::io::Result<()> {
        writeln!(out, "{}: {}", step.line, step.op)?;
        for obs in observations {
            writeln!(out, "  => {obs}")?;
        }
        Ok(())
    }

    fn end(&mut self, out: &mut dyn Write, end: &RunEnd) -> std::io::Result<()> {
        if let Some(line) = end.terminated_at_line {
            writeln!(
                out,
                "stopped: the process ended at line {line}; {} later op(s) not run",
                end.not_run
            )?;
        }
        write_unmet(&end.unmet, out)
    }
}

/// One JSON document: `file`, `steps` (each a [`RanStep`], written as it
/// runs), `terminated_at_line`, `not_run`, `unmet`, and `rejected` (the
/// line and message of an op the model rejected, or null).
struct Json {
    first: bool,
}

fn json_err(e: serde_json::Error) -> std::io::Error {
    std::io::Error::other(e)
}

impl Printer for Json {
    fn start(&mut self, out: &mut dyn Write, file: &Path) -> std::io::Result<()> {
        let file = serde_json::to_string(&file.display().to_string()).map_err(json_err)?;
        write!(out, "{{\n  \"file\": {file},\n  \"steps\": [")
    }

    fn step(
        &mut self,
        out: &mut dyn Write,
        step: &Step,
        observations: &[Observation],
    ) -> std::io::Result<()> {
        let ran = RanStep {
            line: step.line,
            text: step.op.to_string(),
            op: step.op.clone(),
            expected: step.expected.clone(),
            observations: observations.to_vec(),
        };
        let sep = if std::mem::take(&mut self.first) {
            ""
        } else {
            ","
        };
        write!(
            out,
            "{sep}\n    {}",
            serde_json::to_string(&ran).map_err(json_err)?
        )
    }

    fn end(&mut self, out: &mut dyn Write, end: &RunEnd) -> std::io::Result<()> {
        let rejected = end
            .rejected
            .as_ref()
            .map(|(line, message)| serde_json::json!({ "line": line, "message": message }));
        writeln!(
            out,
            "\n  ],\n  \"terminated_at_line\": {},\n  \"not_run\": {},\n  \"unmet\": {},\n  \"rejected\": {}\n}}",
            serde_json::to_string(&end.terminated_at_line).map_err(json_err)?,
            end.not_run,
            serde_json::to_string(&end.unmet).map_err(json_err)?,
            serde_json::to_string(&rejected).map_err(json_err)?,
        )
    }
}

/// `scopecheck run`: check the file whole (a parse error anywhere is
/// reported before anything runs), then run it on a fresh [`Eager`] model
/// as it is read again, printing each op as it runs; then the unmet
/// expectations (exit code 1 if there are any). An op the model rejects
/// ends the run with an error at its line, column 1 (exit code 2), after
/// the ops before it were printed (in JSON, the document is closed with
/// `rejected` set). Memory holds the model and one step, whatever the
/// trace's length (and the trace's text for input that is not a regular
/// file, [`TraceFile`]).
pub fn execute(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let trace = TraceFile::open(&args.file, args.node_version)?;
    let mut printer: Box<dyn Printer> = if args.json {
        Box::new(Json { first: true })
    } else {
        Box::new(Text)
    };
    let expect = !args.no_expect;
    printer.start(out, &args.file)?;
    let mut runtime = Eager::new();
    let mut end = RunEnd::default();
    let mut steps = trace.steps()?;
    while let Some(step) = steps.next() {
        let step = step?;
        let observations = match runtime.apply(&step.op) {
            Ok(observations) => observations,
            Err(e) => {
                end.rejected = Some((step.line, e.to_string()));
                break;
            }
        };
        if expect && !step.expected.is_empty() {
            if let Err(unmet) = step.meets(Ok(&observations)) {
                end.unmet.push(unmet);
            }
        }
        printer.step(out, &step, &observations)?;
        if observations.iter().any(Observation::is_terminal) {
            end.terminated_at_line = Some(step.line);
            for later in steps.by_ref() {
                let later = later?;
                end.not_run += 1;
                if expect && !later.expected.is_empty() {
                    end.unmet.extend(later.meets(Err(&OpError::Exited)).err());
                }
            }
            break;
        }
    }
    printer.end(out, &end)?;
    if let Some((line, message)) = end.rejected {
        return Err(CliError::At {
            file: args.file.clone(),
            line,
            column: 1,
            message,
        });
    }
    if end.unmet.is_empty() {
        Ok(())
    } else {
        Err(unmet_verdict(&args.file, &end.unmet))
    }
}
