//! What the cargo-fuzz targets (`fuzz/`) run, kept here so that tests and
//! the command line use the same code: fuzz input bytes to op sequences,
//! the lockstep and trace-parser properties, the seed corpus, and turning a
//! crash file back into a replayable trace.
//!
//! An input is read in one of two ways:
//!
//! * **text**: an input that starts with [`TRACE_MARKER`] (`#trace` and a
//!   newline) is a text trace; each line is parsed on its own
//!   ([`model::vocab::trace::parse`]) and a line that does not parse is
//!   skipped, so that a mutated trace still says something. The seed corpus
//!   is written this way from the scenario and regression traces.
//! * **bytes**: anything else is read with `arbitrary::Unstructured`, one
//!   op after another, as the random check draws them ([`crate::draw`]):
//!   bytes pick a kind by weight among those the model enables, more bytes
//!   its arguments, from the small pools of [`crate::draw`] (ids of the
//!   frames open, the current ids, 0, -1, fresh ones; resources `R1`..`R4`;
//!   hooks `H1`..`H3`; storages `A1`, `A2` and stores 1..=3), so that the
//!   fuzzer reaches interesting states quickly.
//!
//! Either way an op is kept only if the eager model enables it
//! ([`model::Environment::enabled`]) in the state the ops kept so far lead
//! to, so every decoded sequence is one Node could run; decoding stops when
//! the process ends or after [`MAX_OPS`] ops.

use crate::draw::{self, Choices};
use crate::lockstep::{self, Divergence};
use arbitrary::Unstructured;
pub use lazy::mutant::Mutant;
pub use model::vocab::NodeVersion;
use model::vocab::{trace, Op, OpKind, Runtime};
use model::Eager;
use std::io;
use std::path::{Path, PathBuf};

/// The first bytes of an input in the text form.
pub const TRACE_MARKER: &[u8] = b"#trace\n";

/// The longest sequence [`decode`] returns.
pub const MAX_OPS: usize = 256;

/// The byte form's choices: each is read from the fuzzer's bytes (0 once
/// they run out).
impl Choices for Unstructured<'_> {
    fn below(&mut self, n: u32) -> u32 {
        self.int_in_range(0..=n - 1).unwrap_or(0)
    }
}

/// Keeps the ops the eager model accepts, in order.
struct Valid {
    eager: Eager,
    ops: Vec<Op>,
}

impl Valid {
    /// Nothing kept yet; on a node version other than 26 its `node-version` op
    /// first, so that the sequence replays on that node version.
    fn on(version: NodeVersion) -> Self {
        let mut valid = Valid {
            eager: Eager::new(),
            ops: Vec::new(),
        };
        if version != NodeVersion::V26 {
            valid.offer(Op::NodeVersion(version));
        }
        valid
    }

    fn full(&self) -> bool {
        self.eager.exited || self.ops.len() >= MAX_OPS
    }

    /// Keep `op` if the model enables it in the state the kept ops lead to.
    fn offer(&mut self, op: Op) {
        if self.eager.enabled(&op).is_ok() {
            let _ = self.eager.apply(&op);
            self.ops.push(op);
        }
    }
}

/// Decode a fuzz input to an op sequence Node could run (see the module
/// documentation). Never panics; every input gives a sequence, maybe empty.
pub fn decode(bytes: &[u8]) -> Vec<Op> {
    decode_on(bytes, NodeVersion::V26)
}

/// [`decode`] on a node version: on 20 the sequence starts with
/// `node-version 20`, and what that node version refuses (a Global holder, the
/// ALS ops) is not kept.
pub fn decode_on(bytes: &[u8], version: NodeVersion) -> Vec<Op> {
    let mut valid = Valid::on(version);
    if let Some(text) = bytes.strip_prefix(TRACE_MARKER) {
        let text = String::from_utf8_lossy(text);
        for line in text.lines() {
            if valid.full() {
                break;
            }
            // A line holds at most one op; comments, blank lines and lines
            // that do not parse (expectations on their own, mutated text)
            // give none.
            if let Ok(t) = trace::parse(line) {
                for step in t.steps {
                    valid.offer(step.op);
                }
            }
        }
        return valid.ops;
    }
    let mut u = Unstructured::new(bytes);
    while !u.is_empty() && !valid.full() {
        let mut weights = [0; OpKind::COUNT];
        for &kind in OpKind::ALL {
            weights[kind as usize] = draw::weights(kind).bytes;
        }
        match draw::enabled_op(&valid.eager, &mut weights, &mut u) {
            Some(op) => valid.offer(op),
            None => break,
        }
    }
    valid.ops
}

