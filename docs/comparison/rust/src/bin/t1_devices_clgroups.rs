//! Task 1 with clgroups: every device, its work-group limit and sub-group capabilities.

fn main() -> clgroups::Result<()> {
    let devices = clgroups::devices()?;
    assert!(!devices.is_empty(), "no OpenCL device");
    for d in devices {
        let driver = &d.sub_groups().driver;
        let effective = &d.sub_groups().effective;
        let extensions: Vec<_> = driver
            .extensions
            .iter()
            .filter(|(_, &present)| present)
            .map(|(name, _)| *name)
            .collect();
        assert!(driver.max_work_group_size >= 1);
        println!("{d}");
        println!("  max work-group size  {}", driver.max_work_group_size);
        println!("  max sub-groups       {}", driver.max_num_sub_groups);
        println!("  sub-group extensions {}", extensions.join(" "));
        println!("  Intel sub-group sizes {:?}", driver.sub_group_sizes);
        println!(
            "  clgroups: {} backend, sizes {:?}, primary {}",
            effective.shuffle_backend, effective.sub_group_sizes, effective.primary_sub_group_size
        );
    }
    Ok(())
}
