//! Kernels as people write them (tests/real_kernels/*.cl, written for clgroups in the styles of
//! well-known OpenCL code): each runs as an ND-range with Exact, Auto and Tuned local sizes, as a
//! plain range at prime sizes in its dimensions, and over a RootDevice in both placements,
//! checked against a host reference. A launch may be refused with a typed error (printed with
//! its reason); a wrong result always fails.

mod common;

use clgroups::launch::{Launch, Local, LocalSize};
use clgroups::scaling::{ColoredBuffer, Placement, RootDevice, RootProgram};
use clgroups::{Buffer, Program, Queue, Range};
use std::collections::BTreeMap;

/// The arguments a kernel takes after its output buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Args {
    /// `(out, in, uint n)`.
    N,
    /// `(out, in)`.
    Plain,
    /// `(out, in, count_t n)` (a typedef of `ulong`).
    SizeT,
    /// `(a, b, out)` with `a = b = in`.
    TwoIn,
    /// `(out, in, uint n, local float*)`.
    LocalTile,
}

struct Case {
    file: &'static str,
    kernel: &'static str,
    args: Args,
    /// Ranks the kernel indexes correctly.
    ranks: &'static [usize],
    /// Input floats per work-item, output floats per work-item.
    per_in: usize,
    per_out: usize,
    /// Output element `j` from the input.
    want: fn(&[f32], usize) -> f32,
}

const fn case(
    file: &'static str,
    kernel: &'static str,
    args: Args,
    want: fn(&[f32], usize) -> f32,
) -> Case {
    Case {
        file,
        kernel,
        args,
        ranks: &[1],
        per_in: 1,
        per_out: 1,
        want,
    }
}

const ALL_RANKS: &[usize] = &[1, 2, 3];

fn cases() -> Vec<Case> {
    use Args::*;
    vec![
        case("macros", "scale3", N, |x, j| x[j] * 3.0),
        case("macros", "scale_half", N, |x, j| x[j] * 0.5),
        case("macros", "axpb_float", N, |x, j| 2.0 * x[j] + 1.0),
        Case {
            ranks: ALL_RANKS,
            ..case("macros", "add_one", Plain, |x, j| x[j] + 1.0)
        },
        case("ifdef_shared", "shared_hdr", N, |x, j| x[j] * 4.0),
        case("ifdef_shared", "shared_other", N, |x, j| x[j] - 1.0),
        case("clblast", "xaxpy_relaxed", N, |x, j| 2.0 * x[j]),
        case("clblast", "xaxpy_strict", N, |x, j| 2.0 * x[j] + 1.0),
        case("clblast", "dup_if", N, |x, j| x[j] * 3.0),
        case("typedefs", "real_scale", N, |x, j| x[j] * 1.5),
        Case {
            per_in: 2,
            ..case("typedefs", "pair_sum", N, |x, j| x[2 * j] + x[2 * j + 1])
        },
        Case {
            per_in: 2,
            ..case("typedefs", "particle_y", N, |x, j| x[2 * j + 1])
        },
        case("typedefs", "bytes_copy", N, |x, j| x[j]),
        case("typedefs", "size_t_n", SizeT, |x, j| x[j] + 2.0),
        case("helpers", "poly_k", N, |x, j| x[j] * x[j] + 1.0),
        Case {
            ranks: ALL_RANKS,
            ..case("helpers", "clampk", Plain, |x, j| x[j].clamp(2.0, 20.0))
        },
        case("helpers", "comment_heavy", Plain, |x, j| x[j] - 3.0),
        case("helpers", "pyopencl_sum", TwoIn, |x, j| x[j] + x[j]),
        case("attrs", "reqd16", N, |x, j| x[j] * 5.0),
        Case {
            ranks: &[2],
            ..case("attrs", "reqd2d", Plain, |x, j| x[j] + 7.0)
        },
        case("attrs", "vechint", N, |x, j| x[j] * x[j]),
        case("attrs", "wghint", N, |x, j| x[j] / 2.0),
        Case {
            per_in: 4,
            per_out: 4,
            ..case("vectors", "vec4_scale", Plain, |x, j| x[j] * 2.0)
        },
        Case {
            per_in: 4,
            per_out: 4,
            ..case("vectors", "vload_mix", Plain, |x, j| {
                x[j / 4 * 4 + 3 - j % 4]
            })
        },
        Case {
            ranks: &[3],
            ..case("vectors", "vol3", Plain, |x, j| x[j] + 0.25)
        },
        case("indexing", "grid_scale", N, |x, j| x[j] * 6.0),
        case("indexing", "cuda_style", N, |x, j| x[j] + 4.0),
        case("local", "shift_tile", LocalTile, |x, j| {
            x.get(j + 1).copied().unwrap_or(0.0)
        }),
        case("local", "fixed_tile", N, |x, j| x[j] * 2.0),
        case("layer", "sg_helper", N, |x, j| x[j] + 1.0),
        case("layer", "sg_nested", N, |x, j| x[j] * 2.0),
    ]
}

