//! The committed fuzz corpus, replayed without the fuzzer: every
//! `fuzz/corpus/lockstep/*` input decoded (`scopecheck::fuzzing::decode`) and
//! run on both sides in lockstep, every `fuzz/corpus/trace_parser/*` input
//! through the parser property, and every saved mutant crash
//! (`fuzz/crashes/lockstep_mutant/NAME`) turned back into a trace that still
//! kills its mutant. Also how the seed corpus is written:
//!
//!     cargo run -- plumbing fuzz-seed

use model::vocab::trace;
use scopecheck::fuzzing::{self, Mutant, TRACE_MARKER};
use scopecheck::lockstep;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The files of a directory, sorted, without hidden ones (libFuzzer's
/// `.tmp` leftovers).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn lockstep_corpus_replays_without_divergence() {
    let files = files(&root().join("fuzz/corpus/lockstep"));
    assert!(
        files.len() >= 20,
        "the lockstep corpus has {} inputs; write the seeds with `cargo run -- plumbing fuzz-seed`",
        files.len()
    );
    let mut ops = 0;
    let mut failures = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).expect("a corpus file");
        match fuzzing::check_lockstep(&bytes, None, true) {
            Ok(n) => ops += n,
            Err(report) => failures.push(format!("{}:\n{report}", file.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The inputs decode to real sequences, not to nothing.
    assert!(
        ops >= 10 * files.len(),
        "only {ops} ops in {} inputs",
        files.len()
    );
}

#[test]
fn trace_seeds_decode_to_their_traces() {
    // A seed written from a trace decodes to the trace's ops that the eager
    // model accepts, in order: a subsequence of them, and nearly all of them
    // (the traces are programs Node runs; a seed may lag behind a changed
    // model by an op or two).
    let (mut seeds, mut kept, mut written) = (0, 0, 0);
    for file in files(&root().join("fuzz/corpus/lockstep")) {
        let bytes = std::fs::read(&file).expect("a corpus file");
        let Some(text) = bytes.strip_prefix(TRACE_MARKER) else {
            continue;
        };
        let text = std::str::from_utf8(text).expect("seeds are UTF-8");
        let ops = trace::parse(text)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            .ops();
        let decoded = fuzzing::decode(&bytes);
        assert!(!decoded.is_empty(), "{} decodes to nothing", file.display());
        let mut rest = ops.iter();
        for op in &decoded {
            assert!(
                rest.any(|o| o == op),
                "{}: `{op}` is not next in the trace",
                file.display()
            );
        }
        seeds += 1;
        kept += decoded.len();
        written += ops.len();
    }
    assert!(seeds >= 20, "only {seeds} trace seeds");
    assert!(
        kept * 10 >= written * 9,
        "the seeds decode to {kept} of their {written} ops"
    );
}

#[test]
fn trace_parser_corpus_keeps_the_property() {
    let files = files(&root().join("fuzz/corpus/trace_parser"));
    assert!(files.len() >= 20, "only {} inputs", files.len());
    let mut parsed = 0;
    for file in &files {
        let bytes = std::fs::read(file).expect("a corpus file");
        let text = String::from_utf8_lossy(&bytes);
        match fuzzing::check_trace_parser(&text) {
            Ok(true) => parsed += 1,
            Ok(false) => {}
            Err(why) => panic!("{}: {why}", file.display()),
        }
    }
    assert!(parsed >= 20, "only {parsed} inputs parse");
}

#[test]
fn the_parser_property_fails_on_what_it_should() {
    // A trace that parses round-trips; broken text is simply not a trace.
    assert_eq!(
        fuzzing::check_trace_parser("callback-scope 5 1 R1\nclose\n"),
        Ok(true)
    );
    assert_eq!(
        fuzzing::check_trace_parser("callback-scope 5 x R1\n"),
        Ok(false)
    );
    assert_eq!(fuzzing::check_trace_parser("=> before any op\n"), Ok(false));
}

#[test]
fn saved_mutant_crashes_become_traces_that_kill_their_mutant() {
    let dir = root().join("fuzz/crashes/lockstep_mutant");
    let files = files(&dir);
    assert!(!files.is_empty(), "no saved crash under {}", dir.display());
    for file in files {
        let name = file
            .file_name()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        let mutant = Mutant::from_name(&name)
            .unwrap_or_else(|| panic!("{}: not named after a mutant", file.display()));
        let bytes = std::fs::read(&file).expect("a crash file");
        let text = fuzzing::crash_to_trace(&bytes, Some(mutant));
        let ops = trace::parse(&text)
            .unwrap_or_else(|e| {
                panic!(
                    "the trace of {} does not parse: {e}\n{text}",
                    file.display()
                )
            })
            .ops();
        assert!(
            lockstep::run_with(&ops, Some(mutant), false).is_err(),
            "{}: the trace no longer kills {name}:\n{text}",
            file.display()
        );
        assert!(
            lockstep::run(&ops).is_ok(),
            "{}: the trace diverges without the mutant too:\n{text}",
            file.display()
        );
    }
}

#[test]
fn crash_to_trace_without_divergence_prints_the_decoded_ops() {
    let bytes: Vec<u8> = (0u8..=255).rev().cycle().take(700).collect();
    let text = fuzzing::crash_to_trace(&bytes, None);
    assert!(text.contains("no divergence"), "{text}");
    let ops = trace::parse(&text).expect("the trace parses").ops();
    assert_eq!(ops, fuzzing::decode(&bytes));
    assert!(!ops.is_empty());
}

#[test]
fn seed_corpus_writes_one_seed_per_trace_for_each_target() {
    let out = std::env::temp_dir().join(format!("scopecheck-seed-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let written = fuzzing::seed_corpus(root(), &out).expect("the seed corpus is written");
    let traces = fuzzing::seed_traces(root()).expect("the traces are listed");
    assert_eq!(written.len(), 2 * traces.len());
    for trace_file in &traces {
        let text = std::fs::read(trace_file).expect("a trace");
        let group = trace_file
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let stem = trace_file.file_stem().unwrap().to_string_lossy();
        let name = format!("{group}-{stem}");
        let seed = std::fs::read(out.join("lockstep").join(&name)).expect("a lockstep seed");
        assert_eq!(seed.strip_prefix(TRACE_MARKER), Some(&text[..]));
        let seed = std::fs::read(out.join("trace_parser").join(&name)).expect("a parser seed");
        assert_eq!(seed, text);
    }
    std::fs::remove_dir_all(&out).expect("the temporary corpus is removed");
}

/// The committed seed corpus is what `scopecheck plumbing fuzz-seed` writes now:
/// every scenario and regression trace has its seed, byte for byte.
#[test]
fn committed_seed_corpus_is_up_to_date() {
    let out = std::env::temp_dir().join(format!("scopecheck-seed-check-{}", std::process::id()));
    let written = fuzzing::seed_corpus(root(), &out).expect("written");
    assert!(written.len() >= 2 * 29, "only {} seed files", written.len());
    for file in &written {
        let rel = file.strip_prefix(&out).expect("under out");
        let committed = root().join("fuzz/corpus").join(rel);
        let want = std::fs::read(file).expect("written seed");
        let have = std::fs::read(&committed).unwrap_or_default();
        assert!(
            want == have,
            "{} is missing or stale: run `cargo run -- plumbing fuzz-seed`",
            committed.display()
        );
    }
    std::fs::remove_dir_all(&out).expect("the temporary corpus is removed");
}

#[test]
fn fuzz_trace_command_prints_a_replayable_trace_and_rejects_bad_input() {
    let bin = env!("CARGO_BIN_EXE_scopecheck");
    let dir = std::env::temp_dir().join(format!("scopecheck-fuzz-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let crash = dir.join("crash-input");
    let bytes: Vec<u8> = (0..500u32).map(|i| (i * 37 % 251) as u8).collect();
    std::fs::write(&crash, &bytes).unwrap();
    let out = Command::new(bin)
        .args(["plumbing", "fuzz-trace"])
        .arg(&crash)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        trace::parse(&text).expect("it parses").ops(),
        fuzzing::decode(&bytes)
    );

    let missing = dir.join("no-such-file");
    let out = Command::new(bin)
        .args(["plumbing", "fuzz-trace"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));

    let out = Command::new(bin)
        .args(["plumbing", "fuzz-trace", "--mutant", "no-such-mutant"])
        .arg(&crash)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The byte form reaches every op kind of the trace syntax: 20 000 inputs of
/// pseudo-random bytes (a fixed xorshift, so the test is deterministic) are
/// decoded and every kind of `OpKind::ALL` must occur in some decoded sequence.
/// A kind the byte decoder cannot draw, or that the model always rejects
/// where the decoder draws it, fails the test with its name.
#[test]
fn byte_inputs_reach_every_op_kind() {
    use std::collections::BTreeSet;
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut seen = BTreeSet::new();
    for _ in 0..20_000 {
        let len = 16 + (next() % 240) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if bytes.starts_with(TRACE_MARKER) {
            continue;
        }
        for op in fuzzing::decode(&bytes) {
            seen.insert(op.kind());
        }
    }
    let missing: Vec<model::vocab::OpKind> = (model::vocab::OpKind::ALL.iter().copied())
        .filter(|k| !seen.contains(k))
        .collect();
    assert!(missing.is_empty(), "never decoded from bytes: {missing:?}");
}