/// The report of a divergence: the trace up to and including the diverging
/// op in the text format, after a comment header with the divergence.
pub fn report(ops: &[Op], divergence: &Divergence, mutant: Option<Mutant>) -> String {
    let mut out = String::from("# Divergence found by fuzzing (scopecheck::fuzzing)");
    if let Some(m) = mutant {
        out.push_str(&format!(", mutant {}", m.name()));
    }
    out.push('\n');
    for line in divergence.to_string().lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    let end = (divergence.index + 1).min(ops.len());
    out.push_str(&trace::print(&ops[..end]));
    out
}

/// The `lockstep` property on a decoded input: both sides agree on every
/// op (and, with `refinement`, the refinement relation holds after every
/// op), with `mutant` switched on in the lazy side if given. `Ok` is the
/// number of ops run; `Err` is the [`report`].
pub fn check_lockstep(
    bytes: &[u8],
    mutant: Option<Mutant>,
    refinement: bool,
) -> Result<usize, String> {
    check_lockstep_on(bytes, NodeVersion::V26, mutant, refinement)
}

/// [`check_lockstep`] on a node version ([`decode_on`]).
pub fn check_lockstep_on(
    bytes: &[u8],
    version: NodeVersion,
    mutant: Option<Mutant>,
    refinement: bool,
) -> Result<usize, String> {
    let ops = decode_on(bytes, version);
    match lockstep::run_with(&ops, mutant, refinement) {
        Ok(steps) => Ok(steps.len()),
        Err(d) => Err(report(&ops, &d, mutant)),
    }
}

/// The `trace_parser` property: `parse` never panics on any text (a panic
/// propagates to the caller), and a trace that parses prints
/// ([`trace::print`]) to text that parses back to the same ops. `Ok` is
/// whether `text` parsed.
pub fn check_trace_parser(text: &str) -> Result<bool, String> {
    let Ok(parsed) = trace::parse(text) else {
        return Ok(false);
    };
    let ops = parsed.ops();
    let printed = trace::print(&ops);
    match trace::parse(&printed) {
        Ok(again) if again.ops() == ops => Ok(true),
        Ok(again) => Err(format!(
            "print then parse changed the ops:\n{ops:?}\nprinted:\n{printed}\nre-parsed:\n{:?}",
            again.ops()
        )),
        Err(e) => Err(format!(
            "the printed trace does not parse ({e}):\n{printed}"
        )),
    }
}

/// A crash file (any fuzz input) as a replayable text trace: the decoded
/// ops, with a header. When they diverge (with `mutant` switched on in the
/// lazy side, if given; with the refinement check only without a mutant,
/// as the targets run), the trace is shrunk with [`crate::check::minimize`]
/// (it stays valid and still diverges), ends at the diverging op, and the
/// header shows the divergence. Replay it with `scopecheck replay FILE`
/// (adding `--mutant NAME` for a mutant's crash).
pub fn crash_to_trace(bytes: &[u8], mutant: Option<Mutant>) -> String {
    let ops = decode(bytes);
    let refinement = mutant.is_none();
    match lockstep::run_with(&ops, mutant, refinement) {
        Err(d) => {
            let small = crate::check::minimize(&ops[..=d.index], mutant, refinement);
            let (ops, d) = match lockstep::run_with(&small, mutant, refinement) {
                Err(d2) => (small, d2),
                // `minimize` returns a diverging sequence; keep the original
                // should that ever not hold.
                Ok(_) => (ops, d),
            };
            let mut out = format!(
                "# Decoded from a fuzz input of {} bytes (scopecheck plumbing fuzz-trace), shrunk to {} ops.\n",
                bytes.len(),
                d.index + 1
            );
            out.push_str(&report(&ops, &d, mutant));
            out
        }
        Ok(_) => {
            let mut out = format!(
                "# Decoded from a fuzz input of {} bytes (scopecheck plumbing fuzz-trace); no divergence.\n",
                bytes.len()
            );
            out.push_str(&trace::print(&ops));
            out
        }
    }
}

/// The environment variable the `lockstep_mutant` target reads.
pub const MUTANT_VAR: &str = "SCOPECHECK_MUTANT";

