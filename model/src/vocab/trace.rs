//! The text trace format: one [`Op`] per line, exactly as `Op`'s `Display`
//! prints it, with comments and expectations.
//!
//! ```text
//! # A comment runs from `#` to the end of the line; blank lines are ignored.
//! create-hook H1 init before after destroy
//! enable-hook H1
//! callback-scope 5 1 global R2 skip-queues
//!   execution-async-id
//!   => executionAsyncId = 5
//! close
//! ```
//!
//! Rules:
//!
//! * Tokens are separated by whitespace; leading indentation is ignored
//!   ([`print()`] indents by two spaces per open frame, the parser does not
//!   care).
//! * Lines end with `\n`, `\r\n` or a lone `\r`; a UTF-8 byte-order mark
//!   at the start of the text is ignored.
//! * `#` starts a comment anywhere on a line, expectation lines included
//!   (no op or observation text contains `#`).
//! * A line whose first non-blank characters are `=>` is an expectation: the
//!   rest of the line, trimmed, is appended to [`Step::expected`] of the most
//!   recent op. An expectation before any op, or an empty one, is an error.
//! * Ids are `i64` written as `-?[0-9]+`; resources are `R<n>` and hooks
//!   `H<n>` with `n` a `u32` written in decimal digits (a hook's below
//!   `u32::MAX`, the model's name for Node's own v20 `storageHook`);
//!   `AsyncLocalStorage` instances are `A<n>` and store values `u32`s
//!   (`als-run A1 3`).
//! * `node-version 20|26` names the node version the trace is for; a
//!   header op, like `no-force-async-hooks-checks` (26 without it).
//! * The optional words after a scope's resource (`skip-hooks`,
//!   `skip-queues`) and a hook's callbacks (`init before after destroy
//!   promiseResolve`) may come in any order, each at most once; `none`
//!   stands alone for a hook without callbacks.
//! * An `emit-init` type name is a token of `[A-Za-z0-9_.-]`.
//!
//! * A trace is UTF-8 text; a line is at most [`MAX_LINE_BYTES`] bytes.
//!
//! Every error names the 1-based line and the 1-based column (in characters)
//! of the offending token, or of the end of the line when a token is missing
//! (of the first byte that is not UTF-8, or the first past the longest
//! line), and quotes at most [`QUOTE_CHARS`] characters of the input.
//!
//! [`Reader`] reads a trace step by step from any [`std::io::BufRead`],
//! holding one line and one step at a time: a tool that runs a trace as
//! it reads it needs memory for what the model holds, not for the trace.
//! [`parse`] reads a whole text with it.
//!
//! Expectations are checked with [`Step::meets`]: an op's observations (their
//! `Display` text, in order) must equal its `=>` lines. `scopecheck run`,
//! `replay` and `conform FILE` check every op that has `=>` lines;
//! `tests/scenarios.rs` checks every op of a scenario ([`meets_every_step`]),
//! so that there an op without `=>` lines must show nothing.
//!
//! [`print()`] and [`parse`] round-trip: `parse(&print(ops)).ops() == ops` for
//! every op sequence whose `emit-init` type names are valid type-name tokens
//! (a type name with a space or a `#` cannot be written in this syntax).

use super::observation::Observation;
use super::op::{Op, OpKind};
use super::runtime::{OpError, Runtime};
use super::tokens::Tokens;
pub use super::tokens::{quote, quote_at_most, ParseError, QUOTE_CHARS};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One op of a trace, where it was written, and what the trace expects it to
/// show.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Step {
    /// The 1-based line the op is on.
    pub line: usize,
    /// The op.
    pub op: Op,
    /// The `=>` lines that follow the op, each trimmed, without the `=>`:
    /// normally the `Display` text of an expected [`Observation`](super::Observation).
    pub expected: Vec<String>,
}

/// A parsed trace: its ops in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Trace {
    /// The steps, in file order.
    pub steps: Vec<Step>,
}

impl Trace {
    /// The ops of the trace, in order, without line numbers or expectations.
    pub fn ops(&self) -> Vec<Op> {
        self.steps.iter().map(|s| s.op.clone()).collect()
    }

    /// How many `=>` lines the trace has.
    pub fn expectations(&self) -> usize {
        self.steps.iter().map(|s| s.expected.len()).sum()
    }
}

/// An op whose observations are not what its `=>` lines say.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unmet {
    /// The 1-based line of the op.
    pub line: usize,
    /// The op in the trace syntax.
    pub op: String,
    /// The op's `=>` lines (empty: it was expected to show nothing).
    pub expected: Vec<String>,
    /// What it showed, each observation's `Display` text, in order; or,
    /// when it did not run, why (`refused` is then set).
    pub observed: Vec<String>,
    /// The op did not run: the runtime refused it, or the process had
    /// already ended (`observed` holds the reason).
    pub refused: bool,
}

