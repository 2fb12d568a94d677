//! Range rounding: DPC++'s `parallel_for(range)` rounding, plus a device-aware default.
//!
//! A plain-range launch whose global size has no good divisor (a prime, say) forces tiny
//! work-groups: both NVIDIA's and PoCL's drivers pick a local size of 1 for any prime. Rounding
//! launches a guarded variant of the kernel over a larger range, in which the extra work-items
//! exit at once, while the kernel still observes the user's range.
//!
//! The settings come from the environment ([`RoundingConfig::from_env`], read once by
//! [`crate::config`]):
//!
//! | variable | DPC++ twin | effect |
//! |---|---|---|
//! | `CLGROUPS_RANGE_ROUNDING_PARAMS=MinFactor:GoodFactor:MinRange` | `SYCL_PARALLEL_FOR_RANGE_ROUNDING_PARAMS` | use DPC++'s rule with these parameters |
//! | `CLGROUPS_DISABLE_RANGE_ROUNDING` (any value, even `0`) | `SYCL_DISABLE_PARALLEL_FOR_RANGE_ROUNDING` | never round |
//! | `CLGROUPS_RANGE_ROUNDING_TRACE` (any value) | `SYCL_PARALLEL_FOR_RANGE_ROUNDING_TRACE` | print each adjustment |
//! | `CLGROUPS_RANGE_ROUNDING=on\|force\|disable` | `-fsycl-range-rounding=` | mode |
//! | `CLGROUPS_EXP_RANGE_ROUNDING` (any value) | `-fsycl-exp-range-rounding` | round every dimension |
//!
//! Dimensions are OpenCL's: DPC++ rounds SYCL dimension 0, the slowest-varying one, which is
//! dimension `rank - 1` here.

mod config;

pub use config::{RoundingConfig, RoundingMode, RoundingParams};

use crate::plan::local_size::{group_score, rounding_group_size, tuned, Limits};
use crate::plan::Refusal;
use crate::range::Range;

/// One dimension a plan changed, OpenCL numbering.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::rounding::{plan, Adjustment, RoundingConfig};
/// use clgroups::Range;
/// let cpu = Limits { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///     max_work_item_sizes: [4096; 3], preferred_multiple: 8, non_uniform: true };
/// let p = plan(Range::d1(4_194_319), &RoundingConfig::default(), &cpu, true);
/// assert_eq!(p.adjustments, [Adjustment { dim: 0, from: 4_194_319, to: 4_198_400 }]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Adjustment {
    /// The dimension (0 = x, fastest).
    pub dim: usize,
    /// The user's size.
    pub from: usize,
    /// The launched size.
    pub to: usize,
}

/// How to launch one plain-range kernel.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::rounding::{plan, RoundingConfig};
/// use clgroups::Range;
/// let gpu = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
/// // A prime range: no work-group larger than 1 divides it, so it is rounded up.
/// let p = plan(Range::d1(1_000_003), &RoundingConfig::default(), &gpu, true);
/// assert_eq!(p.user, Range::d1(1_000_003));
/// assert!(p.rounded_variant && p.launch.len() > p.user.len());
/// assert_eq!(p.launch.len() % p.local.unwrap().len(), 0);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoundingPlan {
    /// The global range the kernel observes.
    pub user: Range,
    /// The global range enqueued.
    pub launch: Range,
    /// The local size to enqueue; `None` passes NULL and lets the driver decide.
    pub local: Option<Range>,
    /// `true`: launch the generated guarded variant; `false`: the original kernel.
    pub rounded_variant: bool,
    /// The dimensions where `launch` differs from `user`.
    pub adjustments: Vec<Adjustment>,
}

/// Which kernel one enqueue of a plain-range launch runs.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::rounding::{plan, RoundingConfig, Variant};
/// use clgroups::Range;
/// let gpu = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
/// // A range that needs no rounding runs the user's kernel as written.
/// let p = plan(Range::d1(1 << 20), &RoundingConfig::default(), &gpu, true);
/// assert!(p.pieces().iter().all(|piece| piece.variant == Variant::Original));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The user's kernel, unchanged.
    Original,
    /// The generated variant that reports the user's range, without a guard (every work-item
    /// of the enqueue is inside the user's range).
    Sized,
    /// The generated variant with the guard: work-items outside the user's range exit.
    Rounded,
}

/// One enqueue of a plain-range launch.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::rounding::{plan, RoundingConfig};
/// use clgroups::Range;
/// let gpu = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
/// let p = plan(Range::d1(1_000_003), &RoundingConfig::default(), &gpu, true);
/// // The pieces cover the launched range, in order.
/// let covered: usize = p.pieces().iter().map(|piece| piece.global.len()).sum();
/// assert_eq!(covered, p.launch.len());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The kernel it runs.
    pub variant: Variant,
    /// Its global offset, added to the user's offset.
    pub offset: Range,
    /// Its global range.
    pub global: Range,
}

