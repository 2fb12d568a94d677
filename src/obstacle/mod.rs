//! [`Obstacle`]: why clgroups writes (or uses) no generated variant of a kernel, as data: the
//! kernel, line and built-in are fields; `Display` words it for users.

mod words;

use crate::error::Error;
use std::collections::BTreeSet;
use std::fmt;

/// Why clgroups writes or uses no generated variant (rounded, wrapped, checked, partitioned) of
/// a kernel, or why it refuses one; `Display` gives the sentence the logs and errors show.
///
/// ```
/// # use clgroups::prelude::*;
/// use clgroups::kernel::{Obstacle, UseKind};
/// # let queue = Queue::new(&default_device()?)?;
/// let src = "kernel void k(global int *x) { barrier(CLK_LOCAL_MEM_FENCE); x[0] = 1; }";
/// let k = Program::from_source(&queue, src)?.kernel("k")?;
/// let why = k.rounding_support().unwrap_err();
/// let collective = |o: &Obstacle| match o {
///     Obstacle::Uses { used, .. } => used.kind == UseKind::WorkGroupCollective,
///     _ => false,
/// };
/// assert!(collective(why));
/// assert_eq!(why.to_string(), "kernel `k` uses `barrier` (a work-group collective)");
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Obstacle {
    /// Kernel `kernel` (through `via`) uses what `used` names.
    Uses {
        /// The kernel.
        kernel: String,
        /// The functions and macros that lead from the kernel's body to the use.
        via: Vec<Via>,
        /// What is used.
        used: Use,
    },
    /// The kernel has a `local` pointer parameter.
    LocalParameter {
        /// The kernel.
        kernel: String,
        /// The parameter.
        parameter: String,
    },
    /// Why kernel `kernel`'s text cannot be used (`kernel: why`).
    Kernel {
        /// The kernel.
        kernel: String,
        /// Why.
        why: Box<Obstacle>,
    },
    /// Kernel `kernel`'s text is not rewritten (`why`).
    NotRewritten {
        /// The kernel.
        kernel: String,
        /// Why.
        why: Box<Obstacle>,
    },
    /// A token the scanner does not understand stands before the kernel's declaration.
    BeforeDeclaration {
        /// The token.
        token: String,
    },
    /// A preprocessor line inside the kernel's declaration.
    DirectiveInDeclaration {
        /// Its line.
        line: usize,
    },
    /// The body holds a conditional directive opened outside it.
    DirectiveOpenedOutside {
        /// Its line.
        line: usize,
    },
    /// The body opens an `#if` it does not close.
    UnclosedIf,
    /// The kernel is defined more than once (under `#if` branches).
    DefinedTwice,
    /// The scanner did not find the kernel.
    NotFound,
    /// The scanner did not find a root kernel's declaration.
    NotDeclared,
    /// A launch over several devices of a kernel without guarded (rounded) variants.
    NoGuardedVariant,
    /// The scanner could not read the source: its error (the line and cause).
    Unscanned(Box<Error>),
    /// The kernel's own `intel_reqd_sub_group_size` argument cannot be read.
    UnreadSize {
        /// The attribute's argument, as written.
        argument: String,
        /// Its line.
        line: usize,
    },
    /// A macro in the kernel's header whose `intel_reqd_sub_group_size` cannot be read.
    UnreadSizeMacro {
        /// The macro.
        name: String,
        /// Its use's line.
        line: usize,
    },
    /// The kernel's own attributes name several sizes.
    SeveralSizes(BTreeSet<usize>),
    /// The kernel's definitions under `#if` branches have different sizes.
    DifferentDefinitions {
        /// The definitions' lines.
        lines: Vec<usize>,
    },
    /// The kernel's size attribute is selected by `#if` branches on macros clgroups cannot tell.
    SelectedByIf {
        /// What the branches depend on.
        macros: Vec<Undecided>,
    },
    /// `why`, and the build's `#if` branches depend on macros clgroups cannot tell.
    UnknownMacros {
        /// Why.
        why: Box<Obstacle>,
        /// What the branches depend on.
        macros: Vec<Undecided>,
    },
    /// A build option names what `0` says.
    BuildOption(Use),
    /// A build option brings code clgroups does not read (`-I`, `-include`).
    UnreadOption(String),
    /// The source includes a header clgroups does not read.
    UnreadInclude(String),
    /// The source or a build option defines a macro named like the work-item built-in
    /// `0`, which clgroups' variants (rounded, partitioned) define or call.
    DefinesQuery(String),
    /// Root-launch variants run over exact ranges.
    RootVariant,
    /// The kernel takes the emulated sub-group scratch.
    TakesScratch,
    /// Range rounding is disabled.
    RoundingDisabled,
    /// Checked mode is off.
    CheckedOff,
    /// Generated variants check their own accesses.
    GeneratedChecked,
    /// Generated variants are not wrapped.
    GeneratedWrapped,
    /// The kernel is declared more than once.
    DeclaredTwice,
    /// The build with the checked (`checked`) or all generated variants failed.
    VariantsFailed {
        /// Whether only the checked variants were dropped.
        checked: bool,
        /// The build's error (its log attached).
        error: Box<Error>,
    },
    /// The program builds only as written.
    OnlyWithoutRewrites,
    /// A macro writes a kernel keyword without the parameter list after a use.
    MacroKernelKeyword {
        /// The macro.
        name: String,
        /// Its line.
        line: usize,
    },
    /// A macro defines a function other than a kernel that uses sub-groups.
    MacroFunction {
        /// The macro.
        name: String,
        /// Its line.
        line: usize,
        /// The function's name, as written.
        function: String,
    },
    /// A function whose header a macro writes uses sub-groups.
    HeaderMacroFunction {
        /// The macro.
        name: String,
        /// Its line.
        line: usize,
    },
    /// An unscanned kernel may use the stand-in scratch the build declares (`why`: where the
    /// scratch edits cannot reach).
    StandIn(Box<Obstacle>),
    /// A collective under a condition on a work-item's value.
    Divergent {
        /// The collective.
        collective: String,
        /// The macro using it that the kernel calls there, where the kernel does not name it.
        macro_name: Option<Box<str>>,
        /// Its (or the macro's) line.
        line: usize,
        /// The work-item value the condition reads.
        id: String,
        /// The condition's line.
        id_line: usize,
        /// Why the collective is not moved ahead of the condition.
        unmoved: Option<NoRewrite>,
    },
    /// A collective (or a call of a function or macro using one) in a function whose control
    /// flow clgroups does not follow: a `goto`, or a macro whose replacement list holds `word`.
    HiddenFlow {
        /// The collective, its line.
        collective: (String, usize),
        /// The `goto` or the macro, its line, and the control-flow word of the macro.
        flow: (String, usize, Option<String>),
    },
    /// A call of a function refused or checked at launch (`why`: the function's reason, or its
    /// condition's text).
    Calls {
        /// The function.
        function: String,
        /// The call's line.
        line: usize,
        /// Why the function is refused.
        why: Box<Obstacle>,
    },
    /// A call that passes a value differing between work-items to a parameter on which the
    /// function's collective depends (`why`: the collective, as the call makes it divergent).
    Passes {
        /// The function.
        function: String,
        /// The call's line.
        line: usize,
        /// The parameter.
        parameter: String,
        /// The collective under a condition on it.
        why: Box<Obstacle>,
    },
    /// A launch-time condition, as written.
    Condition(String),
    /// The wrapper cannot pass one argument.
    Argument {
        /// The argument's index.
        index: usize,
        /// Why.
        why: ArgumentObstacle,
    },
    /// Checked mode instruments the kernel.
    CheckedRuns,
    /// The kernel requires no work-group size.
    NoRequiredSize,
    /// The driver calls the kernel by another name.
    DriverRenamed(String),
    /// The driver answers `call` with nothing usable: its error code where it gave one.
    Driver {
        /// What was asked.
        call: DriverCall,
        /// The driver's OpenCL error code (`CL_INVALID_KERNEL_NAME`, ...), where it gave one.
        code: Option<i32>,
    },
    /// A built wrapper's argument differs from the kernel's.
    WrapperArgument {
        /// The argument's index.
        index: usize,
        /// The wrapper's name.
        wrapper: String,
        /// The wrapper's argument, as the driver reports it.
        got: String,
        /// The kernel's.
        want: String,
    },
    /// The wrapper program did not build: the error, with the compiler's log where there is one.
    WrapperBuild(Box<Error>),
}

