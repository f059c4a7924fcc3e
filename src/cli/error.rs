//! The one error type of the command line.

use std::fmt;
use std::io;
use std::path::PathBuf;

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
    /// Writing the output failed.
    Output(io::Error),
    /// The check ran and found what it looks for (a divergence, a surviving
    /// mutant, a conformance mismatch): exit code 1, the report already printed.
    Verdict(String),
    /// A command-line argument that clap accepts but the command does not
    /// (an output path that cannot be written), or a limit the run reached
    /// before it could finish (explore's `--max-memory`): exit code 2.
    Usage(String),
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
            CliError::Output(e) => write!(f, "cannot write the output: {e}"),
            CliError::Verdict(what) | CliError::Usage(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Read { source, .. } => Some(source),
            CliError::Output(e) => Some(e),
            CliError::At { .. } | CliError::Verdict(_) | CliError::Usage(_) => None,
        }
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Output(e)
    }
}