impl RoundingPlan {
    /// The enqueues that execute this plan, in order.
    ///
    /// * Not rounded: the original kernel over the user's range.
    /// * Rounded in the slowest dimension only, with a known local size: the *sized* variant
    ///   over the whole rows of work-groups inside the user's range, then the *rounded*
    ///   (guarded) variant over the last row alone. The guard costs a branch in every
    ///   work-item, which stops CPU drivers from vectorising (measured: 3x slower on PoCL's
    ///   CPU device), so only the last row pays it.
    /// * Otherwise (several dimensions rounded, or a NULL local size): the rounded variant over
    ///   the whole launch.
    ///
    /// ```
    /// use clgroups::plan::local_size::{DeviceKind, Limits};
    /// use clgroups::plan::rounding::{plan, RoundingConfig, Variant};
    /// use clgroups::Range;
    /// let lim = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
    ///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
    /// let p = plan(Range::d1(7727), &RoundingConfig::default(), &lim, true);
    /// let pieces = p.pieces();
    /// assert_eq!((pieces[0].variant, pieces[0].global), (Variant::Sized, Range::d1(7680)));
    /// assert_eq!((pieces[1].variant, pieces[1].offset), (Variant::Rounded, Range::d1(7680)));
    /// assert_eq!(pieces[1].global, Range::d1(256));
    /// ```
    pub fn pieces(&self) -> Vec<Piece> {
        let zero = self.user.zeros_like();
        let whole = |variant| {
            vec![Piece {
                variant,
                offset: zero,
                global: self.launch,
            }]
        };
        if !self.rounded_variant {
            return whole(Variant::Original);
        }
        let s = self.user.rank() - 1;
        let (Some(local), true) = (self.local, self.adjustments.iter().all(|a| a.dim == s)) else {
            return whole(Variant::Rounded);
        };
        let row = local.get(s);
        let bulk = self.user.get(s) / row * row;
        let mut pieces = Vec::new();
        if bulk > 0 {
            pieces.push(Piece {
                variant: Variant::Sized,
                offset: zero,
                global: self.user.with(s, bulk),
            });
        }
        if self.launch.get(s) > bulk {
            pieces.push(Piece {
                variant: Variant::Rounded,
                offset: zero.with(s, bulk),
                global: self.launch.with(s, self.launch.get(s) - bulk),
            });
        }
        pieces
    }

    /// DPC++-style trace lines, one per adjusted dimension (none when nothing changed, even in
    /// [`RoundingMode::Force`]); dimensions are in OpenCL numbering.
    ///
    /// ```
    /// use clgroups::plan::local_size::{DeviceKind, Limits};
    /// use clgroups::plan::rounding::{plan, RoundingConfig};
    /// use clgroups::Range;
    /// let lim = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
    ///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
    /// let p = plan(Range::d1(7727), &RoundingConfig::default(), &lim, true);
    /// assert_eq!(p.trace_lines(), ["parallel_for range adjusted at dim 0 from 7727 to 7936"]);
    /// ```
    pub fn trace_lines(&self) -> Vec<String> {
        self.adjustments
            .iter()
            .map(|a| {
                format!(
                    "parallel_for range adjusted at dim {} from {} to {}",
                    a.dim, a.from, a.to
                )
            })
            .collect()
    }
}

