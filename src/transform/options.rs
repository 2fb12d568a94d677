//! Build options as the compiler reads them, for every place clgroups looks in them for macros
//! or code it does not read: `-D`, `-U` and `-I` take their argument in the same word
//! (`-DN=4`, `-UN`, `-Idir`) or in the next one (`-D N=4`, `-U N`, `-I dir`).

use super::lex::leading_word;

/// One build option ([`parse`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildOption<'a> {
    /// `-D NAME`, `-DNAME=VALUE`, `-D F(x)=VALUE`: the macro's name, what follows it before
    /// any `=` (a function-like macro's parameter list, `(x)`; empty for an object-like macro)
    /// and its value (`None` without `=`: the compiler defines it as 1).
    Define {
        name: &'a str,
        params: &'a str,
        value: Option<&'a str>,
    },
    /// `-U NAME`, `-UNAME`.
    Undefine(&'a str),
    /// `-I dir`, `-Idir`: an include path.
    IncludePath(&'a str),
    /// `-include file`, `-includefile`: a header included before the source.
    Include(&'a str),
    /// Any other word (`-cl-mad-enable`, `-cl-std=CL2.0`).
    Other(&'a str),
}

/// The options of `options`, in order (words split at whitespace, as PoCL does; an argument
/// missing at the end reads as empty).
pub(crate) fn parse(options: &str) -> impl Iterator<Item = BuildOption<'_>> {
    let mut words = options.split_whitespace();
    std::iter::from_fn(move || {
        let w = words.next()?;
        if let Some(file) = w.strip_prefix("-include") {
            let file = if file.is_empty() {
                words.next()
            } else {
                Some(file)
            };
            return Some(BuildOption::Include(file.unwrap_or("")));
        }
        let flag = w.get(..2).filter(|f| matches!(*f, "-D" | "-U" | "-I"));
        let Some(flag) = flag else {
            return Some(BuildOption::Other(w));
        };
        let arg = match &w[2..] {
            "" => words.next().unwrap_or(""),
            rest => rest,
        };
        Some(match flag {
            "-D" => define(arg),
            "-U" => BuildOption::Undefine(arg),
            _ => BuildOption::IncludePath(arg),
        })
    })
}

/// The `-D` option of argument `arg` (`NAME`, `NAME=VALUE`, `F(x)=VALUE`).
fn define(arg: &str) -> BuildOption<'_> {
    let (head, value) = match arg.split_once('=') {
        Some((head, value)) => (head, Some(value)),
        None => (arg, None),
    };
    let (name, params) = leading_word(head);
    BuildOption::Define {
        name,
        params,
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::BuildOption::{self, *};
    use super::*;

    fn all(options: &str) -> Vec<BuildOption<'_>> {
        parse(options).collect()
    }

    fn def<'a>(name: &'a str, params: &'a str, value: Option<&'a str>) -> BuildOption<'a> {
        Define {
            name,
            params,
            value,
        }
    }

    #[test]
    fn both_spellings_of_every_option_read_alike() {
        for (joined, spaced, want) in [
            ("-DNAME", "-D NAME", def("NAME", "", None)),
            ("-DNAME=V", "-D NAME=V", def("NAME", "", Some("V"))),
            ("-DN=", "-D N=", def("N", "", Some(""))),
            ("-DF(x)=x+1", "-D F(x)=x+1", def("F", "(x)", Some("x+1"))),
            ("-UNAME", "-U NAME", Undefine("NAME")),
            ("-Idir", "-I dir", IncludePath("dir")),
        ] {
            assert_eq!(all(joined), [want], "{joined}");
            assert_eq!(all(spaced), [want], "{spaced}");
        }
    }

    #[test]
    fn options_read_in_order() {
        let got = all(" -cl-mad-enable -Dget_group_id(d)=0\t-include h.h -I  /opt -UX -D");
        assert_eq!(
            got,
            [
                Other("-cl-mad-enable"),
                def("get_group_id", "(d)", Some("0")),
                Include("h.h"),
                IncludePath("/opt"),
                Undefine("X"),
                def("", "", None),
            ]
        );
        assert_eq!(all("-I"), [IncludePath("")]);
        assert_eq!(
            all("-includeh.h -Werror"),
            [Include("h.h"), Other("-Werror")]
        );
        assert!(all("").is_empty());
    }
}
