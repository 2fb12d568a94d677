//! A small scanner for OpenCL C kernel declarations (pure text, no OpenCL).
//!
//! [`scan_kernels`] finds every kernel *definition* (`kernel`/`__kernel` function with a body)
//! in a source, with its parameters, the byte spans needed to rewrite it, and the sub-group size
//! it asks for through the layer's macros.
//!
//! What the scanner understands: `//` and `/* */` comments, string and character literals,
//! preprocessor lines (skipped, continuations included; `#define` bodies are remembered for
//! [`crate::program::rounded`]), attributes before, between or after the declaration
//! specifiers, multi-line parameter lists, nested braces, and non-kernel functions (ignored here).
//!
//! What it does not do: it does not run the preprocessor. Kernels produced by macro expansion are
//! not found, and both branches of an `#if` are read as if they were one text, so conditional
//! code that unbalances brackets is reported as an error.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ops::Range;

/// One kernel definition found by [`scan_kernels`]. Offsets are byte offsets into the scanned
/// source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelDecl {
    /// The kernel's name.
    pub name: String,
    /// The parameters, in order (empty for `()` and `(void)`).
    pub params: Vec<Param>,
    /// Where the declaration starts: its first attribute, or `void` or the `kernel`/`__kernel`
    /// keyword, whichever comes first.
    pub decl_start: usize,
    /// The 1-based line of `decl_start`.
    pub line: usize,
    /// The span of the name.
    pub name_span: Range<usize>,
    /// The span of the parameter list, parentheses included.
    pub params_span: Range<usize>,
    /// The span of the body, braces included.
    pub body: Range<usize>,
    /// The sub-group size the kernel asks for through `CLG_REQD_SUB_GROUP_SIZE(n)`,
    /// `CLG_NAMED_SUB_GROUP_SIZE(primary|automatic)` or
    /// `__attribute__((intel_reqd_sub_group_size(n)))`; `None` when it asks for none.
    pub sub_group_size: Option<SubGroupSizeAttr>,
    /// Whether the kernel carries its own `intel_reqd_sub_group_size` attribute (with a literal
    /// or, e.g., a macro argument): clgroups then never pins a size of its own.
    pub own_sub_group_attr: bool,
    /// Why a generated variant of this kernel could not be proven correct (a preprocessor line
    /// inside the declaration, an `#if` that the body does not close, a macro before the
    /// declaration, parameters the scanner cannot read); `None` when the kernel may be rewritten.
    pub rewrite_obstacle: Option<String>,
}

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The parameter's tokens, with one space wherever the source had white space or a comment
    /// between them (e.g. `global const float* restrict x`).
    pub text: String,
    /// The parameter's name.
    pub name: String,
    /// Whether the parameter is a pointer.
    pub is_pointer: bool,
    /// `global`, `local`, `constant` or `private` when the parameter names an address space
    /// (with or without the `__` prefix).
    pub address_space: Option<String>,
}

/// A kernel's sub-group size request, from the layer's macros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubGroupSizeAttr {
    /// `CLG_REQD_SUB_GROUP_SIZE(n)`: exactly `n`.
    Exact(usize),
    /// `CLG_NAMED_SUB_GROUP_SIZE(primary)`: the device's primary size.
    Primary,
    /// `CLG_NAMED_SUB_GROUP_SIZE(automatic)`: whatever the compiler picks.
    Automatic,
}

/// Every kernel definition in `src`, in source order.
///
/// Errors ([`Error::InvalidInput`], with line numbers) for unbalanced brackets, unterminated
/// comments or literals, a parameter without a name, and a malformed or repeated sub-group size
/// attribute.
///
/// ```
/// use clgroups::program::source::{scan_kernels, SubGroupSizeAttr};
/// let src = "float twice(float x) { return 2 * x; }\n\
///            kernel void CLG_REQD_SUB_GROUP_SIZE(16)\n\
///            scale(global float* v, const float s) { v[get_global_id(0)] *= twice(s); }";
/// let k = &scan_kernels(src).unwrap()[0];
/// assert_eq!(k.name, "scale");
/// assert_eq!(k.line, 2);
/// assert_eq!(k.params[0].text, "global float* v");
/// assert_eq!(k.params[1].name, "s");
/// assert_eq!(k.sub_group_size, Some(SubGroupSizeAttr::Exact(16)));
/// assert!(scan_kernels("kernel void k() { (; }").is_err());
/// ```
pub fn scan_kernels(src: &str) -> Result<Vec<KernelDecl>> {
    let scanned = Scanned::new(src)?;
    let kernels = scanned
        .functions
        .iter()
        .filter(|f| f.is_kernel)
        .map(|f| scanned.kernel_decl(f))
        .collect::<Result<Vec<_>>>()?;
    log::debug!(
        "scanned {} kernel(s): {:?}",
        kernels.len(),
        kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
    );
    Ok(kernels)
}