fn source(file: &str) -> String {
    let path = format!(
        "{}/tests/real_kernels/{file}.cl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn input(len: usize) -> Vec<f32> {
    (0..len).map(|i| (i % 97) as f32 * 0.5 + 1.0).collect()
}

/// The arguments for `c` over `n` work-items, in order (output first where the kernel has it).
fn with_args<'a>(
    l: Launch<'a>,
    c: &Case,
    out: &'a Buffer<f32>,
    inp: &'a Buffer<f32>,
    n: usize,
    local_items: usize,
) -> Launch<'a> {
    match c.args {
        Args::N => l.arg(out).arg(inp).arg(n as u32),
        Args::Plain => l.arg(out).arg(inp),
        Args::SizeT => l.arg(out).arg(inp).arg(n as u64),
        Args::TwoIn => l.arg(inp).arg(inp).arg(out),
        Args::LocalTile => l
            .arg(out)
            .arg(inp)
            .arg(n as u32)
            .arg(Local::<f32>::new(local_items)),
    }
}

/// Compares `got` with the reference; `Err` describes the first wrong element.
fn check(c: &Case, x: &[f32], got: &[f32]) -> Result<(), String> {
    for (j, g) in got.iter().enumerate() {
        let w = (c.want)(x, j);
        if (g - w).abs() > 1e-5 * w.abs().max(1.0) {
            let wrong = got
                .iter()
                .enumerate()
                .filter(|(j, g)| {
                    (**g - (c.want)(x, *j)).abs() > 1e-5 * (c.want)(x, *j).abs().max(1.0)
                })
                .count();
            return Err(format!(
                "element {j}: got {g}, want {w} ({wrong} of {} wrong)",
                got.len()
            ));
        }
    }
    Ok(())
}

/// What happened to one launch.
enum Outcome {
    Ok,
    Refused(String),
}

fn run_one(
    q: &Queue,
    prog: &Program,
    c: &Case,
    global: Range,
    mode: Option<LocalSize>,
) -> Result<Outcome, String> {
    let k = prog
        .kernel(c.kernel)
        .map_err(|e| format!("kernel(): {e}"))?;
    let n = global.len();
    let x = input(n * c.per_in);
    let inp = Buffer::from_slice(q, &x).unwrap();
    let mut out = Buffer::<f32>::new(q.context(), n * c.per_out).unwrap();
    out.fill(q, f32::NAN).unwrap();
    let local_items = k.limits().max_work_group_size;
    let l = with_args(k.launch(), c, &out, &inp, n, local_items);
    // SAFETY: every kernel of the suite reads `inp` and writes `out` only within `per_in` and
    // `per_out` elements per work-item of the launched range, which is how both are sized.
    let launched = unsafe {
        match mode {
            Some(m) => l.nd_range(global, m),
            None => l.range(global),
        }
    };
    match launched {
        Err(e) => return Ok(Outcome::Refused(e.to_string())),
        Ok(ev) => ev.wait().map_err(|e| format!("wait: {e}"))?,
    }
    check(c, &x, &out.read(q).unwrap()).map(|()| Outcome::Ok)
}

