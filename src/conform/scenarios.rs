//! Every scenario of a directory (`tests/scenarios/*.trace`) against the
//! node binary: each one equal, different only as documented, different,
//! or not run whole, with the reason. A scenario with an op the binary
//! cannot express still runs up to that op ([`Outcome::Cut`]), and the `=>`
//! lines of the ops that ran are checked against the model's observations
//! ([`ScenarioReport::unmet`]).

use super::{ConformError, Harness, Unsupported, Verdict};
use model::vocab::trace::{self, Unmet};
use model::vocab::OpError;
use std::fmt;
use std::path::{Path, PathBuf};

/// How one scenario went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ran; node and the model agree, or differ only as documented
    /// (see [`Verdict::is_equal`], [`Verdict::is_explained`]).
    Ran(Box<Verdict>),
    /// Not run whole: the binary cannot express an op of it (its ops before
    /// that one ran: [`Outcome::Cut`]), or it is not a Node program (the
    /// reason says which).
    NotRun(String),
    /// Run up to its first op the binary cannot express: the verdict on the
    /// ops before it, and why that op cannot run.
    Cut {
        /// Why the scenario did not run whole (as [`Outcome::NotRun`] says).
        reason: String,
        /// The 1-based line of the op the binary cannot express.
        line: usize,
        /// How many of the scenario's ops ran (those before that op).
        ran: usize,
        /// The verdict on them.
        verdict: Box<Verdict>,
    },
    /// The file could not be read or parsed, or node could not run it.
    Error(String),
}

/// The scenarios of one directory, in file name order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScenarioReport {
    /// Each file and how it went.
    pub results: Vec<(PathBuf, Outcome)>,
    /// The `=>` lines of the ops that ran that the model's observations do
    /// not meet (node's are the same unless the verdict shows a
    /// difference), each with its scenario.
    pub unmet: Vec<(PathBuf, Unmet)>,
}

impl ScenarioReport {
    /// Scenarios that ran.
    pub fn run(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Ran(_)))
    }

    /// Scenarios where node and the model agree.
    pub fn equal(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Ran(v) if v.is_equal()))
    }

    /// Scenarios that differ, only in documented ways.
    pub fn documented(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Ran(v) if !v.is_equal() && v.is_explained()))
    }

    /// Scenarios with a difference no documented mismatch explains, on the
    /// whole scenario or on the part of it that ran.
    pub fn mismatched(&self) -> Vec<&Path> {
        self.results
            .iter()
            .filter(|(_, o)| match o {
                Outcome::Ran(v) => !v.is_explained(),
                Outcome::Cut { verdict, .. } => !verdict.is_explained(),
                _ => false,
            })
            .map(|(p, _)| p.as_path())
            .collect()
    }

    /// Scenarios not run whole (including those run up to an op the binary
    /// cannot express), with the reason.
    pub fn not_run(&self) -> Vec<(&Path, &str)> {
        self.results
            .iter()
            .filter_map(|(p, o)| match o {
                Outcome::NotRun(r) | Outcome::Cut { reason: r, .. } => {
                    Some((p.as_path(), r.as_str()))
                }
                _ => None,
            })
            .collect()
    }

    /// Scenarios run up to an op the binary cannot express.
    pub fn cut(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Cut { .. }))
    }

    /// Scenarios that could not be read or run.
    pub fn errors(&self) -> Vec<(&Path, &str)> {
        self.results
            .iter()
            .filter_map(|(p, o)| match o {
                Outcome::Error(e) => Some((p.as_path(), e.as_str())),
                _ => None,
            })
            .collect()
    }

    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.results.iter().filter(|(_, o)| f(o)).count()
    }
}

impl fmt::Display for ScenarioReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (p, o) in &self.results {
            match o {
                Outcome::Ran(v) => write!(f, "{}: {v}", p.display())?,
                Outcome::NotRun(r) => writeln!(f, "{}: NOT RUN: {r}", p.display())?,
                Outcome::Cut {
                    line, ran, verdict, ..
                } => {
                    write!(f, "{}: {verdict}", p.display())?;
                    writeln!(
                        f,
                        "  ran its first {ran} ops, up to line {line}, which the binary cannot express"
                    )?;
                }
                Outcome::Error(e) => writeln!(f, "{}: ERROR: {e}", p.display())?,
            }
        }
        writeln!(
            f,
            "scenarios: {} in all; {} run: {} equal, {} with documented differences only, {} mismatched; {} not run whole ({} of them up to the op the binary cannot express); {} errors; {} expectation(s) not met",
            self.results.len(),
            self.run(),
            self.equal(),
            self.documented(),
            self.mismatched().len(),
            self.not_run().len(),
            self.cut(),
            self.errors().len(),
            self.unmet.len()
        )?;
        for (p, r) in self.not_run() {
            writeln!(f, "  not run: {}: {r}", p.display())?;
        }
        for (p, e) in self.errors() {
            writeln!(f, "  error: {}: {e}", p.display())?;
        }
        for (p, u) in &self.unmet {
            writeln!(f, "  EXPECTATION NOT MET: {}: {u}", p.display())?;
        }
        Ok(())
    }
}

