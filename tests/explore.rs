//! Bounded exhaustive exploration: no divergence between the eager model and
//! the lazy implementation at a small depth, and a deliberately broken lazy
//! side is caught with a shortest counterexample.

use lazy::async_hooks::Top;
use lazy::mutant::Mutant;
use lazy::Lazy;
use model::vocab::{trace, Cost, Observation, Op, OpError, Runtime};
use model::Eager;
use scopecheck::canonical::{canonicalise_ids, visit_observation_ids, Renaming};
use scopecheck::coverage::{LazySide, SITUATIONS};
use scopecheck::explore::{
    alphabet, explore, explore_pair, init_ops, init_ops_for, nests, Bounds, Explorable,
    ExploreConfig, ExploreReport, Explorer, Letter, Reference, State, ALPHABET_MAX_ID, SOMETIMES,
};
use scopecheck::fixpoint::fixpoint;
use scopecheck::lockstep::Answer;
use stateright::Model;
use std::collections::HashSet;
use std::process::Command;

fn config(depth: usize) -> ExploreConfig {
    ExploreConfig {
        depth,
        threads: 1,
        max_nesting: 2,
        ..ExploreConfig::default()
    }
}

/// The lazy implementation with one planted bug: `executionAsyncId()`
/// answers one too many while a lazy scope other than the main script's is
/// the innermost entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct OffByOne(Lazy);

/// Where [`OffByOne`]'s bug applies: a lazy scope other than the main
/// script's is the innermost entry of `lazy`.
fn off_by_one_applies(lazy: &Lazy) -> bool {
    let ah = &lazy.async_hooks;
    lazy::async_hooks::top(ah) == Top::Lazy && ah.store.k_lazy_scopes >= 2
}

impl Runtime for OffByOne {
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        let corrupt = matches!(op, Op::ExecutionAsyncId) && off_by_one_applies(&self.0);
        let mut answer = self.0.apply(op);
        if let (true, Ok(observations)) = (corrupt, &mut answer) {
            for o in observations {
                if let Observation::ExecutionAsyncId(id) = o {
                    *id += 1;
                }
            }
        }
        answer
    }

    fn cost(&self) -> Cost {
        self.0.cost()
    }
}

impl Explorable for OffByOne {
    fn normalise(&mut self) {
        self.0.normalise();
    }

    fn lazy_view(&self) -> Option<&dyn LazySide> {
        Some(&self.0)
    }
}

fn quiet(_: scopecheck::explore::Progress) {}

/// The lazy implementation that panics on `clear-async-id-stack` while a
/// lazy scope other than the main script's is open.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PanicsOnClear(Lazy);

impl Runtime for PanicsOnClear {
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        if matches!(op, Op::ClearAsyncIdStack) && self.0.async_hooks.store.k_lazy_scopes >= 2 {
            panic!("planted panic");
        }
        self.0.apply(op)
    }

    fn cost(&self) -> Cost {
        self.0.cost()
    }
}

impl Explorable for PanicsOnClear {
    fn normalise(&mut self) {
        self.0.normalise();
    }
}

#[test]
fn no_divergence_up_to_depth_5_and_the_situations_are_reached() {
    let report: ExploreReport = explore_pair(&config(5), &mut quiet);
    if let Some(cx) = &report.counterexample {
        panic!(
            "the lazy implementation diverges:\n{}\n{}",
            cx.trace_text(),
            cx.divergence
        );
    }
    assert_eq!(report.checker_counterexample_len, None);
    assert_eq!(report.depth_reached, 5);
    assert!(report.unique > 1_000, "{report}");
    assert!(report.generated >= report.unique + report.leaves);
    assert!(report.nodes >= report.unique, "{report}");
    // Every sometimes property is reached within four ops (the main
    // script's scope is lazy, so most need one or two).
    for s in &report.situations {
        let example = s
            .example
            .as_ref()
            .unwrap_or_else(|| panic!("{} not reached:\n{report}", s.name));
        assert!(s.discovered, "{} met but not discovered", s.name);
        assert!(example.len() <= 4, "{}: {:?}", s.name, example);
    }
}

