//! Every scenario of a directory (`tests/scenarios/*.trace`) against the
//! node binary: each one equal, different only as documented, different,
//! or not run, with the reason.

use super::{ConformError, Harness, Verdict};
use model::vocab::trace;
use std::fmt;
use std::path::{Path, PathBuf};

/// How one scenario went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ran; node and the model agree, or differ only as documented
    /// (see [`Verdict::is_equal`], [`Verdict::is_explained`]).
    Ran(Box<Verdict>),
    /// Not run: the binary cannot express it, or it is not a Node program
    /// (the reason says which).
    NotRun(String),
    /// The file could not be read or parsed, or node could not run it.
    Error(String),
}

/// The scenarios of one directory, in file name order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScenarioReport {
    /// Each file and how it went.
    pub results: Vec<(PathBuf, Outcome)>,
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

    /// Scenarios with a difference no documented mismatch explains.
    pub fn mismatched(&self) -> Vec<&Path> {
        self.results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Ran(v) if !v.is_explained()))
            .map(|(p, _)| p.as_path())
            .collect()
    }

    /// Scenarios not run, with the reason.
    pub fn not_run(&self) -> Vec<(&Path, &str)> {
        self.results
            .iter()
            .filter_map(|(p, o)| match o {
                Outcome::NotRun(r) => Some((p.as_path(), r.as_str())),
                _ => None,
            })
            .collect()
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
                Outcome::Error(e) => writeln!(f, "{}: ERROR: {e}", p.display())?,
            }
        }
        writeln!(
            f,
            "scenarios: {} in all; {} run: {} equal, {} with documented differences only, {} mismatched; {} not run; {} errors",
            self.results.len(),
            self.run(),
            self.equal(),
            self.documented(),
            self.mismatched().len(),
            self.not_run().len(),
            self.errors().len()
        )?;
        for (p, r) in self.not_run() {
            writeln!(f, "  not run: {}: {r}", p.display())?;
        }
        for (p, e) in self.errors() {
            writeln!(f, "  error: {}: {e}", p.display())?;
        }
        Ok(())
    }
}

impl Harness {
    /// Run every `*.trace` of `dir` (file name order). With `keep`, each
    /// scenario's files go to `keep/<file stem>/`.
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
            let outcome = self.scenario(&p, keep);
            report.results.push((p, outcome));
        }
        Ok(report)
    }

    fn scenario(&self, path: &Path, keep: Option<&Path>) -> Outcome {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return Outcome::Error(format!("cannot read it: {e}")),
        };
        let parsed = match trace::parse(&text) {
            Ok(t) => t,
            Err(e) => {
                return Outcome::Error(format!(
                    "line {}, column {}: {}",
                    e.line, e.column, e.message
                ))
            }
        };
        let dir = keep.map(|k| {
            k.join(
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )
        });
        match self.conform_trace(&parsed.ops(), dir.as_deref()) {
            Ok(v) => Outcome::Ran(Box::new(v)),
            Err(e @ ConformError::Unsupported(_)) => {
                Outcome::NotRun(format!("the binary cannot express it: {e}"))
            }
            Err(e @ ConformError::ModelRejected { .. }) => {
                Outcome::NotRun(format!("not a Node program: {e}"))
            }
            Err(e) => Outcome::Error(e.to_string()),
        }
    }
}
