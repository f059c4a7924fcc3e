//! `scopecheck plumbing fuzz-trace CRASHFILE`: a fuzz input (a crash file under
//! `fuzz/artifacts/`, or any corpus file) as a replayable text trace.

use super::CliError;
use crate::fuzzing;
use clap::Args;
use lazy::mutant::Mutant;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `scopecheck plumbing fuzz-trace`.
#[derive(Debug, Args)]
pub struct FuzzTraceArgs {
    /// The fuzz input (any bytes).
    pub file: PathBuf,
    /// The mutant the input was found with (`lockstep_mutant` target), so
    /// that the trace ends at the divergence it shows.
    #[arg(long, value_parser = super::parse_mutant)]
    pub mutant: Option<Mutant>,
}

/// Run `scopecheck plumbing fuzz-trace`: print the decoded ops in the text format,
/// up to the first divergence if there is one, with a comment header.
pub fn execute(args: &FuzzTraceArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let mutant = args.mutant;
    let bytes = std::fs::read(&args.file).map_err(|source| CliError::Read {
        file: args.file.clone(),
        source,
    })?;
    out.write_all(fuzzing::crash_to_trace(&bytes, mutant).as_bytes())?;
    Ok(())
}