/// What clgroups asked the driver, in [`Obstacle::Driver`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverCall {
    /// `clCreateKernel` for a generated variant (its name).
    Variant(String),
    /// `CL_KERNEL_NUM_ARGS` of the kernel to wrap.
    NumArgs,
    /// `clCreateKernel` for the wrapper (its name).
    Wrapper(String),
    /// `CL_KERNEL_NUM_ARGS` of the built wrapper: `got` (`None` where the driver gave an
    /// error), not `want`.
    WrapperArgs {
        /// The wrapper's name.
        wrapper: String,
        /// The driver's count.
        got: Option<u32>,
        /// The count the wrapper declares.
        want: usize,
    },
    /// `CL_PROGRAM_SOURCE` of the user's program (no code: an empty answer).
    ProgramSource,
}

/// What an `#if` the build's macros cannot decide depends on ([`Obstacle::SelectedByIf`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Undecided {
    /// A macro clgroups cannot tell.
    Macro(String),
    /// A call of a function-like macro.
    FunctionLike(String),
    /// A malformed condition.
    Malformed,
    /// A division by zero.
    DivisionByZero,
    /// A shift out of range.
    ShiftOutOfRange,
    /// A condition too large to expand.
    TooLarge,
}

impl fmt::Display for Undecided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undecided::Macro(m) => f.write_str(m),
            Undecided::FunctionLike(m) => write!(f, "{m} (a function-like macro)"),
            Undecided::Malformed => f.write_str("a malformed #if condition"),
            Undecided::DivisionByZero => f.write_str("a division by zero in an #if condition"),
            Undecided::ShiftOutOfRange => f.write_str("a shift out of range in an #if"),
            Undecided::TooLarge => f.write_str("an #if condition too large to expand"),
        }
    }
}