/// DPC++'s rounded range for `user` (OpenCL order).
///
/// * Default: only dimension `rank - 1` (SYCL's dimension 0, the slowest) is rounded, and only
///   when `R % min_factor != 0 && R >= min_range`, up to a multiple of `good_factor`.
/// * `experimental`: every dimension not divisible by the factor is rounded up, with no
///   thresholds; the factor is 32, 16 or 8 for rank 1, 2 or 3, or `good_factor` when
///   `explicit_params`.
///
/// Unlike DPC++ there is no cap at `floor(u32::MAX / good_factor) * good_factor`: OpenCL global
/// sizes are `size_t`, and the guarded variant only masks items beyond the user's range, so the
/// launch must cover it. A dimension whose rounded size would overflow `usize` is left alone.
/// Zero factors (only possible by building [`RoundingParams`] by hand) count as 1.
///
/// ```
/// use clgroups::plan::rounding::{dpcpp_rounded_range, RoundingParams};
/// use clgroups::Range;
/// let d = RoundingParams::DPCPP_DEFAULT;
/// assert_eq!(dpcpp_rounded_range(Range::d1(7727), &d, false, false), Range::d1(7744));
/// // SYCL {43, 79, 7} is OpenCL (7, 79, 43)
/// assert_eq!(dpcpp_rounded_range(Range::d3(7, 79, 43), &d, true, false), Range::d3(8, 80, 48));
/// ```
pub fn dpcpp_rounded_range(
    user: Range,
    params: &RoundingParams,
    experimental: bool,
    explicit_params: bool,
) -> Range {
    if experimental {
        let factor = if explicit_params {
            params.good_factor
        } else {
            [32, 16, 8][user.rank() - 1]
        };
        return (0..user.rank()).fold(user, |r, d| {
            r.with(d, round_up(user.get(d), factor).unwrap_or(user.get(d)))
        });
    }
    let s = user.rank() - 1;
    let r = user.get(s);
    if r % params.min_factor.max(1) != 0 && r >= params.min_range {
        user.with(s, round_up(r, params.good_factor).unwrap_or(r))
    } else {
        user
    }
}

/// `r` rounded up to a multiple of `factor` (0 counts as 1); `None` on overflow.
fn round_up(r: usize, factor: usize) -> Option<usize> {
    let f = factor.max(1);
    r.div_ceil(f).checked_mul(f)
}

/// Plans one plain-range launch of a kernel over `user` on a device with limits `lim`.
///
/// `kernel_can_round` says whether a guarded variant exists (or may be generated).
/// * [`RoundingMode::Disable`], no guarded variant, or an empty range: the original kernel over
///   `user` with a NULL local size, as without rounding.
/// * Explicit parameters: [`dpcpp_rounded_range`] with `explicit_params = true`.
/// * No parameters, experimental: [`dpcpp_rounded_range`] with DPC++'s rank factors.
/// * No parameters, default (device-aware, see [`rounding_group_size`] for `W`): the slowest
///   dimension `s = rank - 1` is rounded only if `user[s] >= 1024` (DPC++'s MinRange) and the
///   tuned local size of `user` is poor (total `< W`). The other dimensions keep the shape
///   their tuned local size has within a budget of `W` work-items (`I` of them); dimension `s`
///   is rounded up to a multiple of `f = min(W / I, max_work_item_sizes[s])`, so a work-group of
///   `I * f` (exactly `W` when `I` divides it, at least `W / 2` otherwise) fits. The rounded
///   range is kept only if its tuned local size scores better than the user range's.
///
/// Then `local` is the tuned local size of `launch` ([`tuned`]), or `None` when that is 1
/// (the driver cannot do worse, and may know better, e.g. with non-uniform work-groups). The
/// guarded variant runs when a dimension changed or in [`RoundingMode::Force`]; otherwise the
/// original kernel runs over `user` with that local size.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::rounding::{plan, RoundingConfig};
/// use clgroups::Range;
/// let cpu = Limits { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///     max_work_item_sizes: [4096; 3], preferred_multiple: 8, non_uniform: true };
/// let p = plan(Range::d1(4_194_319), &RoundingConfig::default(), &cpu, true);
/// assert_eq!(p.launch, Range::d1(4_198_400));
/// assert_eq!(p.local, Some(Range::d1(4096)));
/// assert!(p.rounded_variant);
/// ```
pub fn plan(
    user: Range,
    cfg: &RoundingConfig,
    lim: &Limits,
    kernel_can_round: bool,
) -> RoundingPlan {
    if let Some(why) = no_rounding_reason(user, cfg, kernel_can_round) {
        log::debug!("range {user:?}: no rounding ({why}); original kernel, NULL local size");
        return RoundingPlan {
            user,
            launch: user,
            local: None,
            rounded_variant: false,
            adjustments: Vec::new(),
        };
    }
    let launch = match cfg.params {
        Some(p) => dpcpp_rounded_range(user, &p, cfg.experimental, true),
        None if cfg.experimental => {
            dpcpp_rounded_range(user, &RoundingParams::DPCPP_DEFAULT, true, false)
        }
        None => device_aware_range(user, lim),
    };
    let adjustments = adjustments(user, launch);
    let rounded_variant = !adjustments.is_empty() || cfg.mode == RoundingMode::Force;
    // The device-aware default also caps the work-group at W, the size it rounded for (a GPU's
    // 256, not whatever larger divisor the rounded range happens to have).
    let local_lim = if cfg.params.is_none() && !cfg.experimental {
        Limits {
            max_work_group_size: rounding_group_size(lim),
            ..lim.clone()
        }
    } else {
        lim.clone()
    };
    let local = Some(tuned(launch, &local_lim)).filter(|l| l.len() > 1);
    log::debug!(
        "range {user:?}: launch {launch:?}, local {local:?}, {} kernel ({cfg:?})",
        if rounded_variant {
            "rounded"
        } else {
            "original"
        }
    );
    RoundingPlan {
        user,
        launch,
        local,
        rounded_variant,
        adjustments,
    }
}

