//! The cost model of a launch over several devices: whether the split (or the merge) the
//! analysis proved right is faster than the whole launch on one device, from measured
//! figures. Pure: no device; the launch code measures, calls [`price`] and executes the
//! [`Priced`] choice.
//!
//! **Inputs** ([`Inputs`]), every time in seconds:
//! * the launch's own times at this shape (kernel, global and local size): the host wall time
//!   of a whole launch split as the analysis says (its copies between devices included) and of
//!   the whole launch on one device (its buffers already there), each the median of the
//!   latest launches measured ([`Sample`]: [`WARM`], or [`KEEP`] where launches are
//!   [`CHEAP`]; the first launch of a shape, which also compiles on some drivers, is not
//!   measured);
//! * the bytes the split moves between devices per launch (the footprint's `between`), the
//!   bytes that moving the launch's colored buffers whole to each device would copy, and
//!   the bytes that moving buffers held whole back to their parts would copy;
//! * the link between the devices ([`Link`]): a measured device-to-device bandwidth and the
//!   latency of one cross-device dependency (measured once per root device, the slowest
//!   pair).
//!
//! **Estimates**, where a time is not measured yet ([`Time::Estimated`]): the one-device time
//! is the split's time less what it spends on the link (`between / bandwidth + latency`),
//! times the number of devices (each device's compute, done by one); the split's is the
//! one-device time over the devices plus the link. A shape's first launch is split and not
//! measured (it may compile; a shape launched once is not worth a wait), its next launches
//! are split and measured until warm ([`Sample::warm`]; where the split is right), then the
//! one-device option likewise unless moving the buffers would cost more than [`EXPLORE`]
//! split launches (then it keeps its estimate).
//!
//! **Re-pricing** ([`watch`]): the option chosen keeps being observed (every few launches one is
//! timed); where it runs clearly slower than the other option's time (a margin, over
//! a few observations in a row) both are measured again and the model chooses anew; the option
//! not chosen is sampled again after a growing number of launches ([`Resample`]).
//!
//! **Halo depth** ([`Depth`], [`split_at_depth`]): where the split keeps deeper margins, the
//! model prices it at each depth `k` of its bounds from the depth-1 figures (compute grows by
//! the redundant rows, the dependency is paid once every `k` launches) and takes the cheapest
//! `k` with the choice below (the least of one device and every depth); the launch code runs
//! the depth once chosen for the shape's later launches.
//!
//! **Choice**: the option with the least time per launch, a move of buffers (to one device,
//! or back to the parts) counted as `1 / n` of its cost, since the buffers stay where they
//! moved: `n` is the number of launches of this shape so far, at least [`AMORTISE`] (a chain
//! that has run `n` launches is expected to run about `n` more, which share it; on two H200s a
//! blur of 2^28 floats split at 0.59 ms a launch against 0.87 ms on one device stayed on one
//! device for a whole chain of 100 launches while 2 GiB to move back to the parts counted as
//! an eighth of its 1.8 ms); the split must be cheaper
//! by more than [`watch::MARGIN`] (one device has no cross-device dependency, whose time
//! varies most on a loaded host), and a tie goes to one device
//! (always right). Only executions that are each right are candidates: one device always, the
//! split only where the analysis proved it ([`Right`]).

use std::fmt;

mod depth;
pub mod watch;
pub use depth::{halo_depth, split_at_depth, Depth, Kept};
pub use watch::{Figures, Observed, Resample};