/// A step from a kernel's body towards a use ([`Obstacle::Uses`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Via {
    /// A called function.
    Calls(String),
    /// A macro.
    Macro(String),
}

/// A use of a built-in (or qualifier) that forbids a variant ([`Obstacle::Uses`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Use {
    /// The identifier.
    pub name: String,
    /// What it is.
    pub kind: UseKind,
}

/// What a used identifier is ([`Use`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UseKind {
    /// A work-group collective.
    WorkGroupCollective,
    /// A sub-group operation.
    SubGroup,
    /// The `local` qualifier.
    LocalMemory,
    /// A global-range query in a called function, which would see a rounded range.
    SeesRoundedRange,
    /// A query whose answer a rounded-up range changes.
    ReportsRoundedRange,
    /// A work-group id (the last group of a rounded-up range is partial).
    PartialGroup,
    /// A work-group shape query.
    ShapeQuery,
    /// A whole-launch query in a called function.
    WholeLaunch,
}

/// Why the wrapper cannot pass an argument ([`Obstacle::Argument`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgumentObstacle {
    /// No type name.
    NoTypeName,
    /// A type name that is not a plain one.
    NotPlainType(String),
    /// No type qualifiers.
    NoTypeQualifiers,
    /// No address qualifier.
    NoAddressQualifier,
    /// A local-memory argument.
    Local,
    /// An unknown address qualifier.
    Address(u32),
    /// An unknown access qualifier.
    Access(u32),
}

