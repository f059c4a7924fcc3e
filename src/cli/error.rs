//! The one error type of the command line, and the exit code of each kind.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Exit code: the check found what it looks for (a divergence, a surviving
/// mutant, a conformance mismatch, an unmet `=>` line, shards that do not
/// add up or hold a counterexample).
pub const EXIT_VERDICT: u8 = 1;

/// Exit code: bad input or usage (an unreadable or ill-formed trace, an op
/// the model rejects, a trace node cannot run, summaries that are not
/// shards of one run, an output path that cannot be used); clap uses the
/// same code for bad arguments.
pub const EXIT_USAGE: u8 = 2;

/// Exit code: the environment failed the run (a missing or broken tool:
/// node, its headers, the compiler; a destination that fails while being
/// written, such as a full disk; explore's memory limit reached).
pub const EXIT_ENVIRONMENT: u8 = 3;

/// Exit code of a run stopped by SIGINT (Ctrl-C): 128 + 2, as a shell
/// reports it; SIGTERM gives 128 + 15 = 143 ([`interrupted_code`]).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of a run stopped by `signal`: 128 + its number.
pub fn interrupted_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(EXIT_INTERRUPTED)
}

/// Why a subcommand failed. `Display` gives the text after `error: `.
#[derive(Debug)]
pub enum CliError {
    /// The input file could not be read.
    Read {
        /// The file as given on the command line.
        file: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Something at a place in the input file: a parse error, or an op the
    /// model rejects as impossible (column 1).
    At {
        /// The file as given on the command line.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// Writing to standard output failed.
    Output(io::Error),
    /// Writing a file failed after its destination was checked (a full
    /// disk): exit code 3.
    Write {
        /// The file.
        path: PathBuf,
        /// What was being written (`the summary`, `the counterexample`).
        what: &'static str,
        /// Why.
        source: io::Error,
    },
    /// The check ran and found what it looks for (a divergence, a surviving
    /// mutant, a conformance mismatch): exit code 1, the report already printed.
    Verdict(String),
    /// A command-line argument that clap accepts but the command does not
    /// (an output path that cannot be written, summaries of different runs):
    /// exit code 2.
    Usage(String),
    /// A tool is missing or broken, or a limit of the machine was reached
    /// (explore's `--max-memory`): exit code 3.
    Environment(String),
    /// SIGINT or SIGTERM stopped the run (what it had is already printed):
    /// exit code 128 + the signal.
    Interrupted {
        /// The signal's number.
        signal: i32,
        /// What was stopped, for the last line on stderr.
        what: String,
    },
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Verdict(_) => EXIT_VERDICT,
            CliError::Read { .. } | CliError::At { .. } | CliError::Usage(_) => EXIT_USAGE,
            CliError::Output(_) | CliError::Write { .. } | CliError::Environment(_) => {
                EXIT_ENVIRONMENT
            }
            CliError::Interrupted { signal, .. } => interrupted_code(*signal),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Read { file, source } => {
                write!(f, "{}: cannot read the file: {source}", file.display())
            }
            CliError::At {
                file,
                line,
                column,
                message,
            } => write!(f, "{}:{line}:{column}: {message}", file.display()),
            CliError::Output(e) => write!(f, "cannot write to standard output: {e}"),
            CliError::Write { path, what, source } => {
                write!(f, "{}: cannot write {what}: {source}", path.display())
            }
            CliError::Verdict(what) | CliError::Usage(what) | CliError::Environment(what) => {
                f.write_str(what)
            }
            CliError::Interrupted { signal, what } => {
                let name = match *signal {
                    2 => "SIGINT",
                    15 => "SIGTERM",
                    _ => "a signal",
                };
                write!(f, "interrupted by {name}: {what}")
            }
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Read { source, .. } | CliError::Write { source, .. } => Some(source),
            CliError::Output(e) => Some(e),
            CliError::At { .. }
            | CliError::Verdict(_)
            | CliError::Usage(_)
            | CliError::Environment(_)
            | CliError::Interrupted { .. } => None,
        }
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Output(e)
    }
}
