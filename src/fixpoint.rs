//! Every reachable state, not every sequence up to a depth: `scopecheck
//! explore --fixpoint` explores breadth first until a level adds no new
//! state (the frontier is empty), so "no divergence" holds for sequences of
//! any length within the bounds ([`ExploreConfig`]: nesting, queued ticks
//! and microtasks, JS entries, hooks, storages, the ids the letters name).
//!
//! The states are the depth-bounded explorer's ([`crate::explore`]) made
//! canonical: the cost account and op counters normalised, the scope serials
//! renumbered, and the async ids `newAsyncId()` drew renamed in order
//! ([`crate::canonical`]). Without the renaming every `next-tick` would make
//! a new state and no frontier would ever empty. A state is stored as a
//! fingerprint (64 bits of aHash, as stateright stores its states); only the
//! frontier is kept whole, each state with its path.
//!
//! Breadth first, the first level at which a divergence appears holds the
//! shortest counterexamples; the explorer keeps the first of them in
//! alphabet order and stops at the end of that level. The diameter is the
//! last level that added a state: every reachable state is reached by a
//! path of at most that many ops.

use crate::explore::{
    Explorable, ExploreConfig, Explored, Explorer, MemoryStop, Path, Reference, SituationReached,
    State, ESTIMATED_BYTES_PER_STATE, MEMORY_RESERVE, SOMETIMES,
};
use crate::lockstep::Counterexample;
use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

/// Progress of a running fixpoint exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixpointProgress {
    /// The level being expanded (states this many ops from the start).
    pub level: usize,
    /// Distinct states found so far.
    pub distinct: usize,
    /// States of the level being expanded.
    pub frontier: usize,
    /// Memory in use, in bytes (resident set, or an estimate).
    pub memory: u64,
}

/// What a fixpoint exploration saw.
#[derive(Clone, Debug)]
pub struct FixpointReport {
    /// The configuration explored (its depth is not used).
    pub config: ExploreConfig,
    /// Letters in the alphabet.
    pub alphabet_len: usize,
    /// Distinct canonical states reached, the start state included.
    pub distinct: usize,
    /// Successors made (every enabled letter of every expanded state).
    pub generated: usize,
    /// New states per level: `levels[d]` states are first reached `d` ops
    /// from the start.
    pub levels: Vec<usize>,
    /// The frontier emptied: every state reachable within the bounds was
    /// explored. `false` when the run stopped at a divergence, the memory
    /// limit or a signal.
    pub fixpoint: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// A shortest diverging trace, if the sides ever differed.
    pub counterexample: Option<Counterexample<Explored>>,
    /// The `sometimes` situations, in [`SOMETIMES`] order.
    pub situations: Vec<SituationReached>,
    /// Set when the run stopped at its memory limit.
    pub stopped: Option<MemoryStop>,
    /// The signal that stopped the run, if one did.
    pub interrupted: Option<i32>,
    /// The largest resident set seen while exploring, where `/proc` tells it.
    pub peak_memory: Option<u64>,
}

impl FixpointReport {
    /// The longest shortest path: the last level that added a state.
    pub fn diameter(&self) -> usize {
        self.levels.len().saturating_sub(1)
    }
}

/// The hasher of the fingerprint set: the keys are hashes already.
#[derive(Default)]
struct PassThrough(u64);

impl std::hash::Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Makes the state at the end of a path by replaying it from the start
/// state, keeping the states along the last path made: consecutive paths
/// of a breadth-first frontier share their prefixes, so each is mostly one
/// step from the last. Replaying runs the same steps, canonical forms
/// included, so it makes the very state that was found.
struct Rebuilder<E, L> {
    start: State<E, L>,
    /// The nodes of the last path made and the state after each.
    chain: Vec<(Path, State<E, L>)>,
}

impl<E: Reference, L: Explorable> Rebuilder<E, L> {
    fn new(start: State<E, L>) -> Self {
        Rebuilder {
            start,
            chain: Vec::new(),
        }
    }

