//! Tests of [`super`]: the parsers, and `docs/environment.md` against [`VARIABLES`].
use super::*;

#[test]
fn one_parser_per_kind() {
    for on in ["1", "true", "YES", "on"] {
        assert_eq!(switch(on), Some(true), "{on}");
    }
    for off in ["0", "false", "No", "off"] {
        assert_eq!(switch(off), Some(false), "{off}");
    }
    for bad in ["2", "checked", ""] {
        assert_eq!(switch(bad), None, "{bad}");
    }
    assert_eq!(seconds("2.5"), Some(Duration::from_millis(2500)));
    for bad in ["0", "-1", "soon", "inf", "NaN"] {
        assert_eq!(seconds(bad), None, "{bad}");
    }
}

#[test]
fn unset_or_blank_is_none_and_a_bad_value_names_the_variable_and_its_values() {
    assert_eq!(parse(TIMEOUT, None, seconds), Ok(None));
    assert_eq!(parse(TIMEOUT, Some(" ".into()), seconds), Ok(None));
    assert_eq!(
        parse(TIMEOUT, Some(" 60 ".into()), seconds),
        Ok(Some(Duration::from_secs(60)))
    );
    let e = parse(CHECKED, Some("checked".into()), switch).unwrap_err();
    assert_eq!(
        e,
        Error::InvalidEnvironment {
            variable: CHECKED.into(),
            value: "checked".into(),
            expected: SWITCH.into(),
        }
    );
    let word = |v: &str| {
        ["shared", "partitioned"]
            .iter()
            .position(|w| w.eq_ignore_ascii_case(v))
    };
    let e = parse(PLACEMENT, Some("split".into()), word).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("CLGROUPS_PLACEMENT=\"split\": expected `shared` or `partitioned`"),
        "{text}"
    );
}

/// The names in `docs/environment.md`'s table of variables clgroups reads.
fn documented() -> Vec<String> {
    let doc = include_str!("../../docs/environment.md");
    let table = doc
        .split("## ")
        .find(|s| s.starts_with("Read by clgroups"))
        .expect("docs/environment.md has a section `## Read by clgroups`");
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn docs_list_every_variable_and_no_other() {
    let names: Vec<&str> = VARIABLES.iter().map(|v| v.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a variable listed twice");
    let doc = documented();
    for v in VARIABLES {
        assert!(
            doc.iter().any(|d| d == v.name),
            "{} is not in docs/environment.md",
            v.name
        );
    }
    for d in &doc {
        assert!(
            names.contains(&d.as_str()),
            "docs/environment.md lists {d}, which clgroups does not read"
        );
    }
}

#[test]
fn the_docs_table_is_the_modules() {
    // Each row is generated from VARIABLES (`cargo test --lib config -- --ignored` prints them).
    let doc = include_str!("../../docs/environment.md");
    for v in VARIABLES {
        assert!(
            doc.contains(&row(v)),
            "docs/environment.md: the row of {} differs from:\n{}",
            v.name,
            row(v)
        );
    }
}

/// A variable's row in `docs/environment.md`.
fn row(v: &Variable) -> String {
    format!(
        "| `{}` | {} | {} | {} |",
        v.name, v.accepts, v.default, v.effect
    )
}

#[test]
#[ignore = "prints the docs table to paste into docs/environment.md"]
fn print_docs_table() {
    println!("| variable | accepts | unset | effect |\n|---|---|---|---|");
    for v in VARIABLES {
        println!("{}", row(v));
    }
}

/// The files under `dir` ending in `.rs`.
fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_environment_is_read_here_only() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut readers = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file");
        let name = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for line in text.lines().map(str::trim) {
            // Code, not docs or comments; this test's own lines aside.
            let reads = ["env::var", "env::vars", "env!(\"CLGROUPS"]
                .iter()
                .any(|w| line.contains(w));
            // The source fuzzer's own knobs (tests only; not clgroups' configuration).
            let fuzz = name == "transform/fuzz/mod.rs" && line.contains("FUZZ_");
            if !reads || line.starts_with("//") || name == "config/tests.rs" || fuzz {
                continue;
            }
            if name != "config.rs" {
                readers.push(format!("src/{name}: {line}"));
            }
        }
    }
    assert!(
        readers.is_empty(),
        "read the environment through crate::config:\n{}",
        readers.join("\n")
    );
}
