//! The inputs of [`super`]: the real kernels of this repository as read from disk, every
//! truncation of them, token soup, and the real kernels mutated (tokens and lines deleted,
//! duplicated and swapped, brackets unbalanced, preprocessor lines injected, macros, non-ASCII
//! text, huge numbers, very long lines, nesting thousands deep). Every input is a pure function
//! of `(seed, case)`, so a failing case is replayed by its number.

use std::path::Path;

/// A small, fast, seeded generator (SplitMix64).
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Mostly small, sometimes thousands: a nesting depth or repeat count (up to 20,000; a
    /// tenth of that in debug builds, which run the time-bounded slice in CI).
    fn count(&mut self) -> usize {
        let n = match self.below(4) {
            0 => 1 + self.below(8),
            1 => 1 + self.below(100),
            2 => 1_000 + self.below(4_000),
            _ => 5_000 + self.below(15_000),
        };
        match cfg!(debug_assertions) {
            true => n.div_ceil(10),
            false => n,
        }
    }
}

/// The real kernels: the `.cl` and `.h` files under `tests/` and `cl/`, and the raw string
/// literals that define kernels in the `.rs` files under `tests/`.
pub(super) fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect(&root.join("tests"), &mut files);
    collect(&root.join("cl"), &mut files);
    files.sort();
    let mut out: Vec<String> = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("a readable corpus file");
        match f.extension().and_then(|e| e.to_str()) {
            Some("rs") => out.extend(raw_strings(&text).filter(|s| s.contains("kernel"))),
            _ => out.push(text),
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|s| seen.insert(s.clone()));
    assert!(out.len() > 30, "the corpus has {} sources", out.len());
    out
}

/// The `.cl`, `.h` and `.rs` files under `dir`.
fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("a readable corpus folder");
    for path in entries.map(|e| e.expect("a directory entry").path()) {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if path.is_dir() {
            collect(&path, out);
        } else if ["cl", "h", "rs"].contains(&ext) {
            out.push(path);
        }
    }
}

/// The contents of the raw string literals (`r"..."`, `r#"..."#`) of Rust source `text`.
fn raw_strings(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut rest = text;
    std::iter::from_fn(move || loop {
        let at = rest
            .find("r#\"")
            .map(|a| (a, 3))
            .or(rest.find("r\"").map(|a| (a, 2)));
        let (at, open) = at?;
        let close = if open == 3 { "\"#" } else { "\"" };
        let body = &rest[at + open..];
        let end = body.find(close)?;
        rest = &body[end + close.len()..];
        if end > 0 {
            return Some(body[..end].to_string());
        }
    })
}

/// Every `stride`-th truncation of every corpus source (at character boundaries).
pub(super) fn truncations(corpus: &[String], stride: usize) -> Vec<(usize, usize)> {
    corpus
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            (0..s.len())
                .step_by(stride)
                .filter(move |&at| s.is_char_boundary(at))
                .map(move |at| (i, at))
        })
        .collect()
}

/// The input of random case `case` of `seed`: token soup, or a corpus source with one to five
/// mutations (most often one or two).
pub(super) fn random_case(corpus: &[String], seed: u64, case: u64) -> String {
    let mut r = Rng::new(seed ^ case.wrapping_mul(0xD1B5_4A32_D192_ED03));
    if r.below(8) == 0 {
        return soup(&mut r);
    }
    let mut text = r.pick(corpus).clone();
    let n = [1, 1, 1, 2, 2, 3, 5][r.below(7)];
    for _ in 0..n {
        let m = r.below(MUTATIONS.len());
        text = MUTATIONS[m](&mut r, &text, corpus);
    }
    text
}

type Mutation = fn(&mut Rng, &str, &[String]) -> String;

/// Every mutation, by how often it is picked (a repeated entry is picked more often).
const MUTATIONS: &[Mutation] = &[
    truncate,
    tokens,
    tokens,
    tokens,
    lines,
    lines,
    unbalance,
    unbalance,
    directive,
    directive,
    macros,
    non_ascii,
    huge_number,
    long_line,
    deep,
    deep,
    splice,
];

/// A character boundary of `text`, at random.
fn boundary(r: &mut Rng, text: &str) -> usize {
    let mut at = r.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn insert(r: &mut Rng, text: &str, what: &str) -> String {
    let at = boundary(r, text);
    format!("{}{what}{}", &text[..at], &text[at..])
}

fn truncate(r: &mut Rng, text: &str, _: &[String]) -> String {
    text[..boundary(r, text)].to_string()
}

/// `text` cut into identifiers and numbers, runs of blanks, and single other characters.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let class = |c: char| match c {
        c if c.is_alphanumeric() || c == '_' => 0,
        c if c.is_whitespace() => 1,
        _ => 2,
    };
    let mut prev = None;
    for (i, c) in text.char_indices() {
        let k = class(c);
        if i > start && (k == 2 || Some(k) != prev) {
            out.push(&text[start..i]);
            start = i;
        }
        prev = Some(k);
    }
    out.push(&text[start..]);
    out
}

