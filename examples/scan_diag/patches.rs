//! The source patches of `scan_diag`: the kernel of `cl/algorithms/scan.cl` changed by exact
//! text substitutions (each must match once, so a change of the kernel shows up as an error
//! rather than as a silently unpatched variant).

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// PTX load and store helpers of the `nc`, `nc256` and `cs` patches.
const PTX_HELPERS: &str = r#"
static inline T4 lb_ld(global const T *p) {
    uint a, b, c, d;
    asm volatile(LB_LD " {%0, %1, %2, %3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
    return CLG_CAT(as_, T4)((uint4)(a, b, c, d));
}
static inline void lb_st(global T *p, T4 v) {
    uint4 u = as_uint4(v);
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(p), "r"(u.x), "r"(u.y), "r"(u.z), "r"(u.w) : "memory");
}
"#;

/// The scan's source with `patches` applied; `Err` names a patch whose text is not found once.
pub fn patched(patches: &[&str]) -> AnyResult<String> {
    fn sub_in(s: &mut String, from: &str, to: &str) -> AnyResult<()> {
        match s.matches(from).count() {
            1 => {
                *s = s.replacen(from, to, 1);
                Ok(())
            }
            k => Err(format!("patch text {from:?} found {k} times").into()),
        }
    }
    let mut s = clgroups::algorithms::SOURCE.to_string();
    let helpers_at = "static inline void clg_store4(";
    let start = "    T prefix = 0;\n    for (;;) {";
    for p in patches {
        match *p {
            "nolb" => sub_in(&mut s, start, "    T prefix = 0;\n    for (; 0;) {")?,
            "copy" => {
                sub_in(&mut s, start, "    T prefix = 0;\n    for (; 0;) {")?;
                sub_in(
                    &mut s,
                    "        v.y += v.x;\n        v.z += v.y;\n        v.w += v.z;\n",
                    "",
                )?;
                sub_in(
                    &mut s,
                    "T4 y = exclusive ? (T4)(pre, pre + v.x, pre + v.y, pre + v.z) : pre + v;",
                    "T4 y = v;",
                )?;
            }
            "noticket" => sub_in(
                &mut s,
                "uint t = atomic_inc(ticket);\n        if (t == tiles - 1)",
                "uint t = get_group_id(0);\n        if (t == tiles - 1)",
            )?,
            "nc" | "nc256" => {
                let ld = match *p {
                    "nc" => "ld.global.nc.v4.u32",
                    _ => "ld.global.nc.L2::256B.v4.u32",
                };
                let helpers = format!("#define LB_LD \"{ld}\"\n{PTX_HELPERS}");
                if !s.contains("static inline T4 lb_ld") {
                    sub_in(&mut s, helpers_at, &format!("{helpers}{helpers_at}"))?;
                }
                sub_in(
                    &mut s,
                    "            v = *(global const T4 *)(in + e);",
                    "            v = lb_ld(in + e);",
                )?;
            }
            "cs" => {
                if !s.contains("static inline T4 lb_ld") {
                    let helpers = format!("#define LB_LD \"ld.global.nc.v4.u32\"\n{PTX_HELPERS}");
                    sub_in(&mut s, helpers_at, &format!("{helpers}{helpers_at}"))?;
                }
                sub_in(
                    &mut s,
                    "<= end) {\n        *(global T4 *)(out + e) = y;",
                    "<= end) {\n        lb_st(out + e, y);",
                )?;
            }
            "lead" => sub_in(
                &mut s,
                start,
                &format!(
                    "    {{ uint ok; do {{ ulong w = state[j]; ok = ((uint)(w >> 32) >> 2) == epoch; }} \
                     while (!sg_all(ok)); }}\n{start}"
                ),
            )?,
            "spread" => {
                // Each tile's state in its own CLG_LB_STRIDE-word slot (apply after "lead").
                for v in ["k", "j", "tile", "0"] {
                    let from = format!("state[{v}]");
                    if v != "j" && !s.contains(&from) {
                        return Err(format!("patch text {from:?} not found").into());
                    }
                    s = s.replace(&from, &format!("state[({v}) * CLG_LB_STRIDE]"));
                }
            }
            "sleep" | "tsleep" => {
                // Before every poll after the first: PTX nanosleep, or a spin on %globaltimer.
                let pause = match *p {
                    "sleep" => "asm volatile(\"nanosleep.u32 %0;\" ::\"r\"((uint)CLG_LB_DELAY));",
                    _ => {
                        "{ ulong t0, t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0)); \
                          do asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); \
                          while (t - t0 < CLG_LB_DELAY); }"
                    }
                };
                sub_in(
                    &mut s,
                    "        do {\n            uint s = LB_SPAN, g = LB_SPAN;",
                    &format!(
                        "        uint polls = 0;\n        do {{\n            \
                         if (polls++ > 0) {pause}\n            uint s = LB_SPAN, g = LB_SPAN;"
                    ),
                )?;
            }
            "nowait" => sub_in(
                &mut s,
                "        } while (gap < stop);",
                "        } while (0);",
            )?,
            // The library's persistent kernel (no text change: the variant names the kernel).
            "persist" | "" => {}
            other => return Err(format!("unknown patch {other:?}").into()),
        }
    }
    Ok(s)
}
