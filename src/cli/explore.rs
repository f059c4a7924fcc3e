//! `scopecheck explore --depth D [--threads N] [--max-memory SIZE]`:
//! bounded exhaustive exploration of the eager model against the lazy
//! implementation (see [`crate::explore`]), with a progress line (states,
//! depth, memory) and a memory limit it stops at (exit code 3). SIGINT or
//! SIGTERM stops it too: the figures of the states explored so far are
//! printed, and the exit code is 128 + the signal.

use super::CliError;
use crate::explore::{explore_within, Bounds, ExploreConfig, Progress};
use crate::fixpoint::{fixpoint, FixpointProgress, FixpointReport};
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
    /// Checker threads (with `--fixpoint`, the threads that expand each
    /// level: the states, levels, verdict, counterexample and situation
    /// paths are the same with any number, the first of the shortest in
    /// breadth-first order). Without `--fixpoint` a counterexample is a
    /// shortest one with any number; with one (the default) it is also the
    /// first of the shortest in alphabet order, so that runs print the same
    /// one.
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
    /// Explore to the fixpoint instead of to a depth: breadth first over
    /// canonical states (ids `newAsyncId()` drew renamed in order, open
    /// scopes and the frame objects held numbered in order, counters no
    /// answer reads forgotten, and whether the program has an
    /// uncaughtException listener where nothing reads it) until a level
    /// adds no new state; then no divergence holds for sequences of any
    /// length within the bounds. `--depth` is not used.
    #[arg(long)]
    pub fixpoint: bool,
    /// With `--fixpoint`: take `execution-async-id` (and `als-get-store`),
    /// which only read, as steps instead of checking their answers in
    /// every state in place. The same states and verdict, more work: for
    /// measuring the check (`docs/performance.md`).
    #[arg(long, requires = "fixpoint")]
    pub step_reads: bool,
    /// The alphabet of the deep runs instead of the 21 letters:
    /// `callback-scope 2 1 R1`, `close`, `execution-async-resource` (with `--min-id -2`, which adds `emit-before
    /// 2 -2`, `--max-nesting 17` and `--max-js 1`: past the id stack's 16 pairs).
    #[arg(long, conflicts_with = "frames")]
    pub deep: bool,
    /// `next-tick` (and `next-tick-body`) only while fewer ticks are queued.
    /// Default with `--fixpoint`: 2; else no bound.
    #[arg(long, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub max_ticks: Option<u16>,
    /// `queue-microtask`, `promise-then`, `promise-reject` only while fewer
    /// microtasks are queued and rejections pending. Default with
    /// `--fixpoint`: 2; else no bound.
    #[arg(long, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub max_microtasks: Option<u16>,
    /// `emit-before` and `run-in-async-scope` only while fewer id-stack
    /// entries were pushed by JS. Default: no bound but the nesting's.
    #[arg(long, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub max_js: Option<u16>,
    /// Hooks created before exploring (`create-hook H1` ... `Hn`), each with
    /// an `enable-hook` and a `disable-hook` letter.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=8))]
    pub hooks: u16,
    /// AsyncLocalStorage instances of the `--frames` letters (A1 ... An).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=8))]
    pub storages: u16,
    /// The lowest id a letter names: below -1 adds `emit-before 2 MIN`, a
    /// trigger id Node's native push refuses (`CHECK_GE(trigger_async_id,
    /// -1)`) and its JS push does not check.
    #[arg(long, default_value_t = -1, allow_hyphen_values = true,
          value_parser = clap::value_parser!(i64).range(-64..=-1))]
    pub min_id: i64,
}

/// The configuration `args` ask for.
pub fn config_of(args: &ExploreArgs) -> ExploreConfig {
    let default_queue = if args.fixpoint { Some(2) } else { None };
    ExploreConfig {
        depth: usize::from(args.depth),
        threads: usize::from(args.threads),
        max_nesting: usize::from(args.max_nesting),
        frames: args.frames,
        deep: args.deep,
        bounds: Bounds {
            max_ticks: args.max_ticks.map(usize::from).or(default_queue),
            max_microtasks: args.max_microtasks.map(usize::from).or(default_queue),
            max_js: args.max_js.map(usize::from),
            hooks: usize::from(args.hooks),
            storages: usize::from(args.storages),
            min_id: args.min_id,
        },
        canonical: args.fixpoint,
        max_levels: None,
        step_reads: args.step_reads,
    }
}