/// Launches of a shape measured for each option before the model trusts its figures (at
/// least; [`KEEP`] where launches are [`CHEAP`]).
pub const WARM: u32 = 3;
/// Times kept per option: the model uses the median of the latest this many.
pub const KEEP: usize = 5;
/// Seconds below which a launch is cheap enough to measure [`KEEP`] times before choosing.
pub const CHEAP: f64 = 10e-3;
/// A move of buffers is counted as at least this many launches' share (the launches that
/// follow it on the same buffers pay nothing; more where the shape has run more launches).
pub const AMORTISE: f64 = 8.0;
/// The one-device option is measured only where moving the buffers costs at most this many
/// split launches.
pub const EXPLORE: f64 = 32.0;
/// The split at a kept halo depth above 1 is measured (windows of launches) where its
/// estimate is below this many times the one-device time: the estimate counts only the
/// link's latency as what a deeper halo saves, not the host's enqueues of each exchange
/// (two H200s, heat 4096^2 at depth 16: estimated 68 us a launch, measured 50).
pub const EXPLORE_DEEP: f64 = 1.5;

/// How a root device spreads launches over its devices (`RootDevice::with_spread`,
/// `CLGROUPS_SPREAD`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SpreadPolicy {
    /// The cost model chooses among the right executions (`plan::cost::price`).
    #[default]
    Model,
    /// Always what the analysis proves: split, merged or one device (the behaviour before the
    /// cost model).
    Split,
    /// Always the whole launch on one device, its colored buffers moved there whole.
    OneDevice,
}

impl SpreadPolicy {
    /// The policy a word names (`model`, `split` or `one`, as [`Display`](fmt::Display) writes
    /// them; ASCII case ignored). Only `scaling` reads `CLGROUPS_SPREAD`.
    #[cfg(feature = "scaling")]
    pub(crate) fn from_word(text: &str) -> Option<Self> {
        let all = [Self::Model, Self::Split, Self::OneDevice];
        all.into_iter()
            .find(|p| p.to_string().eq_ignore_ascii_case(text))
    }
}

impl fmt::Display for SpreadPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpreadPolicy::Model => "model",
            SpreadPolicy::Split => "split",
            SpreadPolicy::OneDevice => "one",
        })
    }
}

/// Which executions over several devices the analysis proved right for a launch (one device
/// is always right).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Right {
    /// Split as the contract or the footprints prove.
    Split,
    /// Merged element by element (host-side).
    Merge,
    /// Only one device.
    OneOnly,
}

/// A measured device-to-device link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// Bytes per second of a copy between two devices.
    pub bandwidth: f64,
    /// Seconds of one cross-device dependency (a copy on one device waiting for an event of
    /// another, round trip through the host).
    pub latency: f64,
}

impl Link {
    /// Seconds to move `bytes` between devices: nothing for no bytes, else the latency and
    /// the bytes at the bandwidth.
    pub fn seconds(&self, bytes: u64) -> f64 {
        match bytes {
            0 => 0.0,
            b => self.latency + b as f64 / self.bandwidth.max(1.0),
        }
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.2} GB/s, {:.1} us per dependency",
            self.bandwidth / 1e9,
            self.latency * 1e6
        )
    }
}

/// The launches of one option measured so far: how many, and the latest [`KEEP`] times.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Launches measured.
    pub count: u32,
    /// The latest `min(count, KEEP)` times in seconds (slot `i % KEEP` holds the `i`-th).
    latest: [f64; KEEP],
}

impl Sample {
    /// A sample of `count` launches of `secs` each (for tests and replays).
    #[cfg(any(test, feature = "unstable-internals"))]
    pub fn steady(count: u32, secs: f64) -> Sample {
        (0..count).fold(Sample::default(), |s, _| s.with(secs))
    }

    /// This sample with one more launch of `secs`.
    pub fn with(mut self, secs: f64) -> Sample {
        self.latest[self.count as usize % KEEP] = secs;
        self.count = self.count.saturating_add(1);
        self
    }

    /// The time the model uses: the median of the latest [`KEEP`] launches (of two, the
    /// slower: a minimum favours the option whose times vary most).
    pub fn time(&self) -> Option<f64> {
        let n = (self.count as usize).min(KEEP);
        let mut kept = self.latest;
        let kept = &mut kept[..n];
        kept.sort_by(f64::total_cmp);
        kept.get(n / 2).copied()
    }

