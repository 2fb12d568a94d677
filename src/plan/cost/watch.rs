//! Re-pricing: a shape's [`Figures`] over its launches, and the watch kept on the option
//! chosen. Once the model has chosen from warm figures ([`Why::Cheaper`]), one launch of the
//! shape in every [`EVERY`] (and [`SPAN`] seconds) is timed as the samples were (an
//! observation); where [`SLOW`] observations in a row run more than [`MARGIN`] above the
//! other option's measured time, both options are measured again ([`Observed::Remeasure`]) and the model chooses anew. A
//! choice made by noise (a loaded host during its few samples) so does not stick.
//!
//! The option not running is sampled again too ([`Resample`], [`Why::Resampling`]): its
//! figure may have been inflated by a load spike while it was measured, and then it would
//! never run to show otherwise. After [`BACKOFF`] launches chosen from warm figures (and once
//! they took `1 / SHARE` times what the re-sample costs by the figures: [`BURST`] launches of
//! the other option and the moves of buffers there and back), [`BURST`] launches run the other
//! option as samples (a majority of the median's [`KEEP`](super::KEEP): the median moves
//! wholly to the new times), and the model chooses from the new figures. Each re-sample that
//! leaves the decision as it was doubles the wait (up to [`MAX_BACKOFF`]); a change of
//! decision starts it again at [`BACKOFF`]. So at most `BURST / (BACKOFF + BURST)` (under 2 %)
//! of a shape's launches and about [`SHARE`] of its time are re-samples.
//!
//! ```
//! use clgroups::plan::cost::watch::{Figures, Observed, SLOW};
//! use clgroups::plan::cost::{Choice, Sample};
//! let mut f = Figures { split: Sample::steady(5, 1e-3), one: Sample::steady(5, 2e-3),
//!     ..Figures::default() };
//! // The split was chosen at 1 ms, one device measured 2 ms; the split now runs 3 ms.
//! for _ in 1..SLOW {
//!     assert!(matches!(f.observe(Choice::Split, 3e-3), Observed::Slow { .. }));
//! }
//! assert!(matches!(f.observe(Choice::Split, 3e-3), Observed::Remeasure { .. }));
//! assert_eq!((f.split.count, f.one.count), (0, 0)); // measured again from the next launch
//! ```

use super::{Choice, Priced, Sample, Time, Why};
use std::fmt;

/// Of a shape's launches run as the model chose from warm figures, at most one in this many
/// is timed ...
pub const EVERY: u32 = 16;
/// ... and only once the launches since the last observation took this many seconds by the
/// option's figure: a timed launch finishes every queue and waits, which on a loaded host
/// costs a scheduling slice (milliseconds), so short launches are observed more rarely.
pub const SPAN: f64 = 0.05;
/// An observation is slow where it exceeds the other option's time by more than this share.
pub const MARGIN: f64 = 0.10;
/// Slow observations in a row that make the model measure both options again.
pub const SLOW: u32 = 3;
/// Launches chosen from warm figures before the option not running is first sampled again.
pub const BACKOFF: u32 = 160;
/// The most launches between two re-samples (the wait doubles from [`BACKOFF`]).
pub const MAX_BACKOFF: u32 = 10_240;
/// Launches of one re-sample of the option not running.
pub const BURST: u32 = 3;
/// The most share of a shape's time (by the figures) that re-samples take.
pub const SHARE: f64 = 0.02;

/// What the model keeps of one shape (kernel, global and local size; or a reduce): the
/// samples of both options, the launches priced, the last decision made and the watch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    /// Launches split (or merged) as the analysis says.
    pub split: Sample,
    /// Launches on one device.
    pub one: Sample,
    /// Launches of the shape priced.
    pub seen: u32,
    /// The last decision made (not a measurement) for the shape.
    pub last: Option<Choice>,
    /// Launches since the last observation.
    pub since: u32,
    /// Slow observations in a row.
    pub slow: u32,
    /// Seconds of the launches since the last observation, by the option's figure.
    pub spent: f64,
    /// When the option not running is sampled again.
    pub resample: Resample,
    /// The split at a halo depth above 1, timed a window of launches at a time (its depth
    /// and the times per launch): one launch of it does not show the exchange it saves, a
    /// window of as many launches as the depth has exactly one.
    pub deep: (usize, Sample),
    /// The window of launches being timed, if one is open.
    pub window: Option<Window>,
}

