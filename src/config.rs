//! The environment: every `CLGROUPS_*` variable clgroups reads, read here and nowhere else.
//!
//! [`VARIABLES`] lists them with the values each accepts (`docs/environment.md` is checked
//! against it by a test). Each is parsed by one parser per kind of value (a switch, a number
//! of seconds, set-or-unset; a value with a type of its own, such as the placement, the
//! rounding parameters or the scan tile, by that type's own parser, so this module imports no
//! other) into a typed setting held here, once per process at its first use: set a variable
//! before the first call that needs it. The
//! device selectors are the exception: `CLGROUPS_DEVICE` and `CLGROUPS_DEVICES` are read at
//! each call of [`default_device`](crate::default_device) and
//! [`RootDevice::from_env`](crate::scaling::RootDevice::from_env), whose job is to read them.
//!
//! A value a variable does not accept is an [`Error::InvalidEnvironment`] naming the variable,
//! the value and what it accepts, from the first call that needs the setting (a switch of
//! checked mode: the first buffer or program), never a silent choice. The tuning knobs
//! (range-rounding parameters and mode, the scan tile and its wait) follow DPC++ instead: a bad
//! value is that same error printed as a warning, and the default is kept.
//!
//! ```
//! use clgroups::config::{self, VARIABLES};
//! for v in VARIABLES {
//!     println!("{}: {} (default: {})", v.name, v.accepts, v.default);
//! }
//! // Read once: every call answers the same.
//! assert_eq!(config::timeout()?, config::timeout()?);
//! # Ok::<(), clgroups::Error>(())
//! ```

use crate::error::{Error, Result};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// One environment variable clgroups reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Its name, `CLGROUPS_...`.
    pub name: &'static str,
    /// The values it accepts.
    pub accepts: &'static str,
    /// What unset means.
    pub default: &'static str,
    /// What it changes.
    pub effect: &'static str,
}

const fn var(
    name: &'static str,
    accepts: &'static str,
    default: &'static str,
    effect: &'static str,
) -> Variable {
    Variable {
        name,
        accepts,
        default,
        effect,
    }
}

const DEVICE: &str = "CLGROUPS_DEVICE";
const DEVICES: &str = "CLGROUPS_DEVICES";
pub(crate) const SHUFFLE_BACKEND: &str = "CLGROUPS_SHUFFLE_BACKEND";
const CHECKED: &str = "CLGROUPS_CHECKED";
const TIMEOUT: &str = "CLGROUPS_TIMEOUT";
pub(crate) const PLACEMENT: &str = "CLGROUPS_PLACEMENT";
const STRICT: &str = "CLGROUPS_STRICT";
pub(crate) const SPREAD: &str = "CLGROUPS_SPREAD";
pub(crate) const HALO_DEPTH: &str = "CLGROUPS_HALO_DEPTH";
const POST: &str = "CLGROUPS_POST";
pub(crate) const SCAN_TILE: &str = "CLGROUPS_SCAN_TILE";
const SCAN_WAIT_NS: &str = "CLGROUPS_SCAN_WAIT_NS";
pub(crate) const ROUNDING: &str = "CLGROUPS_RANGE_ROUNDING";
pub(crate) const ROUNDING_PARAMS: &str = "CLGROUPS_RANGE_ROUNDING_PARAMS";
pub(crate) const ROUNDING_DISABLE: &str = "CLGROUPS_DISABLE_RANGE_ROUNDING";
pub(crate) const ROUNDING_EXP: &str = "CLGROUPS_EXP_RANGE_ROUNDING";
pub(crate) const ROUNDING_TRACE: &str = "CLGROUPS_RANGE_ROUNDING_TRACE";

/// The accepted spellings of a switch.
const SWITCH: &str = "1, true, yes or on; 0, false, no or off";

