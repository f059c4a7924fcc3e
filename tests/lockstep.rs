//! The main job in `cargo test`: the lazy implementation against the eager
//! model in lockstep, on generated sequences (with the refinement check), on
//! every scenario and on every saved counterexample; the coverage the
//! generated run reached, and the share of cases reaching each situation;
//! shards that add up to the whole run.

use model::vocab::{trace, NodeVersion};
use scopecheck::check::{check, CheckConfig, CheckReport, Shard, ShardSummary};
use scopecheck::cli::check::FLOOR_PERCENT;
use scopecheck::lockstep;
use std::path::Path;
use std::sync::OnceLock;

/// The CI budget: enough for every named situation to reach its floor in
/// share of cases, small enough for `.ci/run` (a few seconds on 2 cores with
/// the optimised test profile).
const CI_CASES: u32 = 20_000;

fn ci_run() -> &'static CheckReport {
    static REPORT: OnceLock<CheckReport> = OnceLock::new();
    REPORT.get_or_init(|| {
        let config = CheckConfig {
            cases: CI_CASES,
            ..CheckConfig::default()
        };
        check(&config, &mut |_| {})
    })
}

/// The same budget on node version 20 (`--node-version 20`).
fn ci_run_v20() -> &'static CheckReport {
    static REPORT: OnceLock<CheckReport> = OnceLock::new();
    REPORT.get_or_init(|| {
        let config = CheckConfig {
            cases: CI_CASES,
            node_version: NodeVersion::V20,
            ..CheckConfig::default()
        };
        check(&config, &mut |_| {})
    })
}

#[test]
fn lazy_equals_eager_on_node_version_20() {
    let report = ci_run_v20();
    if let Some(cx) = &report.counterexample {
        panic!(
            "the lazy implementation diverges from the eager model on node version 20:\n{}\n{}",
            cx.trace_text(),
            cx.divergence
        );
    }
    assert_eq!(report.cases, u64::from(CI_CASES));
    assert_eq!(report.rejected, 0, "the generator drew ops v20 refuses");
    // Every case runs on the node version: its first op names it.
    assert_eq!(
        report.coverage.ops.get("node-version").copied(),
        Some(u64::from(CI_CASES))
    );
    // What v20 has is reached, each situation in 1 % of cases; what it has
    // not (Global holders, AsyncContextFrame) is never drawn.
    let coverage = &report.coverage;
    for name in coverage.missing() {
        assert!(
            !scopecheck::coverage::exists_on(NodeVersion::V20, name),
            "not reached on node version 20: {name}\n{}",
            coverage.table()
        );
    }
    for (name, share) in coverage.below(FLOOR_PERCENT) {
        assert!(
            !scopecheck::coverage::exists_on(NodeVersion::V20, name),
            "{name} in {share:.2} % of cases on node version 20\n{}",
            coverage.table()
        );
    }
    for only_26 in ["reset-global", "async-resource", "global-reset-open"] {
        assert!(!coverage.ops.contains_key(only_26) && !coverage.situations.contains_key(only_26));
    }
}

#[test]
fn a_v20_counterexample_carries_its_node_version() {
    let config = CheckConfig {
        cases: 2_000,
        mutant: Some(lazy::mutant::Mutant::JsPopIgnoresLazy),
        refinement: false,
        node_version: NodeVersion::V20,
        ..CheckConfig::default()
    };
    let report = check(&config, &mut |_| {});
    let cx = report
        .counterexample
        .expect("the mutant is killed on v20 too");
    assert_eq!(cx.ops[0], model::vocab::Op::NodeVersion(NodeVersion::V20));
    let text = cx.trace_text();
    assert!(text.contains("--node-version 20"), "{text}");
    let replayed = trace::parse(&text).expect("the printed trace parses");
    let again =
        lockstep::run_with(&replayed.ops(), config.mutant, false).expect_err("still diverges");
    assert_eq!(again.index + 1, cx.ops.len());
}

#[test]
fn lazy_equals_eager_on_generated_sequences() {
    let report = ci_run();
    if let Some(cx) = &report.counterexample {
        panic!(
            "the lazy implementation diverges from the eager model:\n{}\n{}",
            cx.trace_text(),
            cx.divergence
        );
    }
    assert!(
        report.cases >= u64::from(CI_CASES),
        "ran only {} cases",
        report.cases
    );
    assert!(
        report.ops > u64::from(CI_CASES) * 5,
        "sequences too short: {} ops",
        report.ops
    );
}

#[test]
fn generated_run_reaches_every_situation_and_op_kind() {
    // The default run is node version 26's: what exists on v20 only is
    // `lazy_equals_eager_on_node_version_20`'s.
    let on_26 = |name: &&str| scopecheck::coverage::exists_on(NodeVersion::V26, name);
    let missing: Vec<_> = ci_run()
        .coverage
        .missing()
        .into_iter()
        .filter(on_26)
        .collect();
    assert!(
        missing.is_empty(),
        "not reached by the CI run: {missing:?}\n{}",
        ci_run().coverage.table()
    );
}

