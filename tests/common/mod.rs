//! Shared fixtures for the integration tests: the device under test and the rules for what a
//! test may skip, the poison value, colored buffers, the harness of the CTS-style sub-group
//! tables ([`suite`]) and of the kernels that record their sub-groups ([`recorded`]).
#![allow(dead_code)]

#[cfg(feature = "scaling")]
pub mod partitioned;
pub mod recorded;
pub mod rng;
pub mod shape;
pub mod suite;
pub mod tally;

use clgroups::{Buffer, Device, Queue};

/// The value the environment variable `name` holds (a number, a rate), else `default`; a value
/// that does not parse fails the test rather than being taken as the default.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a value of its kind"))
    })
}

/// Two distinct elements of `items`: `i` to read and `j` to write.
pub fn pair<T>(items: &mut [T], i: usize, j: usize) -> (&T, &mut T) {
    assert_ne!(i, j);
    if i < j {
        let (a, b) = items.split_at_mut(j);
        (&a[i], &mut b[0])
    } else {
        let (a, b) = items.split_at_mut(i);
        (&b[0], &mut a[j])
    }
}

/// The devices reached through PoCL-R (none, with a "not run" line, where there are none).
pub fn remote_devices() -> Vec<Device> {
    let remote: Vec<Device> = clgroups::devices()
        .expect("devices")
        .iter()
        .filter(|d| d.identity().remote)
        .cloned()
        .collect();
    if remote.is_empty() {
        eprintln!("not run: no device is reached through PoCL-R");
    }
    remote
}

/// The device under test (`CLGROUPS_DEVICE` selects it), printed once per test.
pub fn device() -> Device {
    let d = clgroups::default_device().expect("an OpenCL device (install pocl-opencl-icd)");
    eprintln!(
        "device under test: {d} (backend {})",
        d.sub_groups().effective.shuffle_backend
    );
    d
}

/// A queue on the device under test.
pub fn queue() -> Queue {
    Queue::new(&device()).expect("a queue")
}

/// Whether native sub-groups are required (`CLGROUPS_REQUIRE_SUBGROUPS=1`): set in CI's
/// PoCL 6.0 pass, where a device without them is a failure, not a skip.
pub fn subgroups_required() -> bool {
    std::env::var("CLGROUPS_REQUIRE_SUBGROUPS").is_ok_and(|v| v == "1")
}

/// True if the device has native sub-groups; otherwise prints why a native-only test does not
/// run, and fails instead when native sub-groups are required.
pub fn native_or_skip(d: &Device, test: &str) -> bool {
    if d.sub_groups().driver.native() {
        return true;
    }
    assert!(
        !subgroups_required(),
        "{test}: CLGROUPS_REQUIRE_SUBGROUPS=1 but {d} has no native sub-groups"
    );
    eprintln!("{test}: not run: {d} has no native sub-groups (cl_khr_subgroups)");
    false
}

/// The sub-group sizes the CTS-style checks run at on `d`, besides its primary one: every other
/// size the device offers on `nvidia-ptx` (1, 2, 4, 8 and 16: segments of a warp, each one more
/// build of the checking kernels); none elsewhere (PoCL compiles every emulated width slowly, and
/// a native driver's other sizes are the driver's, checked by its own CTS).
pub fn other_sizes(d: &Device) -> Vec<usize> {
    let eff = &d.sub_groups().effective;
    match eff.shuffle_backend {
        clgroups::device::ShuffleBackend::NvidiaPtx => eff
            .sub_group_sizes
            .iter()
            .copied()
            .filter(|&s| s != eff.primary_sub_group_size)
            .collect(),
        _ => Vec::new(),
    }
}

/// Deterministic, lane-revealing test values (never zeros): a small LCG.
pub fn values(n: usize, seed: u64) -> Vec<i32> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((x >> 33) % 2001) as i32 - 1000;
            if v == 0 {
                7 + i as i32
            } else {
                v
            }
        })
        .collect()
}

/// Whether two devices are required (`CLGROUPS_REQUIRE_MULTI_DEVICE=1`, set in CI): then a
/// machine without them fails the scaling tests instead of skipping them.
pub fn multi_required() -> bool {
    std::env::var("CLGROUPS_REQUIRE_MULTI_DEVICE").is_ok_and(|v| v == "1")
}

