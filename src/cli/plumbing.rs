//! `scopecheck plumbing`: the chores and the scale-out, apart from the jobs a
//! reviewer runs. `plumbing check --shard I/N --json FILE` runs one shard of
//! a check and writes its summary; `plumbing merge FILE...` adds shards'
//! summaries up to the whole run's table; `plumbing fuzz-seed` writes the
//! fuzz targets' seed corpus; `plumbing fuzz-trace FILE` turns a fuzz input
//! into a trace; `plumbing conform --local-resources-only` runs conform on
//! the traces a binary without Global<Object>* scopes (v20) gets.

use super::{check, conform, fuzz_seed, fuzz_trace, CliError};
use crate::check::Shard;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `scopecheck plumbing`.
#[derive(Debug, Args)]
pub struct PlumbingArgs {
    /// Which chore.
    #[command(subcommand)]
    pub command: Plumbing,
}

/// The chores and scale-out commands.
#[derive(Debug, Subcommand)]
pub enum Plumbing {
    /// `scopecheck check` with its scale-out: one shard of the run, and its
    /// summary as JSON for `plumbing merge`.
    Check(ShardArgs),
    /// Add up the JSON summaries of the shards of one run and print the
    /// whole run's coverage table (fails on a counterexample, a missing
    /// shard or a shard stopped early; refuses summaries of another run,
    /// build or configuration).
    Merge(MergeArgs),
    /// `scopecheck conform`, with options for comparing binaries.
    Conform(PlumbingConformArgs),
    /// Write the fuzz seed corpus from the scenario and regression traces.
    FuzzSeed(fuzz_seed::FuzzSeedArgs),
    /// Turn a fuzz input (a crash file) into a replayable text trace.
    FuzzTrace(fuzz_trace::FuzzTraceArgs),
}

/// Arguments of `scopecheck plumbing check`.
#[derive(Debug, Args)]
pub struct ShardArgs {
    /// The options of `scopecheck check`.
    #[command(flatten)]
    pub check: check::CheckArgs,
    /// Run only shard I of N (1-based): the cases whose index is I-1 modulo
    /// N. The N shards of a run are disjoint and together are the run.
    #[arg(long, default_value = "1/1")]
    pub shard: Shard,
    /// Write the run's summary (tool version, configuration, counts and
    /// coverage by name, any counterexample) as JSON to this file, for
    /// `plumbing merge`.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Arguments of `scopecheck plumbing merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The summaries (`plumbing check --json`), one per shard.
    #[arg(required = true, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Arguments of `scopecheck plumbing conform`.
#[derive(Debug, Args)]
pub struct PlumbingConformArgs {
    /// The options of `scopecheck conform`.
    #[command(flatten)]
    pub conform: conform::ConformArgs,
    /// Generate and translate as for a binary without Global<Object>*
    /// callback scopes, even if this one has them: the random traces are
    /// then the ones v20 gets for the same seed.
    #[arg(long)]
    pub local_resources_only: bool,
}

/// Run `scopecheck plumbing ...`.
pub fn execute(args: &PlumbingArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.command {
        Plumbing::Check(a) => check::run(&a.check, a.shard, a.json.as_deref(), out),
        Plumbing::Merge(a) => check::merge(&a.files, out),
        Plumbing::Conform(a) => conform::run(&a.conform, a.local_resources_only, out),
        Plumbing::FuzzSeed(a) => fuzz_seed::execute(a, out),
        Plumbing::FuzzTrace(a) => fuzz_trace::execute(a, out),
    }
}
