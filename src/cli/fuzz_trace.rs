//! `scopecheck plumbing fuzz-trace CRASHFILE`: a fuzz input (a crash file under
//! `fuzz/artifacts/`, or any corpus file) as a replayable text trace.

use super::CliError;
use crate::fuzzing;
use clap::Args;
use lazy::mutant::Mutant;
use std::io::{Read, Write};
use std::path::PathBuf;

/// The largest fuzz input read: the decoder takes at most
/// [`fuzzing::MAX_OPS`] ops of a few bytes each, and libFuzzer's inputs are
/// 4096 bytes unless `-max_len` says otherwise; a larger file is refused
/// instead of read whole.
pub const MAX_INPUT_BYTES: u64 = 1 << 20;

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
    let read_error = |source| CliError::Read {
        file: args.file.clone(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(&args.file)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(CliError::Usage(format!(
            "{}: larger than {MAX_INPUT_BYTES} bytes, the most a fuzz input is read (the decoder takes at most {} ops)",
            args.file.display(),
            fuzzing::MAX_OPS
        )));
    }
    out.write_all(fuzzing::crash_to_trace(&bytes, mutant).as_bytes())?;
    Ok(())
}
