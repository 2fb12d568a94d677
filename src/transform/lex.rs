//! The lexer under [`super::source`]: tokens, comments, literals, directives (with
//! `#define` bodies and conditional kinds), bracket partners and line numbers.

use crate::error::{Error, InputFault, Result};
use std::ops::Range;

/// Token classes; only identifiers and punctuation matter to the scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Number,
    Literal,
    Punct,
}

/// A token and its byte span in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: Kind,
    pub(crate) span: Range<usize>,
}

/// Preprocessor directives, as far as rewriting cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Directive {
    /// `#if`, `#ifdef`, `#ifndef`.
    If,
    /// `#else`, `#elif`, `#elifdef`, `#elifndef`.
    Else,
    /// `#endif`.
    EndIf,
    /// Anything else (`#define`, `#pragma`, ...).
    Other,
}

/// A C integer literal (decimal, octal or hex, optional `u`/`l` suffixes).
pub(crate) fn parse_c_integer(text: &str) -> Option<usize> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        usize::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1 && digits.starts_with('0') {
        usize::from_str_radix(&digits[1..], 8).ok()
    } else {
        digits.parse().ok()
    }
}

/// For each bracket token, the index of its partner (`usize::MAX` for other tokens).
pub(crate) fn match_brackets(src: &str, tokens: &[Token], lines: &LineIndex) -> Result<Vec<usize>> {
    let mut partner = vec![usize::MAX; tokens.len()];
    let mut stack: Vec<usize> = Vec::new();
    let text = |i: usize| &src[tokens[i].span.clone()];
    let line = |i: usize| lines.line(tokens[i].span.start);
    for (i, t) in tokens.iter().enumerate() {
        if t.kind != Kind::Punct {
            continue;
        }
        let want = match text(i) {
            "(" | "[" | "{" => {
                stack.push(i);
                continue;
            }
            ")" => "(",
            "]" => "[",
            "}" => "{",
            _ => continue,
        };
        let Some(open) = stack.pop() else {
            return Err(Error::input(InputFault::Unmatched {
                token: text(i).into(),
                line: line(i),
                kernel: kernel_context(src, tokens, i),
            }));
        };
        if text(open) != want {
            return Err(Error::input(InputFault::Mismatched {
                open: text(open).into(),
                open_line: line(open),
                close: text(i).into(),
                line: line(i),
                kernel: kernel_context(src, tokens, i),
            }));
        }
        partner[open] = i;
        partner[i] = open;
    }
    match stack.first() {
        Some(&open) => Err(Error::input(InputFault::Unclosed {
            token: text(open).into(),
            line: line(open),
            kernel: kernel_context(src, tokens, open),
        })),
        None => Ok(partner),
    }
}

/// The last kernel declared before token `at`, if any.
fn kernel_context(src: &str, tokens: &[Token], at: usize) -> Option<String> {
    let text = |i: usize| &src[tokens[i].span.clone()];
    let kw = (0..at)
        .rev()
        .find(|&i| matches!(text(i), "kernel" | "__kernel"))?;
    (kw + 1..=at)
        .find(|&i| text(i) == "(" && tokens[i - 1].kind == Kind::Ident)
        .filter(|&i| !text(i - 1).starts_with("CLG_") && !text(i - 1).starts_with("__attribute"))
        .map(|i| text(i - 1).to_string())
}

/// Byte offset → 1-based line number.
pub(crate) struct LineIndex(Vec<usize>);

impl LineIndex {
    pub(crate) fn new(src: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex(starts)
    }

    pub(crate) fn line(&self, at: usize) -> usize {
        self.0.partition_point(|&s| s <= at)
    }
}

