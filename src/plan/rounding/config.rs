//! Range-rounding settings: DPC++'s parameters and modes, from the environment (see
//! [the module docs](super)).

use crate::config;
use crate::error::{Error, InputFault, Result};
use std::fmt;
use std::str::FromStr;

/// DPC++'s rounding parameters, `MinFactor:GoodFactor:MinRange`.
///
/// ```
/// use clgroups::program::RoundingParams;
/// let p: RoundingParams = "1:256:1".parse().unwrap();
/// assert_eq!(p, RoundingParams { min_factor: 1, good_factor: 256, min_range: 1 });
/// assert!("16:0:1024".parse::<RoundingParams>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoundingParams {
    /// A slowest dimension divisible by this is left alone (default mode).
    pub min_factor: usize,
    /// Rounded dimensions become multiples of this.
    pub good_factor: usize,
    /// A slowest dimension below this is left alone (default mode).
    pub min_range: usize,
}

impl RoundingParams {
    /// DPC++'s hard-coded defaults, `16:32:1024`.
    pub const DPCPP_DEFAULT: Self = RoundingParams {
        min_factor: 16,
        good_factor: 32,
        min_range: 1024,
    };
}

impl FromStr for RoundingParams {
    type Err = Error;

    /// Parses `MinFactor:GoodFactor:MinRange`: all three fields, each a non-negative integer
    /// (surrounding spaces allowed), both factors above 0. Stricter than DPC++'s `stoi`, which
    /// accepts trailing junk such as `16abc`.
    fn from_str(s: &str) -> Result<Self> {
        let fields: Vec<&str> = s.split(':').collect();
        let [min_factor, good_factor, min_range] = fields[..] else {
            return Err(Error::input(InputFault::RoundingFields {
                text: s.into(),
                fields: fields.len(),
            }));
        };
        let p = RoundingParams {
            min_factor: parse_field(s, "MinFactor", min_factor)?,
            good_factor: parse_field(s, "GoodFactor", good_factor)?,
            min_range: parse_field(s, "MinRange", min_range)?,
        };
        if p.min_factor == 0 || p.good_factor == 0 {
            return Err(Error::input(InputFault::RoundingFactorZero {
                text: s.into(),
            }));
        }
        Ok(p)
    }
}

/// One field of [`RoundingParams`]'s text form.
fn parse_field(whole: &str, name: &'static str, field: &str) -> Result<usize> {
    field.trim().parse().map_err(|_| {
        Error::input(InputFault::RoundingField {
            text: whole.into(),
            name,
            field: field.into(),
        })
    })
}

impl fmt::Display for RoundingParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.min_factor, self.good_factor, self.min_range
        )
    }
}

/// Which kernels a plain-range launch may use (DPC++'s `-fsycl-range-rounding=`).
///
/// ```
/// use clgroups::program::{RoundingConfig, RoundingMode};
/// // What CLGROUPS_RANGE_ROUNDING=force selects:
/// let cfg = RoundingConfig { mode: RoundingMode::Force, ..RoundingConfig::default() };
/// assert_eq!(cfg.mode, RoundingMode::Force);
/// assert_eq!(RoundingMode::default(), RoundingMode::On);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RoundingMode {
    /// Round when it helps; otherwise launch the original kernel.
    #[default]
    On,
    /// Always launch the rounded (guarded) variant, even over an unchanged range.
    Force,
    /// Never round: the original kernel over the user's range.
    Disable,
}

impl FromStr for RoundingMode {
    type Err = Error;

    /// Parses `on`, `force` or `disable` (ASCII case and surrounding spaces ignored).
    ///
    /// ```
    /// use clgroups::program::RoundingMode;
    /// assert_eq!("force".parse::<RoundingMode>().unwrap(), RoundingMode::Force);
    /// assert!("off".parse::<RoundingMode>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on" => Ok(RoundingMode::On),
            "force" => Ok(RoundingMode::Force),
            "disable" => Ok(RoundingMode::Disable),
            _ => Err(Error::input(InputFault::RoundingMode { text: s.into() })),
        }
    }
}

/// Everything the environment says about range rounding.
///
/// ```
/// use clgroups::program::{RoundingConfig, RoundingMode};
/// let cfg = RoundingConfig { mode: RoundingMode::Disable, ..RoundingConfig::default() };
/// assert!(cfg.params.is_none() && !cfg.trace);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RoundingConfig {
    /// The mode; [`RoundingMode::Disable`] also when `CLGROUPS_DISABLE_RANGE_ROUNDING` is set.
    pub mode: RoundingMode,
    /// Explicit DPC++ parameters; `None` selects the device-aware default.
    pub params: Option<RoundingParams>,
    /// Round every dimension (ignored when the mode is [`RoundingMode::Disable`]).
    pub experimental: bool,
    /// Print `RoundingPlan::trace_lines` for every launch.
    pub trace: bool,
}

impl RoundingConfig {
    /// The configuration the environment sets (see the module docs; read once per
    /// process by [`crate::config`]: a malformed `CLGROUPS_RANGE_ROUNDING_PARAMS` or
    /// `CLGROUPS_RANGE_ROUNDING` is reported with `log::warn!` and one line on stderr, and the
    /// default is kept).
    ///
    /// ```
    /// use clgroups::program::{RoundingConfig, RoundingMode};
    /// let cfg = RoundingConfig::from_env();
    /// if std::env::var_os("CLGROUPS_DISABLE_RANGE_ROUNDING").is_some() {
    ///     assert_eq!(cfg.mode, RoundingMode::Disable);
    /// }
    /// ```
    pub fn from_env() -> Self {
        crate::config::held(config::ROUNDING, || {
            let cfg = Self::from_lookup(config::read);
            log::debug!("range rounding configuration: {cfg:?}");
            cfg
        })
    }

    /// The configuration from a variable lookup (`None` = unset): the disabling, experimental
    /// and trace variables count when set to anything, even empty or `0`, as in DPC++; a bad
    /// mode or parameters warn and keep the default.
    pub(crate) fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        use config::{tuning, ROUNDING, ROUNDING_DISABLE, ROUNDING_EXP, ROUNDING_PARAMS};
        let params = tuning(ROUNDING_PARAMS, get(ROUNDING_PARAMS), |v| v.parse().ok());
        let mode = match get(ROUNDING_DISABLE) {
            Some(_) => RoundingMode::Disable,
            None => tuning(ROUNDING, get(ROUNDING), |v| v.parse().ok()).unwrap_or_default(),
        };
        RoundingConfig {
            mode,
            params,
            experimental: get(ROUNDING_EXP).is_some(),
            trace: get(config::ROUNDING_TRACE).is_some(),
        }
    }
}