/// A window of a split's launches at a halo depth above 1 being timed ([`Timing::Open`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// The halo depth, and the window's length in launches.
    pub depth: usize,
    /// Its launches still to run after the current one.
    pub left: u32,
    /// The clock when it opened (seconds; [`Figures::opened`]).
    pub start: Option<f64>,
}

/// When the option not running is sampled again (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resample {
    /// Launches to wait between re-samples ([`BACKOFF`] at first).
    pub gap: u32,
    /// Launches chosen from warm figures since the last re-sample.
    pub idle: u32,
    /// Seconds of those launches, by the chosen option's figure.
    pub spent: f64,
    /// Launches of the re-sample under way still to run.
    pub left: u32,
}

impl Default for Resample {
    fn default() -> Self {
        Resample {
            gap: BACKOFF,
            idle: 0,
            spent: 0.0,
            left: 0,
        }
    }
}

impl Resample {
    /// Whether the launch priced `priced` (chosen from warm figures, [`Why::Cheaper`]) samples
    /// the option not chosen instead: a re-sample is under way, or the wait is over and the
    /// launches since the last one took `1 / SHARE` times what this one costs by the figures.
    /// Only a measured option at halo depth 1 is sampled again (a launch at a deeper halo
    /// does not show the exchanges it saves).
    ///
    /// ```
    /// use clgroups::plan::cost::watch::{Resample, BACKOFF, BURST, SHARE};
    /// use clgroups::plan::cost::{price, Depth, Inputs, Link, Right, Sample, SpreadPolicy};
    /// let i = Inputs { devices: 2, seen: 9, right: Right::Split,
    ///     split: Sample::steady(5, 3e-3), one: Sample::steady(5, 1e-3), between: 0,
    ///     gather: vec![0, 0], scatter: 0, link: Link { bandwidth: 1e9, latency: 1e-5 },
    ///     depth: Depth::Fixed(1), last: None, resample: Resample::default() };
    /// let p = price(&i, SpreadPolicy::Model); // one device, 1 ms against 3 ms
    /// let spent = BURST as f64 * 3e-3 / SHARE; // 0.45 s of launches at 1 ms
    /// assert!(!Resample { idle: BACKOFF, spent: 0.1, ..Resample::default() }.due(&p));
    /// assert!(Resample { idle: BACKOFF, spent, ..Resample::default() }.due(&p));
    /// ```
    pub fn due(&self, priced: &Priced) -> bool {
        if priced.why != Why::Cheaper || priced.depth > 1 {
            return false;
        }
        let other = match priced.choice {
            Choice::OneDevice(_) => priced.split,
            Choice::Split | Choice::Merge => priced.one,
        };
        let Some(Time::Measured(other)) = other else {
            return false;
        };
        if self.left > 0 {
            return true;
        }
        let moves = (priced.link).map_or(0.0, |l| {
            l.seconds(priced.gather) + l.seconds(priced.scatter)
        });
        let cost = BURST as f64 * other + moves;
        self.idle >= self.gap && self.spent * SHARE >= cost
    }

    /// Counts a launch of the option chosen taking `secs` by its figure.
    fn count(&mut self, secs: f64) {
        self.idle = self.idle.saturating_add(1);
        self.spent += secs;
    }

    /// Counts a launch of a re-sample: at its last, the wait doubles and starts again.
    fn sampled(&mut self) {
        self.left = match self.left {
            0 => BURST - 1,
            l => l - 1,
        };
        if self.left == 0 {
            *self = Resample {
                gap: self.gap.saturating_mul(2).min(MAX_BACKOFF),
                ..Resample::default()
            };
        }
    }
}