/// Extra work-items a rounded plain range may add beyond twice the user's range; a plan that
/// adds more (e.g. from abusive `CLGROUPS_RANGE_ROUNDING_PARAMS`) runs unrounded instead.
pub const ROUNDING_SLACK: usize = 1 << 20;

/// Errors (why) when a rounded `plan` adds more than [`ROUNDING_SLACK`] work-items beyond
/// twice the user's range: launches then run the range unrounded.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::rounding::{plan, within_slack, RoundingConfig};
/// use clgroups::Range;
/// let gpu = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
/// let p = plan(Range::d1(1_000_003), &RoundingConfig::default(), &gpu, true);
/// assert!(within_slack(&p).is_ok()); // 1_000_192 work-items for 1_000_003
/// ```
pub fn within_slack(plan: &RoundingPlan) -> Result<(), Refusal> {
    let (items, asked) = (plan.launch.len(), plan.user.len());
    let cap = asked
        .saturating_mul(2)
        .max(asked.saturating_add(ROUNDING_SLACK));
    match plan.rounded_variant && items > cap {
        true => Err(Refusal::Slack {
            launch: plan.launch,
            asked,
        }),
        false => Ok(()),
    }
}

/// Why a plan launches the original kernel unchanged ([`no_rounding_reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NoRounding {
    Disabled,
    NoRoundedVariant,
    EmptyRange,
}

impl std::fmt::Display for NoRounding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoRounding::Disabled => "rounding disabled",
            NoRounding::NoRoundedVariant => "the kernel has no rounded variant",
            NoRounding::EmptyRange => "empty range",
        })
    }
}

/// Why `plan` must launch the original kernel unchanged, if it must.
fn no_rounding_reason(user: Range, cfg: &RoundingConfig, can_round: bool) -> Option<NoRounding> {
    if cfg.mode == RoundingMode::Disable {
        Some(NoRounding::Disabled)
    } else if !can_round {
        Some(NoRounding::NoRoundedVariant)
    } else if user.is_empty() {
        Some(NoRounding::EmptyRange)
    } else {
        None
    }
}

/// The dimensions where `launch` differs from `user`.
fn adjustments(user: Range, launch: Range) -> Vec<Adjustment> {
    (0..user.rank())
        .filter(|&d| user.get(d) != launch.get(d))
        .map(|d| Adjustment {
            dim: d,
            from: user.get(d),
            to: launch.get(d),
        })
        .collect()
}

/// The device-aware default rounding of [`plan`] (no explicit parameters, not experimental).
fn device_aware_range(user: Range, lim: &Limits) -> Range {
    let w = rounding_group_size(lim);
    let lim = &Limits {
        max_work_group_size: w,
        ..lim.clone()
    };
    let s = user.rank() - 1;
    let r = user.get(s);
    let before = tuned(user, lim).len();
    if r < RoundingParams::DPCPP_DEFAULT.min_range || before >= w {
        log::debug!("range {user:?}: not rounded (dim {s} = {r}, tuned group {before}, W {w})");
        return user;
    }
    let inner = inner_group_total(user, lim, w);
    let f = (w / inner).min(lim.max_work_item_sizes[s].max(1));
    let candidate = match round_up(r, f) {
        Some(rounded) if f > 1 => user.with(s, rounded),
        _ => user,
    };
    let after = tuned(candidate, lim).len();
    let pm = lim.preferred_multiple;
    if group_score(after, pm) <= group_score(before, pm) {
        log::debug!("range {user:?}: rounding dim {s} to a multiple of {f} does not help");
        return user;
    }
    log::debug!("range {user:?}: dim {s} rounded to a multiple of {f} (W {w}, inner group {inner}): group {before} -> {after}");
    candidate
}

/// The work-group total the dimensions below the slowest one reach within `w` work-items.
fn inner_group_total(user: Range, lim: &Limits, w: usize) -> usize {
    let inner = match user.rank() {
        1 => return 1,
        2 => Range::d1(user.get(0)),
        _ => Range::d2(user.get(0), user.get(1)),
    };
    let budget = Limits {
        max_work_group_size: w.min(lim.max_work_group_size),
        ..lim.clone()
    };
    tuned(inner, &budget).len()
}

#[cfg(test)]
mod tests;