/// `"a" | "b"`, or `(no observation)`.
fn show_lines(lines: &[String]) -> String {
    if lines.is_empty() {
        return "(no observation)".to_string();
    }
    lines
        .iter()
        .map(|l| format!("{l:?}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

impl fmt::Display for Unmet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "line {}: `{}`", self.line, self.op)?;
        writeln!(f, "  expected: {}", show_lines(&self.expected))?;
        if self.refused {
            write!(f, "  observed: not run: {}", self.observed.join("; "))
        } else {
            write!(f, "  observed: {}", show_lines(&self.observed))
        }
    }
}

impl Step {
    /// Compare what the op answered with its `=>` lines: the observations'
    /// `Display` texts must equal them, in order. An op that was refused, or
    /// did not run because the process had ended (`OpError::Exited`), meets
    /// no expectation, not even "nothing".
    pub fn meets(&self, answer: Result<&[Observation], &OpError>) -> Result<(), Unmet> {
        let (observed, refused) = match answer {
            Ok(observations) => (
                observations.iter().map(ToString::to_string).collect(),
                false,
            ),
            Err(e) => (vec![e.to_string()], true),
        };
        if !refused && observed == self.expected {
            return Ok(());
        }
        Err(Unmet {
            line: self.line,
            op: self.op.to_string(),
            expected: self.expected.clone(),
            observed,
            refused,
        })
    }
}

/// Run `trace` on `rt` from its current state, asking [`Step::meets`] of
/// every op, including those without `=>` lines (they must show nothing):
/// the check of `tests/scenarios`. The first unmet expectation, if any.
pub fn meets_every_step(rt: &mut dyn Runtime, trace: &Trace) -> Result<(), Unmet> {
    for step in &trace.steps {
        step.meets(rt.apply(&step.op).as_deref())?;
    }
    Ok(())
}

/// The longest line a trace may have, in bytes (its line break not
/// counted): a longer one is an error at its line, not a line held whole.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A trace read step by step: an iterator of [`Step`]s, each yielded once
/// the line after its `=>` lines is read, then at most one [`ParseError`]
/// (reading stops there). Lines end with `\n`, `\r\n` or a lone `\r`; a
/// leading byte-order mark is skipped; a line of invalid UTF-8, or longer
/// than [`MAX_LINE_BYTES`], is an error at its line and column, as is an
/// input error (`line` then names the line being read).
pub struct Reader<R> {
    input: R,
    /// The number of the last line handed out.
    line: usize,
    /// Lines split off the last chunk read (a chunk with lone `\r`s).
    lines: std::collections::VecDeque<String>,
    /// The step whose `=>` lines are being read.
    current: Option<Step>,
    /// Reading stopped (an error, or the end).
    done: bool,
    buf: Vec<u8>,
    /// The start of a line cut off by the chunk limit (after a `\r`).
    carry: Vec<u8>,
    /// The last chunk ended at a `\r`: a `\n` next belongs to it.
    after_cr: bool,
}

impl<R: std::io::BufRead> Reader<R> {
    /// Read the trace in `input`.
    pub fn new(input: R) -> Self {
        Reader {
            input,
            line: 0,
            lines: std::collections::VecDeque::new(),
            current: None,
            done: false,
            buf: Vec::new(),
            carry: Vec::new(),
            after_cr: false,
        }
    }

    /// The next line and its number; `None` at the end of the input.
    fn next_line(&mut self) -> Option<Result<(usize, String), ParseError>> {
        if self.lines.is_empty() {
            if let Err(e) = self.read_chunk()? {
                return Some(Err(e));
            }
        }
        let text = self.lines.pop_front()?;
        self.line += 1;
        Some(Ok((self.line, text)))
    }