/// The kernels of `src` for a program build, which must not fail where the compiler would
/// succeed: a source the scanner cannot read as a whole (an `#if` whose branches each open a
/// kernel, say) gives no kernels and the reason, so the build goes on without rewrites and takes
/// kernel names from the driver. Only a malformed clgroups attribute
/// (`CLG_REQD_SUB_GROUP_SIZE(...)`, `CLG_NAMED_SUB_GROUP_SIZE(...)`) is an error: it asks the
/// host for something it cannot read.
pub(crate) fn scan_for_build(src: &str) -> Result<(Vec<KernelDecl>, Option<String>)> {
    let scanned = match Scanned::new(src) {
        Ok(s) => s,
        Err(e) => {
            log::debug!("source not scanned ({e}): no generated variants, names from the driver");
            return Ok((Vec::new(), Some(e.to_string())));
        }
    };
    let kernels = scanned
        .functions
        .iter()
        .filter(|f| f.is_kernel)
        .map(|f| scanned.kernel_decl(f))
        .collect::<Result<Vec<_>>>()?;
    Ok((kernels, None))
}

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

/// A function definition (kernel or not), as token indices into [`Scanned::tokens`].
#[derive(Debug, Clone)]
pub(crate) struct FunctionDef {
    pub(crate) name: String,
    pub(crate) is_kernel: bool,
    /// First token of the declaration (see [`KernelDecl::decl_start`]).
    decl: usize,
    /// First token of the top-level item (after the previous `;` or `}`).
    item: usize,
    /// The name token.
    name_tok: usize,
    /// The `(` of the parameter list (its partner is the `)`).
    pub(crate) open_paren: usize,
    /// The body's `{` and `}`.
    pub(crate) body: (usize, usize),
}

/// A lexed source: tokens (directives excluded), bracket partners, functions and macros.
pub(crate) struct Scanned<'a> {
    pub(crate) src: &'a str,
    pub(crate) tokens: Vec<Token>,
    partner: Vec<usize>,
    lines: LineIndex,
    pub(crate) functions: Vec<FunctionDef>,
    /// Every `#define`d name with the token spans of each of its replacement lists.
    pub(crate) macros: HashMap<String, Vec<Vec<Token>>>,
    /// Every preprocessor directive: its byte offset and kind.
    directives: Vec<(usize, Directive)>,
}

/// Preprocessor directives, as far as rewriting cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    /// `#if`, `#ifdef`, `#ifndef`.
    If,
    /// `#else`, `#elif`, `#elifdef`, `#elifndef`.
    Else,
    /// `#endif`.
    EndIf,
    /// Anything else (`#define`, `#pragma`, ...).
    Other,
}

impl<'a> Scanned<'a> {
    /// Lexes `src`, matches its brackets and finds its function definitions.
    pub(crate) fn new(src: &'a str) -> Result<Self> {
        let lines = LineIndex::new(src);
        let mut lexer = Lexer::new(src, &lines);
        lexer.run(true)?;
        let tokens = lexer.tokens;
        let directives = lexer.directives;
        let mut macros: HashMap<String, Vec<Vec<Token>>> = HashMap::new();
        for (name, body) in lexer.defines {
            let mut sub = Lexer::new(src, &lines);
            sub.pos = body.start;
            sub.end = body.end;
            sub.run(false)?;
            macros.entry(name).or_default().push(sub.tokens);
        }
        let partner = match_brackets(src, &tokens, &lines)?;
        let mut scanned = Scanned {
            src,
            tokens,
            partner,
            lines,
            functions: Vec::new(),
            macros,
            directives,
        };
        scanned.functions = scanned.find_functions();
        Ok(scanned)
    }