/// Every variable clgroups reads, whatever its features (each in `docs/environment.md`).
pub const VARIABLES: &[Variable] = &[
    var(DEVICE, "`P:D` indices, `platform:device` name substrings (`pocl:cpu`), or one word (`nvidia`, `gpu`)",
        "the first GPU, else accelerator, else CPU", "the default device (read at each `default_device()`)"),
    var(DEVICES, "a comma-separated list of `CLGROUPS_DEVICE` selectors, e.g. `0:0,0:1`",
        "every device of the default device's platform", "the devices of `RootDevice::from_env` (read at each call)"),
    var(SHUFFLE_BACKEND, "`khr`, `intel`, `nvidia-ptx` (or `ptx`) or `emulated`",
        "the best backend the device has", "the sub-group backend of every device (an error where a device cannot run it)"),
    var(CHECKED, SWITCH, "off for single-device launches; for root launches on in debug builds of clgroups",
        "checked mode: out-of-bounds accesses become `Error::OutOfBounds` / `Error::OutOfChunk`"),
    var(TIMEOUT, "a positive number of seconds (fractions allowed)", "600",
        "how long any one wait on a device may take; past it the wait is `Error::Timeout` naming the command"),
    var(PLACEMENT, "`shared` or `partitioned`", "`shared` where every device has host-unified memory, else `partitioned`",
        "the placement of new root devices"),
    var(STRICT, SWITCH, "off", "strict mode of every root device: a launch that cannot be split is an error instead of running on one device"),
    var(SPREAD, "`model`, `split` or `one`", "`model`",
        "how every root device spreads launches: the cost model's choice, always what the analysis proves (split, merged or one device), or always one device with buffers moved there whole"),
    var(HALO_DEPTH, "a whole number from 1", "the cost model's choice per kernel and shape where the spread is `model`, else 1",
        "launches between halo exchanges of a stencil chain split by footprints: each device computes k - 1 rows of work-groups beyond its part redundantly (`RootDevice::with_halo_depth`)"),
    var(POST, SWITCH, "on",
        "off: blocking reduces and scans on NVIDIA read their result through a transfer and wait on events instead of polling a post in host memory"),
    var(SCAN_TILE, "`ROUNDS:LOCAL` with `ROUNDS × LOCAL / 32` a multiple of 32 and `LOCAL` a multiple of 32",
        "`8:256`, and `32:256` for inputs from 2^26 elements", "the look-back scan's tile (NVIDIA), one for every size, for tuning (a bad value warns and is ignored)"),
    var(SCAN_WAIT_NS, "a number of nanoseconds",
        "for the large tiles of inputs from 2^26 elements, the wait the device's first such scan measured (`algorithms::look_back_wait_ns`); 0 otherwise",
        "how long a look-back tile waits before it first reads the tiles before it (PTX `nanosleep`), for tuning (a bad value warns)"),
    var(ROUNDING, "`on`, `force` or `disable`", "`on`", "the range-rounding mode (DPC++'s `-fsycl-range-rounding`; a bad value warns)"),
    var(ROUNDING_PARAMS, "`MinFactor:GoodFactor:MinRange`, both factors above 0", "a device-aware rule (DPC++'s own default: `16:32:1024`)",
        "DPC++'s rounding rule with these parameters (a bad value warns)"),
    var(ROUNDING_DISABLE, "anything, even `0` or empty (as in DPC++)", "unset", "no rounding"),
    var(ROUNDING_EXP, "anything", "unset", "round every dimension (DPC++'s `-fsycl-exp-range-rounding`)"),
    var(ROUNDING_TRACE, "anything", "unset", "print each adjustment (`parallel_for range adjusted at dim D from A to B`)"),
];

/// How long clgroups waits for one command: `CLGROUPS_TIMEOUT` seconds, else 600 s (read
/// once).
///
/// Every wait clgroups makes on a device ends within this limit, or returns
/// [`Error::Timeout`] naming the command, so a stuck device or a lost connection (a remote
/// device through PoCL-R, say) reaches the caller as an error rather than a hang. OpenCL cannot
/// cancel a command, so one that timed out may still be running: a read that timed out leaves
/// its destination to the device (owned memory, leaked). Blocking reads of up to 64 KiB, and
/// every blocking transfer on a remote device, are one non-blocking transfer through owned
/// memory and one bounded wait; larger blocking transfers on local devices first wait (bounded)
/// for the commands before them, so only the transfer itself is unbounded there.
///
/// ```
/// let limit = clgroups::config::timeout()?;
/// if std::env::var_os("CLGROUPS_TIMEOUT").is_none() {
///     assert_eq!(limit.as_secs(), 600);
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn timeout() -> Result<Duration> {
    settings().timeout()
}

/// The process's settings of plain kinds (a switch, seconds, a number), each parsed at its
/// first use (`None`: unset or blank). A value of a type of its own is parsed by that type
/// ([`typed`], [`typed_tuning`], [`held`]).
#[derive(Default)]
pub(crate) struct Settings {
    checked: OnceLock<Result<Option<bool>>>,
    timeout: OnceLock<Result<Option<Duration>>>,
    #[cfg(feature = "scaling")]
    strict: OnceLock<Result<Option<bool>>>,
    #[cfg(feature = "algorithms")]
    post: OnceLock<Result<Option<bool>>>,
    #[cfg(feature = "algorithms")]
    scan_wait_ns: OnceLock<Option<u32>>,
}

/// The settings of this process.
pub(crate) fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(Settings::default)
}

impl Settings {
    /// [`CHECKED`], if set.
    pub(crate) fn checked(&self) -> Result<Option<bool>> {
        once(&self.checked, CHECKED, switch)
    }

    /// [`TIMEOUT`], else 600 s.
    pub(crate) fn timeout(&self) -> Result<Duration> {
        let set = once(&self.timeout, TIMEOUT, seconds)?;
        Ok(set.unwrap_or(Duration::from_secs(600)))
    }

    /// [`STRICT`], off where unset.
    #[cfg(feature = "scaling")]
    pub(crate) fn strict(&self) -> Result<bool> {
        Ok(once(&self.strict, STRICT, switch)?.unwrap_or(false))
    }

