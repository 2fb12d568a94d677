//! The `cl/` headers, embedded in the library, and `#include` resolution for them.
//!
//! Kernels write `#include <clgroups/subgroup.h>` (or `"clgroups/..."`); the build replaces the
//! line with the header's text between `#line` directives, so the compiler needs no include path
//! and its messages still name the right file and line. Other includes are left to the compiler.

use crate::error::{Error, Result};

/// Every header of `cl/clgroups/`, by include name.
pub const HEADERS: &[(&str, &str)] = &[
    (
        "clgroups/subgroup.h",
        include_str!("../../cl/clgroups/subgroup.h"),
    ),
];

/// The header text for an include name, if it is one of ours.
pub fn header(name: &str) -> Option<&'static str> {
    HEADERS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// `src` with every `#include` of a clgroups header replaced by its (recursively resolved) text.
pub fn inline_includes(src: &str, file_name: &str) -> Result<String> {
    inline(src, file_name, &mut Vec::new())
}

fn inline(src: &str, file_name: &str, stack: &mut Vec<String>) -> Result<String> {
    let mut out = String::with_capacity(src.len());
    for (i, line) in src.lines().enumerate() {
        match include_target(line) {
            Some(name) if name.starts_with("clgroups/") => {
                let text = header(name).ok_or_else(|| {
                    Error::input(format!(
                        "{file_name}:{}: no clgroups header {name:?} (known: {:?})",
                        i + 1,
                        HEADERS.iter().map(|(n, _)| *n).collect::<Vec<_>>()
                    ))
                })?;
                if stack.iter().any(|s| s == name) {
                    // Include guards make a repeated include empty; skip it outright.
                    out.push('\n');
                    continue;
                }
                stack.push(name.to_string());
                out.push_str(&format!("#line 1 \"{name}\"\n"));
                out.push_str(&inline(text, name, stack)?);
                out.push_str(&format!("\n#line {} \"{file_name}\"\n", i + 2));
                stack.pop();
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    Ok(out)
}

/// The target of an `#include <x>` or `#include "x"` line.
fn include_target(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim();
    let (open, close) = match rest.chars().next()? {
        '<' => ('<', '>'),
        '"' => ('"', '"'),
        _ => return None,
    };
    let inner = rest.strip_prefix(open)?;
    inner.find(close).map(|end| &inner[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_include_targets() {
        assert_eq!(include_target("#include <clgroups/subgroup.h>"), Some("clgroups/subgroup.h"));
        assert_eq!(include_target("  #  include \"a.h\" // x"), Some("a.h"));
        assert_eq!(include_target("int include;"), None);
    }

    #[test]
    fn inlines_with_line_directives() {
        let src = "int a;\n#include <clgroups/subgroup.h>\nint b;\n";
        let out = inline_includes(src, "k.cl").unwrap();
        assert!(out.starts_with("int a;\n#line 1 \"clgroups/subgroup.h\"\n"));
        assert!(out.contains("\n#line 3 \"k.cl\"\nint b;\n"));
        assert!(out.contains("CLGROUPS_SUB_GROUP"));
    }

    #[test]
    fn unknown_header_is_an_error_with_its_line() {
        let e = inline_includes("\n#include <clgroups/nope.h>\n", "k.cl").unwrap_err();
        assert!(e.to_string().contains("k.cl:2"), "{e}");
    }
}
