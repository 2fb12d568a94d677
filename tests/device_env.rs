//! `CLGROUPS_DEVICE` (one test per binary: it sets the process environment).

#[test]
fn clgroups_device_selects_and_unknown_names_fail() {
    let all = clgroups::devices().expect("devices");
    let last = all.last().unwrap();
    set_device(&format!(
        "{}:{}",
        last.platform_index(),
        last.device_index()
    ));
    assert_eq!(clgroups::default_device().unwrap().id(), last.id());
    set_device("definitely-not-a-device");
    let e = clgroups::default_device().unwrap_err();
    assert!(matches!(e, clgroups::Error::NoDevice { .. }), "{e}");
    assert!(e.to_string().contains(last.name()), "{e}");
    set_device("cpu");
    if all
        .iter()
        .any(|d| d.kind() == clgroups::device::DeviceKind::Cpu)
    {
        assert_eq!(
            clgroups::default_device().unwrap().kind(),
            clgroups::device::DeviceKind::Cpu
        );
    }
}

fn set_device(selector: &str) {
    // SAFETY: this binary's only test runs on one thread, and no other thread of the process
    // reads or writes the environment while it does (the OpenCL driver reads its own variables
    // when the platform is first queried, on this thread).
    unsafe { std::env::set_var("CLGROUPS_DEVICE", selector) };
}
