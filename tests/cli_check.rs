//! `scopecheck check` on the command line: the rate against the bare pair,
//! the share of cases per situation, and shards written as JSON
//! (`plumbing check`) and merged (`plumbing merge`).

use std::process::Command;

fn scopecheck(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("scopecheck runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn check_prints_the_bare_ratio_and_the_share_of_cases() {
    let (ok, text) = scopecheck(&["check", "--cases", "400", "--quiet"]);
    assert!(ok, "{text}");
    assert!(text.contains("400 cases"), "{text}");
    assert!(text.contains("check / bare = "), "{text}");
    assert!(text.contains("% cases"), "{text}");
}

#[test]
fn shards_merge_into_the_whole_run() {
    let dir = std::env::temp_dir().join(format!("scopecheck-cli-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = |i: u32| dir.join(format!("shard{i}.json")).display().to_string();
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let (ok, text) = scopecheck(&[
            "plumbing",
            "check",
            "--cases",
            "401",
            "--quiet",
            "--shard",
            &shard,
            "--json",
            &json(i),
        ]);
        assert!(ok, "{text}");
        assert!(text.contains(&format!("shard {shard}")), "{text}");
        // Every shard is calibrated, the odd-indexed one too.
        assert!(text.contains("check / bare = "), "{text}");
    }
    let (ok, whole) = scopecheck(&["check", "--cases", "401", "--quiet"]);
    assert!(ok, "{whole}");
    let (ok, merged) = scopecheck(&["plumbing", "merge", &json(1), &json(2)]);
    assert!(ok, "{merged}");
    assert!(merged.contains("shards 1/2, 2/2"), "{merged}");
    // The merged table is the whole run's, row for row.
    let table = |t: &str| -> Vec<String> {
        t.lines()
            .skip_while(|l| !l.starts_with("situation "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(table(&merged), table(&whole));
    // One shard alone is not the whole run.
    let (ok, text) = scopecheck(&["plumbing", "merge", &json(1)]);
    assert!(!ok, "{text}");
    assert!(text.contains("do not make up the whole run"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn check_runs_on_node_version_20() {
    let (ok, text) = scopecheck(&["check", "--cases", "400", "--quiet", "--node-version", "20"]);
    assert!(ok, "{text}");
    assert!(text.contains("not on node version 20"), "{text}");
    assert!(text.contains("als-get-store-in-lazy"), "{text}");
}