    /// The text of token `i`.
    pub(crate) fn text(&self, i: usize) -> &'a str {
        &self.src[self.tokens[i].span.clone()]
    }

    /// The 1-based line of byte offset `at`.
    pub(crate) fn line(&self, at: usize) -> usize {
        self.lines.line(at)
    }

    /// The partner of bracket token `i`.
    pub(crate) fn partner(&self, i: usize) -> usize {
        self.partner[i]
    }

    /// Whether token `i` is an identifier followed by `(`.
    pub(crate) fn is_call(&self, i: usize) -> bool {
        self.tokens[i].kind == Kind::Ident && i + 1 < self.tokens.len() && self.is_punct(i + 1, "(")
    }

    fn is_punct(&self, i: usize, p: &str) -> bool {
        self.tokens[i].kind == Kind::Punct && self.text(i) == p
    }

    /// Top-level items: each ends at a `;` or at a function body's `}`.
    fn find_functions(&self) -> Vec<FunctionDef> {
        let mut out = Vec::new();
        let (mut start, mut j) = (0, 0);
        while j < self.tokens.len() {
            if self.is_punct(j, "(") || self.is_punct(j, "[") {
                j = self.partner[j] + 1;
            } else if self.is_punct(j, ";") {
                start = j + 1;
                j += 1;
            } else if self.is_punct(j, "{") {
                let close = self.partner[j];
                if let Some(f) = self.function_header(start, j) {
                    out.push(f);
                    start = close + 1;
                }
                j = close + 1;
            } else {
                j += 1;
            }
        }
        out
    }

    /// Whether token `i` is an identifier naming an attribute-like group (`__attribute__`, or a
    /// `CLG_` macro such as `CLG_REQD_SUB_GROUP_SIZE`).
    fn is_attribute_name(&self, i: usize) -> bool {
        let t = self.text(i);
        self.tokens[i].kind == Kind::Ident
            && (t == "__attribute__" || t == "__attribute" || t.starts_with("CLG_"))
    }

    /// If tokens `start..open_brace` are a function header, the function.
    fn function_header(&self, start: usize, open_brace: usize) -> Option<FunctionDef> {
        let mut end = open_brace; // exclusive
        loop {
            if end <= start + 1 || !self.is_punct(end - 1, ")") {
                return None;
            }
            let open = self.partner[end - 1];
            if open <= start || self.tokens[open - 1].kind != Kind::Ident {
                return None;
            }
            if self.is_attribute_name(open - 1) {
                end = open - 1;
                continue;
            }
            let name_tok = open - 1;
            let specifiers = self.top_level(start, name_tok);
            if specifiers.iter().any(|&i| self.is_punct(i, "=")) {
                return None;
            }
            let kernel_kw = specifiers
                .iter()
                .copied()
                .find(|&i| matches!(self.text(i), "kernel" | "__kernel"));
            return Some(FunctionDef {
                name: self.text(name_tok).to_string(),
                is_kernel: kernel_kw.is_some(),
                decl: kernel_kw.map_or(start, |kw| self.extend_back(start, kw)),
                item: start,
                name_tok,
                open_paren: open,
                body: (open_brace, self.partner[open_brace]),
            });
        }
    }

    /// Token indices in `from..to` that are not inside brackets.
    fn top_level(&self, from: usize, to: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = from;
        while i < to {
            out.push(i);
            i = if self.is_punct(i, "(") || self.is_punct(i, "[") {
                self.partner[i] + 1
            } else {
                i + 1
            };
        }
        out
    }

    /// Extends a declaration back from its `kernel` keyword over attributes and `void`.
    fn extend_back(&self, start: usize, kw: usize) -> usize {
        let mut first = kw;
        while first > start {
            let prev = first - 1;
            if self.text(prev) == "void" {
                first = prev;
            } else if self.is_punct(prev, ")") {
                let open = self.partner[prev];
                if open > start && self.is_attribute_name(open - 1) {
                    first = open - 1;
                } else {
                    break;
                }
            } else {
                break;
            }
        }
        first
    }

    /// The public declaration of kernel `f`.
    fn kernel_decl(&self, f: &FunctionDef) -> Result<KernelDecl> {
        let close_paren = self.partner[f.open_paren];
        let decl_start = self.tokens[f.decl].span.start;
        let body = self.tokens[f.body.0].span.start..self.tokens[f.body.1].span.end;
        let (params, params_obstacle) = match self.params(f, f.open_paren + 1, close_paren) {
            Ok(p) => (p, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let (sub_group_size, own_sub_group_attr) = self.sub_group_size(f)?;
        let rewrite_obstacle = params_obstacle.or_else(|| self.rewrite_obstacle(f, &body));
        if let Some(why) = &rewrite_obstacle {
            log::debug!("kernel `{}` will not be rewritten: {why}", f.name);
        }
        Ok(KernelDecl {
            name: f.name.clone(),
            params,
            decl_start,
            line: self.line(decl_start),
            name_span: self.tokens[f.name_tok].span.clone(),
            params_span: self.tokens[f.open_paren].span.start..self.tokens[close_paren].span.end,
            body,
            sub_group_size,
            own_sub_group_attr,
            rewrite_obstacle,
        })
    }

    /// Why copying kernel `f`'s text into a variant might not compile or mean the same.
    fn rewrite_obstacle(&self, f: &FunctionDef, body: &Range<usize>) -> Option<String> {
        if f.decl != f.item {
            return Some(format!(
                "`{}` before its declaration is not understood (a macro?)",
                self.text(f.item)
            ));
        }
        let header = self.tokens[f.item].span.start..body.start;
        if let Some((at, _)) = self.directives.iter().find(|(at, _)| header.contains(at)) {
            return Some(format!(
                "a preprocessor line (line {}) inside its declaration",
                self.line(*at)
            ));
        }
        let mut depth = 0usize;
        for &(at, d) in self.directives.iter().filter(|(at, _)| body.contains(at)) {
            let unbalanced = match d {
                Directive::If => {
                    depth += 1;
                    false
                }
                Directive::Else => depth == 0,
                Directive::EndIf => depth.checked_sub(1).map(|d| depth = d).is_none(),
                Directive::Other => false,
            };
            if unbalanced {
                return Some(format!(
                    "its body has a conditional directive (line {}) opened outside it",
                    self.line(at)
                ));
            }
        }
        (depth > 0).then(|| "its body opens an `#if` it does not close".to_string())
    }

    /// The parameters in tokens `from..to` (inside the parentheses).
    fn params(&self, f: &FunctionDef, from: usize, to: usize) -> Result<Vec<Param>> {
        if from == to || (to == from + 1 && self.text(from) == "void") {
            return Ok(Vec::new());
        }
        let mut groups = vec![Vec::new()];
        for i in self.top_level(from, to) {
            if self.is_punct(i, ",") {
                groups.push(Vec::new());
            } else if let Some(g) = groups.last_mut() {
                g.push(i);
            }
        }
        groups
            .iter()
            .enumerate()
            .map(|(n, g)| self.param(f, n, g))
            .collect()
    }

    /// One parameter from its top-level token indices.
    fn param(&self, f: &FunctionDef, n: usize, toks: &[usize]) -> Result<Param> {
        let missing = || {
            let at = self.tokens[f.open_paren].span.start;
            Error::input(format!(
                "parameter {n} of kernel `{}` (line {}) has no name",
                f.name,
                self.line(at)
            ))
        };
        let mut end = toks.len();
        while end >= 2 && self.is_punct(toks[end - 1], "(") && self.is_attribute_name(toks[end - 2])
        {
            end -= 2;
        }
        while end >= 1 && self.is_punct(toks[end - 1], "[") {
            end -= 1;
        }
        let last = *toks[..end].last().ok_or_else(missing)?;
        if self.tokens[last].kind != Kind::Ident {
            return Err(missing());
        }
        let first = toks[0];
        let last_tok = self.partner_or_self(*toks.last().ok_or_else(missing)?);
        let address_space = toks.iter().find_map(|&i| match self.text(i) {
            "global" | "__global" => Some("global"),
            "local" | "__local" => Some("local"),
            "constant" | "__constant" => Some("constant"),
            "private" | "__private" => Some("private"),
            _ => None,
        });
        Ok(Param {
            text: self.joined(first, last_tok),
            name: self.text(last).to_string(),
            is_pointer: toks.iter().any(|&i| self.is_punct(i, "*")),
            address_space: address_space.map(str::to_string),
        })
    }

    /// `i`'s closing partner when `i` opens a bracket, else `i`.
    fn partner_or_self(&self, i: usize) -> usize {
        if self.is_punct(i, "(") || self.is_punct(i, "[") {
            self.partner[i]
        } else {
            i
        }
    }

    /// Tokens `first..=last` joined with one space where the source separates them.
    fn joined(&self, first: usize, last: usize) -> String {
        let mut s = String::new();
        for i in first..=last {
            if i > first && self.tokens[i - 1].span.end < self.tokens[i].span.start {
                s.push(' ');
            }
            s.push_str(self.text(i));
        }
        s
    }

    /// The sub-group size attribute in kernel `f`'s header, if any, and whether the kernel has
    /// its own `intel_reqd_sub_group_size` (whose argument may be a macro: then no size).
    fn sub_group_size(&self, f: &FunctionDef) -> Result<(Option<SubGroupSizeAttr>, bool)> {
        let mut found: Option<(SubGroupSizeAttr, usize)> = None;
        let mut own = false;
        for i in f.decl..f.body.0 {
            let is_call = i + 1 < f.body.0 && self.is_punct(i + 1, "(");
            let macro_name = self.text(i);
            if !is_call
                || !matches!(
                    macro_name,
                    "CLG_REQD_SUB_GROUP_SIZE"
                        | "CLG_NAMED_SUB_GROUP_SIZE"
                        | "intel_reqd_sub_group_size"
                )
            {
                continue;
            }
            let line = self.line(self.tokens[i].span.start);
            let attr = if macro_name == "intel_reqd_sub_group_size" {
                own = true;
                match self.sub_group_arg(f, i, line) {
                    Ok(a) => a,
                    Err(e) => {
                        log::debug!("{e}: the driver applies it; clgroups does not read it");
                        continue;
                    }
                }
            } else {
                self.sub_group_arg(f, i, line)?
            };
            if let Some((_, first)) = found {
                return Err(Error::input(format!(
                    "kernel `{}` has more than one sub-group size attribute (lines {first} and {line})",
                    f.name
                )));
            }
            found = Some((attr, line));
        }
        Ok((found.map(|(a, _)| a), own))
    }

    /// Parses the argument of the sub-group size macro at token `i`.
    fn sub_group_arg(&self, f: &FunctionDef, i: usize, line: usize) -> Result<SubGroupSizeAttr> {
        let close = self.partner[i + 1];
        let arg = if close == i + 3 { self.text(i + 2) } else { "" };
        let shown = self.joined_or_empty(i + 2, close);
        let bad = |want: &str| {
            Error::input(format!(
                "kernel `{}` (line {line}): {}({shown}) needs {want}",
                f.name,
                self.text(i)
            ))
        };
        if self.text(i) == "CLG_NAMED_SUB_GROUP_SIZE" {
            return match arg {
                "primary" => Ok(SubGroupSizeAttr::Primary),
                "automatic" => Ok(SubGroupSizeAttr::Automatic),
                _ => Err(bad("`primary` or `automatic`")),
            };
        }
        match parse_c_integer(arg) {
            Some(n) if n > 0 => Ok(SubGroupSizeAttr::Exact(n)),
            _ => Err(bad("a positive integer literal")),
        }
    }

    fn joined_or_empty(&self, first: usize, end: usize) -> String {
        if first < end {
            self.joined(first, end - 1)
        } else {
            String::new()
        }
    }
}

/// A C integer literal (decimal, octal or hex, optional `u`/`l` suffixes).
fn parse_c_integer(text: &str) -> Option<usize> {
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
fn match_brackets(src: &str, tokens: &[Token], lines: &LineIndex) -> Result<Vec<usize>> {
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
            return Err(Error::input(format!(
                "unmatched `{}` at line {}{}",
                text(i),
                line(i),
                kernel_context(src, tokens, i)
            )));
        };
        if text(open) != want {
            return Err(Error::input(format!(
                "`{}` at line {} is closed by `{}` at line {}{}",
                text(open),
                line(open),
                text(i),
                line(i),
                kernel_context(src, tokens, i)
            )));
        }
        partner[open] = i;
        partner[i] = open;
    }
    match stack.first() {
        Some(&open) => Err(Error::input(format!(
            "unclosed `{}` at line {}{}",
            text(open),
            line(open),
            kernel_context(src, tokens, open)
        ))),
        None => Ok(partner),
    }
}