    /// Read up to the next `\n` (at most [`MAX_LINE_BYTES`] and a little
    /// more; then up to the last `\r` in it, the rest kept for the next
    /// chunk) and split it into lines. `None` at the end of the input.
    fn read_chunk(&mut self) -> Option<Result<(), ParseError>> {
        use std::io::BufRead;
        let first = self.line + 1;
        let too_long = |line: usize, column: usize| ParseError {
            line,
            column,
            message: format!(
                "the line is longer than {MAX_LINE_BYTES} bytes, the most a trace line may have"
            ),
        };
        self.buf.clear();
        self.buf.append(&mut self.carry);
        let limit = (MAX_LINE_BYTES as u64 + 2).saturating_sub(self.buf.len() as u64);
        let read = <&mut R as std::io::Read>::take(&mut self.input, limit)
            .read_until(b'\n', &mut self.buf);
        let n = match read {
            Ok(n) => n as u64,
            Err(e) => {
                return Some(Err(ParseError {
                    line: first,
                    column: 1,
                    message: format!("cannot read the trace: {e}"),
                }))
            }
        };
        // A `\n` right after a chunk that ended at a `\r`: its `\r\n`.
        if std::mem::take(&mut self.after_cr) && self.buf.first() == Some(&b'\n') {
            self.buf.remove(0);
            if self.buf.is_empty() {
                return self.read_chunk();
            }
        }
        if self.buf.is_empty() {
            return None;
        }
        let mut chunk: &[u8] = &self.buf;
        if let Some(rest) = chunk.strip_suffix(b"\n") {
            chunk = rest.strip_suffix(b"\r").unwrap_or(rest);
        } else if n >= limit {
            // The limit, and no line break: up to the last `\r`, or too long.
            match chunk.iter().rposition(|b| *b == b'\r') {
                Some(p) => {
                    self.carry = chunk[p + 1..].to_vec();
                    self.after_cr = self.carry.is_empty();
                    chunk = &chunk[..p];
                }
                None => {
                    let column = String::from_utf8_lossy(&chunk[..MAX_LINE_BYTES.min(chunk.len())])
                        .chars()
                        .count();
                    return Some(Err(too_long(first, column + 1)));
                }
            }
        }
        if first == 1 {
            chunk = chunk.strip_prefix("\u{feff}".as_bytes()).unwrap_or(chunk);
        }
        let text = match std::str::from_utf8(chunk) {
            Ok(t) => t,
            Err(e) => {
                let valid = &chunk[..e.valid_up_to()];
                // Lone `\r`s before it end lines of their own.
                let breaks = valid.iter().filter(|b| **b == b'\r').count();
                let start = valid.iter().rposition(|b| *b == b'\r').map_or(0, |p| p + 1);
                let column = String::from_utf8_lossy(&valid[start..]).chars().count() + 1;
                return Some(Err(ParseError {
                    line: first + breaks,
                    column,
                    message: format!(
                        "invalid UTF-8 (byte 0x{:02X}); a trace is UTF-8 text",
                        chunk[e.valid_up_to()]
                    ),
                }));
            }
        };
        for (k, part) in text.split('\r').enumerate() {
            if part.len() > MAX_LINE_BYTES {
                let cut = (0..=MAX_LINE_BYTES)
                    .rev()
                    .find(|i| part.is_char_boundary(*i))
                    .unwrap_or(0);
                return Some(Err(too_long(first + k, part[..cut].chars().count() + 1)));
            }
        }
        self.lines.extend(text.split('\r').map(str::to_string));
        Some(Ok(()))
    }

    fn fail(&mut self, e: ParseError) -> Option<Result<Step, ParseError>> {
        self.done = true;
        Some(Err(e))
    }
}

impl<R: std::io::BufRead> Iterator for Reader<R> {
    type Item = Result<Step, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let (line, raw) = match self.next_line() {
                None => {
                    self.done = true;
                    return self.current.take().map(Ok);
                }
                Some(Err(e)) => return self.fail(e),
                Some(Ok(l)) => l,
            };
            match classify(line, &raw) {
                Err(e) => return self.fail(e),
                Ok(Line::Blank) => {}
                Ok(Line::Expectation { column, text }) => match self.current.as_mut() {
                    Some(step) => step.expected.push(text.to_string()),
                    None => {
                        return self.fail(ParseError {
                            line,
                            column,
                            message: "expectation \"=>\" before any op; an expectation belongs to the op above it"
                                .to_string(),
                        })
                    }
                },
                Ok(Line::Op(op)) => {
                    let step = Step {
                        line,
                        op,
                        expected: Vec::new(),
                    };
                    if let Some(done) = self.current.replace(step) {
                        return Some(Ok(done));
                    }
                }
            }
        }
        None
    }
}

/// Parse a trace. Never panics; the empty text is the empty trace. A
/// leading byte-order mark is skipped.
pub fn parse(text: &str) -> Result<Trace, ParseError> {
    let steps = Reader::new(text.as_bytes()).collect::<Result<Vec<_>, _>>()?;
    Ok(Trace { steps })
}

/// The deepest indentation [`print()`] writes, in frames: deeper frames are
/// printed at this indentation, so that the text of a deeply nested trace
/// stays linear in its length (10 000 nested scopes indented two spaces
/// each would take 200 MB).
pub const MAX_PRINT_INDENT: usize = 32;

