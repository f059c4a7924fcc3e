//! Every reachable state, not every sequence up to a depth: `scopecheck
//! explore --fixpoint` explores breadth first until a level adds no new
//! state (the frontier is empty), so "no divergence" holds for sequences of
//! any length within the bounds ([`ExploreConfig`]: nesting, queued ticks
//! and microtasks, JS entries, hooks, storages, the ids the letters name).
//!
//! The states are the depth-bounded explorer's ([`crate::explore`]) made
//! canonical: the cost account and op counters normalised, the scope serials
//! and the frame objects `enterWith` made renumbered
//! (`Environment::canonicalise_frame_serials`, issue 57, point 3), and the
//! async ids `newAsyncId()` drew renamed in order
//! ([`crate::canonical`]). Without the renaming every `next-tick` would make
//! a new state and no frontier would ever empty. A state is stored as a
//! fingerprint (64 bits of aHash, as stateright stores its states), all of
//! them in one sorted run ([`seen`]: 8 bytes a state), those new at the level
//! being expanded in a table sized once for them (`fresh.rs`, 11.4 bytes a
//! state while the level lasts); each state to expand
//! as its parent's index in the level before and the letter that led from
//! it (6 bytes), every level kept, and made again by replaying its letters
//! from the start (issue 57, point 1).
//!
//! Breadth first, the first level at which a divergence appears holds the
//! shortest counterexamples; the explorer keeps the first of them in
//! breadth-first order, with any number of threads (each step ranked by
//! its state's index and its letter, `Explorer::step_ranked`), and stops
//! at the end of that level; likewise the path to each situation. The diameter is the
//! last level that added a state: every reachable state is reached by a
//! path of at most that many ops.

mod fresh;
pub mod level;
pub mod seen;

use crate::explore::{
    Explorable, ExploreConfig, Explored, Explorer, MemoryStop, Reference, SituationReached,
    MEMORY_RESERVE, SOMETIMES,
};
use crate::lockstep::Counterexample;
use level::Level;
use seen::Seen;
use std::fmt;
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
    /// Of those, letters that only read checked in place
    /// ([`crate::explore::Letter::only_reads`]): each was the state it was
    /// read in, found so without normalising, renaming or hashing it.
    pub read_in_place: usize,
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
    /// Levels whose table of new fingerprints, sized from the levels
    /// before, filled and grew ([`expected_fresh`] predicted short).
    pub fresh_tables_grown: usize,
}

impl FixpointReport {
    /// The longest shortest path: the last level that added a state.
    pub fn diameter(&self) -> usize {
        self.levels.len().saturating_sub(1)
    }
}