#[cfg(feature = "scaling")]
/// The root device under test: the default platform's devices, or the default device split
/// in two. `None` (after printing why) when neither gives two devices and that is allowed.
/// Its launches always do what the analysis proves (`SpreadPolicy::Split`): these tests check
/// the analysis's answers, which the cost model would replace by one device where that is
/// faster (`tests/scaling_cost.rs` tests the model).
pub fn root_device(test: &str) -> Option<clgroups::scaling::RootDevice> {
    root_device_any(test).map(|r| r.with_spread(clgroups::scaling::SpreadPolicy::Split))
}

#[cfg(feature = "scaling")]
fn root_device_any(test: &str) -> Option<clgroups::scaling::RootDevice> {
    use clgroups::scaling::RootDevice;
    let all = RootDevice::from_env().expect("a root device over the default platform");
    if all.len() >= 2 {
        eprintln!("{test}: {all:?}");
        return Some(all);
    }
    let dev = device();
    match RootDevice::split(&dev, 2) {
        Ok(r) => {
            eprintln!("{test}: {dev} split in two: {r:?}");
            Some(r)
        }
        Err(e) => {
            let why = format!("{test}: one device on the platform and it cannot be split: {e}");
            assert!(
                !multi_required(),
                "CLGROUPS_REQUIRE_MULTI_DEVICE=1 but {why}"
            );
            eprintln!("not run: {why}");
            None
        }
    }
}

#[cfg(feature = "scaling")]
/// The placements to test `root` in: shared (where its devices share the host's memory: a
/// buffer written by devices that do not is refused there by design, e.g. PoCL-R's remote
/// devices), then partitioned.
pub fn placements(root: &clgroups::scaling::RootDevice) -> Vec<clgroups::scaling::Placement> {
    use clgroups::scaling::Placement;
    if root
        .devices()
        .iter()
        .all(|d| d.limits().host_unified_memory)
    {
        vec![Placement::Shared, Placement::Partitioned]
    } else {
        eprintln!("shared placement not run: the devices do not share the host's memory");
        vec![Placement::Partitioned]
    }
}

#[cfg(feature = "scaling")]
/// The root device under test in each of its [`placements`]; empty (after printing why) where
/// [`root_device`] gives none.
pub fn roots(test: &str) -> Vec<clgroups::scaling::RootDevice> {
    let Some(root) = root_device(test) else {
        return Vec::new();
    };
    placements(&root)
        .into_iter()
        .map(|p| root.clone().with_placement(p))
        .collect()
}

#[cfg(feature = "scaling")]
/// [`colored_as`] with the access the analysis finds (`Access::Auto`).
pub fn colored<T: clgroups::buffer::Scalar>(
    root: &clgroups::scaling::RootDevice,
    data: &[T],
    page: usize,
) -> clgroups::scaling::ColoredBuffer<T> {
    colored_as(root, data, page, clgroups::scaling::Access::Auto)
}

#[cfg(feature = "scaling")]
/// `data` in a colored buffer declared `access`: in partitioned placement in pages of `page`
/// elements (so that chunks follow work-groups of `page` work-items), with the default page
/// in shared placement.
pub fn colored_as<T: clgroups::buffer::Scalar>(
    root: &clgroups::scaling::RootDevice,
    data: &[T],
    page: usize,
    access: clgroups::scaling::Access,
) -> clgroups::scaling::ColoredBuffer<T> {
    use clgroups::scaling::{ColoredBuffer, Placement};
    let len = data.len();
    let mut b = match root.placement() {
        Placement::Partitioned => {
            ColoredBuffer::with_layout(root, len, page * size_of::<T>(), access)
        }
        Placement::Shared => ColoredBuffer::with_access(root, len, access),
    }
    .unwrap();
    b.write(data).unwrap();
    b
}

/// Runs `body` in a child process (this test binary, running `test` alone, ignored or not,
/// with `env` set) and returns its stdout, asserting that it exited normally and printed
/// `CHILD-OK`: for tests whose failure mode is a crash or a hang of the process, or that need
/// their own environment (the crate reads some variables once per process). In the child, runs
/// `body`.
pub fn in_child_with(test: &str, env: &[(&str, &str)], body: impl FnOnce()) -> String {
    in_child_within(test, env, None, body)
}