/// Print ops in the trace syntax: one op per line via `Display`, each line
/// ending in `'\n'`, indented by two spaces per frame open around it (see
/// [`Op::opens_frame`] and [`Op::closes_frame`]), up to
/// [`MAX_PRINT_INDENT`] frames. The empty sequence prints as the empty
/// string.
pub fn print(ops: &[Op]) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for op in ops {
        if op.closes_frame() {
            depth = depth.saturating_sub(1);
        }
        for _ in 0..depth.min(MAX_PRINT_INDENT) {
            out.push_str("  ");
        }
        out.push_str(&op.to_string());
        out.push('\n');
        if op.opens_frame() {
            depth += 1;
        }
    }
    out
}

/// Parse one op from one line of trace syntax (indentation and a trailing
/// comment allowed). Errors report line 1.
impl FromStr for Op {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Op, ParseError> {
        if let Some(pos) = s.find(['\n', '\r']) {
            return Err(ParseError {
                line: 1,
                column: s[..pos].chars().count() + 1,
                message: "expected a single line with one op, found a line break".to_string(),
            });
        }
        match classify(1, s)? {
            Line::Op(op) => Ok(op),
            Line::Blank => Err(ParseError {
                line: 1,
                column: s.chars().count() + 1,
                message: format!(
                    "expected an op (one of {}), found end of line",
                    OpKind::names()
                ),
            }),
            Line::Expectation { column, .. } => Err(ParseError {
                line: 1,
                column,
                message: "expected an op, found an expectation \"=>\"".to_string(),
            }),
        }
    }
}

/// What one line of a trace holds.
enum Line<'a> {
    /// Nothing but whitespace and a comment.
    Blank,
    /// `=> text`; `column` is where the `=>` is.
    Expectation { column: usize, text: &'a str },
    /// An op.
    Op(Op),
}

/// The part of a line before its comment.
fn strip_comment(raw: &str) -> &str {
    match raw.find('#') {
        Some(pos) => &raw[..pos],
        None => raw,
    }
}

fn classify(line: usize, raw: &str) -> Result<Line<'_>, ParseError> {
    let content = strip_comment(raw);
    let trimmed = content.trim_start();
    if trimmed.is_empty() {
        return Ok(Line::Blank);
    }
    let column = content[..content.len() - trimmed.len()].chars().count() + 1;
    if let Some(rest) = trimmed.strip_prefix("=>") {
        let text = rest.trim();
        if text.is_empty() {
            return Err(ParseError {
                line,
                column: column + 2,
                message: "expected an observation after \"=>\", found end of line".to_string(),
            });
        }
        return Ok(Line::Expectation { column, text });
    }
    Op::parse(Tokens::new(line, content)).map(Line::Op)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(bytes: &[u8]) -> Result<Vec<(usize, String)>, ParseError> {
        Reader::new(bytes)
            .map(|s| s.map(|s| (s.line, s.op.to_string())))
            .collect()
    }

    #[test]
    fn lone_carriage_returns_past_the_chunk_limit_keep_their_lines() {
        // Old Mac line ends: no `\n` at all, more than a chunk's worth.
        let n = MAX_LINE_BYTES / "execution-async-id\r".len() * 3;
        let text = "execution-async-id\r".repeat(n);
        let lines = lines_of(text.as_bytes()).expect("it parses");
        assert_eq!(lines.len(), n);
        assert!(lines.iter().enumerate().all(|(i, (l, _))| *l == i + 1));
        // `\r\n` cut between two chunks is one line break.
        let mut text = "execution-async-id\r".repeat(MAX_LINE_BYTES / 19 + 1);
        text.push_str("\nnew-async-id\n");
        let lines = lines_of(text.as_bytes()).expect("it parses");
        assert_eq!(
            lines.last().map(|(_, op)| op.as_str()),
            Some("new-async-id")
        );
    }

    #[test]
    fn invalid_utf8_and_long_lines_are_errors_at_their_place() {
        let e = lines_of(b"execution-async-id\nclose \xff\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7), "{e}");
        assert!(e.message.contains("invalid UTF-8 (byte 0xFF)"), "{e}");
        let e = lines_of(b"stop\rexecution-async-id\r\xc3(\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        let long = format!("stop\n{}\n", "x".repeat(MAX_LINE_BYTES + 10));
        let e = lines_of(long.as_bytes()).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("longer than"), "{e}");
    }

    #[test]
    fn errors_quote_a_bounded_prefix() {
        let token = "y".repeat(1_000_000);
        let e = parse(&format!("close {token}\n")).unwrap_err();
        assert!(e.message.len() < 300, "{} bytes", e.message.len());
        assert!(
            e.message.contains("999960 more characters"),
            "{}",
            e.message
        );
        assert_eq!(quote("ab"), "\"ab\"");
    }
}
