//! Lockstep throughput: the same fixed op sequences on the eager model
//! alone, on the lazy implementation alone, and on both through the lockstep
//! harness (`Pair::step`), so that the harness overhead is a measured ratio.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lazy::Lazy;
use model::vocab::{Op, Runtime};
use model::Eager;
use scopecheck::lockstep::Pair;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Sequences sampled once from the generator (`check::sample`), outside the
/// timed loop.
const SEQUENCES: u64 = 300;
/// Longest sampled sequence.
const MAX_LEN: usize = 60;

fn sequences() -> Vec<Vec<Op>> {
    (0..SEQUENCES)
        .map(|seed| scopecheck::check::sample(seed, MAX_LEN))
        .collect()
}

fn run_alone<R: Runtime + Default>(sequences: &[Vec<Op>]) {
    for ops in sequences {
        let mut side = R::default();
        for op in ops {
            let _ = black_box(side.apply(black_box(op)));
        }
    }
}

fn run_lockstep(sequences: &[Vec<Op>]) {
    for ops in sequences {
        let mut pair = Pair::new();
        for op in ops {
            let _ = black_box(pair.step(black_box(op)));
        }
    }
}

/// Paired rounds: the three runs alternate, so that load that drifts during
/// the run (the machine is shared) hits all three alike.
const ROUNDS: usize = 15;

fn seconds(run: impl Fn()) -> f64 {
    let start = Instant::now();
    run();
    start.elapsed().as_secs_f64()
}

fn print_paired(sequences: &[Vec<Op>], ops: usize) {
    let mut rows: [Vec<f64>; 3] = Default::default();
    let mut ratios: [Vec<f64>; 2] = Default::default();
    for _ in 0..ROUNDS {
        let e = seconds(|| run_alone::<Eager>(sequences));
        let l = seconds(|| run_alone::<Lazy>(sequences));
        let p = seconds(|| run_lockstep(sequences));
        for (row, t) in rows.iter_mut().zip([e, l, p]) {
            row.push(t);
        }
        ratios[0].push(p / e);
        ratios[1].push(p / (e + l));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("paired rounds ({ROUNDS}, the three runs alternating): median ops/s");
    for (name, row) in ["eager alone", "lazy alone", "lockstep pair"]
        .iter()
        .zip(rows.iter_mut())
    {
        println!("  {name:<14} {:>12.0} ops/s", ops as f64 / median(row));
    }
    println!(
        "  median per-round ratios: pair / eager {:.3}, pair / (eager + lazy) {:.3}",
        median(&mut ratios[0]),
        median(&mut ratios[1])
    );
}

fn lockstep(c: &mut Criterion) {
    let sequences = sequences();
    let ops: usize = sequences.iter().map(Vec::len).sum();
    println!(
        "lockstep workload: {} sequences, {ops} ops (check::sample seeds 0..{SEQUENCES}, max_len {MAX_LEN})",
        sequences.len()
    );
    print_paired(&sequences, ops);
    let mut group = c.benchmark_group("lockstep");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Elements(ops as u64));
    group.bench_function("eager alone", |b| b.iter(|| run_alone::<Eager>(&sequences)));
    group.bench_function("lazy alone", |b| b.iter(|| run_alone::<Lazy>(&sequences)));
    group.bench_function("lockstep pair", |b| b.iter(|| run_lockstep(&sequences)));
    group.finish();
}

criterion_group!(benches, lockstep);
criterion_main!(benches);