/// " (in kernel `k`)" for the last kernel declared before token `at`, or "".
fn kernel_context(src: &str, tokens: &[Token], at: usize) -> String {
    let text = |i: usize| &src[tokens[i].span.clone()];
    let Some(kw) = (0..at)
        .rev()
        .find(|&i| matches!(text(i), "kernel" | "__kernel"))
    else {
        return String::new();
    };
    (kw + 1..=at)
        .find(|&i| text(i) == "(" && tokens[i - 1].kind == Kind::Ident)
        .filter(|&i| !text(i - 1).starts_with("CLG_") && !text(i - 1).starts_with("__attribute"))
        .map_or(String::new(), |i| format!(" (in kernel `{}`)", text(i - 1)))
}

/// Byte offset → 1-based line number.
pub(crate) struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(src: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex(starts)
    }

    fn line(&self, at: usize) -> usize {
        self.0.partition_point(|&s| s <= at)
    }
}

/// A byte-level lexer over `src[pos..end]`.
struct Lexer<'a> {
    src: &'a [u8],
    lines: &'a LineIndex,
    pos: usize,
    end: usize,
    tokens: Vec<Token>,
    /// `#define` names with the byte span of their replacement lists.
    defines: Vec<(String, Range<usize>)>,
    /// Every directive's offset and kind.
    directives: Vec<(usize, Directive)>,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str, lines: &'a LineIndex) -> Self {
        Lexer {
            src: src.as_bytes(),
            lines,
            pos: 0,
            end: src.len(),
            tokens: Vec::new(),
            defines: Vec::new(),
            directives: Vec::new(),
        }
    }

    fn at(&self, i: usize) -> u8 {
        if i < self.end {
            self.src[i]
        } else {
            0
        }
    }

    fn error(&self, what: &str, at: usize) -> Error {
        Error::input(format!("{what} at line {}", self.lines.line(at)))
    }

    /// Lexes everything; `directives` says whether `#` at a line start opens a directive.
    fn run(&mut self, directives: bool) -> Result<()> {
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
        Err(self.error("unterminated comment", start))
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
        Err(self.error("unterminated literal", start))
    }

    /// Skips a directive starting at `#` (offset `start`), recording `#define`s; returns the
    /// offset of its final newline.
    fn directive(&mut self, start: usize) -> Result<usize> {
        let mut i = start + 1;
        while i < self.end && self.at(i) != b'\n' {
            i = match self.at(i) {
                b'\\' => self.continuation(i).unwrap_or(i + 1),
                b'/' if self.at(i + 1) == b'*' => self.block_comment(i)?,
                b'/' if self.at(i + 1) == b'/' => self.line_comment(i),
                b'"' | b'\'' => self.literal(i, true)?,
                _ => i + 1,
            };
        }
        self.record_define(start + 1, i);
        self.directives
            .push((start, directive_kind(&self.src[start + 1..i])));
        Ok(i)
    }

    /// If `src[from..to]` is `define NAME...`, remembers NAME and its replacement list.
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
        if &text[kw..ident_end(kw)] != b"define" {
            return;
        }
        let name_start = skip_ws(ident_end(kw));
        let name_end = ident_end(name_start);
        if name_end == name_start {
            return;
        }
        let mut body = name_end;
        if text.get(body) == Some(&b'(') {
            while body < text.len() && text[body] != b')' {
                body += 1;
            }
            body += 1;
        }
        let name = String::from_utf8_lossy(&text[name_start..name_end]).into_owned();
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
    let word: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    match word.as_str() {
        "if" | "ifdef" | "ifndef" => Directive::If,
        "else" | "elif" | "elifdef" | "elifndef" => Directive::Else,
        "endif" => Directive::EndIf,
        _ => Directive::Other,
    }
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

    fn names(src: &str) -> Vec<String> {
        scan_kernels(src)
            .unwrap()
            .into_iter()
            .map(|k| k.name)
            .collect()
    }

    fn err(src: &str) -> String {
        scan_kernels(src).unwrap_err().to_string()
    }

    const TRICKY: &str = r#"// kernel void in_comment(global int* x) {}
