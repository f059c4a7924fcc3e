//! Reading trace files.

use super::CliError;
use model::vocab::trace::{self, Trace};
use std::path::Path;

/// Read and parse the trace in `file`; errors name the file, line and column.
pub fn load_trace(file: &Path) -> Result<Trace, CliError> {
    let text = std::fs::read_to_string(file).map_err(|source| CliError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    trace::parse(&text).map_err(|e| CliError::At {
        file: file.to_path_buf(),
        line: e.line,
        column: e.column,
        message: e.message,
    })
}
