//! How [`Via`], [`Use`], [`ArgumentObstacle`] and [`NoRewrite`] read in messages.

use super::{ArgumentObstacle, NoRewrite, Use, UseKind, Via};
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
        }
    }
}