#[test]
fn a_planted_bug_is_found_with_a_shortest_counterexample() {
    let report = explore(Eager::new(), OffByOne(Lazy::new()), &config(4), &mut quiet);
    let cx = report
        .counterexample
        .as_ref()
        .unwrap_or_else(|| panic!("the planted bug was not found:\n{report}"));
    // The shortest: open a scope (lazy, above the main script's lazy scope),
    // then ask for the id.
    assert_eq!(cx.found_by.explored_ops, 2, "{}", cx.trace_text());
    assert_eq!(cx.ops.len(), init_ops().len() + 2);
    assert!(cx.ops[..init_ops().len()] == init_ops()[..]);
    let opened = &cx.ops[init_ops().len()];
    assert!(matches!(opened, Op::OpenScope { .. }), "{opened}");
    assert_eq!(cx.divergence.op, Op::ExecutionAsyncId);
    assert_eq!(cx.divergence.index, cx.ops.len() - 1);
    match (&cx.divergence.eager, &cx.divergence.lazy) {
        (Ok(e), Ok(l)) => match (e.as_slice(), l.as_slice()) {
            ([Observation::ExecutionAsyncId(e)], [Observation::ExecutionAsyncId(l)]) => {
                assert_eq!(*l, *e + 1)
            }
            other => panic!("unexpected answers {other:?}"),
        },
        other => panic!("unexpected answers {other:?}"),
    }
    // The checker discovered the `always` property too; its path may be
    // longer: stateright keeps the last failing state of the block of states
    // it was checking, not the first.
    let checker_len = report.checker_counterexample_len.expect("discovered");
    assert!((2..=4).contains(&checker_len), "{checker_len}");
    // The printed trace parses back to the same ops, and replaying it
    // diverges at its last op and nowhere before.
    let text = cx.trace_text();
    let parsed = trace::parse(&text).expect("the counterexample trace parses");
    assert_eq!(parsed.ops(), cx.ops);
    let (mut eager, mut broken) = (Eager::new(), OffByOne(Lazy::new()));
    for (i, op) in cx.ops.iter().enumerate() {
        let same = eager.apply(op) == broken.apply(op);
        assert_eq!(same, i + 1 < cx.ops.len(), "op {} `{op}`", i + 1);
    }
}

#[test]
fn a_panic_of_the_lazy_side_is_a_divergence() {
    let report = explore(
        Eager::new(),
        PanicsOnClear(Lazy::new()),
        &config(3),
        &mut quiet,
    );
    let cx = report.counterexample.expect("the planted panic was found");
    assert_eq!(cx.found_by.explored_ops, 2, "{}", cx.trace_text());
    assert_eq!(cx.divergence.op, Op::ClearAsyncIdStack);
    assert!(
        matches!(&cx.divergence.lazy, Err(OpError::Internal(why)) if why.contains("planted panic")),
        "{}",
        cx.divergence
    );
    // No situations without a lazy view.
    assert!(report.situations.iter().all(|s| s.example.is_none()));
}

#[test]
fn a_mistake_of_the_mutation_catalogue_is_found_in_three_ops() {
    // Popping a lazy scope restores the execution id but not the trigger id:
    // open a scope, close it, ask for the trigger id.
    let lazy = lazy::mutant::environment(Mutant::LazyPopKeepsTrigger);
    let report = explore(Eager::new(), lazy, &config(4), &mut quiet);
    let cx = report.counterexample.expect("the mutant was found");
    assert!(cx.found_by.explored_ops <= 3, "{}", cx.trace_text());
    // Exploring a little less deep finds nothing: the counterexample is a
    // shortest one.
    let lazy = lazy::mutant::environment(Mutant::LazyPopKeepsTrigger);
    let shallower = ExploreConfig {
        depth: cx.found_by.explored_ops - 1,
        ..config(0)
    };
    let report = explore(Eager::new(), lazy, &shallower, &mut quiet);
    assert!(report.counterexample.is_none(), "{report}");
}

#[test]
fn the_planted_bug_is_out_of_reach_below_two_ops() {
    let report = explore(Eager::new(), OffByOne(Lazy::new()), &config(1), &mut quiet);
    assert!(report.counterexample.is_none(), "{report}");
    assert_eq!(report.depth_reached, 1);
}

#[test]
fn sometimes_properties_name_coverage_situations() {
    for name in SOMETIMES {
        assert!(
            SITUATIONS.iter().any(|(n, _)| *n == name),
            "{name} is not a situation of src/coverage/situations.rs"
        );
    }
}

