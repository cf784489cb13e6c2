//! Cross-check of the diskstats sampler against sysstat's `iostat -x` over the same seconds
//! of a real fio load: r/s, w/s, rkB/s, wkB/s, r_await, w_await, aqu-sz and %util of the
//! device behind a file in the target dir must agree within 5% (or 0.5 absolute).
//!
//! Needs root-free O_DIRECT on a block-backed target dir, `fio` with io_uring and `iostat`
//! (sysstat). A missing tool is a failure, not a skip: CI must have both installed.
//!
//! Alignment: `iostat -x -y -d DEV 1 4` reads /proc/diskstats once when it starts (the
//! since-boot report that `-y` hides), then once a second, and exits right after its fourth
//! report. A snapshot is taken as soon as `spawn()` returns (after the exec) and another as
//! soon as iostat has exited, so both tools cover the same ~4 s give or take a few ms. The
//! four one-second rates average to the span's rate; the awaits are averaged weighted by
//! each second's I/O count (Σ r/s·r_await / Σ r/s), which is exactly Δtime/Δios over the
//! span, where a plain mean of ratios would drift whenever the load changes from second to
//! second.

use iogauge_model::derive::{derive, DiskRates};
use iogauge_probe::{backing_device, Sampler};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REPORTS: usize = 4;

/// Kills fio if the test fails half-way.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn require(tool: &str, arg: &str) {
    match Command::new(tool).arg(arg).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "`{tool} {arg}` failed ({}): install fio and sysstat",
            o.status
        ),
        Err(e) => panic!(
            "{tool} not runnable ({e}): this test needs fio and iostat; \
             install them (apt-get install fio sysstat)"
        ),
    }
}

/// A 512 MiB file of non-zero data (thin-provisioned or deduplicating storage would
/// answer reads of never-written or zero blocks without touching the disk).
fn make_target(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("data");
    let mut f = std::fs::File::create(&path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..512 {
        for chunk in buf.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        f.write_all(&buf).unwrap();
    }
    f.sync_all().unwrap();
    path
}

/// The device's rows of `iostat -x` text output, as column name → value per report.
fn parse_iostat(out: &str, dev: &str) -> Vec<Vec<(String, f64)>> {
    let mut header: Option<Vec<String>> = None;
    let mut reports = Vec::new();
    for line in out.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        match cols.first() {
            Some(&"Device" | &"Device:") => {
                header = Some(cols.iter().map(|c| c.to_string()).collect());
            }
            Some(name) if *name == dev => {
                let h = header.as_ref().expect("device row before any header");
                assert_eq!(h.len(), cols.len(), "header {h:?} vs row {line:?}");
                let row = h[1..]
                    .iter()
                    .zip(&cols[1..])
                    .map(|(k, v)| (k.clone(), v.parse().unwrap_or_else(|_| panic!("{line:?}"))))
                    .collect();
                reports.push(row);
            }
            _ => {}
        }
    }
    reports
}

fn col(report: &[(String, f64)], name: &str) -> f64 {
    report
        .iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("iostat printed no {name} column"))
        .1
}

#[test]
fn sampler_matches_iostat_under_fio_load() {
    require("fio", "--version");
    require("iostat", "-V");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("iostat-xcheck-{}", std::process::id()));
    let file = make_target(&dir);
    let dev = backing_device(std::fs::metadata(&file).unwrap().dev())
        .unwrap_or_else(|| panic!("no block device behind {}", file.display()));

    let fio = Command::new("fio")
        .args([
            "--name=x",
            "--size=512m",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=8k",
        ])
        .args([
            "--iodepth=16",
            "--ioengine=io_uring",
            "--direct=1",
            "--time_based",
        ])
        .args(["--runtime=8"])
        .arg(format!("--filename={}", file.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting fio");
    let mut fio = Reap(fio);
    std::thread::sleep(Duration::from_millis(1500));
    if let Some(status) = fio.0.try_wait().unwrap() {
        let mut err = String::new();
        std::io::Read::read_to_string(fio.0.stderr.as_mut().unwrap(), &mut err).unwrap();
        panic!("fio exited early ({status}): {err}");
    }

    let clock = Instant::now();
    let sampler = Sampler::new(Some(vec![dev.clone()]));
    let iostat = Command::new("iostat")
        .args(["-x", "-y", "-d", &dev, "1", &REPORTS.to_string()])
        .env("LC_ALL", "C")
        .env_remove("S_COLORS")
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting iostat");
    let before = sampler.sample(clock.elapsed().as_nanos() as u64).unwrap();
    let out = iostat.wait_with_output().unwrap();
    let after = sampler.sample(clock.elapsed().as_nanos() as u64).unwrap();
    assert!(out.status.success(), "iostat failed: {}", out.status);
    assert!(
        fio.0.try_wait().unwrap().is_none(),
        "fio finished before iostat did: the load did not cover the measurement"
    );
    drop(fio);
    let _ = std::fs::remove_dir_all(&dir);

    let text = String::from_utf8(out.stdout).unwrap();
    let reports = parse_iostat(&text, &dev);
    assert_eq!(reports.len(), REPORTS, "iostat output:\n{text}");
    let ours: DiskRates = derive(&before, &after)
        .disks
        .remove(&dev)
        .unwrap_or_else(|| panic!("{dev} missing from the snapshots"));
    let span_s = (after.at_ns - before.at_ns) as f64 / 1e9;

    let mean = |name: &str| reports.iter().map(|r| col(r, name)).sum::<f64>() / REPORTS as f64;
    let weighted = |name: &str, by: &str| {
        let ios: f64 = reports.iter().map(|r| col(r, by)).sum();
        reports
            .iter()
            .map(|r| col(r, name) * col(r, by))
            .sum::<f64>()
            / ios
    };
    let checks = [
        ("r/s", mean("r/s"), ours.r_s),
        ("w/s", mean("w/s"), ours.w_s),
        ("rkB/s", mean("rkB/s"), ours.r_mb_s * 1024.0),
        ("wkB/s", mean("wkB/s"), ours.w_mb_s * 1024.0),
        ("r_await", weighted("r_await", "r/s"), ours.r_await),
        ("w_await", weighted("w_await", "w/s"), ours.w_await),
        ("aqu-sz", mean("aqu-sz"), ours.aqu_sz),
        ("%util", mean("%util"), ours.util),
    ];
    eprintln!("{dev}: iogauge over {span_s:.3} s vs iostat's {REPORTS} reports");
    eprintln!(
        "{:>8} {:>12} {:>12} {:>8}",
        "column", "iostat", "iogauge", "diff%"
    );
    let mut bad = Vec::new();
    for (name, theirs, mine) in checks {
        let diff = (mine - theirs).abs();
        let pct = if theirs != 0.0 {
            diff / theirs.abs() * 100.0
        } else {
            0.0
        };
        eprintln!("{name:>8} {theirs:>12.2} {mine:>12.2} {pct:>7.2}%");
        if diff > 0.5 && diff > 0.05 * theirs.abs() {
            bad.push(name);
        }
    }
    assert!(
        ours.r_s > 10.0 && ours.w_s > 1.0,
        "no load seen on {dev}: {ours:?}"
    );
    assert!(
        bad.is_empty(),
        "{bad:?} differ by more than 5%; iostat said:\n{text}"
    );
}