    /// Whether the model trusts the sample: [`WARM`] launches, or [`KEEP`] where a launch is
    /// cheap (below [`CHEAP`] seconds: more samples cost little there, and the noise of a
    /// loaded host weighs most).
    pub fn warm(&self) -> bool {
        let cheap = self.time().is_some_and(|t| t < CHEAP);
        self.count >= WARM && (!cheap || self.count >= KEEP as u32)
    }

    fn measured(&self) -> Option<f64> {
        self.time()
    }
}

/// A time per launch: measured, or estimated from other figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Time {
    /// The median of the measured launches (see `Sample`), in seconds.
    Measured(f64),
    /// Estimated from the other figures (the one-device time as the split's time less its
    /// time on the link, times the devices; the split's as the one-device time over the
    /// devices plus the link), in seconds.
    Estimated(f64),
}

impl Time {
    /// The seconds, measured or estimated.
    pub fn secs(self) -> f64 {
        match self {
            Time::Measured(s) | Time::Estimated(s) => s,
        }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Time::Measured(s) => write!(f, "{:.1} us measured", s * 1e6),
            Time::Estimated(s) => write!(f, "{:.1} us estimated", s * 1e6),
        }
    }
}

/// What the model knows of one launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// Devices of the root device.
    pub devices: usize,
    /// Launches of this shape priced before this one (the first is not measured: it also
    /// compiles on some drivers, and a shape launched once is not worth a wait).
    pub seen: u32,
    /// The executions the analysis proved right.
    pub right: Right,
    /// Launches of this shape split (or merged) as the analysis says.
    pub split: Sample,
    /// Launches of this shape on one device.
    pub one: Sample,
    /// Bytes the split moves between devices per launch (halos, merges through the host).
    pub between: u64,
    /// Per device, the bytes moving the launch's colored buffers whole there would copy.
    pub gather: Vec<u64>,
    /// Bytes moving the buffers held whole on one device back to their parts would copy.
    pub scatter: u64,
    /// The link between the devices.
    pub link: Link,
    /// The halo depths the split may run at.
    pub depth: Depth,
    /// The last decision made for this shape ([`Figures::last`]): the planner logs a decision
    /// at `info` only where it differs.
    pub last: Option<Choice>,
    /// When the option not chosen is sampled again ([`Figures::resample`]).
    pub resample: Resample,
}

/// What runs the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Split as the analysis proved (its colored buffers in their parts).
    Split,
    /// Merged as the analysis says (the only split it proved).
    Merge,
    /// The whole launch on this device, its colored buffers moved there whole.
    OneDevice(usize),
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Choice::Split => f.write_str("split"),
            Choice::Merge => f.write_str("merged"),
            Choice::OneDevice(d) => write!(f, "device {d} alone"),
        }
    }
}

/// Why the model chose as it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The root device forces it ([`SpreadPolicy`]).
    Forced(SpreadPolicy),
    /// The only right execution.
    OnlyRight,
    /// The option is being measured (its sample not yet warm: `Sample::warm`).
    Measuring,
    /// The least time per launch, moves amortised.
    Cheaper,
    /// The option not chosen, sampled again (`plan::cost::watch::Resample`).
    Resampling,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Forced(p) => write!(f, "forced ({p})"),
            Why::OnlyRight => f.write_str("the only right execution"),
            Why::Measuring => f.write_str("measuring this option"),
            Why::Cheaper => f.write_str("the least time per launch"),
            Why::Resampling => f.write_str("sampling the option not chosen again"),
        }
    }
}