impl Harness {
    /// Run every `*.trace` of `dir` (file name order), each up to its first
    /// op this binary cannot express, and check the `=>` lines of the ops
    /// that ran. With `keep`, each scenario's files go to
    /// `keep/<file stem>/`.
    pub fn conform_scenarios(
        &self,
        dir: &Path,
        keep: Option<&Path>,
    ) -> Result<ScenarioReport, ConformError> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| ConformError::Io(format!("read the directory {}: {e}", dir.display())))?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "trace"))
            .collect();
        paths.sort();
        let mut report = ScenarioReport::default();
        for p in paths {
            let (outcome, unmet) = self.scenario(&p, keep);
            report
                .unmet
                .extend(unmet.into_iter().map(|u| (p.clone(), u)));
            report.results.push((p, outcome));
        }
        Ok(report)
    }

    fn scenario(&self, path: &Path, keep: Option<&Path>) -> (Outcome, Vec<Unmet>) {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return (Outcome::Error(format!("cannot read it: {e}")), Vec::new()),
        };
        let parsed = match trace::parse(&text) {
            Ok(t) => t,
            Err(e) => {
                let message = format!("line {}, column {}: {}", e.line, e.column, e.message);
                return (Outcome::Error(message), Vec::new());
            }
        };
        let dir = keep.map(|k| {
            k.join(
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )
        });
        let ops = parsed.ops();
        let (len, refusal) = self.expressible_prefix(&ops);
        let verdict = match self.conform_trace(&ops[..len], dir.as_deref()) {
            Ok(v) => v,
            Err(e @ ConformError::Unsupported(_)) => {
                let reason = format!("the binary cannot express it: {e}");
                return (Outcome::NotRun(reason), Vec::new());
            }
            Err(e @ ConformError::ModelRejected { .. }) => {
                return (
                    Outcome::NotRun(format!("not a Node program: {e}")),
                    Vec::new(),
                )
            }
            Err(e) => return (Outcome::Error(e.to_string()), Vec::new()),
        };
        // The expectations of the ops that ran (an op dropped because the
        // process had ended meets none).
        let unmet = parsed.steps[..len]
            .iter()
            .enumerate()
            .filter(|(_, step)| !step.expected.is_empty())
            .filter_map(
                |(i, step)| match verdict.model.get(i).filter(|_| i < verdict.given) {
                    Some(obs) => step.meets(Ok(obs)).err(),
                    None => step.meets(Err(&OpError::Exited)).err(),
                },
            )
            .collect();
        let outcome = match refusal {
            None => Outcome::Ran(Box::new(verdict)),
            Some(u) => Outcome::Cut {
                reason: format!("the binary cannot express it: {u}"),
                line: parsed.steps[u.index].line,
                ran: len,
                verdict: Box::new(verdict),
            },
        };
        (outcome, unmet)
    }

    /// How many ops at the start of `ops` this binary can run (each one
    /// the [`super::Decider`] accepts in the model's state, on the binary's
    /// node version), and why the next one cannot, if there is one. An op the
    /// model rejects, and the ops after the process ended, count as
    /// runnable: [`Harness::conform_trace`] then says what became of them.
    pub fn expressible_prefix(&self, ops: &[model::vocab::Op]) -> (usize, Option<Unsupported>) {
        let mut env = model::Eager::for_version(self.capabilities.node_version);
        let mut decider = super::Decider::new(self.capabilities);
        for (i, op) in ops.iter().enumerate() {
            if env.exited {
                break;
            }
            match decider.apply(&mut env, op) {
                Err(refusal) => return (i, Some(refusal)),
                Ok(Err(_)) => break,
                Ok(Ok(_)) => {}
            }
        }
        (ops.len(), None)
    }
}
