//! `scopecheck bench`'s runs on real binaries (issue 52): the addon builds
//! against each binary's headers, and one short run of each kind measures
//! what it says (the calls made, a positive time). Seconds per binary.

use crate::binaries;

use scopecheck::bench::runner::{Bench, Kind};
use std::time::Duration;

#[test]
fn the_bench_addon_builds_and_one_short_run_of_each_kind_measures() {
    for h in binaries::all() {
        let dir = binaries::build_dir();
        let bench = Bench::prepare(&h.node, Some(&h.headers), &dir, Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("{}: {e}", h.node_version));
        assert_eq!(bench.node_version, h.node_version);
        for kind in Kind::ALL {
            let s = bench
                .run(kind, 20_000)
                .unwrap_or_else(|e| panic!("{} {}: {e}", h.node_version, kind.name()));
            assert_eq!(s.calls, 20_000, "{s:?}");
            assert!(s.wall_ns > 0 && s.rate() > 0.0, "{s:?}");
            // 20 000 calls take well under a second and more than the
            // clock's resolution; the CPU clock counts some of it.
            assert!(s.wall_ns < 30_000_000_000, "{s:?}");
            assert!(s.cpu_us > 0, "{s:?}");
        }
    }
}