/// A byte-level lexer over `src[pos..end]`.
pub(crate) struct Lexer<'a> {
    src: &'a [u8],
    lines: &'a LineIndex,
    pub(crate) pos: usize,
    pub(crate) end: usize,
    pub(crate) tokens: Vec<Token>,
    /// `#define` names with the byte span of their replacement lists.
    pub(crate) defines: Vec<(String, Range<usize>)>,
    /// `#undef` names.
    pub(crate) undefs: Vec<String>,
    /// What each `#include` names (`<`, `>` and quotes trimmed).
    pub(crate) includes: Vec<String>,
    /// Every directive's offset and kind.
    pub(crate) directives: Vec<(usize, Directive)>,
    /// The byte spans of the identifiers of every directive line (`#define` bodies included,
    /// comments and literals excluded).
    pub(crate) directive_idents: Vec<Range<usize>>,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str, lines: &'a LineIndex) -> Self {
        Lexer {
            src: src.as_bytes(),
            lines,
            pos: 0,
            end: src.len(),
            tokens: Vec::new(),
            defines: Vec::new(),
            undefs: Vec::new(),
            includes: Vec::new(),
            directives: Vec::new(),
            directive_idents: Vec::new(),
        }
    }

    fn at(&self, i: usize) -> u8 {
        if i < self.end {
            self.src[i]
        } else {
            0
        }
    }

    fn error(&self, fault: fn(usize) -> InputFault, at: usize) -> Error {
        Error::input(fault(self.lines.line(at)))
    }

    /// Lexes everything; `directives` says whether `#` at a line start opens a directive.
    pub(crate) fn run(&mut self, directives: bool) -> Result<()> {
        let mut line_start = true;
        while self.pos < self.end {
            let c = self.at(self.pos);
            match c {
                b'\n' => {
                    line_start = true;
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'\\' if self.continuation(self.pos).is_some() => {
                    self.pos = self.continuation(self.pos).unwrap_or(self.pos + 1);
                }
                b'/' if self.at(self.pos + 1) == b'/' => self.pos = self.line_comment(self.pos),
                b'/' if self.at(self.pos + 1) == b'*' => self.pos = self.block_comment(self.pos)?,
                b'#' if directives && line_start => self.pos = self.directive(self.pos)?,
                _ => {
                    line_start = false;
                    let tok = self.token(self.pos)?;
                    self.pos = tok.span.end;
                    self.tokens.push(tok);
                }
            }
        }
        Ok(())
    }

    /// If a line continuation (`\` + newline) starts at `i`, the offset after it.
    fn continuation(&self, i: usize) -> Option<usize> {
        match (self.at(i + 1), self.at(i + 2)) {
            (b'\n', _) => Some(i + 2),
            (b'\r', b'\n') => Some(i + 3),
            _ => None,
        }
    }

    /// End of a `//` comment (at its newline), following continuations.
    fn line_comment(&self, mut i: usize) -> usize {
        while i < self.end && self.at(i) != b'\n' {
            i = match self.at(i) {
                b'\\' => self.continuation(i).unwrap_or(i + 1),
                _ => i + 1,
            };
        }
        i
    }

    /// End of a `/* */` comment.
    fn block_comment(&self, start: usize) -> Result<usize> {
        let mut i = start + 2;
        while i + 1 < self.end {
            if self.at(i) == b'*' && self.at(i + 1) == b'/' {
                return Ok(i + 2);
            }
            i += 1;
        }
        Err(self.error(|line| InputFault::UnterminatedComment { line }, start))
    }

    /// End of a string or character literal opened by the quote at `start`.
    fn literal(&self, start: usize, in_directive: bool) -> Result<usize> {
        let quote = self.at(start);
        let mut i = start + 1;
        while i < self.end {
            match self.at(i) {
                b'\\' => i += 2,
                b'\n' if in_directive => return Ok(i),
                b'\n' => break,
                c if c == quote => return Ok(i + 1),
                _ => i += 1,
            }
        }
        if in_directive {
            return Ok(i.min(self.end));
        }
        Err(self.error(|line| InputFault::UnterminatedLiteral { line }, start))
    }

    /// Skips a directive starting at `#` (offset `start`), recording `#define`s and its
    /// identifiers; returns the offset of its final newline.
    fn directive(&mut self, start: usize) -> Result<usize> {
        let mut i = start + 1;
        while i < self.end && self.at(i) != b'\n' {
            i = match self.at(i) {
                b'\\' => self.continuation(i).unwrap_or(i + 1),
                b'/' if self.at(i + 1) == b'*' => self.block_comment(i)?,
                b'/' if self.at(i + 1) == b'/' => self.line_comment(i),
                b'"' | b'\'' => self.literal(i, true)?,
                c if c.is_ascii_digit() => self.scan_while(i, is_ident_byte),
                c if is_ident_start(c) => {
                    let end = self.scan_while(i, is_ident_byte);
                    self.directive_idents.push(i..end);
                    end
                }
                _ => i + 1,
            };
        }
        self.record_define(start + 1, i);
        self.directives
            .push((start, directive_kind(&self.src[start + 1..i])));
        Ok(i)
    }

    /// If `src[from..to]` is `define NAME...`, remembers NAME and its replacement list; if it
    /// is `undef NAME`, remembers NAME; if it is `include HEADER`, remembers HEADER.
    fn record_define(&mut self, from: usize, to: usize) {
        let text = &self.src[from..to];
        let skip_ws = |mut i: usize| {
            while i < text.len() && matches!(text[i], b' ' | b'\t') {
                i += 1;
            }
            i
        };
        let ident_end = |mut i: usize| {
            while i < text.len() && is_ident_byte(text[i]) {
                i += 1;
            }
            i
        };
        let kw = skip_ws(0);
        let define = match &text[kw..ident_end(kw)] {
            b"define" => true,
            b"undef" => false,
            b"include" => {
                let header = String::from_utf8_lossy(&text[ident_end(kw)..]);
                let header = header.trim().trim_matches(['<', '>', '"']);
                self.includes.push(header.to_string());
                return;
            }
            _ => return,
        };
        let name_start = skip_ws(ident_end(kw));
        let name_end = ident_end(name_start);
        if name_end == name_start {
            return;
        }
        let name = String::from_utf8_lossy(&text[name_start..name_end]).into_owned();
        if !define {
            self.undefs.push(name);
            return;
        }
        let mut body = name_end;
        if text.get(body) == Some(&b'(') {
            while body < text.len() && text[body] != b')' {
                body += 1;
            }
            body += 1;
        }
        self.defines
            .push((name, from + body.min(text.len())..from + text.len()));
    }

    /// The token starting at `i`.
    fn token(&self, i: usize) -> Result<Token> {
        let c = self.at(i);
        let (kind, end) = if is_ident_start(c) {
            (Kind::Ident, self.scan_while(i, is_ident_byte))
        } else if c.is_ascii_digit() || (c == b'.' && self.at(i + 1).is_ascii_digit()) {
            (Kind::Number, self.number(i))
        } else if c == b'"' || c == b'\'' {
            (Kind::Literal, self.literal(i, false)?)
        } else {
            (Kind::Punct, i + 1)
        };
        Ok(Token { kind, span: i..end })
    }

    fn scan_while(&self, mut i: usize, f: fn(u8) -> bool) -> usize {
        while i < self.end && f(self.at(i)) {
            i += 1;
        }
        i
    }

    /// End of a preprocessing number starting at `i`.
    fn number(&self, mut i: usize) -> usize {
        i += 1;
        while i < self.end {
            let c = self.at(i);
            let exp_sign =
                matches!(c, b'+' | b'-') && matches!(self.at(i - 1), b'e' | b'E' | b'p' | b'P');
            if !(is_ident_byte(c) || c == b'.' || exp_sign) {
                break;
            }
            i += 1;
        }
        i
    }
}