/// Over a RootDevice. Programs are kept in `programs` until the test ends: PoCL 3.1's pthread
/// driver was seen to crash in `pocl_release_dlhandle_cache` when many programs built for
/// several devices are released while others run.
fn run_root(
    root: &RootDevice,
    programs: &mut Vec<RootProgram>,
    c: &Case,
    global: Range,
    local: Range,
) -> Result<Outcome, String> {
    let prog = match root.program(&source(c.file)) {
        Ok(p) => {
            programs.push(p);
            programs.last().expect("pushed")
        }
        Err(e) => return Ok(Outcome::Refused(format!("program: {e}"))),
    };
    let k = match prog.kernel(c.kernel) {
        Ok(k) => k,
        Err(e) => return Ok(Outcome::Refused(format!("kernel(): {e}"))),
    };
    let n = global.len();
    let x = input(n * c.per_in);
    let colored = |len: usize, per: usize| match root.placement() {
        Placement::Partitioned => {
            ColoredBuffer::<f32>::with_page(root, len, local.len() * per * 4).unwrap()
        }
        Placement::Shared => ColoredBuffer::<f32>::new(root, len).unwrap(),
    };
    let mut inp = colored(x.len(), c.per_in);
    inp.write(&x).unwrap();
    let mut out = colored(n * c.per_out, c.per_out);
    out.fill(f32::NAN).unwrap();
    let l = k.launch();
    let l = match c.args {
        Args::N => l.arg(&out).arg(&inp).arg(n as u32),
        Args::Plain => l.arg(&out).arg(&inp),
        Args::SizeT => l.arg(&out).arg(&inp).arg(n as u64),
        Args::TwoIn => l.arg(&inp).arg(&inp).arg(&out),
        Args::LocalTile => l
            .arg(&out)
            .arg(&inp)
            .arg(n as u32)
            .arg(Local::<f32>::new(local.len())),
    };
    // SAFETY: as in `run`, for the whole launch; in partitioned placement, kernels that reach
    // outside their own elements (grid_scale, cuda_style, shift_tile) are refused before
    // enqueue by the several-devices contract.
    match unsafe { l.nd_range(global, local) } {
        // Kernels without a partitioned variant run as written (never refused for that).
        Err(e) if k.rewrite_obstacle().is_some() => return Err(format!("refused: {e}")),
        Err(e) => return Ok(Outcome::Refused(e.to_string())),
        Ok(ev) => ev.wait().map_err(|e| format!("wait: {e}"))?,
    }
    check(c, &x, &out.read().unwrap()).map(|()| Outcome::Ok)
}

/// ND-range global sizes per rank (divisible by the exact local sizes below).
fn nd_global(rank: usize) -> Range {
    match rank {
        1 => Range::d1(320),
        2 => Range::d2(16, 6),
        _ => Range::d3(8, 4, 2),
    }
}

fn exact_local(rank: usize, required: Option<Range>) -> Range {
    required.unwrap_or(match rank {
        1 => Range::d1(16),
        2 => Range::d2(8, 2),
        _ => Range::d3(4, 2, 2),
    })
}

/// Prime sizes per rank for plain ranges.
fn prime_global(rank: usize) -> Range {
    match rank {
        1 => Range::d1(4099),
        2 => Range::d2(31, 1031),
        _ => Range::d3(7, 5, 1031),
    }
}

#[test]
fn real_kernels_in_every_mode() {
    let q = common::queue();
    let roots: Vec<(Placement, RootDevice)> = match RootDevice::from_env() {
        Ok(r) if r.len() >= 2 => [Placement::Shared, Placement::Partitioned]
            .into_iter()
            .map(|p| (p, RootDevice::from_env().unwrap().with_placement(p)))
            .collect(),
        other => {
            eprintln!(
                "RootDevice modes not run: {:?}",
                other.map(|r| r.len()).map_err(|e| e.to_string())
            );
            Vec::new()
        }
    };
    let mut programs: BTreeMap<&str, Program> = BTreeMap::new();
    let mut root_programs = Vec::new();
    let mut table: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let cases = cases();
    assert!(cases.len() >= 30);
    // REAL_KERNELS_ONLY=name runs one kernel (for debugging).
    let only = std::env::var("REAL_KERNELS_ONLY").ok();
    let cases: Vec<Case> = cases
        .into_iter()
        .filter(|c| {
            only.as_deref()
                .is_none_or(|o| o.split(",").any(|o| o == c.kernel))
        })
        .collect();
    for c in &cases {
        let prog = programs.entry(c.file).or_insert_with(|| {
            Program::from_file(
                &q,
                format!(
                    "{}/tests/real_kernels/{}.cl",
                    env!("CARGO_MANIFEST_DIR"),
                    c.file
                ),
            )
            .unwrap_or_else(|e| panic!("{}.cl must build: {e}", c.file))
        });
        let names = prog.kernel_names();
        assert!(
            names.iter().any(|n| n == c.kernel),
            "{} not in {names:?}",
            c.kernel
        );
        let required = prog.kernel(c.kernel).unwrap().required_work_group_size();
        let mut record = |mode: String, r: Result<Outcome, String>| {
            let e = table.entry(mode.clone()).or_default();
            match r {
                Ok(Outcome::Ok) => e.0 += 1,
                Ok(Outcome::Refused(why)) => {
                    e.1 += 1;
                    eprintln!("{} {mode}: refused: {why}", c.kernel);
                }
                Err(why) => failures.push(format!("{} {mode}: {why}", c.kernel)),
            }
        };
        for &rank in c.ranks {
            let g = nd_global(rank);
            let modes = [
                ("Exact", LocalSize::Exact(exact_local(rank, required))),
                ("Auto", LocalSize::Auto),
                ("Tuned", LocalSize::Tuned),
            ];
            for (name, m) in modes {
                record(format!("{name} {rank}-D"), run_one(&q, prog, c, g, Some(m)));
            }
            record(
                format!("range {rank}-D"),
                run_one(&q, prog, c, prime_global(rank), None),
            );
        }
        if c.ranks.contains(&1) {
            for (p, root) in &roots {
                let local = exact_local(1, required);
                let r = run_root(root, &mut root_programs, c, nd_global(1), local);
                record(format!("root {p:?}"), r);
            }
        }
    }
    eprintln!("mode: correct / refused (of {} kernels)", cases.len());
    for (mode, (ok, refused)) in &table {
        eprintln!("  {mode:<18} {ok:>3} {refused:>3}");
    }
    assert!(
        failures.is_empty(),
        "wrong results or errors:\n{}",
        failures.join("\n")
    );
}

