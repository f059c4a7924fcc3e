//! Faults that lost data or hung the tools, each as the user meets it:
//! shards saving side by side, a destination that is missing or full, an
//! interrupt, summaries that do not add up, a node binary that sleeps or
//! leaves a sleeper holding its output, a huge or invalid input, a long
//! trace. Each test names what it shows; the conformance ones need `node`
//! (v20, with its headers) and `g++`, as `tests/conform.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_scopecheck")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_faults")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the temp dir");
    dir
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scopecheck() -> Command {
    let mut c = Command::new(bin());
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Wait for `child` at most `limit`; killed and `None` past it.
fn wait_within(mut child: Child, limit: Duration) -> Option<Output> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn run_within(command: &mut Command, limit: Duration) -> Output {
    let child = command.spawn().expect("scopecheck starts");
    wait_within(child, limit).unwrap_or_else(|| panic!("still running after {limit:?}"))
}

fn signal(child: &Child, sig: i32) {
    let pid = i32::try_from(child.id()).expect("a pid");
    // SAFETY: kill(2) on a child of this process.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

/// `scopecheck ARGS`, sent `sig` after 1.5 s: how it ended (within 30 s).
fn interrupted(args: &[&str], sig: i32) -> Output {
    let child = scopecheck().args(args).spawn().expect("scopecheck starts");
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, sig);
    wait_within(child, Duration::from_secs(30)).expect("it stops")
}

/// The `.trace` files in `dir`.
fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the save dir")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    v.sort();
    v
}

/// The counterexample a check printed: from its header line to the line
/// before the blank line that ends the trace.
fn printed_counterexample(stdout: &str) -> String {
    let start = stdout
        .find("# Counterexample found by")
        .expect("a counterexample");
    let rest = &stdout[start..];
    let end = rest.find("\n\n").expect("the end of the trace");
    rest[..=end].to_string()
}

/// The path after `saved to ` (or `already saved (the same text) as `).
fn saved_path(stdout: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("saved to ") || l.starts_with("already saved"))
        .unwrap_or_else(|| panic!("no saved line in {stdout}"));
    let path = line
        .trim_start_matches("saved to ")
        .trim_start_matches("already saved (the same text) as ");
    PathBuf::from(path.split([' ', ';']).next().expect("a path"))
}

const MUTANT: &str = "lazy-pop-skips-check";

/// Processes that find counterexamples at once, all saving to one
/// directory at the same time: the two shards of a run and a run with
/// another budget, `rounds` times (`SCOPECHECK_SAVE_ROUNDS`, 3 by default;
/// 100 for the figure in docs/performance.md).
#[test]
fn shards_saving_side_by_side_keep_every_counterexample() {
    let rounds: u64 = std::env::var("SCOPECHECK_SAVE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let dir = temp_dir("side-by-side");
    let mut found = Vec::new();
    for round in 0..rounds {
        let seed = (7 + round).to_string();
        let runs: [&[&str]; 3] = [
            &["--shard", "1/2"],
            &["--shard", "2/2"],
            &["--max-len", "60"],
        ];
        let children: Vec<Child> = runs
            .iter()
            .map(|extra| {
                scopecheck()
                    .args(["plumbing", "check", "--quiet", "--cases", "2000"])
                    .args(["--seed", &seed, "--mutant", MUTANT, "--save-dir", p(&dir)])
                    .args(*extra)
                    .spawn()
                    .expect("scopecheck starts")
            })
            .collect();
        for child in children {
            let out = wait_within(child, Duration::from_secs(120)).expect("it ends");
            let stdout = text(&out.stdout);
            assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
            found.push((saved_path(&stdout), printed_counterexample(&stdout)));
        }
    }
    // Every counterexample is in its own file, whole, as printed.
    for (path, printed) in &found {
        let saved = std::fs::read_to_string(path).expect("the saved file is there");
        assert_eq!(&saved, printed, "{}", path.display());
    }
    let files = traces_in(&dir);
    assert_eq!(files.len(), found.len(), "{files:?}");
    // Each replays to its divergence.
    for f in &files {
        let out = run_within(
            scopecheck().args(["replay", "--mutant", MUTANT, p(f)]),
            Duration::from_secs(60),
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: {}",
            f.display(),
            text(&out.stdout)
        );
        assert!(text(&out.stdout).contains("first divergence"));
    }
    // No temporary file is left.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `plumbing check` with the mutant, 500 cases, saving to `dir`, and `extra`.
fn mutant_check(dir: &Path, extra: &[&str]) -> Output {
    run_within(
        scopecheck()
            .args([
                "plumbing", "check", "--quiet", "--cases", "500", "--mutant", MUTANT,
            ])
            .args(["--save-dir", p(dir)])
            .args(extra),
        Duration::from_secs(60),
    )
}

/// The same run twice saves one file: the second says it is already there.
#[test]
fn the_same_counterexample_is_saved_once() {
    let dir = temp_dir("same-twice");
    let first = mutant_check(&dir, &[]);
    let again = mutant_check(&dir, &[]);
    assert_eq!(first.status.code(), Some(1));
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stdout).contains("already saved (the same text) as"));
    assert_eq!(traces_in(&dir).len(), 1);
}