#[test]
fn the_alphabet_covers_the_required_op_kinds() {
    let letters = alphabet();
    let ops: Vec<Op> = letters.iter().map(|l| l.op(1)).collect();
    for kind in [
        "callback-scope",
        "make-callback",
        "close",
        "enable-hook",
        "disable-hook",
        "emit-before",
        "emit-after",
        "run-in-async-scope",
        "end-run-in-async-scope",
        "execution-async-resource",
        "execution-async-id",
        "next-tick",
        "tick-callback",
        "uncaught-exception",
        "clear-async-id-stack",
        "reset-global",
        "stop",
    ] {
        assert!(
            ops.iter().any(|o| o.kind().name() == kind),
            "{kind} missing"
        );
    }
    assert!(ops.contains(&Op::CloseScope { threw: true }));
    assert!(letters.contains(&Letter::EmitAfterRight));
    assert!(letters.contains(&Letter::EmitAfterWrong));
    for current in [-1, 0, 1, 2, 3] {
        assert_eq!(
            Letter::EmitAfterRight.op(current),
            Op::EmitAfter { async_id: current }
        );
        assert_ne!(
            Letter::EmitAfterWrong.op(current),
            Op::EmitAfter { async_id: current }
        );
    }
    assert!(ops.iter().any(|o| matches!(
        o,
        Op::EmitBefore {
            resource: Some(_),
            ..
        }
    )));
    assert!(ops
        .iter()
        .any(|o| matches!(o, Op::EmitBefore { resource: None, .. })));
    assert!(nests(&ops[0]) && !nests(&Op::ExecutionAsyncId));
}

/// Normalising after every op (what the explorer does) never changes an
/// answer: the fields it resets are never read.
#[test]
fn normalising_never_changes_an_answer() {
    fn same_answers<R: Explorable + Default>(ops: &[Op]) {
        let (mut plain, mut normalised) = (R::default(), R::default());
        for op in ops {
            let answer = plain.apply(op);
            assert_eq!(
                normalised.apply(op),
                answer,
                "at `{op}` of\n{}",
                trace::print(ops)
            );
            normalised.normalise();
        }
    }
    for seed in 0..200 {
        let ops = scopecheck::check::sample(seed, 60);
        same_answers::<Eager>(&ops);
        same_answers::<Lazy>(&ops);
    }
}

fn scopecheck(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("run scopecheck")
}