/// The new fingerprints a level is expected to add, given those the
/// levels before added (`levels`, the start state first): the last
/// level's, grown as the last level grew on the one before. Growth falls
/// level by level, so this is mostly a little above what comes; where it
/// is short, the table grows.
fn expected_fresh(levels: &[usize]) -> usize {
    match levels {
        [.., before, last] => {
            let growth = *last as f64 / (*before).max(1) as f64;
            (*last as f64 * growth.max(1.0)) as usize
        }
        _ => 64,
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
    // Every earlier level's fingerprints (8 bytes a state), and the new
    // ones of the level being expanded, merged in when it ends.
    let mut seen = Seen::default();
    let first = explorer.start_state();
    seen.merge(&[first.identity]);
    // The levels hold (parent, letter) pairs, not states: a state is made
    // again by replaying its letters ([`Rebuilder`]), which costs about
    // one step per state in breadth-first order and keeps 6 bytes a state
    // instead of two environments.
    let start_state = first;
    let mut paths: Vec<Level> = vec![Level::default()];
    paths[0].push(0, 0);
    let mut levels = vec![1usize];
    let mut generated = 0usize;
    let mut read_in_place = 0usize;
    let mut fresh_tables_grown = 0usize;
    let mut stopped = None;
    let mut interrupted = None;
    let mut peak_memory = crate::memory::resident_bytes();
    let mut last_memory = peak_memory.unwrap_or(0);
    'levels: while paths.last().is_some_and(|l| l.len() > 0) {
        let level = levels.len() - 1;
        if config.max_levels.is_some_and(|max| level >= max) {
            break;
        }
        let expanding = paths[level].len();
        let mut monitor = |held: u64, distinct: usize| {
            let memory = crate::memory::resident_bytes().unwrap_or(held);
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
                    return false;
                }
            }
            if let Some(signal) = crate::interrupt::requested() {
                interrupted = Some(signal);
                return false;
            }
            progress(FixpointProgress {
                level,
                distinct,
                frontier: expanding,
                memory,
            });
            true
        };
        let Some(expansion) = level::expand(
            &explorer,
            &start_state,
            &paths,
            &seen,
            expected_fresh(&levels),
            config.threads.max(1),
            &mut monitor,
        ) else {
            break 'levels;
        };
        generated += expansion.generated;
        read_in_place += expansion.read_in_place;
        fresh_tables_grown += usize::from(expansion.fresh_grown > 0);
        let new_states = expansion.fresh.len();
        if new_states > 0 {
            levels.push(new_states);
        }
        seen.merge(&expansion.fresh);
        drop(expansion.fresh);
        paths.push(expansion.next);
        let memory = crate::memory::resident_bytes().unwrap_or(0);
        peak_memory = peak_memory.max(Some(memory));
        progress(FixpointProgress {
            level: level + 1,
            distinct: seen.len(),
            frontier: paths.last().map_or(0, Level::len),
            memory,
        });
        // The first level with a divergence holds the shortest ones.
        let found = (explorer.shortest.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        if found {
            break;
        }
    }
    let frontier_empty = paths.last().is_none_or(|l| l.len() == 0);
    let fixpoint = frontier_empty && stopped.is_none() && interrupted.is_none();
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
        read_in_place,
        fixpoint: fixpoint && counterexample.is_none(),
        levels,
        elapsed: start.elapsed(),
        counterexample,
        situations,
        stopped,
        interrupted,
        peak_memory,
        fresh_tables_grown,
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
            "{} distinct states, {} successors generated ({} of them reads checked in place), diameter {} (the longest shortest path, in ops), in {:.2} s",
            self.distinct,
            self.generated,
            self.read_in_place,
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
            write!(
                f,
                "peak memory in use: {} resident",
                crate::memory::human(bytes)
            )?;
            match self.fresh_tables_grown {
                0 => writeln!(f)?,
                n => writeln!(
                    f,
                    " ({n} levels outgrew the table of new fingerprints sized for them)"
                )?,
            }
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

