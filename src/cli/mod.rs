//! The `scopecheck` command line: argument parsing and one module per
//! subcommand.
//!
//! The top level holds the jobs a reviewer runs (`check`, `explore`, `run`,
//! `replay`, `conform`, `mutants`, `export`, `bench`); chores and scale-out sit under
//! `plumbing` ([`plumbing`]).
//!
//! Every subcommand reports a failure as a [`CliError`], printed as
//! `error: ...` on stderr (bad input as `error: FILE:LINE:COLUMN: message`),
//! with a distinct exit code per kind ([`error`]): 0 all is well, 1 a
//! divergence or mismatch was found, 2 bad input or usage, 3 the
//! environment failed (a missing or broken tool, a full disk), 130 or 143
//! interrupted by SIGINT or SIGTERM. To add a subcommand, add a module with
//! an `Args` struct and an `execute` function and a variant of [`Command`].

pub mod bench;
pub mod check;
pub mod conform;
pub mod error;
pub mod explore;
pub mod export;
pub mod fuzz_seed;
pub mod fuzz_trace;
pub mod input;
pub mod mutants;
pub mod plumbing;
pub mod replay;
pub mod run;

pub use error::{CliError, EXIT_ENVIRONMENT, EXIT_INTERRUPTED, EXIT_USAGE, EXIT_VERDICT};

use clap::{Parser, Subcommand};
use std::io::{self, Write};
use std::process::ExitCode;

/// The trace as it runs with `--node-version`: without the option, as
/// written; with it, on that node version: `node-version V` is put before its
/// first op (shown as line 0), unless the trace names a node version itself,
/// which must then be the same one.
pub fn on_node_version(
    mut trace: model::vocab::trace::Trace,
    version: Option<model::vocab::NodeVersion>,
    file: &std::path::Path,
) -> Result<model::vocab::trace::Trace, CliError> {
    use model::vocab::Op;
    let Some(version) = version else {
        return Ok(trace);
    };
    if let Some(step) = (trace.steps.iter()).find(|s| matches!(s.op, Op::NodeVersion(_))) {
        if step.op != Op::NodeVersion(version) {
            return Err(CliError::At {
                file: file.to_path_buf(),
                line: step.line,
                column: 1,
                message: format!(
                    "the trace says `{}`, and --node-version {version} was given",
                    step.op
                ),
            });
        }
        return Ok(trace);
    }
    trace.steps.insert(
        0,
        model::vocab::trace::Step {
            line: 0,
            op: Op::NodeVersion(version),
            expected: Vec::new(),
        },
    );
    Ok(trace)
}

/// A mutant (or variant) by its kebab-case name: the clap value parser of
/// every `--mutant` / `--only` option.
pub fn parse_mutant(name: &str) -> Result<lazy::mutant::Mutant, String> {
    use lazy::mutant::Mutant;
    Mutant::from_name(name).ok_or_else(|| {
        let names: Vec<String> = Mutant::ALL
            .iter()
            .chain(Mutant::VARIANTS)
            .map(|m| m.name())
            .collect();
        format!("unknown mutant; expected one of {}", names.join(", "))
    })
}

/// `scopecheck`: the verification suite's command-line tool.
#[derive(Debug, Parser)]
#[command(
    name = "scopecheck",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("SCOPECHECK_COMMIT"), ")"),
    about = "Lockstep equivalence suite for Node.js PR 66511 (lazy async-context scopes)",
    long_about = "Lockstep equivalence suite for Node.js PR 66511 (lazy async-context scopes).\n\n\
                  Traces are text files with one op per line (see `model::vocab::trace`); \
                  `scopecheck run` executes one on the eager reference model and prints \
                  what a Node.js program would observe.",
    after_help = "Exit codes: 0 success; 1 a divergence, mismatch, surviving mutant or unmet \
                  expectation; 2 bad input or usage; 3 the environment failed (a missing or \
                  broken tool, a destination that cannot be written, explore's memory limit); \
                  130 / 143 interrupted by SIGINT / SIGTERM (check, explore and conform print \
                  what they had first)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands: the jobs a reviewer runs, then the chores.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Random lockstep check of the lazy implementation against the eager model.
    Check(check::CheckArgs),
    /// Bounded exhaustive exploration (stateright's depth-first checker) of
    /// the lazy implementation against the eager model.
    Explore(explore::ExploreArgs),
    /// Run a trace on the eager reference model and print each op's observations.
    Run(run::RunArgs),
    /// Run a trace on both sides, side by side, and mark the first divergence.
    Replay(replay::ReplayArgs),
    /// The eager model against the real node binary (random traces, a trace, or the scenarios).
    Conform(conform::ConformArgs),
    /// Run the random check against every deliberate mistake of the lazy design.
    Mutants(mutants::MutantsArgs),
    /// Node's benchmark/napi/make_callback on two binaries (`--node OLD
    /// --node NEW`), compared as benchmark/compare.R compares them.
    Bench(bench::BenchArgs),
    /// Write the suite's cases as Node core tests for the pull request
    /// (`--prove`: build and run them on both binaries, and their wrong
    /// variants).
    Export(export::ExportArgs),
    /// Chores and scale-out: shards of a check and their JSON summaries,
    /// merging them, the fuzz seed corpus, fuzz inputs as traces, conform on
    /// v20's traces.
    Plumbing(plumbing::PlumbingArgs),
}

/// Parse the process arguments, run the subcommand, and return the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match &cli.command {
        Command::Run(args) => run::execute(args, &mut out),
        Command::Check(args) => check::execute(args, &mut out),
        Command::Replay(args) => replay::execute(args, &mut out),
        Command::Conform(args) => conform::execute(args, &mut out),
        Command::Mutants(args) => mutants::execute(args, &mut out),
        Command::Explore(args) => explore::execute(args, &mut out),
        Command::Export(args) => export::execute(args, &mut out),
        Command::Bench(args) => bench::execute(args, &mut out),
        Command::Plumbing(args) => plumbing::execute(args, &mut out),
    };
    let flushed = out.flush().map_err(CliError::Output);
    match result.and(flushed) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`scopecheck run t | head`): nothing to report.
        Err(CliError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e @ CliError::Verdict(_)) => {
            let _ = writeln!(io::stderr(), "{e}");
            ExitCode::from(e.exit_code())
        }
        Err(e) => {
            // If stderr is gone too there is nowhere left to report to.
            let _ = writeln!(io::stderr(), "error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
