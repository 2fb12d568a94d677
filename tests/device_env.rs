//! `CLGROUPS_DEVICE` (one test per binary: it sets the process environment).

#[test]
fn clgroups_device_selects_and_unknown_names_fail() {
    let all = clgroups::devices().expect("devices");
    let last = all.last().unwrap();
    std::env::set_var(
        "CLGROUPS_DEVICE",
        format!("{}:{}", last.platform_index(), last.device_index()),
    );
    assert_eq!(clgroups::default_device().unwrap().id(), last.id());
    std::env::set_var("CLGROUPS_DEVICE", "definitely-not-a-device");
    let e = clgroups::default_device().unwrap_err();
    assert!(matches!(e, clgroups::Error::NoDevice { .. }), "{e}");
    assert!(e.to_string().contains(last.name()), "{e}");
    std::env::set_var("CLGROUPS_DEVICE", "cpu");
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
