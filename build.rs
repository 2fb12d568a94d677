//! Embeds every header under `cl/clgroups/` in the library (see `src/transform/headers.rs`), so
//! `#include <clgroups/...>` works when the crate is used from crates.io.

use std::fmt::Write as _;
use std::path::Path;

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "h") {
            let name = path
                .strip_prefix(root)
                .expect("under cl/")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((
                name,
                path.canonicalize()
                    .expect("header path")
                    .display()
                    .to_string(),
            ));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cl");
    println!("cargo:rerun-if-changed=cl");
    let mut headers = Vec::new();
    collect(&root.join("clgroups"), &root, &mut headers);
    let mut code = String::from("&[\n");
    for (name, path) in &headers {
        writeln!(code, "    ({name:?}, include_str!({path:?})),").expect("write to string");
    }
    code.push(']');
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("headers.rs");
    std::fs::write(out, code).expect("write headers.rs");
}