/// The model's decision with the figures it used.
#[derive(Clone, Debug, PartialEq)]
pub struct Priced {
    /// What runs the launch.
    pub choice: Choice,
    /// Why.
    pub why: Why,
    /// The split's (or merge's) time per launch as measured (or estimated) at depth 1 or a
    /// fixed depth, where it is right and priced.
    pub split: Option<Time>,
    /// The halo depth the split is priced (and runs) at.
    pub depth: usize,
    /// The split's time per launch at the [`Priced::depth`] the model chose, where above 1:
    /// measured at a kept depth (windows of launches), else estimated
    /// (`cost::split_at_depth`); the choice weighs this one.
    pub deep: Option<Time>,
    /// The time per launch on one device, where priced.
    pub one: Option<Time>,
    /// The device the one-device option would use.
    pub device: usize,
    /// Bytes moving the buffers whole to that device would copy.
    pub gather: u64,
    /// Bytes moving buffers held whole back to their parts would copy.
    pub scatter: u64,
    /// Bytes the split moves between devices per launch.
    pub between: u64,
    /// The link priced, where priced.
    pub link: Option<Link>,
    /// Whether the launch code should measure this launch (a sample of its option).
    pub measure: bool,
}

impl fmt::Display for Priced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.choice, self.why)?;
        let opt = |t: Option<Time>| t.map_or("not priced".to_string(), |t| t.to_string());
        write!(
            f,
            ": split {}{}, device {} alone {}; moves {} B to one device, {} B back to parts; \
             {} B between devices per split launch",
            opt(self.split),
            match self.deep {
                Some(t) => format!(", {t} at halo depth {}", self.depth),
                None => format!(" at halo depth {}", self.depth),
            },
            self.device,
            opt(self.one),
            self.gather,
            self.scatter,
            self.between
        )?;
        if let Some(l) = self.link {
            write!(f, "; link {l}")?;
        }
        Ok(())
    }
}

impl Priced {
    /// Whether the model measures the split at this decision's halo depth at the shape's
    /// next launches (once the depth is kept): above 1, estimated, and the estimate below
    /// 1.5 times the one-device time (`plan::cost::EXPLORE_DEEP`). Such a decision is not
    /// kept for the shape's later launches without pricing.
    pub fn explores_deep(&self) -> bool {
        let one = self.one.map_or(0.0, Time::secs);
        self.depth > 1 && matches!(self.deep, Some(Time::Estimated(e)) if e < EXPLORE_DEEP * one)
    }

    /// The halo depth a shape keeps from this decision priced from `inputs` (its later
    /// launches run at it, `Depth::Chosen`'s `kept`): the model's first choice from warm
    /// figures, where the split may run deeper and the launch exchanges halos. A launch that
    /// moves nothing between devices (its buffers held whole on one device) prices no
    /// exchange for a depth to save: its depth 1, kept, would stay (heat 4096² on two H200s
    /// stayed on one device, 0.98×, where depth 16 runs at 1.5×).
    pub fn depth_to_keep(&self, inputs: &Inputs) -> Option<usize> {
        let chosen = matches!(inputs.depth, Depth::Chosen { kept: None, .. });
        (chosen && self.why == Why::Cheaper && inputs.between > 0).then_some(self.depth)
    }

    /// Whether this is a decision made (not a measurement) that differs from the shape's
    /// `last` one: what is worth logging at `info`.
    pub fn decided(&self, last: Option<Choice>) -> bool {
        !matches!(self.why, Why::Measuring | Why::Resampling) && last != Some(self.choice)
    }
}