#[test]
fn destinations_are_checked_before_the_work() {
    let dir = temp_dir("destinations");
    // A summary in a directory that does not exist: refused at once (the
    // budget would take hours), naming the path.
    let json = dir.join("nodir/s.json");
    let out = run_within(
        scopecheck().args([
            "plumbing",
            "check",
            "--quiet",
            "--cases",
            "4000000000",
            "--json",
            p(&json),
        ]),
        Duration::from_secs(20),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(p(&json)) && stderr.contains("does not exist"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // A save directory under a file.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = run_within(
        scopecheck()
            .args(["check", "--quiet", "--cases", "4000000000", "--save-dir"])
            .arg(file.join("sub")),
        Duration::from_secs(20),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("a-file/sub") && stderr.contains("not a directory"),
        "{stderr}"
    );
}

/// `conform --keep DIR` where DIR cannot be made: refused before the first
/// case (exit 2, naming the path), not found by every case (before issue
/// 51: 300 errors and exit 1). Needs no node: the check comes first.
#[test]
fn an_unusable_keep_directory_is_refused_before_the_work() {
    let dir = temp_dir("keep");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let keep = file.join("kept");
    let out = run_within(
        scopecheck()
            .args(["conform", "--cases", "300", "--keep"])
            .arg(&keep),
        Duration::from_secs(20),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("a-file/kept") && stderr.contains("not a directory"),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("conformance:"), "no case ran");
}

/// `plumbing fuzz-trace` reads at most 1 MiB: an endless input
/// (`/dev/zero`) is refused at once with exit 2, naming the file (before
/// issue 51 it was read without a bound).
#[test]
fn fuzz_trace_reads_a_bounded_input() {
    let out = run_within(
        scopecheck().args(["plumbing", "fuzz-trace", "/dev/zero"]),
        Duration::from_secs(20),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("/dev/zero: larger than 1048576 bytes"),
        "{stderr}"
    );
}

/// A summary to a full device: the counterexample is printed and saved
/// first, the failure names the path, and the exit code is the verdict's.
#[test]
fn a_full_destination_loses_no_counterexample() {
    let dir = temp_dir("full");
    let out = mutant_check(&dir, &["--json", "/dev/full"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("COUNTEREXAMPLE"), "{stdout}");
    assert_eq!(traces_in(&dir).len(), 1);
    assert!(
        stderr.contains("/dev/full: cannot write the summary"),
        "{stderr}"
    );
}

#[test]
fn an_interrupted_check_prints_its_summary_and_writes_it() {
    let dir = temp_dir("interrupted-check");
    let out = interrupted(
        &[
            "check",
            "--quiet",
            "--cases",
            "4000000000",
            "--save-dir",
            p(&dir),
        ],
        libc::SIGINT,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stdout}{stderr}");
    assert!(stdout.contains("INTERRUPTED (signal 2) after "), "{stdout}");
    assert!(
        stdout.contains(" cases, ") && stdout.contains("situation "),
        "{stdout}"
    );
    assert!(
        stderr.contains("interrupted by SIGINT: check stopped after "),
        "{stderr}"
    );
    // SIGTERM on a shard: its summary is written, marked as stopped, and
    // a merge of it says so.
    let json = dir.join("shard.json");
    let out = interrupted(
        &[
            "plumbing",
            "check",
            "--quiet",
            "--cases",
            "4000000000",
            "--shard",
            "1/1",
            "--json",
            p(&json),
        ],
        libc::SIGTERM,
    );
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    let summary = std::fs::read_to_string(&json).expect("the summary was written");
    assert!(summary.contains("interrupted by signal 15"), "{summary}");
    let out = run_within(
        scopecheck().args(["plumbing", "merge", p(&json)]),
        Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("STOPPED EARLY"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_interrupted_exploration_prints_its_figures() {
    let out = interrupted(
        &[
            "explore",
            "--depth",
            "40",
            "--max-nesting",
            "8",
            "--quiet",
            "--max-memory",
            "2G",
        ],
        libc::SIGTERM,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(143), "{stdout}{stderr}");
    assert!(stdout.contains("INTERRUPTED (signal 15)"), "{stdout}");
    assert!(stdout.contains("states generated"), "{stdout}");
    assert!(
        stderr.contains("interrupted by SIGTERM: explore stopped"),
        "{stderr}"
    );
}

/// Edit a summary's JSON: `f` on the parsed document.
fn edited(from: &Path, to: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(to, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn merge_refuses_what_cannot_be_one_run() {
    let dir = temp_dir("merge");
    let shard = |i: u32| dir.join(format!("s{i}.json"));
    for i in 1..=2 {
        let out = run_within(
            scopecheck()
                .args([
                    "plumbing",
                    "check",
                    "--quiet",
                    "--cases",
                    "60",
                    "--shard",
                    &format!("{i}/2"),
                ])
                .args(["--json", p(&shard(i))]),
            Duration::from_secs(60),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let merge = |files: &[&Path]| {
        let mut c = scopecheck();
        c.args(["plumbing", "merge"]).args(files);
        run_within(&mut c, Duration::from_secs(20))
    };
    let out = merge(&[&shard(1), &shard(2)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = std::fs::read_to_string(shard(1)).unwrap();
    assert!(summary.contains("\"tool\": \"scopecheck "), "{summary}");
    // Counts that would wrap past 2^64 - 1.
    let big = dir.join("big.json");
    edited(&shard(2), &big, |v| v["ops"] = serde_json::json!(u64::MAX));
    let big1 = dir.join("big1.json");
    edited(&shard(1), &big1, |v| v["ops"] = serde_json::json!(u64::MAX));
    let out = merge(&[&big1, &big]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("big.json: cannot merge: the ops add up past 18446744073709551615"),
        "{stderr}"
    );
    // More cases than the shard holds.
    let many = dir.join("many.json");
    edited(&shard(2), &many, |v| {
        v["cases"] = serde_json::json!(u64::MAX)
    });
    let out = merge(&[&shard(1), &many]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("claims 18446744073709551615 cases"),
        "{stderr}"
    );
    // Another build, another mutant: refused, saying what differs.
    for (name, key, value) in [
        (
            "tool.json",
            "tool",
            serde_json::json!("scopecheck 0.0.1 (commit 0123456789ab)"),
        ),
        ("mutant.json", "mutant", serde_json::json!(MUTANT)),
    ] {
        let other = dir.join(name);
        edited(&shard(2), &other, |v| v[key] = value);
        let out = merge(&[&shard(1), &other]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{name}: cannot merge: not a shard of the same run as summary 1"
            )),
            "{stderr}"
        );
    }
    // Not a summary: the line and column of the fault.
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\n  \"seed\": x\n}\n").unwrap();
    let out = merge(&[&junk]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}:2:", junk.display())),
        "{stderr}"
    );
}

#[test]
fn input_errors_are_bounded_and_placed() {
    let dir = temp_dir("input");
    // `cmd` on a file of `bytes`: refused (exit 2) with a short message,
    // which must start with `error: FILE:` and `place`.
    let refused = |cmd: &str, name: &str, bytes: &[u8], place: &str| {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let out = run_within(scopecheck().args([cmd, p(&file)]), Duration::from_secs(30));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd} {name}: {stderr}");
        assert!(stderr.len() < 1000, "{} bytes of stderr", stderr.len());
        let prefix = format!("error: {}:{place}", file.display());
        assert!(stderr.starts_with(&prefix), "{cmd} {name}: {stderr}");
        stderr
    };
    // A 1 MB token: the message quotes 40 characters of it.
    let token = format!("stop\nclose {}\n", "y".repeat(1_000_000));
    let stderr = refused("run", "huge.trace", token.as_bytes(), "2:7: ");
    assert!(stderr.contains("(999960 more characters)"), "{stderr}");
    // A 50 MB line: refused at the longest line a trace may have.
    let line = format!("stop\nclose {}\n", "y".repeat(50_000_000));
    refused(
        "run",
        "longer.trace",
        line.as_bytes(),
        "2:1048577: the line is longer than",
    );
    // Invalid UTF-8: its line and column.
    for cmd in ["run", "replay"] {
        let bad = b"execution-async-id\nclose \xff\n";
        refused(cmd, "bad.trace", bad, "2:7: invalid UTF-8 (byte 0xFF)");
    }
}

/// A trace read from a pipe (`cat T | scopecheck run /dev/stdin`) runs as
/// the same file does, for `run`, `run --json` and `replay`: the input that
/// is not a regular file is read once and held (a second open of a pipe
/// found it empty, and the run passed with no step: issue 51).
#[test]
fn a_trace_from_a_pipe_runs_as_the_file_does() {
    let dir = temp_dir("pipe");
    let passing = "callback-scope 5 1 R1\n  execution-async-id\n  => executionAsyncId = 5\nclose\n";
    let failing = passing.replace("= 5", "= 6");
    for (name, trace, code) in [("passing", passing, 0), ("failing", failing.as_str(), 1)] {
        let file = dir.join(format!("{name}.trace"));
        std::fs::write(&file, trace).unwrap();
        for args in [&["run"][..], &["run", "--json"], &["replay"]] {
            let from_file = run_within(
                scopecheck().args(args).arg(p(&file)),
                Duration::from_secs(30),
            );
            let mut child = scopecheck()
                .args(args)
                .arg("/dev/stdin")
                .stdin(Stdio::piped())
                .spawn()
                .expect("scopecheck starts");
            let mut stdin = child.stdin.take().expect("a pipe");
            stdin.write_all(trace.as_bytes()).unwrap();
            drop(stdin);
            let from_pipe = wait_within(child, Duration::from_secs(30)).expect("it ends");
            let what = format!("{args:?} {name}: {}", text(&from_pipe.stderr));
            assert_eq!(from_file.status.code(), Some(code), "{what}");
            assert_eq!(from_pipe.status.code(), Some(code), "{what}");
            // The same steps printed (the file's name aside).
            let file_name = p(&file).to_string();
            let steps = |out: &Output, name: &str| text(&out.stdout).replace(name, "FILE");
            assert_eq!(
                steps(&from_file, &file_name),
                steps(&from_pipe, "/dev/stdin"),
                "{what}"
            );
            assert!(
                text(&from_pipe.stdout).contains("execution-async-id"),
                "{what}"
            );
        }
    }
}

/// Run `command` and return its exit code and peak resident set in KiB:
/// the last `VmHWM` of `/proc/PID/status` read while it ran, every 5 ms
/// (`wait4`'s `ru_maxrss` would count the test process's own memory, which
/// a child shares until it execs).
fn peak_kib(command: &mut Command) -> (Option<i32>, u64) {
    let mut child = command.stdout(Stdio::null()).spawn().expect("it starts");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        if let Some(exit) = child.try_wait().expect("wait") {
            return (exit.code(), peak);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `run` and `replay` on a trace of 600 000 ops hold the model, not the
/// trace: their peak memory stays under 40 MB (at 1 000 000 ops, edf0693
/// took 481 MB for `run` and 131 MB for `replay`; this branch 4 MB).
#[test]
fn long_traces_run_in_bounded_memory() {
    let dir = temp_dir("long");
    let file = dir.join("long.trace");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    for _ in 0..200_000 {
        f.write_all(
            b"callback-scope 5 1 R1\n  execution-async-id\n  => executionAsyncId = 5\nclose\n",
        )
        .unwrap();
    }
    f.flush().unwrap();
    drop(f);
    for cmd in ["run", "replay"] {
        let (code, kib) = peak_kib(Command::new(bin()).args([cmd, p(&file)]));
        assert_eq!(code, Some(0), "{cmd}");
        assert!(kib < 40_000, "{cmd}: {kib} KiB at its peak");
    }
}

// ---------------------------------------------------------------------------
// conform with node binaries that hang (needs node v20 with headers, g++)
// ---------------------------------------------------------------------------

/// The real node binary and its headers.
fn real_node() -> (PathBuf, PathBuf) {
    let node = std::env::var_os("SCOPECHECK_NODE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|d| d.join("node"))
                .find(|p| p.is_file())
        })
        .expect("node on PATH (see the README's prerequisites)");
    let real = std::fs::canonicalize(&node).expect("node resolves");
    let headers = real
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join("include/node"))
        .filter(|d| d.join("node.h").is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/include/node"));
    (real, headers)
}

/// A wrapper script named `node` in `dir` with `body` (`$REAL` is the real
/// binary).
fn wrapper(dir: &Path, body: &str) -> PathBuf {
    let (real, _) = real_node();
    let path = dir.join("node");
    std::fs::write(
        &path,
        format!("#!/bin/sh\nREAL='{}'\n{body}\n", real.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `conform` against `node` with a time limit of `timeout` seconds and its
/// own build dir (`dir/build`).
fn conform(dir: &Path, node: &Path, timeout: &str, args: &[&str]) -> Command {
    let (_, headers) = real_node();
    let mut c = scopecheck();
    c.env("SCOPECHECK_CONFORM_TIMEOUT", timeout)
        .env("SCOPECHECK_CONFORM_DIR", dir.join("build"))
        .args(["conform", "--node", p(node), "--headers", p(&headers)])
        .args(args);
    c
}

/// Files under `dir/build/runs` (the programs being run).
fn programs_left(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("build/runs"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

/// `conform` against a wrapper `node` made of `body` (see [`wrapper`]),
/// with a time limit of `timeout` seconds per run: its exit code, stdout
/// and stderr, after checking that it ended within `within` seconds and
/// left no program behind.
fn conform_against(
    name: &str,
    body: &str,
    timeout: &str,
    args: &[&str],
    within: u64,
) -> (Option<i32>, String, String) {
    let dir = temp_dir(name);
    let node = wrapper(&dir, body);
    let start = Instant::now();
    let out = run_within(
        &mut conform(&dir, &node, timeout, args),
        Duration::from_secs(within + 30),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        start.elapsed() < Duration::from_secs(within),
        "{name}: {:?}\n{stdout}{stderr}",
        start.elapsed()
    );
    assert!(programs_left(&dir).is_empty(), "{:?}", programs_left(&dir));
    (out.status.code(), stdout, stderr)
}

#[test]
fn conform_against_a_node_that_sleeps_stops_at_the_probe() {
    let (code, _, stderr) = conform_against("sleeps", "exec sleep 600", "3", &["--cases", "2"], 10);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("is not a working node") && stderr.contains("time limit of 3 s"),
        "{stderr}"
    );
}

#[test]
fn conform_against_a_node_that_leaves_a_sleeper_holding_its_output() {
    // The sleeper inherits stdout and stderr and outlives node.
    let body = "sleep 600 &\nexec \"$REAL\" \"$@\"";
    let (code, stdout, stderr) = conform_against("sleeper", body, "60", &["--cases", "4"], 90);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("4 cases (seed 1): 4 equal"), "{stdout}");
}

#[test]
fn conform_stops_when_node_hangs_on_every_case() {
    // The probes (`node -e`) answer; every program hangs.
    let body = "[ \"$1\" = -e ] && exec \"$REAL\" \"$@\"\nexec sleep 600";
    let (code, stdout, stderr) =
        conform_against("hangs-on-cases", body, "2", &["--cases", "300"], 60);
    assert_eq!(code, Some(3), "{stdout}{stderr}");
    assert!(
        stderr.contains("did not start the program on 3 cases in a row"),
        "{stderr}"
    );
    assert!(stdout.contains("STOPPED after "), "{stdout}");
}

#[test]
fn conform_stops_when_node_floods_its_output() {
    // The probes answer; every program prints without end.
    let body = "[ \"$1\" = -e ] && exec \"$REAL\" \"$@\"\nexec yes";
    let (code, stdout, stderr) = conform_against("floods", body, "60", &["--cases", "300"], 90);
    assert_eq!(code, Some(3), "{stdout}{stderr}");
    assert!(
        stderr.contains(" MiB to stdout and was killed")
            && stderr.contains("did not start the program on 3 cases in a row"),
        "{stderr}"
    );
}

#[test]
fn an_interrupted_conform_sums_up_and_cleans_up() {
    let dir = temp_dir("interrupted-conform");
    let (real, _) = real_node();
    let child = conform(&dir, &real, "60", &["--cases", "3000"])
        .spawn()
        .expect("it starts");
    // Long enough for the addon build and some cases.
    let start = Instant::now();
    while programs_left(&dir).is_empty() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, libc::SIGINT);
    let out = wait_within(child, Duration::from_secs(30)).expect("it stops");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stdout}{stderr}");
    assert!(stdout.contains("STOPPED after "), "{stdout}");
    assert!(
        stderr.contains("interrupted by SIGINT: conform stopped"),
        "{stderr}"
    );
    assert!(programs_left(&dir).is_empty(), "{:?}", programs_left(&dir));
}

/// Whether process `pid` is running (not gone, not a zombie).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// Two SIGINTs at once end `conform` at once (exit 130), and the node
/// children still running go with it, their own children too: the second
/// signal kills every child's process group before the process exits
/// (before issue 51 they ran on, `sleep 600` and all). The programs it
/// left are removed by the next run on the same directory.
#[test]
fn two_interrupts_end_conform_and_its_children() {
    let dir = temp_dir("two-interrupts");
    let pids = dir.join("pids");
    // The probes answer; every program starts a sleeper of its own and
    // hangs, noting both pids.
    let body = format!(
        "[ \"$1\" = -e ] && exec \"$REAL\" \"$@\"\necho $$ >> '{0}'\nsleep 600 &\necho $! >> '{0}'\nwait",
        p(&pids)
    );
    let node = wrapper(&dir, &body);
    let child = conform(&dir, &node, "600", &["--cases", "300"])
        .spawn()
        .expect("it starts");
    let start = Instant::now();
    let noted = || std::fs::read_to_string(&pids).unwrap_or_default();
    while noted().lines().count() < 2 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(noted().lines().count() >= 2, "no program started");
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(3));
    signal(&child, libc::SIGINT);
    let out = wait_within(child, Duration::from_secs(30)).expect("it stops");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    // SIGKILL is delivered at once; give the kernel a moment to reap.
    let left = |deadline: Instant| loop {
        let alive: Vec<i32> = (noted().lines())
            .filter_map(|l| l.trim().parse().ok())
            .filter(|&pid| running(pid))
            .collect();
        if alive.is_empty() || Instant::now() > deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let alive = left(Instant::now() + Duration::from_secs(5));
    for &pid in &alive {
        // SAFETY: kill(2) on a process this test's wrapper started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(
        alive.is_empty(),
        "still running after conform exited: {alive:?}"
    );
    // The next run on the same directory removes what the first left.
    let (real, _) = real_node();
    let out = run_within(
        &mut conform(&dir, &real, "60", &["--cases", "1"]),
        Duration::from_secs(180),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(programs_left(&dir).is_empty(), "{:?}", programs_left(&dir));
}

/// An interrupt while the addon builds leaves none of the compiler's
/// temporary files: the compiler writes them to a directory of the build
/// (its `TMPDIR`), removed on every path (before issue 51 they stayed in
/// `/tmp`, the compiler being killed with its group).
#[test]
fn an_interrupted_addon_build_leaves_no_temporary_files() {
    let dir = temp_dir("interrupted-build");
    let seen = dir.join("tmpdir-seen");
    // A compiler that, for the build itself, writes a temporary file where
    // it is told to and hangs; anything else goes to the real one.
    let cxx = dir.join("cxx");
    std::fs::write(
        &cxx,
        format!(
            "#!/bin/sh\ncase \"$*\" in *-shared*) ;; *) exec g++ \"$@\" ;; esac\necho x > \"${{TMPDIR:-/tmp}}/ccscopecheck$$.o\"\necho \"${{TMPDIR:-/tmp}}\" > '{}'\nexec sleep 600\n",
            p(&seen)
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cxx, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (real, _) = real_node();
    let child = conform(&dir, &real, "60", &["--cases", "1"])
        .env("SCOPECHECK_CXX", &cxx)
        .spawn()
        .expect("it starts");
    let start = Instant::now();
    while !seen.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let tmpdir = std::fs::read_to_string(&seen).expect("the compiler ran");
    let tmpdir = PathBuf::from(tmpdir.trim());
    signal(&child, libc::SIGINT);
    let out = wait_within(child, Duration::from_secs(30)).expect("it stops");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(
        tmpdir.starts_with(dir.join("build")),
        "the compiler's TMPDIR {} is not the build's",
        tmpdir.display()
    );
    assert!(!tmpdir.exists(), "{} was left", tmpdir.display());
}