/// Sub-group collectives at sizes whose only work-group is one work-item: PoCL 6.0 aborts the
/// whole process there (`undefined symbol: __pocl_work_group_alloca`), for the layer's and for
/// OpenCL's own `sub_group_*` collectives (queries run). clgroups runs the kernel's emulated
/// build there on PoCL with native sub-groups: every launch runs right everywhere.
/// Kernel names, argument count, spaces and `const` come from the driver, also for kernels
/// made by macros; wrong arguments are refused before anything runs.
#[test]
fn driver_signatures() {
    let q = common::queue();
    let p = Program::from_source(&q, &source("macros")).unwrap();
    assert_eq!(
        p.kernel_names(),
        ["scale3", "scale_half", "axpb_float", "add_one"]
    );
    let k = p.kernel("axpb_float").unwrap();
    let args = k.args();
    assert_eq!(args.len(), 3);
    assert_eq!(args[0].space, Some(clgroups::kernel::ArgSpace::Global));
    assert_eq!(
        (args[0].is_const, args[1].is_const),
        (Some(false), Some(true))
    );
    assert_eq!(args[2].space, Some(clgroups::kernel::ArgSpace::Private));
    let out = Buffer::<f32>::new(q.context(), 8).unwrap();
    let ints = Buffer::<i32>::new(q.context(), 8).unwrap();
    // SAFETY: refused before enqueue (a wrong argument type); nothing runs.
    let e = unsafe { k.launch().arg(&out).arg(&ints).arg(8u32).range(8) }.unwrap_err();
    assert!(e.to_string().contains("argument 1"), "{e}");
    // SAFETY: refused before enqueue (a scalar for a buffer); nothing runs.
    let e = unsafe { k.launch().arg(&out).arg(8u32).arg(&out).range(8) }.unwrap_err();
    assert!(e.to_string().contains("argument 1"), "{e}");
    let e = p.kernel("missing").unwrap_err().to_string();
    assert!(e.contains("scale3"), "{e}");
}

/// Attributes come from the driver (or the kernel's header): required sizes are honoured in
/// every mode and named in errors, hints steer Tuned.
#[test]
fn work_group_attributes() {
    let _ = env_logger::builder().is_test(true).try_init();
    let q = common::queue();
    let p = Program::from_source(&q, &source("attrs")).unwrap();
    let k = |n: &str| p.kernel(n).unwrap();
    assert_eq!(k("reqd16").required_work_group_size(), Some(Range::d1(16)));
    assert_eq!(
        k("reqd2d").required_work_group_size(),
        Some(Range::d2(4, 2))
    );
    assert_eq!(k("wghint").work_group_size_hint(), Some(Range::d1(64)));
    assert_eq!(k("vechint").required_work_group_size(), None);
    let out = Buffer::<f32>::new(q.context(), 4096).unwrap();
    let inp = Buffer::<f32>::new(q.context(), 4096).unwrap();
    // SAFETY: the attribute kernels touch `out` and `inp` at indices below the `n` = 4096
    // passed, their length.
    let launch = |name: &str, g: Range, l: LocalSize| unsafe {
        k(name)
            .launch()
            .arg(&out)
            .arg(&inp)
            .arg(4096u32)
            .nd_range(g, l)
    };
    for l in [
        LocalSize::Auto,
        LocalSize::Tuned,
        LocalSize::Exact(Range::d1(8)),
    ] {
        let e = launch("reqd16", Range::d1(100), l).unwrap_err().to_string();
        assert!(e.contains("reqd_work_group_size"), "{e}");
    }
    // 2-D launches of a 1-D requirement get it in both dimensions' terms.
    launch("reqd16", Range::d2(32, 3), LocalSize::Auto)
        .unwrap()
        .wait()
        .unwrap();
    launch("wghint", Range::d1(4096), LocalSize::Tuned)
        .unwrap()
        .wait()
        .unwrap();
}