/// Fingerprint-like numbers for the tests of [`seen`] and [`fresh`]: a
/// small deterministic generator (SplitMix64).
#[cfg(test)]
fn numbers(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::{rank, Read, State};
    use lazy::Lazy;
    use model::vocab::Op;
    use model::Eager;

    /// Breadth first the plain way, every state of a level kept whole,
    /// every fingerprint in a hash set and every letter taken as a step
    /// (none checked in place): the distinct states, the new states per
    /// level and the successors made, for at most `config.max_levels`
    /// levels.
    fn plain_breadth_first(config: &ExploreConfig) -> (usize, Vec<usize>, usize) {
        let config = ExploreConfig {
            canonical: true,
            ..config.clone()
        };
        let explorer = Explorer::new(Eager::new(), Lazy::new(), &config);
        let start = explorer.start_state();
        let mut seen = std::collections::HashSet::new();
        seen.insert(start.identity);
        let mut frontier = vec![start];
        let mut levels = vec![1];
        let mut generated = 0;
        while !frontier.is_empty() && config.max_levels.is_none_or(|m| levels.len() - 1 < m) {
            let mut next = Vec::new();
            for state in &frontier {
                if state.diverged.is_some() || state.ended {
                    continue;
                }
                for op in explorer.candidates(state) {
                    if let Some(successor) = explorer.step(state, &op, true) {
                        generated += 1;
                        if seen.insert(successor.identity) {
                            next.push(successor);
                        }
                    }
                }
            }
            if !next.is_empty() {
                levels.push(next.len());
            }
            frontier = next;
        }
        (seen.len(), levels, generated)
    }

    /// The fixpoint explorer, which keeps 8 bytes of fingerprint and 6 of
    /// path a state, makes each state again by replaying its letters and
    /// checks the letters that only read in place, counts the states,
    /// levels and successors a breadth-first search that keeps every state
    /// whole and takes every letter as a step counts: the deep letters to
    /// their fixpoint, the default letters and `--frames` for their first
    /// levels. The reads were checked in place in the last two.
    #[test]
    fn the_fixpoint_counts_what_a_plain_search_counts() {
        let [deep, _] = crate::mutants::fixpoint_configs();
        let deep = ExploreConfig {
            max_nesting: 2,
            ..deep
        };
        let default = ExploreConfig {
            max_levels: Some(5),
            ..ExploreConfig::default()
        };
        let frames = ExploreConfig {
            frames: true,
            max_levels: Some(4),
            ..ExploreConfig::default()
        };
        for config in [deep, default, frames] {
            let report = fixpoint(Eager::new(), Lazy::new(), &config, None, &mut |_| {});
            let (distinct, levels, generated) = plain_breadth_first(&config);
            assert_eq!(
                (report.distinct, &report.levels, report.generated),
                (distinct, &levels, generated),
                "{report}"
            );
            assert!(distinct > 100, "{report}");
            assert_eq!(report.read_in_place > 0, !config.deep, "{report}");
        }
    }

    /// A letter that only reads, checked in place and found to leave the
    /// state as it was, is the state it was read in: taken as a step, it
    /// makes a state with the same fingerprint. Over the first five levels
    /// of the default letters and of `--frames`, where such reads are many.
    #[test]
    fn a_read_checked_in_place_is_the_state_it_was_read_in() {
        for frames in [false, true] {
            let config = ExploreConfig {
                canonical: true,
                frames,
                ..ExploreConfig::default()
            };
            let explorer = Explorer::new(Eager::new(), Lazy::new(), &config);
            let readers: Vec<usize> = (0..explorer.alphabet().len())
                .filter(|&l| explorer.reads_in_place(l))
                .collect();
            assert!(!readers.is_empty());
            let mut frontier = vec![explorer.start_state()];
            let mut seen = std::collections::HashSet::new();
            let mut same = 0;
            for _ in 0..5 {
                let mut next = Vec::new();
                for state in &frontier {
                    for (letter, op) in explorer.candidate_letters(state) {
                        if readers.contains(&letter) {
                            let stepped = explorer.step(state, &op, true);
                            let read = explorer.read(state, &op, crate::explore::UNRANKED);
                            assert_eq!(stepped.is_some(), read.is_some(), "{op}");
                            let (Some(stepped), Some(read)) = (stepped, read) else {
                                continue;
                            };
                            match read {
                                Read::Same => {
                                    same += 1;
                                    assert_eq!(stepped.identity, state.identity, "{op}");
                                }
                                Read::Changed(changed) => {
                                    panic!("{op} changed a state: {:?}", changed.trace.ops())
                                }
                            }
                        } else if let Some(s) = explorer.step(state, &op, true) {
                            if seen.insert(s.identity) && s.diverged.is_none() && !s.ended {
                                next.push(s);
                            }
                        }
                    }
                }
                frontier = next;
            }
            assert!(same > 1000, "{same}");
        }
    }

    /// The result does not depend on the number of threads: with one and
    /// with three, the same states, levels, successors, verdict and
    /// situations reached, on levels of many chunks; and the planted
    /// mutant's counterexample is as long.
    /// A step from a state of a level: the state's index, the letter, its op.
    type Step = (usize, usize, Op);

    /// The steps from the states of the level `depth` ops from the start,
    /// in the order one thread takes them, as (state index, letter, op):
    /// the levels before made by replay (nothing recorded), each state
    /// kept at its first path in breadth-first order, as the fixpoint
    /// explorer keeps it.
    fn steps_of_level<E: Reference, L: Explorable>(
        explorer: &Explorer<E, L>,
        depth: usize,
    ) -> (Vec<State<E, L>>, Vec<Step>) {
        let mut seen = std::collections::HashSet::new();
        let start = explorer.start_state();
        seen.insert(start.identity);
        let mut frontier = vec![start];
        for _ in 0..depth {
            let mut next = Vec::new();
            for state in &frontier {
                for (_, op) in explorer.candidate_letters(state) {
                    if !state.eager.enabled(&op) {
                        continue;
                    }
                    let mut s = explorer.step(state, &op, false).expect("replayed");
                    s.trace = state.trace.then(op);
                    if seen.insert(s.identity) && s.diverged.is_none() && !s.ended {
                        next.push(s);
                    }
                }
            }
            frontier = next;
        }
        let steps = (frontier.iter().enumerate())
            .flat_map(|(i, state)| {
                (explorer.candidate_letters(state).into_iter()).map(move |(l, op)| (i, l, op))
            })
            .collect();
        (frontier, steps)
    }

    /// Of equally short counterexamples the one of the lowest rank is kept,
    /// in whatever order the steps come (as threads may take them): the
    /// last level's steps taken in reverse keep the counterexample one
    /// thread keeps in order. Taken in reverse unranked, they keep another:
    /// there are several, and without the rank the order would decide.
    /// A mutant of the catalogue under the default letters at nesting 1.
    #[test]
    fn equally_short_counterexamples_keep_the_first_in_breadth_first_order() {
        let config = ExploreConfig {
            canonical: true,
            max_nesting: 1,
            max_levels: Some(8),
            ..ExploreConfig::default()
        };
        // Killed in 5 explored ops, among 12 846 states.
        let mutant = lazy::mutant::Mutant::OutermostCheckSkippedWhenLazy;
        let lazy = || lazy::mutant::environment(mutant);
        let report = fixpoint(Eager::new(), lazy(), &config, None, &mut |_| {});
        let cx = report.counterexample.expect("the mutant is killed");
        let depth = cx.found_by.explored_ops - 1;
        let kept = |ranked: bool| {
            let explorer = Explorer::new(Eager::new(), lazy(), &config);
            let (frontier, steps) = steps_of_level(&explorer, depth);
            let letters = explorer.alphabet().len();
            for (i, letter, op) in steps.into_iter().rev() {
                if ranked {
                    explorer.step_ranked(&frontier[i], &op, rank(i, letter, letters));
                } else {
                    explorer.step(&frontier[i], &op, true);
                }
            }
            let shortest = explorer.shortest.lock().unwrap().clone();
            shortest.expect("a divergence at that level").ops
        };
        assert_eq!(kept(true), cx.ops);
        assert_ne!(kept(false), cx.ops);
    }

    /// The distinct states, the levels, the successors, the verdict, the
    /// situations reached and the path kept to each, and a mutant's
    /// counterexample (its ops, not only its length) are the same with one
    /// thread and with three.
    #[test]
    fn the_threads_change_nothing_but_the_time() {
        let config = |threads| ExploreConfig {
            max_levels: Some(6),
            threads,
            ..ExploreConfig::default()
        };
        let run = |threads| {
            fixpoint(
                Eager::new(),
                Lazy::new(),
                &config(threads),
                None,
                &mut |_| {},
            )
        };
        let (one, three) = (run(1), run(3));
        let key = |r: &FixpointReport| {
            let reached: Vec<_> = (r.situations.iter())
                .map(|s| (s.discovered, s.example.clone()))
                .collect();
            (
                r.distinct,
                r.levels.clone(),
                r.generated,
                r.fixpoint,
                reached,
            )
        };
        assert_eq!(key(&one), key(&three), "{one}\n{three}");
        assert!(
            one.levels
                .iter()
                .max()
                .is_some_and(|&l| l > 4 * level::CHUNK),
            "{one}"
        );
        let deep = |threads| ExploreConfig {
            threads,
            ..crate::mutants::fixpoint_configs()[0].clone()
        };
        let killed = |threads| {
            let lazy = lazy::mutant::environment(lazy::mutant::Mutant::FallbackByStackLength);
            let report = fixpoint(Eager::new(), lazy, &deep(threads), None, &mut |_| {});
            let cx = report.counterexample.expect("the mutant is killed");
            (
                cx.found_by.explored_ops,
                report.distinct,
                report.levels,
                cx.ops,
            )
        };
        let one = killed(1);
        assert_eq!(one, killed(3));
        assert_eq!(
            one.0, 16,
            "the --deep run kills it in 17 ops, create-hook included"
        );
    }
}