    fn state(&mut self, explorer: &Explorer<E, L>, path: &Path) -> &State<E, L> {
        let nodes = path.prefixes();
        let kept = (self.chain.iter().zip(&nodes))
            .take_while(|((made, _), node)| made.same_node(node))
            .count();
        self.chain.truncate(kept);
        for node in &nodes[kept..] {
            let before = self.chain.last().map_or(&self.start, |(_, s)| s);
            let op = node.last_op().expect("a node has an op");
            let mut state = explorer
                .step(before, op, false)
                .expect("a replayed op was enabled when it was found");
            state.trace = node.clone();
            self.chain.push((node.clone(), state));
        }
        self.chain.last().map_or(&self.start, |(_, s)| s)
    }
}

/// Explore from `eager` and `lazy` breadth first to the fixpoint (or the
/// first level with a divergence), stopping before the memory in use
/// reaches `max_memory`; `progress` is called about ten times a second.
pub fn fixpoint<E: Reference, L: Explorable>(
    eager: E,
    lazy: L,
    config: &ExploreConfig,
    max_memory: Option<u64>,
    progress: &mut dyn FnMut(FixpointProgress),
) -> FixpointReport {
    let config = ExploreConfig {
        canonical: true,
        ..config.clone()
    };
    let explorer = Explorer::new(eager, lazy, &config);
    let start = Instant::now();
    let mut seen: HashSet<u64, BuildHasherDefault<PassThrough>> = HashSet::default();
    let first = explorer.start_state();
    seen.insert(first.identity);
    // The frontier holds paths, not states: a state is made again by
    // replaying its path ([`Rebuilder`]), which costs about one step per
    // state in breadth-first order and keeps the frontier at a path node
    // (some tens of bytes) per state instead of two environments.
    let mut rebuild = Rebuilder::new(first);
    let mut frontier: Vec<Path> = vec![Path::default()];
    let mut levels = vec![1usize];
    let mut generated = 0usize;
    let mut expanded = 0usize;
    let mut stopped = None;
    let mut interrupted = None;
    let mut peak_memory = crate::memory::resident_bytes();
    let mut last_report = Instant::now();
    let mut last_memory = peak_memory.unwrap_or(0);
    'levels: while !frontier.is_empty() {
        let level = levels.len() - 1;
        if config.max_levels.is_some_and(|max| level >= max) {
            break;
        }
        let mut next = Vec::new();
        let mut new_states = 0usize;
        let expanding = frontier.len();
        for path in frontier.drain(..) {
            let state = rebuild.state(&explorer, &path);
            if state.diverged.is_some() || state.ended {
                continue;
            }
            for op in explorer.candidates(state) {
                let Some(successor) = explorer.step(state, &op, true) else {
                    continue;
                };
                generated += 1;
                if seen.insert(successor.identity) {
                    new_states += 1;
                    if successor.diverged.is_none() && !successor.ended {
                        next.push(successor.trace);
                    }
                }
            }
            expanded += 1;
            if expanded.is_multiple_of(64) && last_report.elapsed() >= Duration::from_millis(100) {
                last_report = Instant::now();
                let memory = crate::memory::resident_bytes().unwrap_or(
                    (seen.len() as u64).saturating_mul(ESTIMATED_BYTES_PER_STATE)
                        + (next.len() + expanding) as u64 * 128,
                );
                peak_memory = peak_memory.max(Some(memory));
                let growth = memory.saturating_sub(last_memory);
                last_memory = memory;
                if let Some(limit) = max_memory {
                    let reserve = MEMORY_RESERVE.saturating_add(growth.saturating_mul(4));
                    if memory.saturating_add(reserve) >= limit {
                        stopped = Some(MemoryStop {
                            memory,
                            reserve,
                            limit,
                        });
                        break 'levels;
                    }
                }
                if let Some(signal) = crate::interrupt::requested() {
                    interrupted = Some(signal);
                    break 'levels;
                }
                progress(FixpointProgress {
                    level,
                    distinct: seen.len(),
                    frontier: expanding,
                    memory,
                });
            }
        }
        if new_states > 0 {
            levels.push(new_states);
        }
        let memory = crate::memory::resident_bytes().unwrap_or(0);
        peak_memory = peak_memory.max(Some(memory));
        progress(FixpointProgress {
            level: level + 1,
            distinct: seen.len(),
            frontier: next.len(),
            memory,
        });
        // The first level with a divergence holds the shortest ones.
        let found = (explorer.shortest.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        if found {
            break;
        }
        frontier = next;
    }
    let fixpoint = frontier.is_empty() && stopped.is_none() && interrupted.is_none();
    let counterexample = (explorer.shortest.lock())
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let examples = (explorer.examples.lock())
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let situations = SOMETIMES
        .iter()
        .zip(examples)
        .map(|(name, example)| SituationReached {
            name,
            discovered: example.is_some(),
            example: example.map(|p| p.ops()),
        })
        .collect();
    peak_memory = peak_memory.max(crate::memory::resident_bytes());
    FixpointReport {
        alphabet_len: explorer.alphabet().len(),
        config,
        distinct: seen.len(),
        generated,
        fixpoint: fixpoint && counterexample.is_none(),
        levels,
        elapsed: start.elapsed(),
        counterexample,
        situations,
        stopped,
        interrupted,
        peak_memory,
    }
}