#[test]
fn cli_prints_the_figures() {
    let out = scopecheck(&["explore", "--depth", "2", "--quiet"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("states generated"), "{stdout}");
    assert!(stdout.contains("depth reached 2"), "{stdout}");
    assert!(stdout.contains("no divergence"), "{stdout}");
}

#[test]
fn cli_rejects_bad_arguments_without_panicking() {
    for args in [
        &["explore", "--depth", "eight"][..],
        &["explore", "--depth", "-1"],
        &["explore", "--depth", "65"],
        &["explore", "--threads", "0"],
        &["explore", "--max-nesting", "x"],
        &["explore", "--mutant", "no-such-mistake"],
    ] {
        let out = scopecheck(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// What a plain breadth-first search over the explorer's transitions finds,
/// deduplicating states by full equality (their `Debug` text), without
/// fingerprints or depths: the reference the depth-first checker must match.
struct BreadthFirst {
    /// Distinct states stored: reached before the bound, or at the bound
    /// having diverged or met a situation (what breadth first stored).
    stored: usize,
    /// The first diverging path in breadth-first order, alphabet order
    /// within a level: the first of the shortest in alphabet order.
    divergence: Option<Vec<Op>>,
    /// The same, per `SOMETIMES` situation: the first path whose last op
    /// met it.
    examples: Vec<Option<Vec<Op>>>,
}

fn product_text<E: Reference, L: Explorable>(s: &State<E, L>) -> String {
    format!(
        "{:?}",
        (&s.eager, &s.lazy, &s.diverged, s.ended, s.situations)
    )
}

fn breadth_first<E: Reference, L: Explorable>(eager: E, lazy: L, depth: usize) -> BreadthFirst {
    let model = Explorer::new(eager, lazy, &config(depth));
    let start = model.init_states().remove(0);
    let mut seen = HashSet::from([product_text(&start)]);
    let mut found = BreadthFirst {
        stored: 1,
        divergence: None,
        examples: vec![None; SOMETIMES.len()],
    };
    let mut level = vec![start];
    for d in 1..=depth {
        let mut next = Vec::new();
        for state in &level {
            if found.divergence.is_some() {
                break;
            }
            let mut ops = Vec::new();
            model.actions(state, &mut ops);
            // The explorer lists the letters in reverse (for its stack).
            ops.reverse();
            for op in ops {
                let Some(n) = model.next_state(state, op) else {
                    continue;
                };
                if n.diverged.is_some() && found.divergence.is_none() {
                    found.divergence = Some(n.trace.ops());
                }
                for (i, example) in found.examples.iter_mut().enumerate() {
                    if n.situations & (1 << i) != 0 && example.is_none() {
                        *example = Some(n.trace.ops());
                    }
                }
                let boring_leaf = d == depth && n.diverged.is_none() && n.situations == 0;
                if !boring_leaf && seen.insert(product_text(&n)) {
                    found.stored += 1;
                    next.push(n);
                }
            }
        }
        level = next;
    }
    found
}

/// The depth-first checker visits the same states as a plain breadth-first
/// search (counted by full equality), and reports the same shortest path to
/// every situation, at each depth up to 5.
#[test]
fn depth_first_finds_the_states_and_paths_breadth_first_finds() {
    for depth in 1..=5 {
        let reference = breadth_first(Eager::new(), Lazy::new(), depth);
        let report = explore_pair(&config(depth), &mut quiet);
        assert_eq!(report.unique, reference.stored, "depth {depth}:\n{report}");
        assert!(report.nodes >= report.unique, "depth {depth}");
        assert_eq!(reference.divergence, None);
        assert!(report.counterexample.is_none(), "{report}");
        for (i, s) in report.situations.iter().enumerate() {
            assert_eq!(
                s.example, reference.examples[i],
                "depth {depth}, situation {}",
                s.name
            );
            assert_eq!(s.discovered, s.example.is_some(), "{}", s.name);
        }
    }
}

/// A mutant's counterexample is the one breadth first finds first: the
/// shortest, and the first of the shortest in alphabet order.
#[test]
fn a_mutants_counterexample_is_the_first_shortest_one() {
    for (mutant, depth) in [
        (Mutant::LazyPopKeepsTrigger, 4),
        (Mutant::ClearForgetsCount, 4),
        (Mutant::KeepsStaleNativeResources, 5),
        (Mutant::OutermostCheckSkippedWhenLazy, 5),
        (Mutant::TrampolineIndexByStackLength, 5),
    ] {
        let reference = breadth_first(Eager::new(), lazy::mutant::environment(mutant), depth);
        let expected = reference
            .divergence
            .unwrap_or_else(|| panic!("{mutant:?} not killed by breadth first at depth {depth}"));
        let report = explore(
            Eager::new(),
            lazy::mutant::environment(mutant),
            &config(depth),
            &mut quiet,
        );
        let cx = report.counterexample.expect("killed");
        assert_eq!(cx.ops[init_ops().len()..], expected[..], "{mutant:?}");
        assert_eq!(cx.found_by.explored_ops, expected.len());
        // Two threads: still a shortest one (maybe another of that length).
        let two = ExploreConfig {
            threads: 2,
            ..config(depth)
        };
        let report = explore(
            Eager::new(),
            lazy::mutant::environment(mutant),
            &two,
            &mut quiet,
        );
        let cx = report.counterexample.expect("killed with two threads");
        assert_eq!(
            cx.found_by.explored_ops,
            expected.len(),
            "{mutant:?}, two threads"
        );
    }
}

/// Two threads store the same distinct states as one.
#[test]
fn two_threads_store_the_same_states() {
    let one = explore_pair(&config(5), &mut quiet);
    let two = explore_pair(
        &ExploreConfig {
            threads: 2,
            ..config(5)
        },
        &mut quiet,
    );
    assert_eq!(one.unique, two.unique, "{one}\n{two}");
    assert!(two.counterexample.is_none(), "{two}");
}

/// A node is a state and its depth: the same state reached at two depths is
/// two nodes (so that reaching it deeper first never hides the shallower
/// one), with one product fingerprint.
#[test]
fn a_state_reached_at_two_depths_is_two_nodes_of_one_state() {
    let model = Explorer::new(Eager::new(), Lazy::new(), &config(3));
    let start = model.init_states().remove(0);
    // `execution-async-id` changes nothing in the state.
    let once = model
        .next_state(&start, Op::ExecutionAsyncId)
        .expect("enabled");
    let twice = model
        .next_state(&once, Op::ExecutionAsyncId)
        .expect("enabled");
    assert_eq!(product_text(&once), product_text(&twice));
    assert_eq!(once.identity, twice.identity);
    assert_eq!(once.identity, once.product_fingerprint());
    assert_eq!((once.depth(), twice.depth()), (1, 2));
    assert_ne!(once, twice);
    let mut nodes = HashSet::new();
    assert!(nodes.insert(once.clone()));
    assert!(nodes.insert(twice.clone()));
    assert!(!nodes.insert(once));
}

/// With `--frames` the alphabet has the `AsyncLocalStorage` letters, and the
/// explorer finds the mutant that skips the frame's restore on a lazy close
/// (decision 19) in four ops; the plain alphabet cannot reach it.
#[test]
fn the_frames_alphabet_finds_the_frame_restore_mutant() {
    let frames = ExploreConfig {
        frames: true,
        ..config(4)
    };
    let mutant = Mutant::LazyCloseSkipsFrameRestore;
    let report = explore(
        Eager::new(),
        lazy::mutant::environment(mutant),
        &frames,
        &mut quiet,
    );
    let cx = report
        .counterexample
        .expect("found with the frames alphabet");
    assert_eq!(
        cx.ops[init_ops().len()..]
            .iter()
            .map(Op::to_string)
            .collect::<Vec<_>>(),
        [
            "callback-scope 2 1 R1",
            "als-enter-with A1 2",
            "close",
            "als-get-store A1"
        ],
        "{}",
        cx.trace_text()
    );
    let plain = explore(
        Eager::new(),
        lazy::mutant::environment(mutant),
        &config(4),
        &mut quiet,
    );
    assert!(plain.counterexample.is_none(), "{plain}");
    // The correct lazy side stays equal over the larger alphabet.
    let pair = explore_pair(&frames, &mut quiet);
    assert!(pair.counterexample.is_none(), "{pair}");
}

/// The letters (indices into `letters`) the reference side `e` enables
/// now, those that nest deeper only below `max_nesting`: what the random
/// walks below draw from.
fn enabled_letters(e: &Eager, letters: &[Letter], max_nesting: usize) -> Vec<usize> {
    let current = Reference::execution_async_id(e);
    (0..letters.len())
        .filter(|&i| Reference::enabled(e, &letters[i].op(current)))
        .filter(|&i| e.nesting() < max_nesting || !nests(&letters[i].op(current)))
        .collect()
}

/// A random walk over the explorer's letters (with `--frames`, two hooks and
/// two storages, and the low-id letter), each state made canonical on a copy
/// by `canon`: the first place where the canonical state answers an op
/// otherwise than the original (ids renamed), or canonicalises to another
/// successor, or where canonicalising twice is not canonicalising once.
fn first_mismatch(canon: fn(&mut Eager, &mut Lazy) -> Option<Renaming>) -> Option<String> {
    use rand::{Rng, SeedableRng};
    let config = ExploreConfig {
        frames: true,
        bounds: Bounds {
            hooks: 2,
            storages: 2,
            min_id: -2,
            ..Bounds::default()
        },
        ..config(0)
    };
    // Beyond the explorer's letters: `als-disable`, which reaches every
    // holder of the current frame object, and an `AsyncResource` capturing
    // the frame that `run-in-async-scope R1` enters, so that which holders
    // share an object (the frame serials) is observable.
    let mut letters = scopecheck::explore::letters(&config);
    for extra in ["als-disable A1", "als-disable A2", "async-resource R1"] {
        letters.push(Letter::Op(extra.parse().expect("an op")));
    }
    let answers_renamed = |answer: &Answer, r: &Option<Renaming>| -> Answer {
        let mut answer = answer.clone();
        if let (Ok(obs), Some(r)) = (&mut answer, r) {
            for o in obs.iter_mut() {
                visit_observation_ids(o, &mut |id| *id = r.apply(*id));
            }
        }
        answer
    };
    let canonical = |e: &Eager, l: &Lazy| {
        let (mut e, mut l) = (e.clone(), l.clone());
        e.normalise();
        l.normalise();
        canon(&mut e, &mut l);
        (e, l)
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(27);
    for walk in 0..300 {
        let (mut e, mut l) = (Eager::new(), Lazy::new());
        for op in init_ops_for(2) {
            let _ = e.apply(&op);
            let _ = l.apply(&op);
        }
        let mut ops = Vec::new();
        for _ in 0..40 {
            let (mut ce, mut cl) = (e.clone(), l.clone());
            ce.normalise();
            cl.normalise();
            let r = canon(&mut ce, &mut cl);
            let again = canonical(&ce, &cl);
            if again != (ce.clone(), cl.clone()) {
                return Some(format!(
                    "walk {walk}: canonical twice differs after {ops:?}"
                ));
            }
            let enabled = enabled_letters(&e, &letters, 3);
            if enabled.is_empty() || e.exited {
                break;
            }
            let letter = &letters[enabled[rng.random_range(0..enabled.len())]];
            let op = letter.op(Reference::execution_async_id(&e));
            let cop = letter.op(Reference::execution_async_id(&ce));
            let (ea, la) = (e.apply(&op), l.apply(&op));
            let (cea, cla) = (ce.apply(&cop), cl.apply(&cop));
            ops.push(op.to_string());
            if answers_renamed(&ea, &r) != cea || answers_renamed(&la, &r) != cla {
                return Some(format!(
                    "walk {walk}: after {ops:?}: original {ea:?} / {la:?}, canonical {cea:?} / {cla:?}"
                ));
            }
            if canonical(&e, &l) != canonical(&ce, &cl) {
                return Some(format!("walk {walk}: the successors differ after {ops:?}"));
            }
        }
    }
    None
}

fn canonicalise(e: &mut Eager, l: &mut Lazy) -> Option<Renaming> {
    canonicalise_ids(e, l, ALPHABET_MAX_ID)
}

/// The fixpoint explorer's canonical states answer every op as the states
/// they stand for, ids renamed, and lead to the same canonical successors.
#[test]
fn canonicalising_never_changes_an_answer() {
    assert_eq!(first_mismatch(canonicalise), None);
    // And the walks do rename: some state holds ids above the letters'.
    let mut renamed = false;
    let (mut e, mut l) = (Eager::new(), Lazy::new());
    for op in ["next-tick", "next-tick", "tick-callback", "next-tick"] {
        let op: Op = op.parse().expect("an op");
        let _ = e.apply(&op);
        let _ = l.apply(&op);
        renamed |= canonicalise(&mut e.clone(), &mut l.clone()).is_some();
    }
    assert!(renamed);
}

/// The check above has teeth: a renaming that puts the counter one lower
/// (so that the next `newAsyncId()` repeats an id the state holds) is
/// caught.
#[test]
fn a_wrong_canonical_form_is_caught() {
    fn off_by_one(e: &mut Eager, l: &mut Lazy) -> Option<Renaming> {
        let r = canonicalise_ids(e, l, ALPHABET_MAX_ID)?;
        let counter = e.async_hooks.async_id_fields.k_async_id_counter - 1;
        e.async_hooks.async_id_fields.k_async_id_counter = counter;
        l.async_hooks.async_id_fields.k_async_id_counter = counter;
        Some(r)
    }
    assert!(first_mismatch(off_by_one).is_some());
}

/// Breadth first to the fixpoint on a small space: every level counted, the
/// frontier emptied, no divergence; and the planted bug is found with the
/// shortest counterexample the depth-bounded explorer finds.
#[test]
fn the_fixpoint_is_reached_and_a_planted_bug_found() {
    let small = ExploreConfig {
        deep: true,
        max_nesting: 2,
        bounds: Bounds {
            min_id: -2,
            max_js: Some(1),
            ..Bounds::default()
        },
        ..config(0)
    };
    let report = fixpoint(Eager::new(), Lazy::new(), &small, None, &mut |_| {});
    assert!(report.fixpoint, "{report}");
    assert!(report.counterexample.is_none(), "{report}");
    assert_eq!(report.levels.iter().sum::<usize>(), report.distinct);
    assert_eq!(report.diameter() + 1, report.levels.len());
    let report = fixpoint(
        Eager::new(),
        OffByOne(Lazy::new()),
        &config(0),
        None,
        &mut |_| {},
    );
    let depth = explore(Eager::new(), OffByOne(Lazy::new()), &config(4), &mut quiet);
    let (f, d) = (
        report.counterexample.unwrap(),
        depth.counterexample.unwrap(),
    );
    assert_eq!(f.ops, d.ops, "{}", f.trace_text());
    assert!(!report.fixpoint);
}

/// The fixpoint explorer with `--frames` kills the frame-restore mutant
/// with its four-op counterexample.
#[test]
fn the_fixpoint_kills_the_frame_restore_mutant() {
    let frames = ExploreConfig {
        frames: true,
        bounds: Bounds {
            max_ticks: Some(2),
            max_microtasks: Some(2),
            ..Bounds::default()
        },
        ..config(0)
    };
    let lazy = lazy::mutant::environment(Mutant::LazyCloseSkipsFrameRestore);
    let report = fixpoint(Eager::new(), lazy, &frames, None, &mut |_| {});
    let cx = report.counterexample.expect("killed");
    assert_eq!(cx.found_by.explored_ops, 4, "{}", cx.trace_text());
}

/// The two mutants the depth-bounded explorer never killed (they need more
/// than 16 stack entries) are killed by the `--deep` fixpoint run of the
/// mutants' explorer column, each with its shortest counterexample in that
/// configuration; and without a mutant the same run reaches its fixpoint
/// with no divergence.
#[test]
fn the_deep_fixpoint_kills_the_mutants_the_depth_explorer_missed() {
    let [deep, _] = scopecheck::mutants::fixpoint_configs();
    let clean = fixpoint(Eager::new(), Lazy::new(), &deep, None, &mut |_| {});
    assert!(clean.fixpoint, "{clean}");
    assert!(clean.counterexample.is_none(), "{clean}");
    for (mutant, explored) in [
        (Mutant::FallbackByStackLength, 16),
        (Mutant::GrowsByStackLength, 17),
    ] {
        let lazy = lazy::mutant::environment(mutant);
        let report = fixpoint(Eager::new(), lazy, &deep, None, &mut |_| {});
        assert!(!report.fixpoint, "{mutant:?}: {report}");
        let cx = report.counterexample.expect("killed");
        assert_eq!(cx.found_by.explored_ops, explored, "{}", cx.trace_text());
    }
}

/// Which letters only read (`docs/performance.md`, "Letters that only
/// read"): on a random walk over the 21 letters and the 12 of `--frames`, a
/// letter is a reader if, in every state where it was enabled, both sides
/// normalised after it equal both sides normalised before. Only
/// `execution-async-id` and (on Node 26) `als-get-store` are, each letter
/// was tried in many states, and these are the letters the fixpoint
/// explorer checks in place ([`Letter::only_reads`]).
#[test]
fn the_letters_that_only_read_leave_the_state_as_it_was() {
    use rand::{Rng, SeedableRng};
    let letters = scopecheck::explore::letters(&ExploreConfig {
        frames: true,
        ..ExploreConfig::default()
    });
    let mut tried = vec![0usize; letters.len()];
    let mut changed = vec![false; letters.len()];
    let mut rng = rand::rngs::StdRng::seed_from_u64(57);
    for _ in 0..200 {
        let (mut e, mut l) = (Eager::new(), Lazy::new());
        for op in init_ops() {
            let _ = e.apply(&op);
            let _ = l.apply(&op);
        }
        for _ in 0..30 {
            let current = Reference::execution_async_id(&e);
            let enabled = enabled_letters(&e, &letters, 2);
            if enabled.is_empty() || e.exited {
                break;
            }
            let (mut before_e, mut before_l) = (e.clone(), l.clone());
            before_e.normalise();
            before_l.normalise();
            for &i in &enabled {
                let op = letters[i].op(current);
                let (mut after_e, mut after_l) = (e.clone(), l.clone());
                let _ = after_e.apply(&op);
                let _ = after_l.apply(&op);
                after_e.normalise();
                after_l.normalise();
                tried[i] += 1;
                changed[i] |= (after_e, after_l) != (before_e.clone(), before_l.clone());
            }
            let i = enabled[rng.random_range(0..enabled.len())];
            let op = letters[i].op(current);
            let _ = e.apply(&op);
            let _ = l.apply(&op);
        }
    }
    let readers: Vec<String> = (0..letters.len())
        .filter(|&i| !changed[i])
        .map(|i| letters[i].to_string())
        .collect();
    assert_eq!(readers, ["execution-async-id", "als-get-store A1"]);
    let checked_in_place: Vec<String> = (letters.iter())
        .filter(|l| l.only_reads())
        .map(Letter::to_string)
        .collect();
    assert_eq!(readers, checked_in_place);
    assert!(tried.iter().all(|&n| n >= 20), "{tried:?}");
}

/// The lazy implementation with a read that is not one: the first
/// `executionAsyncId()` is remembered, and after it the bug of
/// [`OffByOne`] applies (one too many while a lazy scope other than the
/// main script's is innermost). Its state changes on a read, so the
/// fixpoint explorer's check of reads in place must take that read as a
/// step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct CountsReads {
    lazy: Lazy,
    reads: u8,
}

impl Runtime for CountsReads {
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        let bug_applies = off_by_one_applies(&self.lazy);
        let mut answer = self.lazy.apply(op);
        if matches!(op, Op::ExecutionAsyncId) {
            if let (1.., true, Ok(observations)) = (self.reads, bug_applies, &mut answer) {
                for o in observations {
                    if let Observation::ExecutionAsyncId(id) = o {
                        *id += 1;
                    }
                }
            }
            self.reads = self.reads.saturating_add(1).min(1);
        }
        answer
    }

    fn cost(&self) -> Cost {
        self.lazy.cost()
    }
}

impl Explorable for CountsReads {
    fn normalise(&mut self) {
        self.lazy.normalise();
    }
}

/// A read that changes the side under test is a step: the fixpoint
/// explorer, which checks `execution-async-id` in place, finds the
/// three-op counterexample of [`CountsReads`] (read, open a scope, read),
/// the one it finds taking every letter as a step (`--step-reads`), in as
/// many states. Were the read assumed to leave the state as it was, the
/// state after the first read would never be reached.
#[test]
fn a_read_that_changes_the_side_under_test_is_taken_as_a_step() {
    let run = |step_reads| {
        let config = ExploreConfig {
            step_reads,
            max_nesting: 1,
            max_levels: Some(6),
            ..config(0)
        };
        let lazy = CountsReads {
            lazy: Lazy::new(),
            reads: 0,
        };
        fixpoint(Eager::new(), lazy, &config, None, &mut |_| {})
    };
    let (in_place, stepped) = (run(false), run(true));
    let cx = in_place.counterexample.as_ref().expect("found");
    assert_eq!(cx.found_by.explored_ops, 3, "{}", cx.trace_text());
    assert_eq!(cx.divergence.op, Op::ExecutionAsyncId);
    let reads = (cx.ops.iter())
        .filter(|op| matches!(op, Op::ExecutionAsyncId))
        .count();
    assert_eq!(reads, 2, "{}", cx.trace_text());
    let other = stepped.counterexample.as_ref().expect("found");
    assert_eq!(cx.ops, other.ops);
    assert_eq!(
        (in_place.distinct, &in_place.levels, in_place.generated),
        (stepped.distinct, &stepped.levels, stepped.generated)
    );
    assert!(in_place.read_in_place > 0 && stepped.read_in_place == 0);
}

/// Random walks over the `--frames` letters (two hooks), after `header`:
/// the first place where the sides with `forget` applied after every op
/// answer otherwise than the sides as they are, and the states seen in
/// which the program's `uncaughtException` listener was set.
fn forgetting_the_listener(
    header: &[&str],
    forget: fn(&mut Eager, &mut Lazy),
) -> (Option<String>, usize) {
    use rand::{Rng, SeedableRng};
    let letters = scopecheck::explore::letters(&ExploreConfig {
        frames: true,
        bounds: Bounds {
            hooks: 2,
            ..Bounds::default()
        },
        ..config(0)
    });
    let mut rng = rand::rngs::StdRng::seed_from_u64(57);
    let mut listened = 0;
    for walk in 0..400 {
        let (mut e, mut l) = (Eager::new(), Lazy::new());
        let header = header.iter().map(|h| h.parse::<Op>().expect("an op"));
        for op in header.chain(init_ops_for(2)) {
            assert!(e.apply(&op).is_ok() && l.apply(&op).is_ok(), "{op}");
        }
        let (mut fe, mut fl) = (e.clone(), l.clone());
        let mut ops = Vec::new();
        for _ in 0..40 {
            let current = Reference::execution_async_id(&e);
            let enabled = enabled_letters(&e, &letters, 3);
            if enabled.is_empty() || e.exited {
                break;
            }
            let op = letters[enabled[rng.random_range(0..enabled.len())]].op(current);
            ops.push(op.to_string());
            let answers = (e.apply(&op), l.apply(&op));
            let forgotten = (fe.apply(&op), fl.apply(&op));
            if answers != forgotten {
                return (Some(format!("walk {walk}: after {ops:?}")), listened);
            }
            listened += usize::from(e.rejections.uncaught_listener);
            forget(&mut fe, &mut fl);
        }
    }
    (None, listened)
}

/// The fixpoint explorer's canonical states forget whether the program
/// has an `uncaughtException` listener where nothing reads it
/// (`canonical::forget_unread_listener`): over the `--frames` letters,
/// which reject promises, forgetting it so changes no answer though the
/// walks set it often, in the default mode and in `strict` mode (where it
/// is kept). Forgetting it in `strict` mode regardless does change one.
#[test]
fn the_uncaught_listener_is_forgotten_only_where_nothing_reads_it() {
    fn rule(e: &mut Eager, l: &mut Lazy) {
        scopecheck::canonical::forget_unread_listener(e);
        scopecheck::canonical::forget_unread_listener(l);
    }
    fn always(e: &mut Eager, l: &mut Lazy) {
        e.rejections.uncaught_listener = false;
        l.rejections.uncaught_listener = false;
    }
    let (mismatch, listened) = forgetting_the_listener(&[], rule);
    assert_eq!(mismatch, None);
    assert!(listened > 100, "{listened}");
    let strict = ["unhandled-rejections strict"];
    let (mismatch, listened) = forgetting_the_listener(&strict, rule);
    assert_eq!(mismatch, None);
    assert!(listened > 100, "{listened}");
    let (mismatch, _) = forgetting_the_listener(&strict, always);
    assert!(mismatch.is_some());
}
