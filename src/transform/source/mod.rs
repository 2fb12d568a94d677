//! A small scanner for OpenCL C kernel declarations (pure text, no OpenCL).
//!
//! `scan_kernels` (tests) and [`Scanned::kernel_decls`] find every kernel *definition* (`kernel`/`__kernel` function with a body)
//! in a source, with its parameters, the byte spans needed to rewrite it, and the sub-group size
//! it asks for through the layer's macros.
//!
//! What the scanner understands: `//` and `/* */` comments, string and character literals,
//! preprocessor lines (skipped, continuations included; `#define` bodies are remembered for
//! [`super::rounded`]), attributes before, between or after the declaration
//! specifiers, multi-line parameter lists, nested braces, and non-kernel functions (ignored here).
//!
//! What it does not do: it does not run the preprocessor. Kernels produced by macro expansion are
//! not found, and both branches of an `#if` are read as if they were one text, so conditional
//! code that unbalances brackets is reported as an error.
//!
//! Its answers are an optimisation only: the driver names the kernels, and a kernel the scanner
//! cannot read runs as written (see [`KernelDecl::rewrite_obstacle`]).

use super::lex::{match_brackets, Directive, Lexer, LineIndex};
pub(crate) use super::lex::{Kind, Token};
use crate::error::{Error, InputFault, Result};
use crate::obstacle::Obstacle;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// One kernel definition found by [`Scanned::kernel_decls`]. Offsets are byte offsets into the scanned
/// source.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// or, e.g., a macro argument; written out or through an object-like macro such as
    /// `#define REQD __attribute__((intel_reqd_sub_group_size(16)))`): clgroups then never pins
    /// a size of its own.
    pub own_sub_group_attr: bool,
    /// The kernel's own `intel_reqd_sub_group_size` whose size the scanner cannot tell (a
    /// function-like macro's parameter, a macro with several definitions, an expression, or
    /// different sizes in `#if` branches), described with its line; `None` when the size is
    /// known (`sub_group_size`) or there is no such attribute. Where clgroups provides the
    /// sub-groups itself (emulated, NVIDIA) such a kernel is refused: it would run with a
    /// guessed size.
    pub unresolved_sub_group_attr: Option<Obstacle>,
    /// `reqd_work_group_size(x, y, z)` written with integer literals in the declaration
    /// (`None` otherwise: a macro's value is the driver's to report).
    pub reqd_work_group_size: Option<Vec<usize>>,
    /// `work_group_size_hint(x, y, z)`, likewise.
    pub work_group_size_hint: Option<Vec<usize>>,
    /// Why a generated variant of this kernel could not be proven correct (a preprocessor line
    /// inside the declaration, an `#if` that the body does not close, a macro before the
    /// declaration, parameters the scanner cannot read); `None` when the kernel may be rewritten.
    pub rewrite_obstacle: Option<Obstacle>,
}

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Param {
    /// The parameter's tokens, with one space wherever the source had white space or a comment
    /// between them (e.g. `global const float* restrict x`).
    pub text: String,
    /// The parameter's name.
    pub name: String,
    /// Whether the parameter is a pointer.
    pub is_pointer: bool,
    /// Whether a `const` stands before its last `*`: the pointee is `const` (what the driver's
    /// `CL_KERNEL_ARG_TYPE_QUALIFIER` says, where it says nothing).
    pub const_pointee: bool,
    /// `global`, `local`, `constant` or `private` when the parameter names an address space
    /// (with or without the `__` prefix).
    pub address_space: Option<String>,
}