/// How a launch is timed ([`Figures::timing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// A sample of its option ([`Figures::record`]).
    Sample(Choice),
    /// An observation of the option chosen ([`Figures::observe`]).
    Observe(Choice),
    /// The first launch of a window of a split at this halo depth (every queue finished
    /// first, then the clock read: [`Figures::opened`]).
    Open(usize),
    /// The window's last launch (waited for, then the clock read: [`Figures::closed`]).
    Close(usize),
}

/// What an observation says ([`Figures::observe`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Observed {
    /// Within the margin of the other option's time (or nothing to compare with).
    Steady,
    /// Slower than the other option's time (`against`, seconds) by more than the margin,
    /// `slow` times in a row.
    Slow { slow: u32, against: f64 },
    /// [`SLOW`] times in a row: both options are measured again.
    Remeasure { against: f64 },
}

impl Figures {
    /// Counts a launch priced `priced` and says whether (and how) to time it: a sample where
    /// the model measures its option, an observation of one launch chosen from warm figures
    /// in every [`EVERY`] once they took [`SPAN`] seconds, else `None`. A split at a halo
    /// depth `k` above 1 is timed a window of `k` launches at a time instead
    /// ([`Timing::Open`] ... [`Timing::Close`]), where measured or observed. A decision made
    /// is kept as [`Figures::last`].
    ///
    /// ```
    /// use clgroups::plan::cost::watch::{Figures, Timing};
    /// use clgroups::plan::cost::{price, Depth, Inputs, Kept, Link, Right, Sample};
    /// use clgroups::plan::cost::{SpreadPolicy, Why};
    /// let mut f = Figures::default();
    /// let i = Inputs { devices: 2, seen: 9, right: Right::Split,
    ///     split: Sample::steady(5, 80e-6), one: Sample::steady(5, 75e-6), between: 4096,
    ///     gather: vec![0, 0], scatter: 0, link: Link { bandwidth: 1e9, latency: 14e-6 },
    ///     depth: Depth::Chosen { rows: 256, max: 16, kept: Some(Kept::new(4, f.deep)) },
    ///     last: None, resample: Default::default() };
    /// let p = price(&i, SpreadPolicy::Model); // the split at depth 4 measured
    /// assert_eq!((p.why, p.depth), (Why::Measuring, 4));
    /// assert_eq!(f.timing(&p), Some(Timing::Open(4)));
    /// f.opened(0.5);
    /// assert_eq!((f.timing(&p), f.timing(&p)), (None, None));
    /// assert_eq!(f.timing(&p), Some(Timing::Close(4)));
    /// assert_eq!(f.closed(0.5 + 0.25), Some(0.0625)); // 62.5 ms a launch
    /// assert_eq!((f.deep.0, f.deep.1.time()), (4, Some(0.0625)));
    /// ```
    pub fn timing(&mut self, priced: &Priced) -> Option<Timing> {
        if priced.why == Why::Resampling {
            self.resample.sampled();
            return Some(Timing::Sample(priced.choice));
        }
        if priced.why != Why::Measuring {
            if self.last.is_some_and(|l| l != priced.choice) {
                // A change of decision: the wait between re-samples starts again.
                self.resample = Resample::default();
            }
            self.last = Some(priced.choice);
        }
        let cheaper = priced.why == Why::Cheaper;
        if priced.choice == Choice::Split && priced.depth > 1 {
            if cheaper {
                self.counted(priced.deep.or(priced.split).map_or(0.0, Time::secs));
            }
            return self.window_timing(priced);
        }
        self.window = None;
        if priced.measure {
            return Some(Timing::Sample(priced.choice));
        }
        if !cheaper {
            return None;
        }
        let chosen = match priced.choice {
            Choice::OneDevice(_) => priced.one,
            Choice::Split | Choice::Merge => priced.split,
        };
        let secs = chosen.map_or(0.0, Time::secs);
        if priced.depth > 1 {
            // One device chosen over a deeper halo: not observed against the depth-1 split.
            self.resample.count(secs);
            return None;
        }
        self.counted(secs);
        (self.since >= EVERY && self.spent >= SPAN).then(|| {
            (self.since, self.spent) = (0, 0.0);
            Timing::Observe(priced.choice)
        })
    }

