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
//!   `H<n>` with `n` a `u32` written in decimal digits; `AsyncLocalStorage`
//!   instances are `A<n>` and store values `u32`s (`als-run A1 3`).
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
use super::op::{
    AlsId, AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, NodeVersion, Op,
    OpKind, ResourceId, ScopeFlags, ScopeKind, StoreValue,
};
use super::runtime::{OpError, Runtime};
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

/// Why a trace did not parse: where, and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ParseError {
    /// The 1-based line.
    pub line: usize,
    /// The 1-based column, in characters, of the offending token (or of the
    /// end of the line when a token is missing).
    pub column: usize,
    /// What was wrong, saying what was expected.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// The longest line a trace may have, in bytes (its line break not
/// counted): a longer one is an error at its line, not a line held whole.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most characters of the input an error message quotes.
pub const QUOTE_CHARS: usize = 40;

/// `text` as an error message quotes it: in double quotes with Rust's
/// escapes, cut after [`QUOTE_CHARS`] characters with how many more there
/// were, so that a 50 MB token makes a short message.
pub fn quote(text: &str) -> String {
    quote_at_most(text, QUOTE_CHARS)
}

/// [`quote`], cut after `max` characters.
pub fn quote_at_most(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!(
            "{:?}... ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        ),
    }
}

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
                    kind_names()
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
    parse_op(Tokens::new(line, content)).map(Line::Op)
}

/// A whitespace-separated token and its 1-based column.
#[derive(Clone, Copy)]
struct Token<'a> {
    column: usize,
    text: &'a str,
}

/// The tokens of one op line, consumed left to right.
struct Tokens<'a> {
    line: usize,
    tokens: Vec<Token<'a>>,
    next: usize,
    /// The column just past the last token: where a missing token is reported.
    end_column: usize,
}

impl<'a> Tokens<'a> {
    fn new(line: usize, content: &'a str) -> Self {
        let mut tokens = Vec::new();
        let mut start: Option<(usize, usize)> = None; // (byte offset, column)
        let mut column = 0usize;
        for (offset, ch) in content.char_indices() {
            column += 1;
            if ch.is_whitespace() {
                if let Some((s, c)) = start.take() {
                    tokens.push(Token {
                        column: c,
                        text: &content[s..offset],
                    });
                }
            } else if start.is_none() {
                start = Some((offset, column));
            }
        }
        if let Some((s, c)) = start {
            tokens.push(Token {
                column: c,
                text: &content[s..],
            });
        }
        let end_column = tokens
            .last()
            .map_or(1, |t| t.column + t.text.chars().count());
        Tokens {
            line,
            tokens,
            next: 0,
            end_column,
        }
    }

    fn error(&self, column: usize, message: String) -> ParseError {
        ParseError {
            line: self.line,
            column,
            message,
        }
    }

    fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.next).copied()
    }

    fn advance(&mut self) -> Option<Token<'a>> {
        let t = self.peek();
        if t.is_some() {
            self.next += 1;
        }
        t
    }

    /// The next token, or an error saying `what` was expected.
    fn expect(&mut self, what: &str) -> Result<Token<'a>, ParseError> {
        match self.advance() {
            Some(t) => Ok(t),
            None => Err(self.error(
                self.end_column,
                format!("expected {what}, found end of line"),
            )),
        }
    }

    fn unexpected(&self, t: Token<'_>, what: &str) -> ParseError {
        self.error(
            t.column,
            format!("expected {what}, found {}", quote(t.text)),
        )
    }

    /// An integer id; `what` names its role.
    fn async_id(&mut self, what: &str) -> Result<AsyncId, ParseError> {
        let t = self.expect(what)?;
        let digits = t.text.strip_prefix('-').unwrap_or(t.text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.unexpected(t, what));
        }
        t.text.parse::<i64>().map_err(|_| {
            self.error(
                t.column,
                format!(
                    "{what}: {} is out of range (from {} to {})",
                    quote(t.text),
                    i64::MIN,
                    i64::MAX
                ),
            )
        })
    }

    /// `<prefix><u32>`, e.g. `R3` or `H1`.
    fn numbered(&self, t: Token<'_>, prefix: char, what: &str) -> Result<u32, ParseError> {
        let digits = match t.text.strip_prefix(prefix) {
            Some(d) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => d,
            _ => return Err(self.unexpected(t, what)),
        };
        digits.parse::<u32>().map_err(|_| {
            self.error(
                t.column,
                format!(
                    "{what}: {} is out of range (the number is at most {})",
                    quote(t.text),
                    u32::MAX
                ),
            )
        })
    }

    fn resource(&mut self, what: &str) -> Result<ResourceId, ParseError> {
        let t = self.expect(what)?;
        self.numbered(t, 'R', what).map(ResourceId)
    }

    fn optional_resource(&mut self) -> Result<Option<ResourceId>, ParseError> {
        match self.advance() {
            None => Ok(None),
            Some(t) => self
                .numbered(t, 'R', "a resource (R<n>) or end of line")
                .map(|n| Some(ResourceId(n))),
        }
    }

    fn als(&mut self) -> Result<AlsId, ParseError> {
        const WHAT: &str = "an AsyncLocalStorage (A<n>)";
        let t = self.expect(WHAT)?;
        self.numbered(t, 'A', WHAT).map(AlsId)
    }

    /// A store value: a `u32` in decimal digits.
    fn store_value(&mut self) -> Result<StoreValue, ParseError> {
        const WHAT: &str = "a store value (a number from 0 to 4294967295)";
        let t = self.expect(WHAT)?;
        if t.text.is_empty() || !t.text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.unexpected(t, WHAT));
        }
        t.text.parse::<StoreValue>().map_err(|_| {
            self.error(
                t.column,
                format!("{WHAT}: {} is out of range", quote(t.text)),
            )
        })
    }

    fn hook(&mut self) -> Result<HookId, ParseError> {
        const WHAT: &str = "a hook (H<n>)";
        let t = self.expect(WHAT)?;
        self.numbered(t, 'H', WHAT).map(HookId)
    }

    /// One of `words`, or nothing; anything else is an error.
    fn optional_word(&mut self, words: &[&str], what: &str) -> Result<Option<&'a str>, ParseError> {
        match self.advance() {
            None => Ok(None),
            Some(t) if words.contains(&t.text) => Ok(Some(t.text)),
            Some(t) => Err(self.unexpected(t, what)),
        }
    }

    /// No tokens remain after the op `kind`.
    fn end(&self, kind: &str) -> Result<(), ParseError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => {
                let hint = if t.text.starts_with("=>") {
                    " (an expectation goes on its own line)"
                } else {
                    ""
                };
                Err(self.error(
                    t.column,
                    format!(
                        "unexpected {} after {kind}; expected end of line{hint}",
                        quote(t.text)
                    ),
                ))
            }
        }
    }
}

/// Every op keyword, comma-separated, for error messages.
fn kind_names() -> String {
    let names: Vec<&str> = OpKind::ALL.iter().map(|k| k.name()).collect();
    names.join(", ")
}

const ASYNC_ID: &str = "an async id (an integer)";
const TRIGGER_ID: &str = "a trigger async id (an integer)";

fn is_type_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

