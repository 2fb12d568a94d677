//! How [`Via`], [`Use`], [`ArgumentObstacle`], [`NoRewrite`] and some of [`super::Obstacle`]'s
//! variants read in messages.

use super::{ArgumentObstacle, DriverCall, NoRewrite, Use, UseKind, Via};
use opencl3::error_codes::ClError;
use std::fmt;

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Via::Calls(name) => write!(f, "calls `{name}`, which "),
            Via::Macro(name) => write!(f, "uses macro `{name}`, which "),
        }
    }
}

impl fmt::Display for Use {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = &self.name;
        match self.kind {
            UseKind::WorkGroupCollective => write!(f, "uses `{id}` (a work-group collective)"),
            UseKind::SubGroup => write!(f, "uses `{id}` (a sub-group operation)"),
            UseKind::LocalMemory => write!(f, "declares `{id}` memory"),
            UseKind::SeesRoundedRange => write!(
                f,
                "uses `{id}` (a called function would see the rounded range)"
            ),
            UseKind::ReportsRoundedRange => write!(
                f,
                "uses `{id}`, which would report the rounded-up range (a wrapper cannot change it)"
            ),
            UseKind::PartialGroup => write!(
                f,
                "uses `{id}` (the last work-group of a rounded-up range is partial)"
            ),
            UseKind::ShapeQuery => write!(f, "uses `{id}` (a work-group shape query)"),
            UseKind::WholeLaunch => write!(f, "uses `{id}`"),
        }
    }
}

impl fmt::Display for ArgumentObstacle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgumentObstacle::NoTypeName => f.write_str("the driver reports no type name"),
            ArgumentObstacle::NotPlainType(t) => write!(f, "type `{t}` is not a plain type name"),
            ArgumentObstacle::NoTypeQualifiers => {
                f.write_str("the driver reports no type qualifiers")
            }
            ArgumentObstacle::NoAddressQualifier => {
                f.write_str("the driver reports no address qualifier")
            }
            ArgumentObstacle::Local => f.write_str("a local-memory argument"),
            ArgumentObstacle::Address(q) => write!(f, "address qualifier {q:#x}"),
            ArgumentObstacle::Access(q) => write!(f, "access qualifier {q:#x}"),
        }
    }
}

impl fmt::Display for NoRewrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoRewrite::Loop => {
                f.write_str("it runs in a loop or switch that the condition controls")
            }
            NoRewrite::LoopCondition => f.write_str(
                "it decides whether its loop runs again, and the sub-groups of a work-group may \
                 leave the loop at different iterations",
            ),
            NoRewrite::AfterExit => f.write_str("it follows an exit taken under the condition"),
            NoRewrite::LeavesLoop(token) => write!(
                f,
                "its loop's body leaves it with `{token}`, and the work-group must run the loop \
                 in lockstep (its sub-groups may leave it at different iterations)"
            ),
            NoRewrite::Unsafe { token, line } => {
                write!(f, "its operand is not safe to evaluate everywhere (")?;
                match line {
                    Some(line) => write!(f, "`{token}` at line {line})"),
                    None => write!(f, "{token})"),
                }
            }
            NoRewrite::Written(v) => write!(f, "its operand reads `{v}`, written before the call"),
            NoRewrite::Barrier => f.write_str("a barrier cannot be computed ahead"),
            NoRewrite::NotUniform(t) => write!(
                f,
                "its condition is not shown uniform in each sub-group (`{t}` outside a collective)"
            ),
            NoRewrite::NonUniform => f.write_str(
                "a non_uniform built-in's result depends on the work-items reaching it, which \
                     clgroups tells only under `if`s, `&&`, `||` and `?:`, for reductions, scans \
                     and votes",
            ),
            NoRewrite::Statement => f.write_str("clgroups cannot delimit its statement"),
            NoRewrite::ShortCircuit(t) => write!(
                f,
                "it is behind `{t}` in its loop's condition, which clgroups does not run in \
                 lockstep (write the vote unconditionally: `int go = sub_group_any(..);`)"
            ),
        }
    }
}