/// Deletes, duplicates or swaps one to three random tokens.
fn tokens(r: &mut Rng, text: &str, _: &[String]) -> String {
    let mut p = pieces(text);
    for _ in 0..1 + r.below(3) {
        let (i, j) = (r.below(p.len()), r.below(p.len()));
        match r.below(3) {
            0 => _ = p.remove(i),
            1 => p.insert(i, p[j]),
            _ => p.swap(i, j),
        }
        if p.is_empty() {
            break;
        }
    }
    p.concat()
}

/// Deletes, duplicates or swaps a random line (or a run of lines).
fn lines(r: &mut Rng, text: &str, _: &[String]) -> String {
    let mut l: Vec<&str> = text.split_inclusive('\n').collect();
    if l.is_empty() {
        return text.to_string();
    }
    let (i, j) = (r.below(l.len()), r.below(l.len()));
    match r.below(4) {
        0 => _ = l.remove(i),
        1 => l.insert(i, l[j]),
        2 => l.swap(i, j),
        _ => _ = l.drain(i.min(j)..i.max(j)),
    }
    l.concat()
}

/// Inserts or deletes a bracket (or a quote or comment opener).
fn unbalance(r: &mut Rng, text: &str, _: &[String]) -> String {
    const OPEN: [&str; 11] = ["(", ")", "{", "}", "[", "]", "\"", "'", "/*", "*/", "\\"];
    if r.below(2) == 0 {
        let what = *r.pick(&OPEN);
        return insert(r, text, what);
    }
    let at: Vec<usize> = text
        .match_indices(['(', ')', '{', '}', '[', ']'])
        .map(|(i, _)| i)
        .collect();
    match at.is_empty() {
        true => text.to_string(),
        false => {
            let i = *r.pick(&at);
            format!("{}{}", &text[..i], &text[i + 1..])
        }
    }
}

const DIRECTIVES: &[&str] = &[
    "#if A\n",
    "#if 0\n",
    "#if 1\n",
    "#ifdef cl_khr_subgroups\n",
    "#ifndef X\n",
    "#elif defined(Y) && Y > 2\n",
    "#else\n",
    "#endif\n",
    "#define M(a) a {\n",
    "#define K kernel\n",
    "#define SIMD 16\n",
    "#define REQD __attribute__((intel_reqd_sub_group_size(SIMD)))\n",
    "#define SG sg_reduce_add\n",
    "#define G get_global_id(0)\n",
    "#define E\n",
    "#undef SIMD\n",
    "#line 7 \"other.cl\"\n",
    "#line 99999999999999999999\n",
    "#include <clgroups/subgroup.h>\n",
    "#include \"clgroups/none.h\"\n",
    "#include <stdio.h>\n",
    "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n",
    "#error no\n",
    "# \n",
    "#define CONT(a) \\\n  a + \\\n",
    "#if (((((((1)))))))\n",
];