/// The kind of the directive whose text after `#` is `text`.
fn directive_kind(text: &[u8]) -> Directive {
    let text = String::from_utf8_lossy(text);
    match leading_word(text.trim_start()).0 {
        "if" | "ifdef" | "ifndef" => Directive::If,
        "else" | "elif" | "elifdef" | "elifndef" => Directive::Else,
        "endif" => Directive::EndIf,
        _ => Directive::Other,
    }
}

/// The words of `text` the lexer does not read as code (build options, a parameter's text, a
/// source the scanner refused): its runs of ASCII letters, digits and `_`.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
}

/// `text` split after its leading word ([`words`]): `("define", " N 4")` of `"define N 4"`.
pub(crate) fn leading_word(text: &str) -> (&str, &str) {
    text.split_at(text.find(|c: char| !is_word_char(c)).unwrap_or(text.len()))
}

/// Whether `c` is a letter, digit or `_` of a word ([`words`]).
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_ident_byte(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_integers() {
        assert_eq!(parse_c_integer("16"), Some(16));
        assert_eq!(parse_c_integer("0x10"), Some(16));
        assert_eq!(parse_c_integer("020"), Some(16));
        assert_eq!(parse_c_integer("16UL"), Some(16));
        assert_eq!(parse_c_integer("1.5"), None);
        assert_eq!(parse_c_integer(""), None);
    }
}