#[test]
fn sub_group_kernels_never_crash_in_single_item_groups() {
    let _ = env_logger::builder().is_test(true).try_init();
    let q = common::queue();
    let d = q.device();
    let mut sources = vec![(
        "layer",
        "#include <clgroups/subgroup.h>\n\
         kernel void k(global float *o) { o[get_global_id(0)] = sg_shuffle(1.0f, 0) + 1.0f; }",
    )];
    if d.sub_groups().driver.native() {
        sources.push((
            "built-in",
            "kernel void k(global float *o) { o[get_global_id(0)] = sub_group_broadcast(1.0f, 0) + 1.0f; }",
        ));
    }
    // Queries run in single-item groups everywhere.
    let query = "#include <clgroups/subgroup.h>\n\
        kernel void k(global float *o) { o[get_global_id(0)] = 2.0f * sg_get_local_range(); }";
    let p = Program::from_source(&q, query).unwrap();
    let mut o = Buffer::<f32>::new(q.context(), 1).unwrap();
    o.fill(&q, -1.0).unwrap();
    let k = p.kernel("k").unwrap();
    // SAFETY: one work-item writes o[0]; o has one element.
    unsafe { k.launch().arg(&o).range(1) }
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(o.read(&q).unwrap(), [2.0]);
    for (what, src) in sources {
        let p = Program::from_source(&q, src).unwrap();
        let k = p.kernel("k").unwrap();
        for (n, mode) in [
            (1, None),
            (1, Some(LocalSize::Auto)),
            (7, None),
            (7, Some(LocalSize::Auto)),
        ] {
            let mut o = Buffer::<f32>::new(q.context(), n).unwrap();
            o.fill(&q, -1.0).unwrap();
            let l = k.launch().arg(&o);
            // SAFETY: work-item i writes o[i], i < n = o's length.
            let r = unsafe {
                match mode {
                    Some(m) => l.nd_range(Range::d1(n), m),
                    None => l.range(n),
                }
            };
            let ev = r.unwrap_or_else(|e| panic!("{what} n={n} {mode:?} on {d}: {e}"));
            ev.wait().unwrap();
            assert_eq!(o.read(&q).unwrap(), vec![2.0; n], "{what} n={n} {mode:?}");
        }
    }
}

/// Kernels named like OpenCL built-in functions (`step`, `mix`, `clamp`, `dot`) are valid
/// OpenCL C; PoCL 3.x lists them as `_cl_step`, ... Each is reachable by the name in the
/// source, launches, and computes what it says.
#[test]
fn kernels_named_like_builtins_are_reachable() {
    let q = common::queue();
    let src = "kernel void step(global float *o) { o[get_global_id(0)] = 1.0f; }\n\
               kernel void mix(global float *o) { o[get_global_id(0)] += 2.0f; }\n\
               __kernel void clamp(__global float *o) { o[get_global_id(0)] *= 3.0f; }\n\
               kernel void dot(global float *o) { o[get_global_id(0)] -= 4.0f; }";
    let p = Program::from_source(&q, src).unwrap();
    let o = Buffer::from_slice(&q, &[f32::NAN; 37]).unwrap();
    for name in ["step", "mix", "clamp", "dot"] {
        let k = p.kernel(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        // SAFETY: each kernel touches o[get_global_id(0)] for ids below 37 = o's length.
        unsafe { k.launch().arg(&o).range(37) }
            .unwrap()
            .wait()
            .unwrap();
    }
    assert!(
        o.read(&q).unwrap().iter().all(|&v| v == 5.0),
        "(1 + 2) * 3 - 4"
    );
}