/// Why a collective under work-item-dependent control flow cannot be moved out of it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoRewrite {
    /// It sits in a loop (or `switch`) that the condition controls.
    Loop,
    /// It is in a loop's own condition (or a `for`'s increment) that reads a work-item's value:
    /// the sub-groups of a work-group may leave the loop at different iterations.
    LoopCondition,
    /// It follows a `return`, `break` or `continue` taken under the condition.
    AfterExit,
    /// Its loop, run by the whole work-group in lockstep, would be left early by one work-item
    /// (the `return` or `goto` in its body).
    LeavesLoop(String),
    /// Its operand is not safe to evaluate everywhere (a load, a store, a division, a call of
    /// a function clgroups does not know, a macro, a preprocessor line): the token, and its line
    /// where the refusal names it.
    Unsafe {
        /// The token.
        token: String,
        /// Its line.
        line: Option<usize>,
    },
    /// Its operand reads a variable written or declared between the hoisting point and the call.
    Written(String),
    /// It is a barrier (`sg_barrier`, `sub_group_barrier`), which cannot be computed ahead.
    Barrier,
    /// Its condition is not shown uniform in each sub-group: the token outside a collective.
    NotUniform(String),
    /// A `non_uniform` built-in where clgroups cannot tell the work-items that reach it.
    NonUniform,
    /// Its statement cannot be delimited.
    Statement,
    /// It is in its loop's condition behind `?:` (or, in a `for`, `&&` / `||`: the token).
    ShortCircuit(String),
}