/// Run `scopecheck explore`: print the figures, the situations reached and
/// the shortest counterexample if any (exit code 1 then).
pub fn execute(args: &ExploreArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let config = config_of(args);
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
    if args.fixpoint {
        return execute_fixpoint(args, &config, eager, limit, &bar, out);
    }
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
    write_report(args, &report, out)?;
    if let Some(cx) = &report.counterexample {
        return Err(diverged(args, cx.found_by.explored_ops, out)?);
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
        return Err(memory_stopped(
            &format!("explore stopped before depth {}", config.depth),
            stop,
            "the exploration is incomplete. Lower --depth or --max-nesting",
        ));
    }
    Ok(())
}

/// `explore --fixpoint`: breadth first to the fixpoint ([`fixpoint`]).
fn execute_fixpoint(
    args: &ExploreArgs,
    config: &ExploreConfig,
    eager: Eager,
    limit: u64,
    bar: &ProgressBar,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    // Without a terminal (the bar hidden) and without `--quiet`, a line per
    // level on stderr, so that a long run in a log shows where it is.
    let log_levels = bar.is_hidden() && !args.quiet;
    let started = std::time::Instant::now();
    let mut last_level = 0;
    let mut progress = |p: FixpointProgress| {
        if log_levels && p.level != last_level {
            last_level = p.level;
            eprintln!(
                "level {}: {} states to expand, {} distinct, memory {}, {:.0} s",
                p.level,
                p.frontier,
                p.distinct,
                memory::human(p.memory),
                started.elapsed().as_secs_f64()
            );
        }
        bar.set_message(format!(
            "level {}: {} states in it, {} distinct, memory {} of {}",
            p.level,
            p.frontier,
            p.distinct,
            memory::human(p.memory),
            memory::human(limit)
        ));
        bar.tick();
    };
    let version = args.node_version;
    let report: FixpointReport = match args.mutant {
        None => fixpoint(
            eager,
            Lazy::for_version(version),
            config,
            Some(limit),
            &mut progress,
        ),
        Some(m) => {
            let mut lazy = lazy::mutant::environment(m);
            lazy.version = version;
            fixpoint(eager, lazy, config, Some(limit), &mut progress)
        }
    };
    bar.finish_and_clear();
    write_report(args, &report, out)?;
    if let Some(cx) = &report.counterexample {
        return Err(diverged(args, cx.found_by.explored_ops, out)?);
    }
    if let Some(signal) = report.interrupted {
        return Err(CliError::Interrupted {
            signal,
            what: format!(
                "explore --fixpoint stopped at level {} with {} distinct states, no divergence in them",
                report.diameter(),
                report.distinct
            ),
        });
    }
    if let Some(stop) = &report.stopped {
        return Err(memory_stopped(
            &format!("explore --fixpoint stopped at level {}", report.diameter()),
            stop,
            "no fixpoint. Lower the bounds",
        ));
    }
    Ok(())
}

/// The report, after the lazy side's mutant and the node version if not
/// the default.
fn write_report(
    args: &ExploreArgs,
    report: &dyn std::fmt::Display,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if let Some(m) = args.mutant {
        writeln!(out, "lazy side: mutant {}", m.name())?;
    }
    if args.node_version != NodeVersion::default() {
        writeln!(out, "node version: {}", args.node_version)?;
    }
    write!(out, "{report}")?;
    Ok(())
}

/// The verdict on a divergence after `explored_ops` ops, with how to replay
/// it on a node version that is not the default.
fn diverged(
    args: &ExploreArgs,
    explored_ops: usize,
    out: &mut dyn Write,
) -> Result<CliError, CliError> {
    if args.node_version != NodeVersion::default() {
        writeln!(
            out,
            "(on node version {v}: replay with `scopecheck replay FILE --node-version {v}`, or put `node-version {v}` first)",
            v = args.node_version
        )?;
    }
    Ok(CliError::Verdict(format!(
        "the lazy implementation diverges from the eager model after {explored_ops} explored ops"
    )))
}

/// The error of a run stopped at its memory limit: `what` stopped, the
/// memory figures, then `advice` (before "or raise --max-memory").
fn memory_stopped(what: &str, stop: &crate::explore::MemoryStop, advice: &str) -> CliError {
    CliError::Environment(format!(
        "{what}: {} of memory in use and {} kept in reserve reached the limit of {} (--max-memory); {advice}, or raise --max-memory",
        memory::human(stop.memory),
        memory::human(stop.reserve),
        memory::human(stop.limit),
    ))
}
