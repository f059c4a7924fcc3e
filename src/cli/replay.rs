//! `scopecheck replay FILE`: a trace on both sides, side by side, the first
//! divergence marked, and the trace's `=>` expectations checked on both
//! sides. Exit code 1 when they diverge or an expectation is not met.
//!
//! The text replay reads the trace as it runs
//! ([`super::input::TraceFile`]): its memory is the two sides' state, not
//! the trace. With `--html OUT`, the same text is printed and, in addition,
//! the replay is written to `OUT` as a self-contained HTML page
//! (`crate::html`) showing both sides' stacks after every op (the page
//! holds the whole replay). The exit code does not change.

use super::input::{load_trace, TraceFile};
use super::CliError;
use crate::html;
use crate::lockstep::{Answer, Pair};
use clap::Args;
use lazy::mutant::Mutant;
use lazy::LazyStore;
use model::vocab::trace::{Step, Unmet};
use model::vocab::OpError;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `scopecheck replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Switch on a deliberate mistake in the lazy side (a name from `scopecheck mutants`).
    #[arg(long, value_parser = super::parse_mutant)]
    pub mutant: Option<Mutant>,
    /// Also write the replay as a self-contained HTML page to this file
    /// (both sides' stacks after every op; see `docs/visual.md`).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Do not check the trace's `=>` expectation lines.
    #[arg(long)]
    pub no_expect: bool,
    /// Run both sides on this Node.js version (20 or 26; the
    /// default is the trace's own `node-version`, else 26).
    #[arg(long)]
    pub node_version: Option<model::vocab::NodeVersion>,
}

/// Check `answer` (of side `side`) against the `=>` lines of `step`, if it
/// has any; an unmet one is added to `unmet`.
fn expect(
    unmet: &mut Vec<(&'static str, Unmet)>,
    side: &'static str,
    step: &Step,
    answer: &Answer,
) {
    if step.expected.is_empty() {
        return;
    }
    if let Err(u) = step.meets(answer.as_deref()) {
        unmet.push((side, u));
    }
}

fn show(answer: &Answer) -> Vec<String> {
    match answer {
        Ok(obs) => obs.iter().map(|o| o.to_string()).collect(),
        Err(e) => vec![e.to_string()],
    }
}

/// Run `scopecheck replay`: the text replay, and the HTML page when `--html`
/// is given. The page's path is checked before anything runs, so that an
/// unwritable path fails (exit code 2) before any output; the page is then
/// written whole and renamed into place ([`crate::files::replace`]).
pub fn execute(args: &ReplayArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let Some(html_path) = &args.html else {
        return execute_text(args, out);
    };
    let trace = super::on_node_version(load_trace(&args.file)?, args.node_version, &args.file)?;
    let mutant = args.mutant;
    crate::files::check_file(html_path, "the HTML page").map_err(CliError::Usage)?;
    let verdict = execute_text(args, out);
    let replay = html::record(&trace, mutant);
    let intro = std::fs::read_to_string(&args.file)
        .ok()
        .and_then(|text| html::leading_comment(&text));
    let info = html::PageInfo {
        file: args.file.display().to_string(),
        intro,
    };
    crate::files::replace(html_path, html::render(&replay, &info).as_bytes()).map_err(
        |source| CliError::Write {
            path: html_path.clone(),
            what: "the HTML page",
            source,
        },
    )?;
    writeln!(out, "html: wrote {}", html_path.display())?;
    verdict
}

/// The text replay (unchanged by `--html`).
fn execute_text(args: &ReplayArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match args.mutant {
        None => replay_text(args, Pair::new(), out),
        Some(m) => replay_text(args, Pair::mutated(m), out),
    }
}

/// The text replay on `pair`.
fn replay_text<S: LazyStore>(
    args: &ReplayArgs,
    mut pair: Pair<S>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let trace = TraceFile::open(&args.file, args.node_version)?;
    let check = !args.no_expect;
    let mut unmet: Vec<(&'static str, Unmet)> = Vec::new();
    writeln!(out, "{:<6} {:<40} {:<50} lazy", "line", "op", "eager")?;
    let mut steps = trace.steps()?;
    while let Some(step) = steps.next() {
        let step = &step?;
        if pair.eager.exited && pair.lazy.exited {
            writeln!(
                out,
                "(the process ended; the rest of the trace does not run)"
            )?;
            if check {
                let ended: Answer = Err(OpError::Exited);
                expect(&mut unmet, "both sides", step, &ended);
                for later in steps.by_ref() {
                    expect(&mut unmet, "both sides", &later?, &ended);
                }
            }
            break;
        }
        let (eager, lazy, same) = match pair.step(&step.op) {
            Ok(a) => (a.clone(), a, true),
            Err((e, l)) => (e, l, false),
        };
        if let (Err(e), true) = (&eager, same) {
            return Err(CliError::At {
                file: args.file.clone(),
                line: step.line,
                column: 1,
                message: e.to_string(),
            });
        }
        if check {
            if same {
                expect(&mut unmet, "both sides", step, &eager);
            } else {
                expect(&mut unmet, "eager side", step, &eager);
                expect(&mut unmet, "lazy side", step, &lazy);
            }
        }
        let (e, l) = (show(&eager), show(&lazy));
        let rows = e.len().max(l.len()).max(1);
        for row in 0..rows {
            let op = if row == 0 {
                step.op.to_string()
            } else {
                String::new()
            };
            let line = if row == 0 {
                step.line.to_string()
            } else {
                String::new()
            };
            let ecol = e.get(row).cloned().unwrap_or_default();
            let lcol = if same {
                if row == 0 {
                    "(same)".to_string()
                } else {
                    String::new()
                }
            } else {
                l.get(row).cloned().unwrap_or_default()
            };
            writeln!(out, "{line:<6} {op:<40} {ecol:<50} {lcol}")?;
        }
        if !same {
            writeln!(out, "^^^ first divergence at line {}", step.line)?;
            write_unmet(&unmet, out)?;
            return Err(CliError::Verdict(format!(
                "{}:{}: the lazy implementation diverges from the eager model",
                args.file.display(),
                step.line
            )));
        }
    }
    writeln!(out, "no divergence: both sides observed the same")?;
    if let Some((side, first)) = unmet.first() {
        write_unmet(&unmet, out)?;
        return Err(CliError::Verdict(format!(
            "{}:{}: {} expectation(s) not met, the first ({side}): {} (--no-expect skips the check)",
            args.file.display(),
            first.line,
            unmet.len(),
            super::run::brief(first)
        )));
    }
    Ok(())
}

fn write_unmet(unmet: &[(&'static str, Unmet)], out: &mut dyn Write) -> std::io::Result<()> {
    for (side, u) in unmet {
        writeln!(out, "EXPECTATION NOT MET ({side}) at {u}")?;
    }
    Ok(())
}