/// A kernel's sub-group size request, from the layer's macros (or a program's default, as
/// `clgroups::program::SubGroupSize`).
///
/// ```
/// use clgroups::program::SubGroupSize;
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let src = r#"
///     #include <clgroups/subgroup.h>
///     kernel CLG_NAMED_SUB_GROUP_SIZE(automatic) void k(global uint *x) {
///         x[get_global_id(0)] = sg_get_local_range();
///     }
/// "#;
/// let p = Program::builder(src).default_sub_group_size(SubGroupSize::Primary).build(&queue)?;
/// // The kernel's own request wins over the program's default.
/// println!("{:?}", p.kernel("k")?.resolved_sub_group_size());
/// # Ok::<(), clgroups::Error>(())
/// ```
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
/// attribute. (A build scans through [`super::pipeline`], once per text.)
#[cfg(test)]
pub fn scan_kernels(src: &str) -> Result<Vec<KernelDecl>> {
    let kernels = Scanned::new(src)?.kernel_decls()?;
    log::debug!(
        "scanned {} kernel(s): {:?}",
        kernels.len(),
        kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
    );
    Ok(kernels)
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
    /// The names among `macros` with a function-like definition (`#define F(n) ...`).
    fn_macros: HashSet<String>,
    /// Every preprocessor directive: its byte offset and kind.
    directives: Vec<(usize, Directive)>,
    /// The identifiers of the directive lines (their byte spans).
    pub(crate) directive_idents: Vec<Range<usize>>,
    /// Every `#undef`ined name.
    pub(crate) undefs: Vec<String>,
    /// What each `#include` names.
    pub(crate) includes: Vec<String>,
}

impl<'a> Scanned<'a> {
    /// Lexes `src`, matches its brackets and finds its function definitions.
    pub(crate) fn new(src: &'a str) -> Result<Self> {
        #[cfg(test)]
        scans::count(src);
        let lines = LineIndex::new(src);
        let mut lexer = Lexer::new(src, &lines);
        lexer.run(true)?;
        let tokens = lexer.tokens;
        let directives = lexer.directives;
        let directive_idents = lexer.directive_idents;
        let undefs = lexer.undefs;
        let includes = lexer.includes;
        let mut macros: HashMap<String, Vec<Vec<Token>>> = HashMap::new();
        let mut fn_macros = HashSet::new();
        for (name, body) in lexer.defines {
            // A function-like definition's replacement list starts after its `)`.
            if body.start > 0 && src.as_bytes()[body.start - 1] == b')' {
                fn_macros.insert(name.clone());
            }
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
            fn_macros,
            directives,
            directive_idents,
            undefs,
            includes,
        };
        scanned.functions = scanned.find_functions();
        Ok(scanned)
    }

