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
use crate::error::Result;
use crate::obstacle::Obstacle;
use std::cell::OnceCell;
use std::collections::{BTreeSet, HashMap, HashSet};
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
/// Errors ([`Error::InvalidInput`](crate::Error::InvalidInput), with line numbers) for
/// unbalanced brackets, unterminated comments or literals, a parameter without a name, and a
/// malformed or repeated sub-group size attribute. (A build scans through [`super::pipeline`],
/// once per text.)
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

impl FunctionDef {
    /// Its tokens, from the top-level item's first to the body's `}` (exclusive end).
    pub(crate) fn tokens(&self) -> Span {
        (self.item, self.body.1 + 1)
    }

    /// Whether it returns nothing (`void` before its name).
    pub(crate) fn returns_void(&self, s: &Scanned<'_>) -> bool {
        (self.decl..self.name_tok).any(|t| s.text(t) == "void")
    }

    /// Whether it returns a pointer: `Some(true)` to `const` (before its first `*`).
    #[cfg(feature = "scaling")] // the footprints'
    pub(crate) fn returned_pointer(&self, s: &Scanned<'_>) -> Option<bool> {
        let star = (self.decl..self.name_tok).find(|&t| s.text(t) == "*")?;
        Some((self.decl..star).any(|t| matches!(s.text(t), "const" | "__const")))
    }
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
    /// Each function's statement and condition regions, once asked for ([`Scanned::syntax`]).
    syntax: Vec<OnceCell<syntax::Syntax>>,
    /// The indices in `functions` of each name's definitions (`#if` branches may hold several).
    by_name: HashMap<String, Vec<usize>>,
    /// The helpers any work-item may call, once asked for (`statement::pure_helper`): whether
    /// each calls collectives.
    pub(crate) pure_helpers: OnceCell<HashMap<String, bool>>,
    /// Per function, the parameters that some call passes values differing between work-items
    /// (by an id; by an id or a load), once asked for (`transform::passed`).
    pub(crate) varying_params: OnceCell<VaryingParams>,
    /// The tokens naming private arrays, once asked for ([`Scanned::is_private_array`]).
    private_arrays: OnceCell<HashSet<usize>>,
    /// The helpers whose result differs between work-items, once asked for
    /// ([`Scanned::varying_helpers`]).
    varying_helpers: OnceCell<[BTreeSet<Box<str>>; 2]>,
}

/// Per function name, its parameters that calls pass values differing by a work-item's id, and
/// those differing by its id or a value loaded at it.
pub(crate) type VaryingParams = HashMap<String, [BTreeSet<Box<str>>; 2]>;

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
            syntax: Vec::new(),
            by_name: HashMap::new(),
            pure_helpers: OnceCell::new(),
            varying_params: OnceCell::new(),
            private_arrays: OnceCell::new(),
            varying_helpers: OnceCell::new(),
        };
        scanned.functions = scanned.find_functions();
        scanned.syntax = scanned.functions.iter().map(|_| OnceCell::new()).collect();
        for (k, f) in scanned.functions.iter().enumerate() {
            scanned.by_name.entry(f.name.clone()).or_default().push(k);
        }
        Ok(scanned)
    }

    /// The definitions of the function `name` (none, one, or one per `#if` branch).
    pub(crate) fn named(&self, name: &str) -> impl Iterator<Item = &FunctionDef> {
        let found = self.by_name.get(name).map_or(&[][..], Vec::as_slice);
        found.iter().map(|&k| &self.functions[k])
    }

    /// The text of token `i`.
    pub(crate) fn text(&self, i: usize) -> &'a str {
        &self.src[self.tokens[i].span.clone()]
    }

    /// Whether a conditional directive (`#if`, `#ifdef`, `#ifndef`) opens somewhere.
    pub(crate) fn has_conditionals(&self) -> bool {
        self.directives.iter().any(|&(_, d)| d == Directive::If)
    }

    /// Whether byte offset `at` lies between an `#if` (`#ifdef`, `#ifndef`) and its `#endif`.
    #[cfg(feature = "scaling")] // the footprints'
    pub(crate) fn under_conditional(&self, at: usize) -> bool {
        let mut depth = 0i64;
        for &(_, d) in self.directives.iter().take_while(|&&(o, _)| o < at) {
            match d {
                Directive::If => depth += 1,
                Directive::EndIf => depth -= 1,
                _ => {}
            }
        }
        depth > 0
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

    /// Whether token `i` is an identifier followed by `(`.
    pub(crate) fn is_call(&self, i: usize) -> bool {
        self.tokens[i].kind == Kind::Ident && i + 1 < self.tokens.len() && self.is_punct(i + 1, "(")
    }

    fn is_punct(&self, i: usize, p: &str) -> bool {
        self.tokens[i].kind == Kind::Punct && self.text(i) == p
    }
}

mod decls;
mod functions;
#[cfg(test)]
pub(crate) mod scans;
mod sub_group_attr;
mod syntax;

mod taint;

pub(crate) use syntax::{adjacent, assigns, statement_end, Conditional, Span, Syntax};
pub(crate) use taint::{any_word, id_word, LOCKSTEP_FLAG};

#[cfg(test)]
mod tests;