impl fmt::Display for Obstacle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not_found = "the scanner did not find the kernel (made by a macro?)";
        match self {
            Obstacle::Uses { kernel, via, used } => {
                write!(f, "kernel `{kernel}` ")?;
                via.iter().try_for_each(|v| write!(f, "{v}"))?;
                write!(f, "{used}")
            }
            Obstacle::LocalParameter { kernel, parameter } => write!(
                f,
                "kernel `{kernel}` has the local-memory parameter `{parameter}`"
            ),
            Obstacle::Kernel { kernel, why } => write!(f, "kernel `{kernel}`: {why}"),
            Obstacle::NotRewritten { kernel, why } => {
                write!(f, "kernel `{kernel}` is not rewritten: {why}")
            }
            Obstacle::BeforeDeclaration { token } => write!(
                f,
                "`{token}` before its declaration is not understood (a macro?)"
            ),
            Obstacle::DirectiveInDeclaration { line } => write!(
                f,
                "a preprocessor line (line {line}) inside its declaration"
            ),
            Obstacle::DirectiveOpenedOutside { line } => write!(
                f,
                "its body has a conditional directive (line {line}) opened outside it"
            ),
            Obstacle::UnclosedIf => f.write_str("its body opens an `#if` it does not close"),
            Obstacle::DefinedTwice => {
                f.write_str("it is defined more than once (under #if branches?)")
            }
            Obstacle::NotFound => f.write_str(not_found),
            Obstacle::NotDeclared => {
                f.write_str("the scanner did not find its declaration (a name made by a macro?)")
            }
            Obstacle::NoGuardedVariant => f.write_str("no guarded variant"),
            Obstacle::Unscanned(e) => write!(f, "{e}"),
            Obstacle::UnreadSize { argument, line } => {
                write!(f, "intel_reqd_sub_group_size({argument}) at line {line}")
            }
            Obstacle::UnreadSizeMacro { name, line } => write!(
                f,
                "`{name}` at line {line}, whose intel_reqd_sub_group_size clgroups cannot read \
                 (a function-like macro, several definitions or an expression)"
            ),
            Obstacle::SeveralSizes(sizes) => {
                write!(f, "intel_reqd_sub_group_size of sizes {sizes:?}")
            }
            Obstacle::DifferentDefinitions { lines } => write!(
                f,
                "definitions at lines {lines:?} (under #if branches?) with different \
                 intel_reqd_sub_group_size"
            ),
            Obstacle::SelectedByIf { macros } => write!(
                f,
                "selected by #if branches that depend on {}",
                quoted(macros)
            ),
            Obstacle::UnknownMacros { why, macros } => {
                let verb = if macros.len() == 1 { "is" } else { "are" };
                write!(f, "{why}; {} {verb} unknown", quoted(macros))
            }
            Obstacle::BuildOption(u) => write!(f, "a build option {u}"),
            Obstacle::UnreadOption(o) => write!(
                f,
                "the build option `{o}` brings code clgroups does not read"
            ),
            Obstacle::UnreadInclude(h) => {
                write!(f, "the source includes `{h}`, which clgroups does not read")
            }
            Obstacle::DefinesQuery(q) => write!(
                f,
                "a macro named `{q}` would change the `{q}` of clgroups' variants"
            ),
            Obstacle::RootVariant => {
                f.write_str("root-launch variants are launched over exact ND-ranges")
            }
            Obstacle::TakesScratch => f.write_str("it takes the emulated sub-group scratch"),
            Obstacle::RoundingDisabled => f.write_str("range rounding is disabled"),
            Obstacle::CheckedOff => f.write_str("checked mode is off"),
            Obstacle::GeneratedChecked => {
                f.write_str("generated variants check their own accesses")
            }
            Obstacle::GeneratedWrapped => f.write_str("generated variants are not wrapped"),
            Obstacle::DeclaredTwice => f.write_str("the kernel is declared more than once"),
            Obstacle::VariantsFailed { checked, error } => {
                let which = if *checked { "checked" } else { "generated" };
                write!(f, "its {which} variants did not build: {error}")
            }
            Obstacle::OnlyWithoutRewrites => {
                f.write_str("the program builds only without clgroups' rewrites")
            }
            Obstacle::MacroKernelKeyword { name, line } => write!(
                f,
                "macro `{name}` (line {line}) writes a kernel keyword, and a use of it is not \
                 followed by the kernel's parameter list"
            ),
            Obstacle::MacroFunction {
                name,
                line,
                function,
            } => write!(
                f,
                "macro `{name}` (line {line}) defines a function (`{function}`) that uses \
                 sub-groups"
            ),
            Obstacle::HeaderMacroFunction { name, line } => write!(
                f,
                "a function whose header macro `{name}` writes (line {line}) uses sub-groups"
            ),
            Obstacle::StandIn(why) => write!(
                f,
                "the scanner did not find the kernel and the emulated sub-group scratch could \
                 not be given to it ({why}); the program builds with a stand-in that this \
                 kernel may be using"
            ),
            Obstacle::Divergent {
                collective,
                macro_name,
                line,
                id,
                id_line,
                unmoved,
            } => words::divergent(
                f,
                (collective, macro_name.as_deref(), *line),
                (id, *id_line),
                unmoved.as_ref(),
            ),
            Obstacle::HiddenFlow { collective, flow } => words::hidden_flow(f, collective, flow),
            Obstacle::Calls {
                function,
                line,
                why,
            } => write!(f, "`{function}` at line {line}, with {why}"),
            Obstacle::Passes {
                function,
                line,
                parameter,
                why,
            } => write!(
                f,
                "`{function}` at line {line}, passed a value differing between work-items as \
                 `{parameter}`: {why}"
            ),
            Obstacle::Condition(text) => f.write_str(text),
            Obstacle::Argument { index, why } => write!(f, "argument {index}: {why}"),
            Obstacle::CheckedRuns => {
                f.write_str("checked mode instruments the kernel: its checked variant runs")
            }
            Obstacle::NoRequiredSize => f.write_str("the kernel requires no work-group size"),
            Obstacle::DriverRenamed(name) => write!(f, "the driver calls the kernel `{name}`"),
            Obstacle::Driver { call, code } => words::driver(f, call, *code),
            Obstacle::WrapperArgument {
                index,
                wrapper,
                got,
                want,
            } => write!(
                f,
                "argument {index} of `{wrapper}` is {got}, the kernel's is {want}"
            ),
            Obstacle::WrapperBuild(e) => write!(f, "the wrapper did not build: {e}"),
        }
    }
}

/// `names` quoted and joined (`` `A`, `B` ``).
fn quoted(names: &[Undecided]) -> String {
    let list: Vec<String> = names.iter().map(|m| format!("`{m}`")).collect();
    list.join(", ")
}

impl Use {
    /// A use of `name` as `kind`.
    pub(crate) fn new(name: &str, kind: UseKind) -> Use {
        Use {
            name: name.to_string(),
            kind,
        }
    }
}
