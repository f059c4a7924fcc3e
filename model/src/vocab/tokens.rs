//! The words of the trace syntax: a line cut into tokens with their
//! columns, the arguments of ops read from them (ids, `R<n>`, `H<n>`,
//! `A<n>`, store values), and the [`ParseError`] every reading step returns,
//! which quotes a bounded part of the input ([`quote`]).

use super::args::{AlsId, AsyncId, HookId, ResourceId, StoreValue};
use std::fmt;

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

/// A whitespace-separated token and its 1-based column.
#[derive(Clone, Copy)]
pub(super) struct Token<'a> {
    /// Its 1-based column, in characters.
    pub(super) column: usize,
    /// The token.
    pub(super) text: &'a str,
}

/// The tokens of one op line, consumed left to right.
pub(super) struct Tokens<'a> {
    line: usize,
    tokens: Vec<Token<'a>>,
    next: usize,
    /// The column just past the last token: where a missing token is reported.
    end_column: usize,
}

impl<'a> Tokens<'a> {
    /// The tokens of `content`, the text of line `line` without its comment.
    pub(super) fn new(line: usize, content: &'a str) -> Self {
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

    /// An error at `column` of this line.
    pub(super) fn error(&self, column: usize, message: String) -> ParseError {
        ParseError {
            line: self.line,
            column,
            message,
        }
    }

    /// The next token, left where it is.
    pub(super) fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.next).copied()
    }

    /// The next token, taken.
    pub(super) fn advance(&mut self) -> Option<Token<'a>> {
        let t = self.peek();
        if t.is_some() {
            self.next += 1;
        }
        t
    }

    /// The next token, or an error saying `what` was expected.
    pub(super) fn expect(&mut self, what: &str) -> Result<Token<'a>, ParseError> {
        match self.advance() {
            Some(t) => Ok(t),
            None => Err(self.error(
                self.end_column,
                format!("expected {what}, found end of line"),
            )),
        }
    }

    /// `what` was expected where `t` is.
    pub(super) fn unexpected(&self, t: Token<'_>, what: &str) -> ParseError {
        self.error(
            t.column,
            format!("expected {what}, found {}", quote(t.text)),
        )
    }

    /// An integer id; `what` names its role.
    pub(super) fn async_id(&mut self, what: &str) -> Result<AsyncId, ParseError> {
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
    pub(super) fn numbered(
        &self,
        t: Token<'_>,
        prefix: char,
        what: &str,
    ) -> Result<u32, ParseError> {
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

    /// A resource, `R<n>`; `what` names its role.
    pub(super) fn resource(&mut self, what: &str) -> Result<ResourceId, ParseError> {
        let t = self.expect(what)?;
        self.numbered(t, 'R', what).map(ResourceId)
    }

    /// A resource, `R<n>`, or the end of the line.
    pub(super) fn optional_resource(&mut self) -> Result<Option<ResourceId>, ParseError> {
        match self.advance() {
            None => Ok(None),
            Some(t) => self
                .numbered(t, 'R', "a resource (R<n>) or end of line")
                .map(|n| Some(ResourceId(n))),
        }
    }

    /// An `AsyncLocalStorage`, `A<n>`.
    pub(super) fn als(&mut self) -> Result<AlsId, ParseError> {
        const WHAT: &str = "an AsyncLocalStorage (A<n>)";
        let t = self.expect(WHAT)?;
        self.numbered(t, 'A', WHAT).map(AlsId)
    }

    /// A store value: a `u32` in decimal digits.
    pub(super) fn store_value(&mut self) -> Result<StoreValue, ParseError> {
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

    /// A hook, `H<n>`.
    pub(super) fn hook(&mut self) -> Result<HookId, ParseError> {
        const WHAT: &str = "a hook (H<n>)";
        let t = self.expect(WHAT)?;
        let n = self.numbered(t, 'H', WHAT)?;
        if n == u32::MAX {
            // The model's name for v20's AsyncLocalStorage `storageHook`
            // (`model::env::hooks::STORAGE_HOOK`): Node's own, not the trace's.
            return Err(self.error(
                t.column,
                format!(
                    "{WHAT}: {} is the model's name for Node's own hook (v20's AsyncLocalStorage storageHook); a trace's hooks are H0 to H{}",
                    quote(t.text),
                    u32::MAX - 1
                ),
            ));
        }
        Ok(HookId(n))
    }

    /// One of `words`, or nothing; anything else is an error.
    pub(super) fn optional_word(
        &mut self,
        words: &[&str],
        what: &str,
    ) -> Result<Option<&'a str>, ParseError> {
        match self.advance() {
            None => Ok(None),
            Some(t) if words.contains(&t.text) => Ok(Some(t.text)),
            Some(t) => Err(self.unexpected(t, what)),
        }
    }

    /// No tokens remain after the op `kind`.
    pub(super) fn end(&self, kind: &str) -> Result<(), ParseError> {
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