    /// The text of token `i`.
    pub(crate) fn text(&self, i: usize) -> &'a str {
        &self.src[self.tokens[i].span.clone()]
    }

    /// Whether a conditional directive (`#if`, `#ifdef`, `#ifndef`) opens somewhere.
    pub(crate) fn has_conditionals(&self) -> bool {
        self.directives.iter().any(|&(_, d)| d == Directive::If)
    }

    /// Whether `name` has a function-like `#define` (`#define F(n) ...`).
    pub(crate) fn is_fn_macro(&self, name: &str) -> bool {
        self.fn_macros.contains(name)
    }

    /// The 1-based line of byte offset `at`.
    pub(crate) fn line(&self, at: usize) -> usize {
        self.lines.line(at)
    }

    /// Whether token `i` stands in the header of a kernel the scanner read (from the end of
    /// the previous item to the body's `{`).
    pub(crate) fn in_kernel_header(&self, i: usize) -> bool {
        (self.functions.iter()).any(|f| f.is_kernel && (f.item..f.body.0).contains(&i))
    }

    /// The partner of bracket token `i`.
    pub(crate) fn partner(&self, i: usize) -> usize {
        self.partner[i]
    }

    /// The first token of the operand that ends just before token `k`, scanning back no further
    /// than just after `floor`: brackets are skipped whole, and the scan stops at a token that
    /// separates expressions (an opening bracket, a brace, `,`, `;`, `?`, `:`, `return`) or one
    /// for which `stop` holds.
    pub(crate) fn operand_start(
        &self,
        k: usize,
        floor: usize,
        stop: impl Fn(usize) -> bool,
    ) -> usize {
        let mut a = k;
        while a > floor + 1 {
            let t = a - 1;
            match self.text(t) {
                ")" | "]" => {
                    a = self.partner(t);
                    continue;
                }
                "(" | "[" | "{" | "}" | "," | ";" | "?" | ":" | "return" => break,
                _ if stop(t) => break,
                _ => {}
            }
            a = t;
        }
        a
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
            if open <= start {
                return None;
            }
            // `HEAD(k)(...) {`: a function-like macro writes the name (the function is named
            // after the macro, as for `HEAD(float) {`), the parameters follow.
            let made = (open > start + 1 && self.is_punct(open - 1, ")"))
                .then(|| self.partner[open - 1])
                .filter(|&o| o > start && self.fn_macros.contains(self.text(o - 1)));
            if let Some(o) = made {
                return Some(FunctionDef {
                    name: self.text(o - 1).to_string(),
                    is_kernel: false,
                    decl: start,
                    item: start,
                    name_tok: o - 1,
                    open_paren: open,
                    body: (open_brace, self.partner[open_brace]),
                });
            }
            if self.tokens[open - 1].kind != Kind::Ident {
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
    /// Every kernel definition, in source order.
    pub(crate) fn kernel_decls(&self) -> Result<Vec<KernelDecl>> {
        self.functions
            .iter()
            .filter(|f| f.is_kernel)
            .map(|f| self.kernel_decl(f))
            .collect()
    }

    fn kernel_decl(&self, f: &FunctionDef) -> Result<KernelDecl> {
        let close_paren = self.partner[f.open_paren];
        let decl_start = self.tokens[f.decl].span.start;
        let body = self.tokens[f.body.0].span.start..self.tokens[f.body.1].span.end;
        let (params, params_obstacle) = match self.params(f, f.open_paren + 1, close_paren) {
            Ok(p) => (p, None),
            Err(e) => (Vec::new(), Some(Obstacle::Unscanned(Box::new(e)))),
        };
        let (sub_group_size, own_sub_group_attr, unresolved_sub_group_attr) =
            self.sub_group_size(f)?;
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
            unresolved_sub_group_attr,
            reqd_work_group_size: self.size_attr(f, "reqd_work_group_size"),
            work_group_size_hint: self.size_attr(f, "work_group_size_hint"),
            rewrite_obstacle,
        })
    }

    /// The integer literals of attribute `attr(x, y, z)` in kernel `f`'s declaration (before
    /// its body), if it is written so.
    fn size_attr(&self, f: &FunctionDef, attr: &str) -> Option<Vec<usize>> {
        let at = (f.decl..f.body.0).find(|&i| self.text(i) == attr)?;
        let open = at + 1;
        if self.text(open) != "(" {
            return None;
        }
        let close = self.partner(open);
        let toks: Vec<&str> = (open + 1..close).map(|i| self.text(i)).collect();
        let dims: Vec<usize> = toks
            .split(|t| *t == ",")
            .map(|d| match d {
                [n] => super::lex::parse_c_integer(n),
                _ => None,
            })
            .collect::<Option<_>>()?;
        (!dims.is_empty() && dims.len() <= 3 && !dims.contains(&0)).then_some(dims)
    }

    /// Why copying kernel `f`'s text into a variant might not compile or mean the same.
    fn rewrite_obstacle(&self, f: &FunctionDef, body: &Range<usize>) -> Option<Obstacle> {
        if f.decl != f.item {
            return Some(Obstacle::BeforeDeclaration {
                token: self.text(f.item).to_string(),
            });
        }
        let header = self.tokens[f.item].span.start..body.start;
        if let Some((at, _)) = self.directives.iter().find(|(at, _)| header.contains(at)) {
            return Some(Obstacle::DirectiveInDeclaration {
                line: self.line(*at),
            });
        }
        self.body_directive_obstacle(body)
    }

    /// Why the body `body` (a byte span, braces included) may not be what the compiler sees
    /// as one block: a conditional directive it does not open and close itself.
    pub(crate) fn body_directive_obstacle(&self, body: &Range<usize>) -> Option<Obstacle> {
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
                return Some(Obstacle::DirectiveOpenedOutside {
                    line: self.line(at),
                });
            }
        }
        (depth > 0).then_some(Obstacle::UnclosedIf)
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
            Error::input(InputFault::UnnamedParameter {
                kernel: f.name.clone(),
                line: self.line(at),
                index: n,
            })
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
        let star = toks.iter().rposition(|&i| self.is_punct(i, "*"));
        Ok(Param {
            text: self.joined(first, last_tok),
            name: self.text(last).to_string(),
            is_pointer: star.is_some(),
            const_pointee: star.is_some_and(|star| {
                (toks[..star].iter()).any(|&i| matches!(self.text(i), "const" | "__const"))
            }),
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
}

#[cfg(test)]
pub(crate) mod scans;
mod sub_group_attr;

#[cfg(test)]
mod tests;
