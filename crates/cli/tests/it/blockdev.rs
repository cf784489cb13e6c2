//! Block devices (loop devices here): read-only by default, written only when handed over
//! with --allow-overwrite, and never when they carry a filesystem signature.

use crate::common::*;

#[test]
fn block_device_rules() {
    let (_g, d) = root_test(heavy);
    let img = d.path().join("disk.img");
    std::fs::write(&img, vec![0u8; 32 << 20]).unwrap();
    let dev = Loop::new(&img);
    let p = dev.0.as_str();

    let v = run_json(&["--target", p, "--ios", "500"]);
    assert_eq!(v["targets"][0]["kind"], "block");
    assert_eq!(v["targets"][0]["size"], 32 << 20);

    // The loop device and the disk under its image each get a row of their own.
    let v = run_json(&["--target", p, "--time", "1s"]);
    let h = &v["hardware"];
    let disk = h["disks"][0].as_str().expect("the disk under the image");
    let loop_name = p.trim_start_matches("/dev/");
    assert_ne!(disk, loop_name);
    let rows = h["devices"].as_array().expect("per-device rows");
    let row = |n: &str| rows.iter().find(|r| r["name"] == n);
    let lr = row(loop_name).unwrap_or_else(|| panic!("no {loop_name} row: {h}"));
    assert!(row(disk).is_some(), "no {disk} row: {h}");
    let issued = f(&v["summary"]["read"]["iops"]);
    let done = f(&lr["r_s"]);
    assert!(
        (done - issued).abs() <= 0.05 * issued + 5.0,
        "{loop_name} r/s {done} vs {issued}"
    );
    // Through a symlink (/dev/disk/by-id/…, /dev/mapper/…): the kernel's name all the same,
    // so the device figures are the loop device's.
    let link = d.path().join("by-id-link");
    std::os::unix::fs::symlink(p, &link).unwrap();
    let v = run_json(&["--target", link.to_str().unwrap(), "--time", "500ms"]);
    assert_eq!(v["targets"][0]["device"], loop_name);
    let rows = v["hardware"]["devices"]
        .as_array()
        .expect("per-device rows");
    assert!(
        rows.iter()
            .any(|r| r["name"] == loop_name && f(&r["r_s"]) > 0.0),
        "{}",
        v["hardware"]
    );

    let out = bin()
        .args(["run", "--target", p, "--time", "500ms"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("*{loop_name} ")) && text.contains(&format!(" {disk} ")),
        "{text}"
    );

    let err = run_fails(&["--target", p, "--rw", "randwrite", "--ios", "10"], 2);
    assert!(
        err.contains("--allow-overwrite") && err.contains(p),
        "{err}"
    );
    assert!(
        std::fs::read(&img).unwrap().iter().all(|&b| b == 0),
        "refused run wrote to the device"
    );

    let v = run_json(&[
        "--target",
        p,
        "--rw",
        "randwrite",
        "--ios",
        "500",
        "--allow-overwrite",
    ]);
    assert_eq!(u(&v["summary"]["write"]["ios"]), 500);

    sh(&format!("mkfs.ext4 -q -F {p}"));
    let err = run_fails(
        &[
            "--target",
            p,
            "--rw",
            "randwrite",
            "--ios",
            "10",
            "--allow-overwrite",
        ],
        2,
    );
    assert!(err.contains("an ext4 filesystem"), "{err}");
    // Reading a device with a filesystem is fine.
    run_json(&["--target", p, "--ios", "100"]);
}

/// A file on btrfs raid1 over two loop devices: btrfs gives it no block device of its own, so
/// the run finds the filesystem's members (the mount in mountinfo, /sys/fs/btrfs) and samples
/// both; each member completes the writes, a copy each (needs mkfs.btrfs, which the test
/// command installs).
#[test]
fn a_file_on_btrfs_over_two_devices_is_sampled_on_both() {
    let (_g, d) = root_test(heavy);
    let img = |n: &str| {
        let p = d.path().join(n);
        sh(&format!("truncate -s 512m '{}'", p.display()));
        p
    };
    let (a, b) = (Loop::new(&img("a.img")), Loop::new(&img("b.img")));
    sh(&format!(
        "mkfs.btrfs -q -f -d raid1 -m raid1 {} {}",
        a.0, b.0
    ));
    let mnt = d.path().join("fs");
    std::fs::create_dir_all(&mnt).unwrap();
    sh(&format!("mount {} '{}'", a.0, mnt.display()));
    let _m = Mount(mnt.clone());
    let file = mnt.join("f");
    let v = run_on(&file, "32m", &["--rw", "randwrite", "--time", "1s"]);
    let rows = v["hardware"]["devices"]
        .as_array()
        .expect("per-device rows");
    let writes = |dev: &str| -> f64 {
        let n = dev.trim_start_matches("/dev/");
        let r = rows.iter().find(|r| r["name"] == n);
        f(&r.unwrap_or_else(|| panic!("no {n} row: {rows:?}"))["w_s"])
    };
    let issued = f(&v["summary"]["write"]["iops"]);
    for m in [&a.0, &b.0] {
        assert!(writes(m) > 0.5 * issued, "{m}: {} of {issued}", writes(m));
    }
}
