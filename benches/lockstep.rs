//! Lockstep throughput: the same fixed op sequences on the eager model
//! alone, on the lazy implementation alone, and on both through the lockstep
//! harness (`Pair::step`), so that the harness overhead is a measured ratio.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lazy::Lazy;
use model::vocab::{Op, Runtime};
use model::Eager;
use scopecheck::lockstep::Pair;
use std::hint::black_box;
use std::time::Duration;

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

fn lockstep(c: &mut Criterion) {
    let sequences = sequences();
    let ops: usize = sequences.iter().map(Vec::len).sum();
    println!(
        "lockstep workload: {} sequences, {ops} ops (check::sample seeds 0..{SEQUENCES}, max_len {MAX_LEN})",
        sequences.len()
    );
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