/// Decides one launch under `policy` (see the [module docs](self)).
pub fn price(inputs: &Inputs, policy: SpreadPolicy) -> Priced {
    // The device the one-device option uses: the one that moves least.
    let device = (0..inputs.devices.max(1))
        .min_by_key(|&d| inputs.gather.get(d).copied().unwrap_or(0))
        .unwrap_or(0);
    let gather = inputs.gather.get(device).copied().unwrap_or(0);
    let analysed = match inputs.right {
        Right::Split => Choice::Split,
        Right::Merge => Choice::Merge,
        Right::OneOnly => Choice::OneDevice(device),
    };
    let mut out = Priced {
        choice: analysed,
        why: Why::OnlyRight,
        split: None,
        depth: match inputs.depth {
            Depth::Fixed(k) => k,
            Depth::Chosen { .. } => 1,
        },
        one: None,
        deep: None,
        device,
        gather,
        scatter: inputs.scatter,
        between: inputs.between,
        link: None,
        measure: false,
    };
    match (policy, inputs.right) {
        (_, Right::OneOnly) => {
            out.choice = Choice::OneDevice(device);
            return out;
        }
        (SpreadPolicy::OneDevice, _) => {
            out.choice = Choice::OneDevice(device);
            out.why = Why::Forced(policy);
            return out;
        }
        (SpreadPolicy::Split, _) => {
            out.why = Why::Forced(policy);
            return out;
        }
        (SpreadPolicy::Model, _) => {}
    }
    let link = inputs.link;
    let n = inputs.devices.max(1) as f64;
    out.link = Some(link);
    let on_link = link.seconds(inputs.between);
    let split = match (inputs.split.measured(), inputs.one.measured()) {
        (Some(s), _) => Time::Measured(s),
        (None, Some(o)) => Time::Estimated(o / n + on_link),
        (None, None) => {
            // Nothing measured: measure the split first (the analysis's choice), from the
            // shape's second launch on.
            out.why = Why::Measuring;
            out.measure = inputs.seen > 0;
            return out;
        }
    };
    let one = match inputs.one.measured() {
        Some(o) => Time::Measured(o),
        None => Time::Estimated((split.secs() - on_link).max(0.0) * n),
    };
    out.split = Some(split);
    out.one = Some(one);
    if !inputs.split.warm() {
        out.why = Why::Measuring;
        out.measure = true;
        return out;
    }
    let (to_one, to_parts) = (link.seconds(gather), link.seconds(inputs.scatter));
    if !inputs.one.warm() && to_one <= EXPLORE * split.secs() {
        out.choice = Choice::OneDevice(device);
        out.why = Why::Measuring;
        out.measure = true;
        return out;
    }
    // The split at its cheapest depth (measured at depth 1 where the model chooses it; at a
    // kept depth, measured there once worth measuring).
    if let Depth::Chosen { rows, max, kept } = inputs.depth {
        // No bytes between devices: no exchange, nothing a depth saves.
        let exchange = kept.is_some() || on_link > 0.0;
        let latency = if exchange { link.latency } else { 0.0 };
        let max = max.max(1);
        let k = kept.map_or_else(|| halo_depth(latency, split.secs(), rows, max), |k| k.depth);
        out.depth = k.clamp(1, max);
        let kept = kept.filter(|k| k.depth == out.depth && out.depth > 1);
        let measured = kept
            .filter(|k| k.measured.warm())
            .and_then(|k| k.measured.time());
        let estimate = split_at_depth(split.secs(), latency, rows, out.depth);
        out.deep = match (out.depth > 1, measured) {
            (false, _) => None,
            (true, Some(m)) => Some(Time::Measured(m)),
            (true, None) => Some(Time::Estimated(estimate)),
        };
        if kept.is_some() && out.explores_deep() {
            out.choice = analysed;
            out.why = Why::Measuring;
            out.measure = true;
            return out;
        }
    }
    // A move is shared by the launches after it: as many as this shape has run so far (a
    // chain that has run n launches is expected to run about n more), AMORTISE at least.
    let horizon = AMORTISE.max(f64::from(inputs.seen));
    let cost_split = out.deep.map_or(split.secs(), Time::secs) + to_parts / horizon;
    let cost_one = one.secs() + to_one / horizon;
    out.why = Why::Cheaper;
    if cost_one <= cost_split * (1.0 + watch::MARGIN) {
        out.choice = Choice::OneDevice(device);
    }
    if inputs.resample.due(&out) {
        out.choice = match out.choice {
            Choice::OneDevice(_) => analysed,
            _ => Choice::OneDevice(device),
        };
        (out.why, out.measure) = (Why::Resampling, true);
    }
    out
}

#[cfg(test)]
mod tests;
