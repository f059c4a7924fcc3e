//! `scopecheck plumbing fuzz-seed [--out DIR]`: write the fuzz targets' seed corpus
//! from the scenario and regression traces (run it after adding a trace;
//! `tests/fuzz_corpus.rs` checks that the committed corpus is up to date).

use super::CliError;
use crate::fuzzing;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scopecheck plumbing fuzz-seed`.
#[derive(Debug, Args)]
pub struct FuzzSeedArgs {
    /// Where the corpus goes (one folder per target below it).
    #[arg(long, default_value = "fuzz/corpus")]
    pub out: PathBuf,
}

/// Run `scopecheck plumbing fuzz-seed` from the repository root.
pub fn execute(args: &FuzzSeedArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let written =
        fuzzing::seed_corpus(Path::new("."), &args.out).map_err(|source| CliError::Read {
            file: args.out.clone(),
            source,
        })?;
    writeln!(
        out,
        "wrote {} seed files under {}",
        written.len(),
        args.out.display()
    )?;
    Ok(())
}