    /// Counts a launch chosen from warm figures taking `secs` by them (towards the next
    /// re-sample and the next observation).
    fn counted(&mut self, secs: f64) {
        self.resample.count(secs);
        self.since += 1;
        self.spent += secs;
    }

    /// [`Figures::timing`] of a split at a halo depth above 1: the open window counts the
    /// launch (its last closes it), else one opens where the model measures the split or an
    /// observation is due.
    fn window_timing(&mut self, priced: &Priced) -> Option<Timing> {
        let k = priced.depth;
        if let Some(w) = self.window.as_mut().filter(|w| w.depth == k) {
            w.left = w.left.saturating_sub(1);
            return (w.left == 0).then_some(Timing::Close(k));
        }
        let due = priced.measure || (self.since >= EVERY && self.spent >= SPAN);
        if !due {
            self.window = None;
            return None;
        }
        (self.since, self.spent) = (0, 0.0);
        self.window = Some(Window {
            depth: k,
            left: u32::try_from(k - 1).unwrap_or(u32::MAX),
            start: None,
        });
        Some(Timing::Open(k))
    }

    /// The window opened ([`Timing::Open`]) at `now` (seconds, any fixed origin).
    pub fn opened(&mut self, now: f64) {
        if let Some(w) = self.window.as_mut() {
            w.start = Some(now);
        }
    }

    /// The window's last launch ([`Timing::Close`]) completed at `now`: records its time per
    /// launch in [`Figures::deep`] and returns it (`None` where no window was open).
    pub fn closed(&mut self, now: f64) -> Option<f64> {
        let w = self.window.take()?;
        let per = (now - w.start?).max(0.0) / w.depth.max(1) as f64;
        if self.deep.0 != w.depth {
            self.deep = (w.depth, Sample::default());
        }
        self.deep.1 = self.deep.1.with(per);
        Some(per)
    }

    /// Takes `secs`, the time of a launch timed as `timing` says: records the sample, or
    /// observes (and returns what the observation says).
    pub fn timed(&mut self, timing: Timing, secs: f64) -> Option<Observed> {
        match timing {
            Timing::Sample(c) => {
                self.record(c, secs);
                None
            }
            Timing::Observe(c) => Some(self.observe(c, secs)),
            Timing::Open(_) | Timing::Close(_) => None,
        }
    }

    /// Records a sample of `secs` of the option `choice`.
    pub fn record(&mut self, choice: Choice, secs: f64) {
        match choice {
            Choice::OneDevice(_) => self.one = self.one.with(secs),
            Choice::Split | Choice::Merge => self.split = self.split.with(secs),
        }
    }

    /// An observation of `secs` of the option chosen, `choice`, against the other option's
    /// measured time; at [`SLOW`] slow ones in a row both samples are emptied (the model
    /// measures both again from the shape's next launch).
    pub fn observe(&mut self, choice: Choice, secs: f64) -> Observed {
        let other = match choice {
            Choice::OneDevice(_) => self.split.time(),
            Choice::Split | Choice::Merge => self.one.time(),
        };
        let Some(against) = other.filter(|&o| secs > o * (1.0 + MARGIN)) else {
            self.slow = 0;
            return Observed::Steady;
        };
        self.slow += 1;
        if self.slow < SLOW {
            return Observed::Slow {
                slow: self.slow,
                against,
            };
        }
        (self.split, self.one, self.slow) = (Sample::default(), Sample::default(), 0);
        self.deep = Default::default();
        (self.since, self.spent, self.resample) = (0, 0.0, Resample::default());
        Observed::Remeasure { against }
    }
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Steady => f.write_str("steady"),
            Observed::Slow { slow, against } => write!(
                f,
                "slower than the other option's {:.1} us ({slow} of {SLOW} in a row)",
                against * 1e6
            ),
            Observed::Remeasure { against } => write!(
                f,
                "slower than the other option's {:.1} us {SLOW} times in a row: measuring both again",
                against * 1e6
            ),
        }
    }
}