/// Inserts one to three preprocessor lines at line starts (or anywhere, now and then).
fn directive(r: &mut Rng, text: &str, _: &[String]) -> String {
    let mut out = text.to_string();
    for _ in 0..1 + r.below(3) {
        let d = *r.pick(DIRECTIVES);
        let starts: Vec<usize> = std::iter::once(0)
            .chain(out.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let at = match r.below(5) {
            0 => boundary(r, &out),
            _ => *r.pick(&starts),
        };
        out.insert_str(at, d);
    }
    out
}

/// Hides keywords, qualifiers and built-ins behind macros, wraps words in function-like macros.
fn macros(r: &mut Rng, text: &str, _: &[String]) -> String {
    const HEAD: &str = "#define KERNEL __kernel\n#define GLOBAL __global\n#define LOCAL __local\n\
        #define ID(x) (x)\n#define CAT(a, b) a##b\n#define STR(a) #a\n#define BEGIN {\n#define END }\n\
        #define SUM(v) sub_group_reduce_add(v)\n#define GID get_global_id(0)\n";
    let mut p: Vec<String> = pieces(text).into_iter().map(str::to_string).collect();
    for w in p.iter_mut() {
        let new = match w.as_str() {
            "kernel" | "__kernel" => "KERNEL".to_string(),
            "global" | "__global" => "GLOBAL".to_string(),
            "local" | "__local" => "LOCAL".to_string(),
            "{" if r.below(8) == 0 => "BEGIN".to_string(),
            "}" if r.below(8) == 0 => "END".to_string(),
            w if w.starts_with(|c: char| c.is_alphabetic()) && r.below(6) == 0 => {
                match r.below(3) {
                    0 => format!("ID({w})"),
                    1 if w.chars().count() > 1 => {
                        let cut = w.chars().next().map_or(0, char::len_utf8);
                        format!("CAT({}, {})", &w[..cut], &w[cut..])
                    }
                    _ => format!("STR({w})"),
                }
            }
            _ => continue,
        };
        *w = new;
    }
    format!("{HEAD}{}", p.concat())
}

/// Inserts non-ASCII text: letters, combining marks, invisible and control characters, or an
/// identifier made of them.
fn non_ascii(r: &mut Rng, text: &str, _: &[String]) -> String {
    const ODD: [&str; 14] = [
        "é",
        "𝒳",
        "\u{200B}",
        "\u{FEFF}",
        "\u{0}",
        "\u{7}",
        "\r",
        "ﬁ",
        "中文",
        "e\u{301}",
        "Ωid",
        "\u{202E}",
        "\u{FFFD}",
        "\u{10FFFF}",
    ];
    let mut out = text.to_string();
    for _ in 0..1 + r.below(4) {
        let at = boundary(r, &out);
        out.insert_str(at, r.pick::<&str>(&ODD));
    }
    out
}

/// Replaces numbers (or inserts one) with huge or odd ones.
fn huge_number(r: &mut Rng, text: &str, _: &[String]) -> String {
    const HUGE: [&str; 10] = [
        "99999999999999999999999999",
        "0xFFFFFFFFFFFFFFFFFFFF",
        "18446744073709551616",
        "18446744073709551615u",
        "1e99999",
        "0x",
        "0b",
        "00000000000000000000000000000000008",
        "4294967296",
        "9223372036854775808",
    ];
    let p = pieces(text);
    let nums: Vec<usize> = (0..p.len())
        .filter(|&i| p[i].starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    if nums.is_empty() || r.below(4) == 0 {
        let what = *r.pick(&HUGE);
        return insert(r, text, what);
    }
    let mut p = p;
    for _ in 0..1 + r.below(3) {
        let i = *r.pick(&nums);
        p[i] = *r.pick(&HUGE);
    }
    p.concat()
}

/// Kinds of [`long`] lines.
const LONG_KINDS: usize = 5;

/// A line of about `n` characters: a long expression, identifier, run of blanks or of `;`, or
/// a comment of non-ASCII letters.
fn long(kind: usize, n: usize) -> String {
    match kind {
        0 => format!("x = 1{};", " + 1".repeat(n / 4)),
        1 => format!("int {};", "a".repeat(n)),
        2 => " ".repeat(n),
        3 => ";".repeat(n),
        _ => format!("// {}\n", "é".repeat(n / 2)),
    }
}

fn long_line(r: &mut Rng, text: &str, _: &[String]) -> String {
    let line = long(r.below(LONG_KINDS), 1_000 + r.below(100_000));
    insert(r, text, &line)
}

/// Kinds of [`nested`] text.
const DEEP_KINDS: usize = 15;

/// Nesting `n` deep: brackets (balanced or not), `#if`s, chained macros, chained helper calls
/// (callees first, or callers first passing a work-item's value down), nested conditions
/// around collectives, nested ternaries, `sizeof`s, a macro defined again and
/// again as itself, macros that each name the previous one twice (chains of definitions, some
/// 30 characters a level, go a quarter as deep; conditions a twentieth).
fn nested(kind: usize, n: usize) -> String {
    let nest =
        |open: &str, mid: &str, close: &str| format!("{}{mid}{}", open.repeat(n), close.repeat(n));
    // Conditions on ids go a twentieth as deep: the divergence analysis takes time quadratic
    // in their number in one function (3,000 nested: 0.7 s in a release build).
    let conditions = |open: &str, mid: &str, close: &str| {
        let n = (n / 20).max(1);
        format!("{}{mid}{}", open.repeat(n), close.repeat(n))
    };
    let chain = |line: &dyn Fn(usize) -> String| (1..(n / 4).max(2)).map(line).collect::<String>();
    match kind {
        0 => nest("(", "x", ")"),
        1 => nest("{", "x;", "}"),
        2 => nest("[", "0", "]"),
        3 => nest("(", "x", ""),
        4 => nest("#if 1\n", "int x;\n", "#endif\n"),
        5 => {
            let c = chain(&|i| format!("#define M{i} M{}\n", i - 1));
            format!("\n#define M0 sub_group_reduce_add\n{c}")
        }
        6 => {
            let c = chain(&|i| format!("int f{i}(int x) {{ return f{}(x); }}\n", i - 1));
            format!("\nint f0(int x) {{ return sg_reduce_add(x); }}\n{c}")
        }
        7 => conditions(
            "if (get_local_id(0) < 3) ",
            "x = sub_group_reduce_add(x);",
            "",
        ),
        8 => conditions("x ? ", "sub_group_reduce_add(x)", " : z"),
        9 => nest("sizeof(", "int", ")"),
        10 => conditions("if (x) { ", "x = sub_group_reduce_add(x);", " }"),
        11 => nest("-", "x", ""),
        14 => {
            // Callers first, a work-item's value passed down to a condition on it.
            let last = (n / 4).max(2);
            let c = chain(&|i| format!("int f{i}(int x) {{ return f{}(x + 1); }}\n", i + 1));
            let tail =
                format!("int f{last}(int x) {{ if (x > 0) return sub_group_reduce_add(x); }}");
            format!("\nkernel void k() {{ f1((int)get_local_id(0)); }}\n{c}{tail}\n")
        }
        12 => {
            let c = chain(&|_| "#define S S\n".to_string());
            format!("\n{c}kernel __attribute__((intel_reqd_sub_group_size(S))) void k() {{ }}\n")
        }
        _ => {
            let c = chain(&|i| format!("#define A{i} A{} A{}\n", i - 1, i - 1));
            let attr = "__attribute__((intel_reqd_sub_group_size(8)))";
            let last = (n / 4).max(2) - 1;
            format!("\n#define A0 {attr}\n{c}A{last} kernel void k() {{ }}\n")
        }
    }
}

fn deep(r: &mut Rng, text: &str, _: &[String]) -> String {
    let n = r.count();
    let what = nested(r.below(DEEP_KINDS), n);
    insert(r, text, &what)
}

/// The extreme inputs, each alone and inside a real kernel's body: every kind of nesting
/// `depth` deep, every kind of line of 100,000 characters.
pub(super) fn extremes(corpus: &[String], depth: usize) -> Vec<String> {
    let host = corpus
        .iter()
        .find(|s| s.contains("kernel void") && s.len() < 2_000)
        .expect("a small kernel");
    let body = host.find("kernel void").unwrap();
    let body = body + host[body..].find('{').expect("a kernel body") + 1;
    let texts = (0..DEEP_KINDS).map(|k| nested(k, depth));
    let texts = texts.chain((0..LONG_KINDS).map(|k| long(k, 100_000)));
    texts
        .flat_map(|t| {
            let inside = format!("{}{t}\n{}", &host[..body], &host[body..]);
            [inside, t]
        })
        .collect()
}

/// Inserts a random piece of another corpus source.
fn splice(r: &mut Rng, text: &str, corpus: &[String]) -> String {
    let other = r.pick(corpus);
    let (a, b) = (boundary(r, other), boundary(r, other));
    insert(r, text, &other[a.min(b)..a.max(b)])
}

/// The words and marks of token soup (also the source scanner's property test's).
pub(in crate::transform) const SOUP: &[&str] = &[
    "kernel",
    "__kernel",
    "void",
    "k",
    "f",
    "global",
    "__global",
    "local",
    "__local",
    "constant",
    "float*",
    "int",
    "uint",
    "x",
    "n",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "=",
    "*",
    "+",
    "-",
    "<",
    ">",
    "<=",
    "==",
    "&&",
    "||",
    "!",
    "?",
    ":",
    "&",
    "1",
    "0x10",
    "4u",
    "\"s}\"",
    "'{'",
    "/* { */",
    "// }\n",
    "\n#if A\n",
    "\n#ifdef B\n",
    "\n#elif 1\n",
    "\n#else\n",
    "\n#endif\n",
    "\n#define M(a) a {\n",
    "\n#define S 16\n",
    "\\\n",
    "if",
    "else",
    "for",
    "while",
    "return",
    "break",
    "do",
    "switch",
    "case",
    "goto",
    "__attribute__((reqd_work_group_size(4,1,1)))",
    "__attribute__((intel_reqd_sub_group_size(S)))",
    "intel_reqd_sub_group_size(16)",
    "CLG_REQD_SUB_GROUP_SIZE(8)",
    "CLG_NAMED_SUB_GROUP_SIZE(primary)",
    "CLG_SG_SCRATCH",
    "CLG_SG_SCRATCH_PARAM",
    "sg_reduce_add",
    "sub_group_broadcast",
    "sub_group_reduce_add",
    "get_sub_group_local_id",
    "barrier",
    "get_global_id(0)",
    "get_local_id",
    "get_global_size",
    "get_group_id",
    "atomic_add",
    "é",
    "\r\n",
    "/*",
    "\"",
    "#include <clgroups/subgroup.h>\n",
    "__clg_rounded",
    "#line 3\n",
];

/// Up to 80 soup words joined by blanks (or nothing).
fn soup(r: &mut Rng) -> String {
    let n = r.below(80);
    let sep = [" ", "", "\n"][r.below(3)];
    (0..n).map(|_| *r.pick(SOUP)).collect::<Vec<_>>().join(sep)
}
