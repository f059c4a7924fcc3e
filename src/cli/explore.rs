//! `scopecheck explore --depth D [--threads N] [--max-memory SIZE]`:
//! bounded exhaustive exploration of the eager model against the lazy
//! implementation (see [`crate::explore`]), with a progress line (states,
//! depth, memory) and a memory limit it stops at (exit code 3). SIGINT or
//! SIGTERM stops it too: the figures of the states explored so far are
//! printed, and the exit code is 128 + the signal.

use super::CliError;
use crate::explore::{explore_within, ExploreConfig, Progress};
use crate::memory;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lazy::mutant::Mutant;
use lazy::Lazy;
use model::vocab::NodeVersion;
use model::Eager;
use std::io::Write;

/// Arguments of `scopecheck explore`.
#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// Longest op sequence explored (every sequence up to this many ops).
    #[arg(long, default_value_t = 6,
          value_parser = clap::value_parser!(u16).range(0..=64))]
    pub depth: u16,
    /// Checker threads. A counterexample is a shortest one with any number;
    /// with one (the default) it is also the first of the shortest in
    /// alphabet order, so that runs print the same one.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// Ops that open a frame or push a context are enabled only while fewer
    /// than this many entries are open above the main script. The states
    /// grow with it: at depth 8, 2 stores about 2.6 million states (a
    /// fingerprint of each: some tens of bytes per state).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub max_nesting: u16,
    /// Explore the lazy side with this deliberate mistake switched on
    /// (`scopecheck mutants` lists them).
    #[arg(long, value_parser = super::parse_mutant)]
    pub mutant: Option<Mutant>,
    /// Stop, with a message, before the memory in use (this process's
    /// resident set) reaches this size: `3G`, `512M`, ... It stops once the
    /// memory in use and a reserve (64 MiB, and 4 times the last 0.1 s's
    /// growth) reach it, so it must be more than 64 MiB. Default: an eighth
    /// of the machine's memory, at most half of what is available (from
    /// /proc/meminfo).
    #[arg(long, value_name = "SIZE", value_parser = memory::parse_size)]
    pub max_memory: Option<u64>,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
    /// The Node.js version both sides start on (`docs/spec.md`,
    /// "Node versions"): 26 by default, or 20.
    #[arg(long, default_value_t = NodeVersion::default())]
    pub node_version: NodeVersion,
    /// Add the AsyncLocalStorage ops and the ticks and microtasks that run
    /// JS to the alphabet (`als-run A1 1`, `end-als-run`, `als-enter-with A1
    /// 2`, `als-get-store A1`, `next-tick-body`, `end-tick`,
    /// `queue-microtask`, `promise-then`, `promise-reject`), and native
    /// scopes entering a stored frame (`napi-async-init R1`,
    /// `napi-make-callback R1`, `close-outer 1`): 33 letters instead of 21,
    /// so far more states per depth.
    #[arg(long)]
    pub frames: bool,
}

/// Run `scopecheck explore`: print the figures, the situations reached and
/// the shortest counterexample if any (exit code 1 then).
pub fn execute(args: &ExploreArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let config = ExploreConfig {
        depth: usize::from(args.depth),
        threads: usize::from(args.threads),
        max_nesting: usize::from(args.max_nesting),
        frames: args.frames,
    };
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let limit = args
        .max_memory
        .unwrap_or_else(|| memory::default_limit(memory::machine_bytes()));
    if limit <= crate::explore::MEMORY_RESERVE {
        return Err(CliError::Usage(format!(
            "--max-memory {}: the explorer keeps {} of it in reserve (it stops once the memory in use and the reserve reach the limit); give more than that",
            memory::human(limit),
            memory::human(crate::explore::MEMORY_RESERVE)
        )));
    }
    crate::interrupt::install()
        .map_err(|e| CliError::Environment(format!("cannot catch SIGINT and SIGTERM: {e}")))?;
    let eager = Eager::for_version(args.node_version);
    let mut progress = |p: Progress| {
        bar.set_message(format!(
            "{} states generated, {} unique, depth {}, memory {} of {}",
            p.generated,
            p.unique,
            p.depth,
            memory::human(p.memory),
            memory::human(limit)
        ));
        bar.tick();
    };
    let version = args.node_version;
    let report = match args.mutant {
        None => explore_within(
            eager,
            Lazy::for_version(version),
            &config,
            Some(limit),
            &mut progress,
        ),
        Some(m) => {
            let mut lazy = lazy::mutant::environment(m);
            lazy.version = version;
            explore_within(eager, lazy, &config, Some(limit), &mut progress)
        }
    };
    bar.finish_and_clear();
    if let Some(m) = args.mutant {
        writeln!(out, "lazy side: mutant {}", m.name())?;
    }
    if args.node_version != NodeVersion::default() {
        writeln!(out, "node version: {}", args.node_version)?;
    }
    write!(out, "{report}")?;
    if let Some(cx) = &report.counterexample {
        if args.node_version != NodeVersion::default() {
            writeln!(
                out,
                "(on node version {v}: replay with `scopecheck replay FILE --node-version {v}`, or put `node-version {v}` first)",
                v = args.node_version
            )?;
        }
        return Err(CliError::Verdict(format!(
            "the lazy implementation diverges from the eager model after {} explored ops",
            cx.found_by.explored_ops
        )));
    }
    if let Some(signal) = report.interrupted {
        return Err(CliError::Interrupted {
            signal,
            what: format!(
                "explore stopped before depth {} after {} states, no divergence in them",
                config.depth, report.generated
            ),
        });
    }
    if let Some(stop) = &report.stopped {
        return Err(CliError::Environment(format!(
            "explore stopped before depth {}: {} of memory in use and {} kept in reserve reached the limit of {} (--max-memory); the exploration is incomplete. Lower --depth or --max-nesting, or raise --max-memory",
            config.depth,
            memory::human(stop.memory),
            memory::human(stop.reserve),
            memory::human(stop.limit),
        )));
    }
    Ok(())
}
