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

/// `scopecheck bench` with one binary as both old and new, 2 runs of 20 000
/// calls: the table has a row per kind, each figure a number (the
/// improvement one, the times per call positive); one `--node` alone is a
/// usage error.
#[test]
fn bench_prints_the_table_for_the_three_kinds() {
    let h = binaries::default();
    let node = h.node.to_str().expect("a utf-8 path");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_scopecheck"))
            .env("SCOPECHECK_CONFORM_DIR", binaries::build_dir())
            .arg("bench")
            .args(args)
            .output()
            .expect("scopecheck starts")
    };
    let out = run(&[
        "--node", node, "--node", node, "--runs", "2", "--n", "20000",
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.starts_with(&format!(
            "old: node {0}, new: node {0}; 2 runs",
            h.node_version
        )),
        "{stdout}"
    );
    for kind in Kind::ALL {
        let prefix = format!("napi/make_callback type='{}' n=20000 ", kind.name());
        let line = (stdout.lines())
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no row for {}:\n{stdout}", kind.name()));
        let fields: Vec<&str> = line[prefix.len()..].split_whitespace().collect();
        // [stars] improvement% ±a% ±b% ±c% old new
        let tail = &fields[fields.len() - 6..];
        let number = |s: &str| -> f64 {
            s.trim_start_matches('±')
                .trim_end_matches('%')
                .parse()
                .unwrap_or_else(|_| panic!("{s:?} in {line:?}"))
        };
        assert!(number(tail[0]).is_finite(), "{line}");
        for acc in &tail[1..4] {
            assert!(acc.starts_with('±') && number(acc) >= 0.0, "{line}");
        }
        assert!(number(tail[4]) > 0.0 && number(tail[5]) > 0.0, "{line}");
    }
    let alone = run(&["--node", node]);
    assert_eq!(
        alone.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&alone.stderr)
    );
}
