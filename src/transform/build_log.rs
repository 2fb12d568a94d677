//! Build logs that name the user's file and line on every driver.
//!
//! The composed source carries `#line` directives (after the prelude, around inlined headers and
//! generated variants). PoCL's compiler honours them; NVIDIA's does not and reports positions as
//! `<kernel>:LINE:COL` in the composed text. [`map_positions`] rewrites such positions through
//! the directives.

/// `log` with every `<kernel>:LINE:` position (NVIDIA's name for the source) replaced by the
/// `FILE:LINE:` that `#line` directives in `source` assign to that line.
///
/// ```
/// use clgroups::program::build_log::map_positions;
/// let source = "#define X 1\n#line 1 \"k.cl\"\nkernel void k() {\n  oops;\n}\n";
/// let log = "<kernel>:4:3: error: use of undeclared identifier 'oops'";
/// assert_eq!(map_positions(log, source), "k.cl:2:3: error: use of undeclared identifier 'oops'");
/// ```
pub fn map_positions(log: &str, source: &str) -> String {
    const TAG: &str = "<kernel>:";
    let table = origins(source);
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(at) = rest.find(TAG) {
        out.push_str(&rest[..at]);
        let after = &rest[at + TAG.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let mapped = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|n| table.get(n.checked_sub(1)?))
            .filter(|_| after[digits..].starts_with(':'));
        match mapped {
            Some((file, line)) => out.push_str(&format!("{file}:{line}")),
            None => out.push_str(&rest[at..at + TAG.len() + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// For each line of `source`, the (file, line) its `#line` directives give it.
fn origins(source: &str) -> Vec<(String, usize)> {
    let mut file = "<kernel>".to_string();
    let mut next = 1;
    let mut table = Vec::new();
    for text in source.lines() {
        table.push((file.clone(), next));
        next += 1;
        if let Some((line, name)) = line_directive(text) {
            next = line;
            if let Some(name) = name {
                file = name;
            }
        }
    }
    table
}

/// `#line N` or `#line N "file"`.
pub(crate) fn line_directive(text: &str) -> Option<(usize, Option<String>)> {
    let rest = text.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line")?.trim();
    let (num, name) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let name = name.trim();
    let name = (name.len() >= 2 && name.starts_with('"') && name.ends_with('"'))
        .then(|| name[1..name.len() - 1].to_string());
    Some((num.parse().ok()?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_through_headers_and_variants() {
        let source = "#define A 1\n#line 1 \"k.cl\"\nint a;\n#line 1 \"clgroups/subgroup.h\"\nint h;\n#line 3 \"k.cl\"\nbad;\n#line 2\nagain;\n";
        let log =
            "<kernel>:5:1: x\n<kernel>:7:1: y\n<kernel>:9:2: z\n<kernel>:99:1: w\n<kernel>: v";
        assert_eq!(
            map_positions(log, source),
            "clgroups/subgroup.h:1:1: x\nk.cl:3:1: y\nk.cl:2:2: z\n<kernel>:99:1: w\n<kernel>: v"
        );
    }

    #[test]
    fn other_logs_are_untouched() {
        let log = "kernel.cl:3:5: error: nope";
        assert_eq!(map_positions(log, "#line 1 \"kernel.cl\"\n"), log);
    }
}