impl fmt::Display for FixpointReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        writeln!(
            f,
            "breadth first over canonical states: {} letters{}, nesting at most {} deep, {} (after `{}`)",
            self.alphabet_len,
            if c.deep {
                " (--deep)"
            } else if c.frames {
                " (--frames)"
            } else {
                ""
            },
            c.max_nesting,
            c.bounds,
            crate::explore::init_ops_for(c.bounds.hooks)
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        )?;
        writeln!(
            f,
            "{} distinct states, {} successors generated, diameter {} (the longest shortest path, in ops), in {:.2} s",
            self.distinct,
            self.generated,
            self.diameter(),
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "new states per level: {}",
            self.levels
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        )?;
        if let Some(bytes) = self.peak_memory {
            writeln!(
                f,
                "peak memory in use: {} resident",
                crate::memory::human(bytes)
            )?;
        }
        if self.fixpoint {
            writeln!(
                f,
                "fixpoint reached: the last level added no state, so every state reachable within these bounds was explored"
            )?;
        } else if self.counterexample.is_some() {
            writeln!(
                f,
                "stopped at the first level with a divergence (not a fixpoint)"
            )?;
        } else if let Some(max) = (self.config.max_levels)
            .filter(|_| self.stopped.is_none() && self.interrupted.is_none())
        {
            writeln!(
                f,
                "stopped after {max} levels (the level bound): NOT a fixpoint"
            )?;
        }
        if let Some(stop) = &self.stopped {
            writeln!(
                f,
                "STOPPED at the memory limit: {} in use and {} kept in reserve reached the limit of {}; NOT a fixpoint: the levels past {} were not explored",
                crate::memory::human(stop.memory),
                crate::memory::human(stop.reserve),
                crate::memory::human(stop.limit),
                self.diameter()
            )?;
        }
        if let Some(signal) = self.interrupted {
            writeln!(
                f,
                "INTERRUPTED (signal {signal}); NOT a fixpoint: the figures are of the levels explored so far"
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "situation (sometimes property)         reached  shortest path (ops)"
        )?;
        crate::explore::write_situations(f, &self.situations)?;
        writeln!(f)?;
        match &self.counterexample {
            None if self.fixpoint => writeln!(
                f,
                "no divergence in any number of ops within these bounds: the lazy side answered every op as the eager side did"
            ),
            None => writeln!(f, "no divergence in the states explored"),
            Some(cx) => crate::explore::write_counterexample(f, cx),
        }
    }
}