fn parse_op(mut t: Tokens<'_>) -> Result<Op, ParseError> {
    let head = t.expect("an op")?;
    let Some(kind) = OpKind::from_name(head.text) else {
        return Err(t.error(
            head.column,
            format!(
                "unknown op {}; expected one of {}",
                quote(head.text),
                kind_names()
            ),
        ));
    };
    let op = match kind {
        OpKind::NoForceAsyncHooksChecks => Op::NoForceAsyncHooksChecks,
        OpKind::EntryModule => Op::EntryModule,
        OpKind::TimersScope => Op::TimersScope,
        OpKind::CloseOuter => {
            const WHAT: &str = "how many native scopes are inside the one closed (1 or more)";
            let n = t.expect(WHAT)?;
            match n.text.parse::<u32>() {
                Ok(outer) if outer >= 1 && n.text.bytes().all(|b| b.is_ascii_digit()) => {
                    Op::CloseOuter { outer }
                }
                _ => return Err(t.unexpected(n, WHAT)),
            }
        }
        OpKind::CallbackScope => parse_open_scope(&mut t, ScopeKind::CallbackScope)?,
        OpKind::MakeCallback => parse_open_scope(&mut t, ScopeKind::MakeCallback)?,
        OpKind::CloseScope => Op::CloseScope {
            threw: t
                .optional_word(&["threw"], "\"threw\" or end of line")?
                .is_some(),
        },
        OpKind::ResetGlobal => Op::ResetGlobal(t.resource("a resource (R<n>)")?),
        OpKind::CreateHook => parse_create_hook(&mut t)?,
        OpKind::EnableHook => Op::EnableHook(t.hook()?),
        OpKind::DisableHook => Op::DisableHook(t.hook()?),
        OpKind::EmitInit => {
            let async_id = t.async_id(ASYNC_ID)?;
            const TYPE: &str = "a type name (letters, digits, '_', '.', '-')";
            let ty = t.expect(TYPE)?;
            if !is_type_name(ty.text) {
                return Err(t.unexpected(ty, TYPE));
            }
            let trigger_async_id = t.async_id(TRIGGER_ID)?;
            Op::EmitInit {
                async_id,
                type_name: ty.text.to_string(),
                trigger_async_id,
                resource: t.optional_resource()?,
            }
        }
        OpKind::EmitBefore => Op::EmitBefore {
            async_id: t.async_id(ASYNC_ID)?,
            trigger_async_id: t.async_id(TRIGGER_ID)?,
            resource: t.optional_resource()?,
        },
        OpKind::EmitAfter => Op::EmitAfter {
            async_id: t.async_id(ASYNC_ID)?,
        },
        OpKind::EmitDestroy => Op::EmitDestroy {
            async_id: t.async_id(ASYNC_ID)?,
        },
        OpKind::EnterRunInAsyncScope => Op::EnterRunInAsyncScope {
            async_id: t.async_id(ASYNC_ID)?,
            trigger_async_id: t.async_id(TRIGGER_ID)?,
            resource: t.resource("a resource (R<n>)")?,
        },
        OpKind::ExitRunInAsyncScope => Op::ExitRunInAsyncScope,
        OpKind::EnterDefaultTriggerScope => Op::EnterDefaultTriggerScope {
            trigger_async_id: t.async_id(TRIGGER_ID)?,
        },
        OpKind::ExitDefaultTriggerScope => Op::ExitDefaultTriggerScope,
        OpKind::NextTick => Op::NextTick {
            query_resource: t
                .optional_word(&["resource"], "\"resource\" or end of line")?
                .is_some(),
        },
        OpKind::TickCallback => Op::TickCallback,
        OpKind::NextTickBody => Op::NextTickBody,
        OpKind::EndTick => Op::EndTick,
        OpKind::QueueMicrotask => Op::QueueMicrotask,
        OpKind::PromiseThen => Op::PromiseThen,
        OpKind::PromiseReject => Op::PromiseReject,
        OpKind::QueueMicrotaskBody => Op::QueueMicrotaskBody,
        OpKind::PromiseThenBody => Op::PromiseThenBody,
        OpKind::EndMicrotask => Op::EndMicrotask,
        OpKind::ExecutionAsyncId => Op::ExecutionAsyncId,
        OpKind::TriggerAsyncId => Op::TriggerAsyncId,
        OpKind::ExecutionAsyncResource => Op::ExecutionAsyncResource,
        OpKind::DefaultTriggerAsyncId => Op::DefaultTriggerAsyncId,
        OpKind::NewAsyncId => Op::NewAsyncId,
        OpKind::UncaughtException => {
            const WHAT: &str = "\"handled\" or \"unhandled\"";
            let w = t.expect(WHAT)?;
            let handled = match w.text {
                "handled" => true,
                "unhandled" => false,
                _ => return Err(t.unexpected(w, WHAT)),
            };
            Op::UncaughtException { handled }
        }
        OpKind::ClearAsyncIdStack => Op::ClearAsyncIdStack,
        OpKind::Stop => Op::Stop,
        OpKind::NodeVersion => {
            const WHAT: &str = "a node version (20 or 26)";
            let v = t.expect(WHAT)?;
            match v.text {
                "20" => Op::NodeVersion(NodeVersion::V20),
                "26" => Op::NodeVersion(NodeVersion::V26),
                _ => return Err(t.unexpected(v, WHAT)),
            }
        }
        OpKind::AlsRun => Op::AlsRun {
            als: t.als()?,
            store: t.store_value()?,
        },
        OpKind::AlsExit => Op::AlsExit(t.als()?),
        OpKind::EndAlsRun => Op::EndAlsRun,
        OpKind::AlsEnterWith => Op::AlsEnterWith {
            als: t.als()?,
            store: t.store_value()?,
        },
        OpKind::AlsGetStore => Op::AlsGetStore(t.als()?),
        OpKind::AsyncResource => Op::AsyncResource(t.resource("a resource (R<n>)")?),
    };
    t.end(kind.name())?;
    Ok(op)
}

