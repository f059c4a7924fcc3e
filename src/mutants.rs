//! The mutation catalogue: each deliberate mistake of `lazy::mutant::Mutant`
//! run through the random lockstep check; a mutant is killed when a program
//! could see the difference (observations compared, refinement check off, so
//! that every counterexample tells a story about a Node program).

use crate::check::{check, CaseFound, CheckConfig};
use crate::lockstep::Counterexample;
use lazy::mutant::Mutant;
use std::time::Duration;

/// What happened to one mutant.
#[derive(Clone, Debug)]
pub struct MutantResult {
    /// The mutant.
    pub mutant: Mutant,
    /// Cases run up to the first kill, and the time (before shrinking).
    pub killed_after: Option<(u64, Duration)>,
    /// The shrunk counterexample.
    pub counterexample: Option<Counterexample<CaseFound>>,
    /// Cases the refinement check needed to catch it (None: not caught in budget).
    pub refinement_cases: Option<u64>,
    /// The exhaustive explorer's shortest counterexample length, if it ran
    /// and found one (`Some(None)`: ran, survived its bounded alphabet).
    pub explorer: Option<Option<usize>>,
    /// Fuzz corpus inputs (of those replayed) on which the mutant diverges,
    /// if the corpus was replayed.
    pub corpus: Option<(usize, usize)>,
}

impl MutantResult {
    /// Killed: an observable counterexample was found.
    pub fn killed(&self) -> bool {
        self.counterexample.is_some()
    }
}

/// Run the random check against `mutant` with `cases` and `seed`; with
/// `refinement`, run it a second time with the refinement check to see how
/// much sooner that catches the mutant.
pub fn run_mutant(mutant: Mutant, cases: u32, seed: u64, refinement: bool) -> MutantResult {
    let mut config = CheckConfig {
        cases,
        seed,
        mutant: Some(mutant),
        refinement: false,
        ..CheckConfig::default()
    };
    let observable = check(&config, &mut |_| {});
    let refinement_cases = if refinement {
        config.refinement = true;
        check(&config, &mut |_| {}).first_failure.map(|(n, _)| n)
    } else {
        None
    };
    MutantResult {
        mutant,
        killed_after: observable.first_failure,
        counterexample: observable.counterexample,
        refinement_cases,
        explorer: None,
        corpus: None,
    }
}

/// The exhaustive explorer (`crate::explore`, up to `depth` ops)
/// against `mutant`: the length of the shortest counterexample, or `None`
/// when the bounded alphabet cannot reach the mistake.
pub fn explore_mutant(mutant: Mutant, depth: usize) -> Option<usize> {
    let config = crate::explore::ExploreConfig {
        depth,
        ..crate::explore::ExploreConfig::default()
    };
    let report = crate::explore::explore(
        model::Eager::new(),
        lazy::mutant::environment(mutant),
        &config,
        &mut |_| {},
    );
    report.counterexample.map(|c| c.ops.len())
}

/// The configurations of the explorer column, each explored breadth first
/// to its fixpoint or its first divergence ([`crate::fixpoint`]):
/// `--deep --min-id -2 --max-nesting 17 --max-js 1` (past the id stack's 16
/// pairs, few states: its fixpoint is reached in seconds), and `--frames`
/// at nesting 2 with at most 2 queued ticks and 2 microtasks (every letter;
/// its fixpoint is out of reach, but its first levels are not).
pub fn fixpoint_configs() -> [crate::explore::ExploreConfig; 2] {
    use crate::explore::{Bounds, ExploreConfig};
    [
        ExploreConfig {
            deep: true,
            max_nesting: 17,
            bounds: Bounds {
                max_js: Some(1),
                min_id: -2,
                ..Bounds::default()
            },
            ..ExploreConfig::default()
        },
        ExploreConfig {
            frames: true,
            max_nesting: 2,
            bounds: Bounds {
                max_ticks: Some(2),
                max_microtasks: Some(2),
                ..Bounds::default()
            },
            ..ExploreConfig::default()
        },
    ]
}

/// Memory the explorer column's fixpoint runs may use, each.
pub const FIXPOINT_MEMORY: u64 = 2 << 30;

/// Levels the explorer column's `--frames` run goes to at most: its level
/// 6 holds about 2.9 million states (a minute or two), level 7 another 17.6
/// million, past [`FIXPOINT_MEMORY`].
pub const FRAMES_LEVELS: usize = 6;

/// The fixpoint explorer against `mutant`: the length of the shortest
/// counterexample it finds over [`fixpoint_configs`] (init ops included),
/// or `None`. The `--deep` run goes to its fixpoint or its first
/// divergence; then the `--frames` run goes breadth first up to
/// [`FRAMES_LEVELS`] levels, and no further than the level below the
/// `--deep` run's counterexample (so that a shorter one replaces it).
pub fn explore_mutant_fixpoint(mutant: Mutant) -> Option<usize> {
    let [deep, frames] = fixpoint_configs();
    let run = |config: &crate::explore::ExploreConfig| {
        crate::fixpoint::fixpoint(
            model::Eager::new(),
            lazy::mutant::environment(mutant),
            config,
            Some(FIXPOINT_MEMORY),
            &mut |_| {},
        )
        .counterexample
    };
    let deep = run(&deep);
    let frames = crate::explore::ExploreConfig {
        max_levels: Some(
            deep.as_ref()
                .map_or(FRAMES_LEVELS, |c| c.found_by.explored_ops - 1)
                .min(FRAMES_LEVELS),
        ),
        ..frames
    };
    match (deep, run(&frames)) {
        (_, Some(c)) | (Some(c), None) => Some(c.ops.len()),
        (None, None) => None,
    }
}

/// Replay every input of the committed fuzz corpus (`dir`) against
/// `mutant`: (inputs that diverge, inputs replayed).
pub fn corpus_mutant(mutant: Mutant, dir: &std::path::Path) -> std::io::Result<(usize, usize)> {
    let mut killed = 0;
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let bytes = std::fs::read(entry?.path())?;
        total += 1;
        if crate::fuzzing::check_lockstep(&bytes, Some(mutant), false).is_err() {
            killed += 1;
        }
    }
    Ok((killed, total))
}

/// The table row of a result.
pub fn row(r: &MutantResult) -> String {
    let (status, cases, time) = match r.killed_after {
        Some((n, t)) => ("killed", n.to_string(), format!("{:.3}", t.as_secs_f64())),
        None => ("SURVIVED", "-".to_string(), "-".to_string()),
    };
    let len = r
        .counterexample
        .as_ref()
        .map(|c| c.ops.len().to_string())
        .unwrap_or_else(|| "-".to_string());
    let refinement = r
        .refinement_cases
        .map(|n| n.to_string())
        .unwrap_or_else(|| "-".to_string());
    let explorer = match r.explorer {
        None => "-".to_string(),
        Some(None) => "survived".to_string(),
        Some(Some(n)) => format!("{n} ops"),
    };
    let corpus = match r.corpus {
        None => "-".to_string(),
        Some((k, n)) => format!("{k}/{n}"),
    };
    format!(
        "{:<36} {:<8} {:>8} {:>9} {:>6} {:>11} {:>9} {:>7}",
        r.mutant.name(),
        status,
        cases,
        time,
        len,
        refinement,
        explorer,
        corpus
    )
}

/// The table header: random check (cases and time to the first kill, length
/// of the minimal counterexample), cases the refinement check needed, the
/// explorer's shortest counterexample, fuzz corpus inputs that kill it.
pub const HEADER: &str =
    "mutant                               status      cases  time (s)    ops  refinement  explorer  corpus";