/// [`in_child_with`], the child killed (and the test failed) once it has run for `limit`.
pub fn in_child_within(
    test: &str,
    env: &[(&str, &str)],
    limit: Option<std::time::Duration>,
    body: impl FnOnce(),
) -> String {
    const CHILD: &str = "CLGROUPS_TEST_CHILD";
    if std::env::var(CHILD).is_ok() {
        body();
        println!("CHILD-OK");
        std::process::exit(0);
    }
    // The test's path in the binary (`findings::name` in a binary with modules): libtest names
    // the test's thread so.
    let current = std::thread::current();
    let path = (current.name())
        .filter(|n| *n == test || n.ends_with(&format!("::{test}")))
        .unwrap_or(test);
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        path,
        "--nocapture",
        "--test-threads=1",
        "--include-ignored",
    ])
    .env(CHILD, "1")
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            pipe.read_to_end(&mut text).unwrap();
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let start = std::time::Instant::now();
    let mut hung = false;
    while child.try_wait().unwrap().is_none() {
        if limit.is_some_and(|l| start.elapsed() > l) {
            child.kill().unwrap();
            hung = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = child.wait().unwrap();
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(
        !hung && status.success() && stdout.contains("CHILD-OK"),
        "{test}: child {status:?}{}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        if hung { " (hung: killed)" } else { "" }
    );
    eprintln!("{stdout}");
    stdout
}

/// [`in_child_with`] without extra environment.
pub fn in_child(test: &str, body: impl FnOnce()) {
    in_child_with(test, &[], body);
}

/// Marks elements no kernel should write: `i32::POISON`, `u32::POISON`, `f32::POISON`.
pub trait Poison: Copy {
    const POISON: Self;
}

impl Poison for i32 {
    const POISON: i32 = -0x5a5a5a5;
}

impl Poison for u32 {
    const POISON: u32 = 0xa5a5_a5a5;
}

impl Poison for f32 {
    const POISON: f32 = -7777.0;
}

/// A poisoned output of `len` elements.
pub fn poisoned(q: &Queue, len: usize) -> Buffer<i32> {
    let mut b = Buffer::new(q.context(), len).unwrap();
    b.fill(q, i32::POISON).unwrap();
    b
}

/// Asserts that nothing wrote the [`poisoned`] `b`.
pub fn untouched(q: &Queue, b: &Buffer<i32>) {
    q.finish().unwrap();
    assert!(
        b.read(q).unwrap().iter().all(|&v| v == i32::POISON),
        "a refused launch ran"
    );
}

/// The heavy tables' rows this run checks: every row, unless `CLGROUPS_TEST_SAMPLE=<seed>` is
/// set (CI's `scripts/test-all` sets it), which keeps a third of them (at least one), chosen
/// from the seed, the table's `label` and the device, so that the passes and runs of CI cover
/// different rows. `CLGROUPS_TEST_FULL=1` (`scripts/test-full`) checks every row again.
/// Prints what it kept.
pub fn sampled<T: std::fmt::Debug>(label: &str, device: &Device, rows: Vec<T>) -> Vec<T> {
    let full = std::env::var("CLGROUPS_TEST_FULL").is_ok_and(|v| v == "1");
    let seed = std::env::var("CLGROUPS_TEST_SAMPLE").ok();
    let Some(seed) = seed.filter(|_| !full) else {
        return rows;
    };
    let n = rows.len();
    let keep = n.div_ceil(3);
    let key = format!(
        "{seed}|{label}|{}|{}",
        device.name(),
        device.platform_name()
    );
    let h = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let start = (h % n as u64) as usize;
    let kept: Vec<T> = rows
        .into_iter()
        .enumerate()
        .filter(|(i, _)| (i + n - start) % n < keep)
        .map(|(_, r)| r)
        .collect();
    eprintln!(
        "{label}: {keep} of {n} rows (CLGROUPS_TEST_SAMPLE={seed}; CLGROUPS_TEST_FULL=1 checks all): {kept:?}"
    );
    kept
}