/// The mutant named (in kebab case, as `scopecheck mutants` prints it) by
/// the environment variable [`MUTANT_VAR`]; `Err` says what is wrong.
pub fn mutant_from_env() -> Result<Mutant, String> {
    let name = std::env::var(MUTANT_VAR).map_err(|_| {
        format!("set {MUTANT_VAR} to a mutant name (scopecheck mutants lists them)")
    })?;
    Mutant::from_name(&name).ok_or_else(|| {
        let names: Vec<String> = Mutant::ALL.iter().map(|m| m.name()).collect();
        format!(
            "{MUTANT_VAR}={name:?} is not a mutant; expected one of {}",
            names.join(", ")
        )
    })
}

/// The environment variable the `lockstep` and `lockstep_mutant` targets
/// read for the node version (`20` or `26`; unset: 26), as `check`'s
/// `--node-version`.
pub const NODE_VERSION_VAR: &str = "SCOPECHECK_NODE_VERSION";

/// The node version named by [`NODE_VERSION_VAR`] (26 when it is unset); `Err`
/// says what is wrong.
pub fn node_version_from_env() -> Result<NodeVersion, String> {
    match std::env::var(NODE_VERSION_VAR) {
        Err(_) => Ok(NodeVersion::default()),
        Ok(v) => v.parse().map_err(|e| format!("{NODE_VERSION_VAR}: {e}")),
    }
}

/// What a fuzz target's `init` does with a setting read from the
/// environment: the value, or the target's name and the reason on stderr
/// and exit code 2 (libFuzzer cannot report a setup error otherwise).
pub fn setting_or_exit<T>(target: &str, setting: Result<T, String>) -> T {
    setting.unwrap_or_else(|why| {
        eprintln!("{target}: {why}");
        std::process::exit(2)
    })
}

/// The trace files the seed corpus is made from: `tests/scenarios/*.trace`
/// and `tests/regressions/*.trace` under `root`, sorted.
pub fn seed_traces(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for dir in ["tests/scenarios", "tests/regressions"] {
        for entry in std::fs::read_dir(root.join(dir))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "trace") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Write the seed corpus of both targets into `out` (normally
/// `fuzz/corpus`) from [`seed_traces`] of `root`: `out/lockstep/NAME` is the
/// trace after [`TRACE_MARKER`], `out/trace_parser/NAME` the trace as it
/// is, NAME being `scenarios-STEM` or `regressions-STEM`. Returns the files
/// written.
pub fn seed_corpus(root: &Path, out: &Path) -> io::Result<Vec<PathBuf>> {
    let lockstep_dir = out.join("lockstep");
    let parser_dir = out.join("trace_parser");
    std::fs::create_dir_all(&lockstep_dir)?;
    std::fs::create_dir_all(&parser_dir)?;
    let mut written = Vec::new();
    for trace_file in seed_traces(root)? {
        let text = std::fs::read(&trace_file)?;
        let group = trace_file
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = trace_file
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!("{group}-{stem}");
        let mut seed = TRACE_MARKER.to_vec();
        seed.extend_from_slice(&text);
        for (dir, bytes) in [(&lockstep_dir, &seed), (&parser_dir, &text)] {
            let path = dir.join(&name);
            std::fs::write(&path, bytes)?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decoded_sequence_is_valid() {
        let mut bytes = Vec::new();
        let mut x: u32 = 66511;
        for len in [0usize, 1, 7, 64, 600, 4096] {
            bytes.clear();
            for _ in 0..len {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                bytes.push((x >> 16) as u8);
            }
            let ops = decode(&bytes);
            assert!(ops.len() <= MAX_OPS);
            let mut eager = Eager::new();
            for op in &ops {
                assert!(
                    eager.apply(op).is_ok(),
                    "{op} rejected in\n{}",
                    trace::print(&ops)
                );
            }
        }
    }

    #[test]
    fn text_form_keeps_parsable_lines() {
        let input = b"#trace\ncallback-scope 5 1 R1\n=> nothing\nnot an op\nexecution-async-id\nclose\nclose\n";
        let ops = decode(input);
        let text: Vec<String> = ops.iter().map(|o| o.to_string()).collect();
        // The second close ends the main script's scope; both are valid.
        assert_eq!(
            text,
            [
                "callback-scope 5 1 R1",
                "execution-async-id",
                "close",
                "close"
            ]
        );
        // Without the marker the same bytes are read as the byte form.
        assert_ne!(decode(&input[7..]), ops);
    }
}