/// [`super::Obstacle::Divergent`]'s sentence: the collective (or the macro using it), its line; the
/// condition's word and line; why it was not moved ahead.
pub(super) fn divergent(
    f: &mut fmt::Formatter<'_>,
    (collective, macro_name, line): (&str, Option<&str>, usize),
    (id, id_line): (&str, usize),
    unmoved: Option<&NoRewrite>,
) -> fmt::Result {
    match macro_name {
        Some(m) => write!(f, "macro `{m}` (using {collective}) at line {line}")?,
        None => write!(f, "{collective} at line {line}")?,
    }
    write!(f, " under a condition on {id} at line {id_line}")?;
    match unmoved {
        Some(why) => write!(f, " (not moved ahead: {why})"),
        None => Ok(()),
    }
}

/// [`super::Obstacle::HiddenFlow`]'s sentence.
pub(super) fn hidden_flow(
    f: &mut fmt::Formatter<'_>,
    (collective, line): &(String, usize),
    (flow, flow_line, word): &(String, usize, Option<String>),
) -> fmt::Result {
    write!(f, "{collective} at line {line} in a function with ")?;
    match word {
        Some(word) => write!(
            f,
            "macro `{flow}` (line {flow_line}), whose replacement list holds `{word}`: \
             clgroups does not follow control flow written by macros"
        )?,
        None => write!(
            f,
            "`{flow}` at line {flow_line}: clgroups does not follow jumps"
        )?,
    }
    f.write_str(", and every work-item of the work-group must reach each collective here")
}

/// [`super::Obstacle::Driver`]'s sentence: what was asked, then the driver's answer.
pub(super) fn driver(
    f: &mut fmt::Formatter<'_>,
    call: &DriverCall,
    code: Option<i32>,
) -> fmt::Result {
    match call {
        DriverCall::Variant(name) => write!(f, "no variant `{name}`")?,
        DriverCall::NumArgs => f.write_str("CL_KERNEL_NUM_ARGS")?,
        DriverCall::Wrapper(name) => write!(f, "no kernel `{name}`")?,
        DriverCall::WrapperArgs { wrapper, got, want } => {
            let got = got.ok_or(ClError(code.unwrap_or(0)));
            return write!(f, "`{wrapper}` has {got:?} parameters (not {want})");
        }
        DriverCall::ProgramSource if code.is_none() => {
            return f.write_str("the driver reports an empty program source")
        }
        DriverCall::ProgramSource => f.write_str("the driver reports no program source")?,
    }
    match (call, code.map(ClError)) {
        (DriverCall::ProgramSource, Some(e)) => write!(f, " (CL_PROGRAM_SOURCE: {e})"),
        (_, Some(e)) => write!(f, " ({e})"),
        (_, None) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Obstacle;
    use super::DriverCall;

    #[test]
    fn driver_answers_read_as_before() {
        let driver = |call, code| Obstacle::Driver { call, code }.to_string();
        let cases = [
            (
                DriverCall::Variant("k__clg_r".into()),
                Some(-46),
                "no variant `k__clg_r` (CL_INVALID_KERNEL_NAME)",
            ),
            (
                DriverCall::NumArgs,
                Some(-48),
                "CL_KERNEL_NUM_ARGS (CL_INVALID_KERNEL)",
            ),
            (
                DriverCall::Wrapper("w".into()),
                Some(-46),
                "no kernel `w` (CL_INVALID_KERNEL_NAME)",
            ),
            (
                DriverCall::WrapperArgs {
                    wrapper: "w".into(),
                    got: Some(3),
                    want: 5,
                },
                None,
                "`w` has Ok(3) parameters (not 5)",
            ),
            (
                DriverCall::WrapperArgs {
                    wrapper: "w".into(),
                    got: None,
                    want: 5,
                },
                Some(-48),
                "`w` has Err(ClError(-48)) parameters (not 5)",
            ),
            (
                DriverCall::ProgramSource,
                Some(-44),
                "the driver reports no program source (CL_PROGRAM_SOURCE: CL_INVALID_PROGRAM)",
            ),
            (
                DriverCall::ProgramSource,
                None,
                "the driver reports an empty program source",
            ),
        ];
        for (call, code, want) in cases {
            assert_eq!(driver(call, code), want);
        }
    }
}
