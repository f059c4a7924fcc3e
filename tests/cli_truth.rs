//! The command-line tools tell the truth: `run`, `replay` and `conform FILE`
//! check a trace's `=>` lines; conflicting or out-of-range options are
//! errors; a byte-order mark and CR-only line endings are read; a saved
//! counterexample's header is a command that finds it again.
//!
//! The `conform` cases need `node` (v20, with its headers) and `g++`, as
//! `tests/conform.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_truth")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the temp dir");
    dir
}

fn trace_file(name: &str, text: &str) -> PathBuf {
    let path = temp_dir(name).join(format!("{name}.trace"));
    std::fs::write(&path, text).expect("write the trace");
    path
}

fn scopecheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .env(
            "SCOPECHECK_CONFORM_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("conform"),
        )
        .output()
        .expect("run scopecheck")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

/// A trace whose second expectation is wrong (line 5).
const WRONG: &str = "execution-async-id
=> executionAsyncId = 1
callback-scope 5 1 R1
  execution-async-id
  => executionAsyncId = 6
close
";

#[test]
fn run_checks_expectations() {
    let file = trace_file("run-wrong", WRONG);
    let out = scopecheck(&["run", p(&file)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("EXPECTATION NOT MET at line 4: `execution-async-id`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("expected: \"executionAsyncId = 6\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("observed: \"executionAsyncId = 5\""),
        "{stdout}"
    );
    assert!(stderr.starts_with(&format!("{}:4: 1 expectation(s) not met", file.display())));
    assert!(
        stderr.contains("observed \"executionAsyncId = 5\""),
        "{stderr}"
    );
    // --no-expect: the old behaviour.
    let out = scopecheck(&["run", "--no-expect", p(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // JSON: the unmet expectations are a field, the exit code the same.
    let out = scopecheck(&["run", "--json", p(&file)]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["unmet"][0]["line"], 4);
    assert_eq!(doc["unmet"][0]["observed"][0], "executionAsyncId = 5");
    // Right expectations pass; an op without `=>` lines is not checked.
    let right = WRONG.replace("= 6", "= 5") + "new-async-id\n";
    let out = scopecheck(&["run", p(&trace_file("run-right", &right))]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn run_reports_an_expectation_after_the_end() {
    let file = trace_file(
        "run-after-end",
        "callback-scope 5 1 R1\nuncaught-exception unhandled\n=> exit 1\nexecution-async-id\n=> executionAsyncId = 5\n",
    );
    let out = scopecheck(&["run", p(&file)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("EXPECTATION NOT MET at line 4"), "{stdout}");
    assert!(
        stdout.contains("observed: not run: impossible op: the process has already exited"),
        "{stdout}"
    );
}

#[test]
fn replay_checks_expectations_on_both_sides() {
    let file = trace_file("replay-wrong", WRONG);
    let out = scopecheck(&["replay", p(&file)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("no divergence"), "{stdout}");
    assert!(
        stdout.contains("EXPECTATION NOT MET (both sides) at line 4"),
        "{stdout}"
    );
    assert!(stderr.contains(":4: 1 expectation(s) not met"), "{stderr}");
    let out = scopecheck(&["replay", "--no-expect", p(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // A mutant's lazy side misses the expectation the eager side meets.
    let file = trace_file(
        "replay-mutant",
        "emit-after 1\nexecution-async-id\n=> executionAsyncId = 0\n",
    );
    let out = scopecheck(&["replay", "--mutant", "js-pop-ignores-lazy", p(&file)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("first divergence at line 2"), "{stdout}");
    assert!(
        stdout.contains("EXPECTATION NOT MET (lazy side) at line 2"),
        "{stdout}"
    );
    assert!(!stdout.contains("(eager side)"), "{stdout}");
}

#[test]
fn conform_checks_expectations_and_refuses_what_node_cannot_run() {
    let file = trace_file("conform-wrong", WRONG);
    let out = scopecheck(&["conform", p(&file)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(": equal ("),
        "node agrees with the model: {stdout}"
    );
    assert!(stdout.contains("EXPECTATION NOT MET at line 4"), "{stdout}");
    assert!(stderr.contains(":4: 1 expectation(s) not met"), "{stderr}");
    let out = scopecheck(&["conform", "--no-expect", p(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // An op node cannot run: exit code 2 at its line, before node runs.
    let file = trace_file("conform-stop", "execution-async-id\n\nstop\n");
    let out = scopecheck(&["conform", p(&file)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: {}:3:1: `stop` cannot run on node",
            file.display()
        )),
        "{stderr}"
    );
    // An op the model rejects: exit code 2 at its line.
    let file = trace_file("conform-rejected", "close\nexecution-async-id\n");
    let out = scopecheck(&["conform", p(&file)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}:2:1: the model rejects", file.display())),
        "{stderr}"
    );
}

#[test]
fn conflicting_and_out_of_range_options_are_errors() {
    let file = trace_file("options", "execution-async-id\n");
    for args in [
        vec!["conform", "--scenarios", p(&file)],
        vec!["conform", "--cases", "3", p(&file)],
        vec!["conform", "--seed", "3", "--scenarios"],
        vec!["conform", "--cases", "0"],
        vec!["check", "--max-len", "0"],
        vec!["check", "--cases", "0"],
        vec!["check", "--mutant", "no-such-mutant"],
        vec!["mutants", "--cases", "0"],
    ] {
        let out = scopecheck(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_byte_order_mark_and_cr_line_endings_are_read() {
    let file = trace_file(
        "bom",
        "\u{feff}execution-async-id\n=> executionAsyncId = 1\n",
    );
    let out = scopecheck(&["run", p(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "1: execution-async-id\n  => executionAsyncId = 1\n"
    );
    let file = trace_file(
        "cr",
        "execution-async-id\r=> executionAsyncId = 1\r\rnew-async-id\r",
    );
    let out = scopecheck(&["run", p(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "1: execution-async-id\n  => executionAsyncId = 1\n4: new-async-id\n  => newAsyncId = 2\n"
    );
}

/// The one `.trace` file in `dir`, whose name starts with `prefix`.
fn only_trace_in(dir: &Path, prefix: &str) -> PathBuf {
    let traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the save dir")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    let name = traces[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with(prefix), "{name}");
    traces[0].clone()
}

/// The command between the backticks of a counterexample's first line.
fn header_command(trace: &str) -> Vec<String> {
    let first = trace.lines().next().unwrap_or_default();
    let command = first
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in the header: {first}"));
    command.split_whitespace().map(str::to_string).collect()
}

#[test]
fn a_counterexample_header_is_the_command_that_finds_it_again() {
    // A mutant, a small budget, no refinement: everything the header must carry.
    let first = temp_dir("cx-first");
    let out = scopecheck(&[
        "check",
        "--cases",
        "2000",
        "--seed",
        "9",
        "--max-len",
        "40",
        "--no-refinement",
        "--mutant",
        "js-pop-ignores-lazy",
        "--quiet",
        "--save-dir",
        p(&first),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let saved = only_trace_in(&first, "seed-9-js-pop-ignores-lazy-");
    let trace = std::fs::read_to_string(&saved).expect("the counterexample was saved");
    let command = header_command(&trace);
    assert_eq!(
        command.join(" "),
        "scopecheck check --seed 9 --cases 2000 --max-len 40 --no-refinement --mutant js-pop-ignores-lazy"
    );
    // Run the header's command (the binary for `scopecheck`).
    let again = temp_dir("cx-again");
    let mut args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    args.extend(["--quiet", "--save-dir", p(&again)]);
    let out = scopecheck(&args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let trace_again = std::fs::read_to_string(only_trace_in(&again, "seed-9-js-pop-ignores-lazy-"))
        .expect("saved");
    assert_eq!(trace_again, trace);
    // And the trace replays to the divergence with the mutant it names.
    let out = scopecheck(&["replay", "--mutant", "js-pop-ignores-lazy", p(&saved)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("first divergence"));
}

/// `X MiB` or `X GiB` in bytes.
fn size_of(text: &str) -> f64 {
    let (n, unit) = text.trim().split_once(' ').expect("a size");
    let n: f64 = n.parse().expect("a number");
    n * if unit.starts_with("GiB") {
        (1u64 << 30) as f64
    } else {
        (1u64 << 20) as f64
    }
}

#[test]
fn explore_stops_at_its_memory_limit() {
    // Without a limit this grows until the machine is full (a few MB a
    // second, depth first): under a 4 GB address-space limit, so that a
    // limit that does not work fails the test (an allocation failure)
    // instead of filling the machine. 150 MB: it stops at a hash table's
    // doubling, after about 40 s of growth here.
    let started = std::time::Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 && exec \"$0\" explore --depth 50 --max-nesting 10 --max-memory 150M --quiet")
        .arg(env!("CARGO_BIN_EXE_scopecheck"))
        .output()
        .expect("run sh");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stdout.contains("STOPPED at the memory limit"), "{stdout}");
    assert!(stdout.contains("no divergence"), "{stdout}");
    assert!(
        stderr.starts_with("error: explore stopped before depth 50: "),
        "{stderr}"
    );
    // "... 57 MiB of memory in use and 70 MiB kept in reserve reached the
    // limit of 150 MiB ...": in use below it, the reserve stated.
    let used = stderr
        .split("depth 50: ")
        .nth(1)
        .and_then(|r| r.split(" of memory in use").next())
        .expect("the memory in use");
    assert!(size_of(used) < (150 << 20) as f64, "{stderr}");
    let reserve = stderr
        .split("memory in use and ")
        .nth(1)
        .and_then(|r| r.split(" kept in reserve").next())
        .expect("the reserve");
    assert!(size_of(reserve) >= (64 << 20) as f64, "{stderr}");
    assert!(stderr.contains("reached the limit of 150 MiB"), "{stderr}");
    // About 40 s of growth on an idle machine; 124 s was seen at load 8.
    assert!(started.elapsed().as_secs() < 300, "{:?}", started.elapsed());
}