    /// [`POST`], on where unset.
    #[cfg(feature = "algorithms")]
    pub(crate) fn post(&self) -> Result<bool> {
        Ok(once(&self.post, POST, switch)?.unwrap_or(true))
    }

    /// [`SCAN_WAIT_NS`]: every look-back tile's wait in ns, if forced (a bad value warns).
    #[cfg(feature = "algorithms")]
    pub(crate) fn scan_wait_ns(&self) -> Option<u32> {
        *self
            .scan_wait_ns
            .get_or_init(|| tuning(SCAN_WAIT_NS, read(SCAN_WAIT_NS), |v| v.trim().parse().ok()))
    }
}

/// Variable `name` parsed by its type's own parser `kind`, once per process (`None`: unset or
/// blank; a value `kind` refuses is an [`Error::InvalidEnvironment`]).
pub(crate) fn typed<T: Clone + Send + Sync + 'static>(
    name: &'static str,
    kind: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    held(name, || parse(name, read(name), kind))
}

/// A tuning knob of a type of its own: [`typed`], where a bad value warns and is `None`.
#[cfg(feature = "algorithms")]
pub(crate) fn typed_tuning<T: Clone + Send + Sync + 'static>(
    name: &'static str,
    kind: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    held(name, || tuning(name, read(name), kind))
}

/// The value `init` makes on the first call for `key`, held for the process (every key is
/// used with one type).
pub(crate) fn held<T: Clone + Send + Sync + 'static>(
    key: &'static str,
    init: impl FnOnce() -> T,
) -> T {
    type Held = HashMap<&'static str, Box<dyn Any + Send + Sync>>;
    static HELD: OnceLock<Mutex<Held>> = OnceLock::new();
    let cell = HELD.get_or_init(Mutex::default);
    let mut values = cell.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(v) = values.get(key).and_then(|v| v.downcast_ref::<T>()) {
        return v.clone();
    }
    let v = init();
    values.insert(key, Box::new(v.clone()));
    v
}

/// The variables clgroups does not own that decide which drivers and devices exist, as
/// `NAME="value"` for those set (for [`Error::NoDevices`]).
pub(crate) fn device_environment() -> Vec<String> {
    [
        "OCL_ICD_VENDORS",
        "OCL_ICD_FILENAMES",
        "POCL_DEVICES",
        "CUDA_VISIBLE_DEVICES",
        SHUFFLE_BACKEND,
    ]
    .iter()
    .filter_map(|k| read(k).map(|v| format!("{k}={v:?}")))
    .collect()
}

/// [`DEVICE`], read now: the selector, if set and not blank.
pub(crate) fn device_selector() -> Option<String> {
    read(DEVICE).filter(|s| !s.trim().is_empty())
}

/// [`DEVICES`], read now: the selectors, if set and not blank.
#[cfg(feature = "scaling")]
pub(crate) fn device_selectors() -> Option<Vec<String>> {
    let list = read(DEVICES).filter(|s| !s.trim().is_empty())?;
    log::debug!("{DEVICES}={list:?}");
    Some(list.split(',').map(|s| s.trim().to_string()).collect())
}

/// The one place the process environment is read (lossily: a value that is not UTF-8 is
/// parsed with its bad bytes replaced).
pub(crate) fn read(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// `cell`'s setting, parsing `name` with `kind` on the first call.
fn once<T: Clone>(
    cell: &OnceLock<Result<Option<T>>>,
    name: &'static str,
    kind: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    cell.get_or_init(|| parse(name, read(name), kind)).clone()
}

/// `value` of `name` parsed by `kind`: `None` where unset or blank, the error naming the
/// variable and its accepted values ([`VARIABLES`]) where `kind` refuses it.
fn parse<T>(
    name: &str,
    value: Option<String>,
    kind: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    match value.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => match kind(text) {
            Some(v) => Ok(Some(v)),
            None => Err(Error::InvalidEnvironment {
                variable: name.to_string(),
                value: text.to_string(),
                expected: VARIABLES
                    .iter()
                    .find(|v| v.name == name)
                    .map_or("", |v| v.accepts)
                    .to_string(),
            }),
        },
    }
}

/// A tuning knob: [`parse`], where a bad value is a warning and `None` (the default).
pub(crate) fn tuning<T>(
    name: &str,
    value: Option<String>,
    kind: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    parse(name, value, kind).unwrap_or_else(|e| {
        log::warn!("{e}; using the default");
        eprintln!("clgroups: warning: {e}; using the default");
        None
    })
}

/// A switch: on or off.
fn switch(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// A positive, finite number of seconds.
fn seconds(text: &str) -> Option<Duration> {
    let s: f64 = text.parse().ok()?;
    (s > 0.0 && s.is_finite()).then(|| Duration::from_secs_f64(s))
}

#[cfg(test)]
mod tests;