#define KERNEL_HELPER(x) { (x) }  \
    kernel void in_macro() {
/* kernel void in_block(
   global int* x) { */
typedef struct { int a; } pair;
constant int table[3] = {1, 2, 3};
int my_kernel_fn(int kernel_count) { return kernel_count + 1; }
void helper(global int* p);
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void
first(global const float* restrict in, // the input
      __global float *out,
      const int n) {
    const char* s = "}{ kernel void fake() {";
    char c = '}';
    if (n > 0) { for (int i = 0; i < n; i++) { out[i] = in[i]; } }
}
kernel void CLG_NAMED_SUB_GROUP_SIZE(primary) second(void) { }
void __kernel third(local int* scratch, image2d_t img) {}
"#;

    #[test]
    fn finds_only_kernel_definitions() {
        assert_eq!(names(TRICKY), ["first", "second", "third"]);
    }

    #[test]
    fn spans_lines_and_attributes() {
        let k = scan_kernels(TRICKY).unwrap();
        let first = &k[0];
        assert_eq!(first.line, 10);
        assert!(TRICKY[first.decl_start..].starts_with("__attribute__((reqd_work_group_size"));
        assert_eq!(&TRICKY[first.name_span.clone()], "first");
        assert!(TRICKY[first.params_span.clone()].starts_with("(global const float*"));
        assert!(TRICKY[first.params_span.clone()].ends_with("const int n)"));
        let body = &TRICKY[first.body.clone()];
        assert!(body.starts_with("{\n    const char*"));
        assert!(body.ends_with("} }\n}"));
        assert_eq!(first.sub_group_size, None);
        assert_eq!(k[1].sub_group_size, Some(SubGroupSizeAttr::Primary));
        assert!(TRICKY[k[1].decl_start..].starts_with("kernel void CLG_NAMED"));
        assert!(TRICKY[k[2].decl_start..].starts_with("void __kernel third"));
        assert_eq!(k[2].line, 20);
    }

    #[test]
    fn parameters() {
        let k = scan_kernels(TRICKY).unwrap();
        let p = &k[0].params;
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].text, "global const float* restrict in");
        assert_eq!(p[0].name, "in");
        assert!(p[0].is_pointer);
        assert_eq!(p[0].address_space.as_deref(), Some("global"));
        assert_eq!(p[1].text, "__global float *out");
        assert_eq!(p[1].address_space.as_deref(), Some("global"));
        assert_eq!(p[2].text, "const int n");
        assert!(!p[2].is_pointer);
        assert_eq!(p[2].address_space, None);
        assert!(k[1].params.is_empty());
        assert_eq!(k[2].params[0].address_space.as_deref(), Some("local"));
        assert_eq!(k[2].params[1].name, "img");
        assert_eq!(k[2].params[1].address_space, None);
    }

    #[test]
    fn attributes_in_parameters_and_after_them() {
        let src = "kernel void k(global float4* __attribute__((aligned(16))) a, int b[4])\n\
                   __attribute__((work_group_size_hint(8, 1, 1))) { }";
        let k = &scan_kernels(src).unwrap()[0];
        assert_eq!(k.params[0].name, "a");
        assert_eq!(k.params[1].name, "b");
        assert_eq!(k.params[1].text, "int b[4]");
        assert!(src[k.body.clone()] == *"{ }");
    }

    #[test]
    fn sub_group_size_macros() {
        let size = |attr: &str| {
            let src = format!("{attr}\nkernel void k(global int* x) {{ }}");
            scan_kernels(&src).map(|k| k[0].sub_group_size)
        };
        assert_eq!(size("").unwrap(), None);
        assert_eq!(
            size("CLG_REQD_SUB_GROUP_SIZE(16)").unwrap(),
            Some(SubGroupSizeAttr::Exact(16))
        );
        assert_eq!(
            size("CLG_REQD_SUB_GROUP_SIZE(0x20u)").unwrap(),
            Some(SubGroupSizeAttr::Exact(32))
        );
        assert_eq!(
            size("__attribute__((intel_reqd_sub_group_size(8)))").unwrap(),
            Some(SubGroupSizeAttr::Exact(8))
        );
        assert_eq!(
            size("CLG_NAMED_SUB_GROUP_SIZE(automatic)").unwrap(),
            Some(SubGroupSizeAttr::Automatic)
        );
        let e = size("CLG_REQD_SUB_GROUP_SIZE(SG)").unwrap_err().to_string();
        assert!(e.contains("kernel `k` (line 1)"), "{e}");
        assert!(
            e.contains("CLG_REQD_SUB_GROUP_SIZE(SG) needs a positive integer"),
            "{e}"
        );
        assert!(size("CLG_REQD_SUB_GROUP_SIZE(0)").is_err());
        assert!(size("CLG_REQD_SUB_GROUP_SIZE(8 + 8)").is_err());
        let e = size("CLG_NAMED_SUB_GROUP_SIZE(large)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`primary` or `automatic`"), "{e}");
        let e = size("CLG_REQD_SUB_GROUP_SIZE(8)\nCLG_REQD_SUB_GROUP_SIZE(16)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lines 1 and 2"), "{e}");
    }

    #[test]
    fn preprocessor_lines_are_skipped() {
        let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
                   #if 0 /* a comment that spans\n lines */ kernel void no(){\n#endif\n\
                   # define X(a) a \\\n   kernel void nope() {\n\
                   kernel void yes(global int* x) {\n#pragma unroll\n for(;;){} }";
        assert_eq!(names(src), ["yes"]);
        let k = &scan_kernels(src).unwrap()[0];
        assert_eq!(k.line, 7);
    }

    #[test]
    fn macro_definitions_are_remembered() {
        let src = "#define SYNC() barrier(CLK_LOCAL_MEM_FENCE)\n#define N 4\n#define F(a, b) \\\n  a + b\n";
        let s = Scanned::new(src).unwrap();
        let texts = |name: &str| -> Vec<&str> {
            s.macros[name][0]
                .iter()
                .map(|t| &src[t.span.clone()])
                .collect()
        };
        assert_eq!(texts("SYNC"), ["barrier", "(", "CLK_LOCAL_MEM_FENCE", ")"]);
        assert_eq!(texts("N"), ["4"]);
        assert_eq!(texts("F"), ["a", "+", "b"]);
        assert!(s.tokens.is_empty());
    }

    #[test]
    fn unbalanced_brackets_are_errors_with_lines() {
        let e = err("kernel void k(global int* x) {\n  x[0] = (1;\n}\n");
        assert_eq!(
            e,
            "invalid input: `(` at line 2 is closed by `}` at line 3 (in kernel `k`)"
        );
        let e = err("kernel void k(global int* x) {\n  if (1) {\n}\n");
        assert_eq!(e, "invalid input: unclosed `{` at line 1 (in kernel `k`)");
        let e = err("kernel void k(global int* x\n{ }");
        assert_eq!(e, "invalid input: unclosed `(` at line 1 (in kernel `k`)");
        let e = err("void f() { }\n}\n");
        assert_eq!(e, "invalid input: unmatched `}` at line 2");
    }

    #[test]
    fn unterminated_comments_and_literals_are_errors() {
        assert_eq!(
            err("kernel void k() {}\n/* open"),
            "invalid input: unterminated comment at line 2"
        );
        assert_eq!(
            err("kernel void k() {\n char* s = \"abc\n\"; }"),
            "invalid input: unterminated literal at line 2"
        );
    }

    #[test]
    fn unreadable_parameters_stop_rewrites_not_the_scan() {
        let k = &scan_kernels("kernel void k(global int*) { }").unwrap()[0];
        assert_eq!(
            k.rewrite_obstacle.as_deref(),
            Some("invalid input: parameter 0 of kernel `k` (line 1) has no name")
        );
    }

    #[test]
    fn preprocessor_lines_in_a_declaration_stop_rewrites() {
        let src = "#if RELAX == 1\n__kernel\n#else\n__kernel __attribute__((reqd_work_group_size(WGS,1,1)))\n\
                   #endif\nvoid Xaxpy(global float* x) { x[0] = 1; }\n\
                   kernel void fine(global float* x) {\n#if A\n x[0] = 1;\n#else\n x[0] = 2;\n#endif\n}\n\
                   ATTR kernel void attr(global float* x) { }\n\
                   kernel void open_if(global float* x) {\n#if A\n}\n#endif\n";
        let k = scan_kernels(src).unwrap();
        let why: Vec<Option<&str>> = k.iter().map(|k| k.rewrite_obstacle.as_deref()).collect();
        assert_eq!(k[0].name, "Xaxpy");
        assert_eq!(
            why[0],
            Some("a preprocessor line (line 3) inside its declaration")
        );
        assert_eq!(why[1], None);
        assert_eq!(
            why[2],
            Some("`ATTR` before its declaration is not understood (a macro?)")
        );
        assert_eq!(why[3], Some("its body opens an `#if` it does not close"));
    }

    #[test]
    fn scan_for_build_never_fails_on_structure() {
        let src = "#ifdef A\nkernel void k(global int* x) {\n#else\nkernel void k(global int* x) {\n#endif\n x[0] = 1; }";
        let (k, why) = scan_for_build(src).unwrap();
        assert!(k.is_empty());
        assert!(why.unwrap().contains("unclosed"));
        let src =
            "#define SIMD 16\nkernel __attribute__((intel_reqd_sub_group_size(SIMD))) void k() { }";
        let (k, _) = scan_for_build(src).unwrap();
        assert_eq!((k[0].sub_group_size, k[0].own_sub_group_attr), (None, true));
        assert!(scan_for_build("CLG_REQD_SUB_GROUP_SIZE(S) kernel void k() { }").is_err());
    }

    #[test]
    fn utf8_and_crlf() {
        let src = "// é\r\nkernel void k(global int* x) { /* ü */ x[0] = 1; }\r\n";
        let k = &scan_kernels(src).unwrap()[0];
        assert_eq!(k.line, 2);
        assert_eq!(k.params[0].name, "x");
    }

    #[test]
    fn c_integers() {
        assert_eq!(parse_c_integer("16"), Some(16));
        assert_eq!(parse_c_integer("0x10"), Some(16));
        assert_eq!(parse_c_integer("020"), Some(16));
        assert_eq!(parse_c_integer("16UL"), Some(16));
        assert_eq!(parse_c_integer("1.5"), None);
        assert_eq!(parse_c_integer(""), None);
    }

    use proptest::prelude::*;

    const SOUP: &[&str] = &[
        "kernel",
        "__kernel",
        "void",
        "k",
        "f",
        "global",
        "float*",
        "int",
        "x",
        "n",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ",",
        "=",
        "*",
        "1",
        "0x10",
        "\"s}\"",
        "'{'",
        "/* { */",
        "// }\n",
        "\n#if A\n",
        "\n#else\n",
        "\n#endif\n",
        "\n#define M(a) a {\n",
        "\\\n",
        "__attribute__((reqd_work_group_size(4,1,1)))",
        "intel_reqd_sub_group_size(S)",
        "CLG_REQD_SUB_GROUP_SIZE(8)",
        "sg_reduce_add",
        "barrier",
        "get_global_size",
        "é",
        "\r\n",
        "/*",
        "\"",
    ];

    proptest! {
        #[test]
        fn token_soups_never_panic(picks in prop::collection::vec(0..SOUP.len(), 0..60)) {
            let src: String = picks.iter().map(|&i| SOUP[i]).collect::<Vec<_>>().join(" ");
            let _ = scan_for_build(&src);
            if let Ok(kernels) = scan_kernels(&src) {
                let out = crate::program::rounded::with_rounded_variants(&src, &kernels, true);
                let out = out.expect("variants of scanned kernels are written");
                let rewritable = kernels.iter().filter(|k| k.rewrite_obstacle.is_none()).count();
                let again = scan_kernels(&out).expect("the rewritten source scans");
                prop_assert_eq!(again.len(), kernels.len() + 2 * rewritable);
                let _ = crate::program::partitioned::with_partitioned_variants(&src, &kernels);
            }
        }
    }
}