#[test]
fn every_situation_is_reached_in_at_least_one_percent_of_cases() {
    let coverage = &ci_run().coverage;
    assert_eq!(coverage.cases, u64::from(CI_CASES));
    let below: Vec<_> = (coverage.below(FLOOR_PERCENT).into_iter())
        .filter(|(name, _)| scopecheck::coverage::exists_on(NodeVersion::V26, name))
        .collect();
    assert!(
        below.is_empty(),
        "below {FLOOR_PERCENT} % of cases in the CI run: {below:?}\n{}",
        coverage.table()
    );
}

#[test]
fn the_generator_draws_only_ops_the_eager_model_accepts() {
    assert_eq!(ci_run().rejected, 0, "the generator drew impossible ops");
}

#[test]
fn the_same_seed_runs_the_same_cases() {
    let config = CheckConfig {
        cases: 300,
        ..CheckConfig::default()
    };
    let a = check(&config, &mut |_| {});
    let b = check(&config, &mut |_| {});
    assert_eq!((a.ops, &a.coverage), (b.ops, &b.coverage));
    for case in [0, 7, 299] {
        assert_eq!(
            scopecheck::generate::case_ops(config.seed, case, config.max_len),
            scopecheck::generate::case_ops(config.seed, case, config.max_len)
        );
    }
    let other = check(
        &CheckConfig {
            seed: config.seed + 1,
            ..config.clone()
        },
        &mut |_| {},
    );
    assert_ne!(a.ops, other.ops, "another seed runs other cases");
}

#[test]
fn shards_are_disjoint_and_add_up_to_the_whole_run() {
    let whole_config = CheckConfig {
        cases: 1_001,
        ..CheckConfig::default()
    };
    let whole = check(&whole_config, &mut |_| {});
    let parts: Vec<ShardSummary> = (1..=3)
        .map(|index| {
            let config = CheckConfig {
                shard: Shard { index, count: 3 },
                ..whole_config.clone()
            };
            let report = check(&config, &mut |_| {});
            assert_eq!(report.cases, config.shard.len(config.cases));
            ShardSummary::of(&config, &report)
        })
        .collect();
    // Disjoint: the case indices of the shards do not overlap and cover 0..cases.
    let mut indices: Vec<u64> = (1..=3)
        .flat_map(|index| Shard { index, count: 3 }.cases(whole_config.cases))
        .collect();
    indices.sort_unstable();
    assert_eq!(
        indices,
        (0..u64::from(whole_config.cases)).collect::<Vec<_>>()
    );
    let merged = ShardSummary::merge(&parts).expect("shards of one run");
    assert!(merged.complete());
    let whole_summary = ShardSummary::of(&whole_config, &whole);
    assert_eq!(merged.cases, whole_summary.cases);
    assert_eq!(merged.ops, whole_summary.ops);
    assert_eq!(merged.coverage(), whole.coverage);
    // A shard given twice, or a shard of another run, is refused.
    assert!(ShardSummary::merge(&[parts[0].clone(), parts[0].clone()]).is_err());
    let mut other = parts[1].clone();
    other.seed += 1;
    assert!(ShardSummary::merge(&[parts[0].clone(), other]).is_err());
    assert!(!ShardSummary::merge(&parts[..2]).unwrap().complete());
}

fn traces_in(dir: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), text)
        })
        .collect();
    out.sort();
    out
}

fn assert_lockstep(dir: &str, at_least: usize) {
    let traces = traces_in(dir);
    assert!(
        traces.len() >= at_least,
        "expected at least {at_least} traces in {dir}, found {}",
        traces.len()
    );
    for (name, text) in traces {
        let t = trace::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(d) = lockstep::run(&t.ops()) {
            panic!("{name}: {d}");
        }
    }
}

#[test]
fn every_scenario_runs_identically_on_both_sides() {
    assert_lockstep("tests/scenarios", 13);
}

#[test]
fn every_scenario_runs_identically_on_both_sides_on_node_version_20() {
    // Each scenario with `node-version 20` first (one that names a node version
    // itself runs as written): what v20 refuses, both sides refuse alike.
    for (name, text) in traces_in("tests/scenarios") {
        let t = trace::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut ops = t.ops();
        if !ops
            .iter()
            .any(|op| matches!(op, model::vocab::Op::NodeVersion(_)))
        {
            ops.insert(0, model::vocab::Op::NodeVersion(NodeVersion::V20));
        }
        if let Err(d) = lockstep::run(&ops) {
            panic!("{name} on v20: {d}");
        }
    }
}

#[test]
fn every_saved_counterexample_now_runs_identically() {
    assert_lockstep("tests/regressions", 1);
}

#[test]
fn the_harness_reports_a_divergence() {
    // A broken lazy side must fail the same check: one mutant, a small budget
    // (it dies within a few dozen cases at this seed).
    let config = CheckConfig {
        cases: 2_000,
        mutant: Some(lazy::mutant::Mutant::JsPopIgnoresLazy),
        refinement: false,
        ..CheckConfig::default()
    };
    let report = check(&config, &mut |_| {});
    let cx = report.counterexample.expect("the mutant is killed");
    assert!(cx.ops.len() <= 6, "not shrunk: {}", cx.trace_text());
    assert!(cx.divergence.is_observable());
    // The saved trace replays to the same divergence.
    let replayed = trace::parse(&cx.trace_text()).expect("the printed trace parses");
    let again =
        lockstep::run_with(&replayed.ops(), config.mutant, false).expect_err("still diverges");
    assert_eq!(again.index + 1, cx.ops.len());
}
