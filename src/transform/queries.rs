//! The work-item built-ins clgroups' variants call in the text they add after the user's code
//! (guards, the definitions of the queries they answer themselves): [`REAL_QUERIES`] binds
//! them before the user's code ([`with_real_queries`]), so that a user macro of the same name
//! (`#define get_global_id(d) get_local_id(d)`) changes the user's uses only. Where the
//! variants cannot keep both, none are written: the source `#define`s a query the variants
//! define themselves ([`defined_query`]), or a build option defines one of those or one they
//! call ([`option_query`]).

use super::options::{self, BuildOption};
use super::source::Scanned;
use crate::obstacle::Obstacle;

/// Functions that call the real `get_global_id` and `get_local_size`, written before the
/// user's code.
pub(crate) const REAL_QUERIES: &str = "size_t clg_real_global_id(uint clg_d) { \
                                       return get_global_id(clg_d); }\n\
                                       size_t clg_real_local_size(uint clg_d) { \
                                       return get_local_size(clg_d); }";

/// The work-item built-ins [`REAL_QUERIES`] calls.
const CALLED: &[&str] = &["get_global_id", "get_local_size"];

/// `text` after [`REAL_QUERIES`] (and a `#line 1`, so the lines keep their numbers), unless it
/// has them already.
pub(crate) fn with_real_queries(text: String) -> String {
    match text.contains(REAL_QUERIES) {
        true => text,
        false => format!("{REAL_QUERIES}\n#line 1\n{text}"),
    }
}

/// Why no variants that define the work-item built-ins `defined` are written for `scanned`: it
/// `#define`s one (the variants' definition would replace the user's, and their `#undef` remove
/// it from the code after them).
pub(crate) fn defined_query(scanned: &Scanned<'_>, defined: &[&str]) -> Option<Obstacle> {
    let q = defined.iter().find(|q| scanned.macros.contains_key(**q))?;
    Some(Obstacle::DefinesQuery(q.to_string()))
}

/// Why no variants that define the work-item built-ins `defined` (and call those of
/// [`REAL_QUERIES`]) are written under build `options`: a `-D` defines one of either (a macro
/// from the options changes [`REAL_QUERIES`] too).
pub(crate) fn option_query(options: &str, defined: &[&str]) -> Option<Obstacle> {
    options::parse(options).find_map(|o| match o {
        BuildOption::Define { name, .. } if defined.contains(&name) || CALLED.contains(&name) => {
            Some(Obstacle::DefinesQuery(name.to_string()))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_queries_come_once_before_the_text() {
        let once = with_real_queries("kernel void k() {}".into());
        assert_eq!(
            once,
            format!("{REAL_QUERIES}\n#line 1\nkernel void k() {{}}")
        );
        assert_eq!(with_real_queries(once.clone()), once);
    }

    #[test]
    fn defines_of_the_queries_in_either_spelling() {
        let sizes = &["get_global_size"];
        for options in [
            "-Dget_global_size(d)=5",
            "-D get_global_size(d)=5",
            "-Dget_global_size",
            "-cl-mad-enable -D get_global_id(d)=get_local_id(d)",
            "-Dget_local_size=8",
        ] {
            let why = option_query(options, sizes).expect(options);
            assert!(matches!(why, Obstacle::DefinesQuery(_)), "{options}");
        }
        for options in [
            "-DN=get_global_size(0)",
            "-Uget_global_id",
            "-I get_global_id",
        ] {
            assert_eq!(option_query(options, sizes), None, "{options}");
        }
        let s = Scanned::new("#define get_global_size(d) 5\nkernel void k() {}").unwrap();
        let why = defined_query(&s, sizes);
        assert_eq!(why, Some(Obstacle::DefinesQuery("get_global_size".into())));
        assert_eq!(defined_query(&s, &["get_global_offset"]), None);
    }
}