/// `callback-scope|make-callback ID TRIGGER [global] R<n> [skip-hooks] [skip-queues]`.
fn parse_open_scope(t: &mut Tokens<'_>, scope_kind: ScopeKind) -> Result<Op, ParseError> {
    let async_id = t.async_id(ASYNC_ID)?;
    let trigger_async_id = t.async_id(TRIGGER_ID)?;
    let holder = match t.peek() {
        Some(tok) if tok.text == "global" => {
            t.advance();
            Holder::Global
        }
        _ => Holder::Local,
    };
    let id = t.resource(match holder {
        Holder::Local => "a resource (R<n>) or \"global\"",
        Holder::Global => "a resource (R<n>)",
    })?;
    let mut flags = ScopeFlags::default();
    while let Some(tok) = t.advance() {
        let slot = match tok.text {
            "skip-hooks" => &mut flags.skip_async_hooks,
            "skip-queues" => &mut flags.skip_task_queues,
            _ => return Err(t.unexpected(tok, "a flag (skip-hooks, skip-queues) or end of line")),
        };
        if *slot {
            return Err(t.error(tok.column, format!("flag {} given twice", quote(tok.text))));
        }
        *slot = true;
    }
    Ok(Op::OpenScope {
        kind: scope_kind,
        context: AsyncContext {
            async_id,
            trigger_async_id,
        },
        resource: NativeResource { id, holder },
        flags,
    })
}

/// `create-hook H<n> none` or `create-hook H<n> CALLBACK...`.
fn parse_create_hook(t: &mut Tokens<'_>) -> Result<Op, ParseError> {
    const CALLBACKS: &str = "init, before, after, destroy, promiseResolve";
    let hook = t.hook()?;
    let first_what = format!("the hook's callbacks ({CALLBACKS}) or \"none\"");
    let first = t.expect(&first_what)?;
    let mut callbacks = HookCallbacks::default();
    if first.text == "none" {
        return Ok(Op::CreateHook { hook, callbacks });
    }
    let mut tok = Some(first);
    let mut is_first = true;
    while let Some(cb) = tok {
        let slot = match cb.text {
            "init" => &mut callbacks.init,
            "before" => &mut callbacks.before,
            "after" => &mut callbacks.after,
            "destroy" => &mut callbacks.destroy,
            "promiseResolve" => &mut callbacks.promise_resolve,
            "none" => {
                return Err(t.error(
                    cb.column,
                    "\"none\" stands alone; it cannot be combined with callbacks".to_string(),
                ))
            }
            _ if is_first => return Err(t.unexpected(cb, &first_what)),
            _ => return Err(t.unexpected(cb, &format!("a callback ({CALLBACKS}) or end of line"))),
        };
        if *slot {
            return Err(t.error(
                cb.column,
                format!("callback {} given twice", quote(cb.text)),
            ));
        }
        *slot = true;
        is_first = false;
        tok = t.advance();
    }
    Ok(Op::CreateHook { hook, callbacks })
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
