//! Targets and devices (issue #14, rows 1, 2, 13, 14, 15, 18, 19): signatures found by
//! libblkid on real loop devices, one file reached by two paths, output paths that are
//! files, scratch and /proc paths, a cache flush larger than the span, a hot range past it.
//! Every refusal is exit 2 with one `error:` line, and leaves the bytes it refused alone.

use crate::common::*;
use std::path::{Path, PathBuf};

mod md;
use std::process::Command;
use std::time::{Duration, Instant};

/// A zero-filled image of `mib` MiB.
pub(super) fn image(dir: &Path, name: &str, mib: u64) -> PathBuf {
    let p = dir.join(name);
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(mib << 20).unwrap();
    p
}

/// `blkid -p -o export DEV`: what util-linux's own tool (the same libblkid) says is on it,
/// so each fixture is checked by the real library before iogauge is tried on it.
fn blkid_p(dev: &str) -> String {
    let out = Command::new("blkid")
        .args(["-p", "-o", "export", dev])
        .output()
        .expect("blkid (util-linux) is installed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Hands the device over for random writes; it must be refused (exit 2, one line naming
/// `what` and libblkid) with not one byte of the image changed.
pub(super) fn refused_untouched(img: &Path, blkid_says: &[&str], what: &str) {
    require_root();
    let before = std::fs::read(img).unwrap();
    {
        let dev = Loop::new(img);
        let probe = blkid_p(&dev.0);
        for s in blkid_says {
            assert!(
                probe.contains(s),
                "fixture: blkid -p says {probe:?}, want {s}"
            );
        }
        let err = run_fails(
            &[
                "--target",
                &dev.0,
                "--rw",
                "randwrite",
                "--time",
                "1s",
                "--allow-overwrite",
            ],
            2,
        );
        assert!(err.contains(&dev.0), "{err}");
        assert!(err.contains(what), "want {what:?} in {err}");
        assert!(err.contains("found by libblkid"), "{err}");
        assert!(err.contains("wipefs -a"), "{err}");
        // Reading needs no check: a device with data on it may be measured read-only.
        run_json(&["--target", &dev.0, "--ios", "200"]);
    }
    // Detached: every write that reached the device is in the image now.
    let after = std::fs::read(img).unwrap();
    assert!(
        before == after,
        "the refused run changed the device's bytes"
    );
}

fn sh_ok(cmd: &str) {
    let out = Command::new("sh").arg("-c").arg(cmd).output().expect("sh");
    assert_ran(&out, &format!("`{cmd}`"));
}

// Row 1: mkfs.vfat -F 32 on the device, which the table of offsets 0 and 4096 missed.
#[test]
fn vfat_device_is_refused_and_untouched() {
    let _g = shared();
    let d = workdir();
    let img = image(d.path(), "vfat.img", 64);
    sh_ok(&format!("mkfs.vfat -F 32 '{}'", img.display()));
    refused_untouched(&img, &["TYPE=vfat"], "a vfat filesystem");
}

// Row 1: ext4, which the old table knew; libblkid must too.
#[test]
fn ext4_device_is_refused_and_untouched() {
    let _g = shared();
    let d = workdir();
    let img = image(d.path(), "ext4.img", 64);
    sh_ok(&format!("mkfs.ext4 -q -F '{}'", img.display()));
    refused_untouched(&img, &["TYPE=ext4"], "an ext4 filesystem");
}

// Row 1: a GPT partition table (primary header, backup header at the end, protective MBR).
#[test]
fn gpt_partition_table_is_refused_and_untouched() {
    let _g = shared();
    let d = workdir();
    let img = image(d.path(), "gpt.img", 64);
    sh_ok(&format!(
        "printf 'label: gpt\\n,16M\\n' | sfdisk -q '{}'",
        img.display()
    ));
    let backup = (64u64 << 20) - 512;
    refused_untouched(
        &img,
        &["PTTYPE=gpt"],
        &format!("a gpt partition table (at bytes 512, {backup})"),
    );
}

// Row 1: a GPT whose first MiB was overwritten: only the backup header at the end is left.
#[test]
fn gpt_backup_header_alone_is_refused() {
    let _g = shared();
    let d = workdir();
    let img = image(d.path(), "gpt-tail.img", 64);
    sh_ok(&format!(
        "printf 'label: gpt\\n,16M\\n' | sfdisk -q '{0}' && dd if=/dev/zero of='{0}' bs=1M count=1 conv=notrunc status=none",
        img.display()
    ));
    let backup = (64u64 << 20) - 512;
    refused_untouched(
        &img,
        &[],
        &format!("a gpt partition table (at byte {backup})"),
    );
}

// Row 1: an MBR (dos) partition table.
#[test]
fn mbr_partition_table_is_refused_and_untouched() {
    let _g = shared();
    let d = workdir();
    let img = image(d.path(), "mbr.img", 64);
    sh_ok(&format!(
        "printf 'label: dos\\n,16M\\n' | sfdisk -q '{}'",
        img.display()
    ));
    refused_untouched(&img, &["PTTYPE=dos"], "a dos (MBR) partition table");
}

// Rows 1-2, the other side: a device without signatures is written when handed over, so the
// probe refuses what it finds, not everything.
#[test]
fn blank_device_is_written_when_handed_over() {
    let (_g, d) = root_test(shared);
    let img = image(d.path(), "blank.img", 32);
    let dev = Loop::new(&img);
    let v = run_json(&[
        "--target",
        &dev.0,
        "--rw",
        "randwrite",
        "--ios",
        "200",
        "--allow-overwrite",
    ]);
    assert_eq!(u(&v["summary"]["write"]["ios"]), 200);
}

/// `iogauge ARGS` run in `dir`: exit `code`, one `error:` line, returned.
fn fails_in(dir: &Path, args: &[&str], code: i32) -> String {
    let out = bin().current_dir(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error:"), "{err}");
    err
}

/// Both orders of `a`, `b` as targets, with and without a mirror: refused, naming both.
fn same_target_refused(dir: &Path, a: &str, b: &str) {
    for layout in [&[][..], &["--layout", "mirror:2"][..]] {
        let targets = format!("{a},{b}");
        let mut args = vec!["run", "--target", &targets, "--size", "4m", "--ios", "10"];
        args.extend_from_slice(layout);
        let err = fails_in(dir, &args, 2);
        assert!(
            err.contains(&format!("--target {a} and --target {b}")) && err.contains("same"),
            "{err}"
        );
    }
}

// Row 13: a symlink to another target is the same file.
#[test]
fn symlinked_target_twice_is_refused() {
    let _g = shared();
    let d = workdir();
    let data = d.path().join("data");
    let alias = d.path().join("alias");
    std::fs::write(&data, vec![0u8; 4 << 20]).unwrap();
    std::os::unix::fs::symlink(&data, &alias).unwrap();
    same_target_refused(d.path(), "data", "alias");
    // A link to a file iogauge would create: once the first is made, the second is it.
    std::os::unix::fs::symlink("sub/../new", d.path().join("new-alias")).unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    same_target_refused(d.path(), "new", "new-alias");
    assert!(
        !d.path().join("new").exists(),
        "a refused run created its target"
    );
}

// Row 13: a hard link is the same inode under another name.
#[test]
fn hard_linked_target_twice_is_refused() {
    let _g = shared();
    let d = workdir();
    let data = d.path().join("data");
    std::fs::write(&data, vec![0u8; 4 << 20]).unwrap();
    std::fs::hard_link(&data, d.path().join("link")).unwrap();
    same_target_refused(d.path(), "data", "link");
}

// Row 13: `./x` and its absolute path, whether x exists or iogauge would create it.
#[test]
fn relative_and_absolute_path_of_one_file_are_refused() {
    let _g = shared();
    let d = workdir();
    let abs = d.path().join("x");
    same_target_refused(d.path(), "./x", abs.to_str().unwrap());
    assert!(!abs.exists(), "a refused run created its target");
    std::fs::write(&abs, vec![0u8; 4 << 20]).unwrap();
    same_target_refused(d.path(), "./x", abs.to_str().unwrap());
}

// Row 13: one block device through two names (as /dev/disk/by-id/… links are).
#[test]
fn one_block_device_twice_is_refused() {
    let (_g, d) = root_test(shared);
    let img = image(d.path(), "dev.img", 16);
    let dev = Loop::new(&img);
    let link = d.path().join("by-id");
    std::os::unix::fs::symlink(&dev.0, &link).unwrap();
    let targets = format!("{},{}", dev.0, link.display());
    let err = run_fails(&["--target", &targets, "--ios", "10"], 2);
    assert!(
        err.contains(&dev.0) && err.contains(link.to_str().unwrap()),
        "{err}"
    );
    assert!(err.contains("same block device"), "{err}");
}

// Row 14: --csv naming an existing file fails before any measurement, the file untouched.
#[test]
fn calibrate_csv_onto_an_existing_file_fails_before_measuring() {
    let _g = shared();
    let d = workdir();
    let csv = d.path().join("results.csv");
    std::fs::write(&csv, "mine\n").unwrap();
    let target = d.path().join("t");
    let t0 = Instant::now();
    let err = fails(
        &[
            "calibrate",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "64m",
            "--matrix",
            "--csv",
            csv.to_str().unwrap(),
        ],
        2,
    );
    assert!(t0.elapsed() < Duration::from_secs(5), "measured first");
    assert!(
        err.contains("--csv") && err.contains("not a directory"),
        "{err}"
    );
    assert!(
        !target.exists(),
        "the target was created before the refusal"
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "mine\n");
}

// Row 15: ./iogauge-scratch is a file: no --target means the scratch directory, refused.
#[test]
fn scratch_path_that_is_a_file_is_refused() {
    let _g = shared();
    let d = workdir();
    let scratch = d.path().join("iogauge-scratch");
    std::fs::write(&scratch, "not a directory\n").unwrap();
    let err = fails_in(d.path(), &["run", "--time", "1s"], 2);
    assert!(
        err.contains("iogauge-scratch") && err.contains("--target"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&scratch).unwrap(),
        "not a directory\n"
    );
}

// Row 15: a file where none can be made (/proc): exit 2, the OS error said once.
#[test]
fn target_in_proc_is_refused_in_one_line() {
    let _g = shared();
    let err = run_fails(
        &[
            "--target",
            "/proc/iogauge-newfile",
            "--size",
            "4m",
            "--time",
            "1s",
        ],
        2,
    );
    assert!(err.contains("/proc/iogauge-newfile"), "{err}");
    // Refused before any attempt since issue #25 row 20 (the kernel's filesystems are never
    // targets), so no OS error at all; never one repeated.
    assert!(err.contains("proc is the kernel's interface"), "{err}");
    assert!(
        err.matches("os error").count() <= 1,
        "OS error repeated: {err}"
    );
    assert!(!Path::new("/proc/iogauge-newfile").exists());
}

// Row 18: --cache-size far above the span: the flush reads the span, not a TiB per point,
// and the user is told once.
#[test]
fn cache_flush_is_capped_to_the_tested_span() {
    let _g = heavy();
    let d = workdir();
    let target = d.path().join("t");
    let (out, err) = (d.path().join("out"), d.path().join("err"));
    let mut child = command()
        .args([
            "calibrate",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "64m",
        ])
        .args(["--point-time", "500ms", "--max-latency", "50ms"])
        .args(["--cache-size", "1t", "--json"])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    // Uncapped, every point read 1 TiB first: hours. Capped, 64 MiB: seconds.
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("calibrate still running after 180 s: the flush is not capped");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let err = std::fs::read_to_string(&err).unwrap();
    assert!(status.success(), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("--cache-size")).collect();
    assert_eq!(notes.len(), 1, "said once: {err}");
    assert!(notes[0].contains("1t") && notes[0].contains("64m"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(f(&v["max_iops"]) > 0.0, "{v}");
}

// Row 19: a hot range past the end of the span is refused, naming --dist, range and span.
#[test]
fn hotspot_past_the_span_is_refused() {
    let _g = shared();
    let d = workdir();
    let target = d.path().join("t");
    let t = target.to_str().unwrap();
    let err = run_fails(
        &[
            "--target",
            t,
            "--size",
            "64m",
            "--dist",
            "hotspot:64m@63m:4",
            "--time",
            "1s",
        ],
        2,
    );
    assert!(
        err.contains("--dist hotspot:64m@63m:4")
            && err.contains("63m..127m")
            && err.contains("64m"),
        "{err}"
    );
    // Refused before the target was made (#46: checked on the targets as they will be).
    assert!(!target.exists(), "the refused run created its target");
    // Inside the span (ending exactly at its end) it runs.
    let v = run_json(&[
        "--target",
        t,
        "--size",
        "64m",
        "--dist",
        "hotspot:16m@48m:4",
        "--ios",
        "400",
    ]);
    assert_eq!(u(&v["summary"]["read"]["ios"]), 400);
    // The span is the region, not the file: the same range past a half region is refused.
    let err = run_fails(
        &[
            "--target",
            t,
            "--region",
            "0%..50%",
            "--dist",
            "hotspot:16m@24m:4",
            "--time",
            "1s",
        ],
        2,
    );
    assert!(err.contains("32m"), "{err}");
}

// Row 19 under a layout: a mirror of two 64 MiB members holds 64 MiB, so a hot range that
// fits the members laid end to end (128 MiB) but not the mirror is refused as well.
#[test]
fn hotspot_past_a_mirrors_span_is_refused() {
    let _g = shared();
    let d = workdir();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let targets = format!("{},{}", a.display(), b.display());
    let err = run_fails(
        &[
            "--target",
            &targets,
            "--size",
            "64m",
            "--layout",
            "mirror:2",
            "--dist",
            "hotspot:48m@32m:4",
            "--time",
            "1s",
        ],
        2,
    );
    assert!(
        err.contains("--dist hotspot:48m@32m:4") && err.contains("32m..80m") && err.contains("64m"),
        "{err}"
    );
}
