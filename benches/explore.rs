//! Explorer throughput: generated states per second of a whole bounded
//! exploration of the eager model against the lazy implementation.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scopecheck::explore::{explore_pair, ExploreConfig};
use std::hint::black_box;
use std::time::Duration;

fn explorer(c: &mut Criterion) {
    let config = ExploreConfig {
        depth: 4,
        threads: 1,
        max_nesting: 2,
        ..ExploreConfig::default()
    };
    // Single-threaded exploration is deterministic: the same counts every run.
    let report = explore_pair(&config, &mut |_| {});
    assert!(report.counterexample.is_none(), "{report}");
    println!(
        "explore depth {} max-nesting {}: {} states generated, {} unique stored, {} leaves",
        config.depth, config.max_nesting, report.generated, report.unique, report.leaves
    );
    let mut group = c.benchmark_group("explore");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(report.generated as u64));
    group.bench_function("depth 4, states generated", |b| {
        b.iter(|| black_box(explore_pair(&config, &mut |_| {})))
    });
    group.finish();
}

criterion_group!(benches, explorer);
criterion_main!(benches);
