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
use iogauge_model::system::Snapshot;
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

/// Starts fio with `args`, waits 1.5 s for its load to settle and checks it is still running.
fn start_fio(args: &[&str]) -> Reap {
    let fio = Command::new("fio")
        .args(args)
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
    fio
}

impl Reap {
    fn still_running(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none()
    }
}

/// Runs `iostat -x -y -d DEVS 1 REPORTS` between two snapshots of `sampler` (see the module
/// comment on alignment): the snapshot before, the one after, and iostat's text.
fn measure(sampler: &Sampler, devs: &[&str]) -> (Snapshot, Snapshot, String) {
    let clock = Instant::now();
    let iostat = Command::new("iostat")
        .args(["-x", "-y", "-d"])
        .args(devs)
        .args(["1", &REPORTS.to_string()])
        .env("LC_ALL", "C")
        .env_remove("S_COLORS")
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting iostat");
    let before = sampler.sample(clock.elapsed().as_nanos() as u64).unwrap();
    let out = iostat.wait_with_output().unwrap();
    let after = sampler.sample(clock.elapsed().as_nanos() as u64).unwrap();
    assert!(out.status.success(), "iostat failed: {}", out.status);
    (before, after, String::from_utf8(out.stdout).unwrap())
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

    let mut fio = start_fio(&[
        "--name=x",
        "--size=512m",
        "--rw=randrw",
        "--rwmixread=70",
        "--bs=8k",
        "--iodepth=16",
        "--ioengine=io_uring",
        "--direct=1",
        "--time_based",
        "--runtime=8",
        &format!("--filename={}", file.display()),
    ]);
    let (before, after, text) = measure(&Sampler::new(Some(vec![dev.clone()])), &[&dev]);
    assert!(
        fio.still_running(),
        "fio finished before iostat did: the load did not cover the measurement"
    );
    drop(fio);
    let _ = std::fs::remove_dir_all(&dir);

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

/// A loop device over a file, detached when dropped.
struct LoopDev {
    /// Kernel name, `loop3`.
    name: String,
}

impl LoopDev {
    /// `losetup -f --show FILE` (root). The block layer merges requests on it unless the
    /// queue's `nomerges` says not to, which some kernels set for a loop device in buffered
    /// mode: it is cleared here.
    fn attach(file: &Path) -> LoopDev {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output()
            .expect("losetup not runnable: this test needs util-linux");
        assert!(
            out.status.success(),
            "losetup -f --show {} failed (this test needs root for a loop device): {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let path = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let name = path.trim_start_matches("/dev/").to_string();
        let dev = LoopDev { name };
        std::fs::write(format!("/sys/block/{}/queue/nomerges", dev.name), "0")
            .expect("enabling merges on the loop device");
        dev
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup")
            .args(["-d", &format!("/dev/{}", self.name)])
            .status();
    }
}

/// iostat's merge columns (rrqm/s, wrqm/s, %rrqm, %wrqm) against the sampler's, within
/// 0.5%, under a load the block layer merges deterministically: on a loop device, one
/// sequential reader and one sequential writer of 4 KiB O_DIRECT blocks, each submitting
/// 16 at once (libaio, one io_submit, which plugs the queue, so 15 of every 16 are merged
/// into the first whatever the I/O scheduler) and pausing 2 ms after every 16; about 7000
/// merges a second each way at little CPU. A virtio disk's own merges are sporadic, so a
/// ratio of their tiny counts would be noise.
///
/// Error budget: iostat divides by intervals read from /proc/uptime in hundredths of a
/// second; the four intervals' rounding telescopes to at most 10 ms over the ~4 s span, so
/// the mean of its four rates is off by at most 0.25% for a steady load; the few ms by which
/// the two windows' ends differ cost a handful of 16-block requests out of ~1800. The
/// percentages are ratios of counts within one window, weighted by each second's requests
/// asked for (Σ %rrqm·(rrqm/s + r/s) / Σ (rrqm/s + r/s) = Δmerged / (Δmerged + Δreads)),
/// so timing drops out of them.
#[test]
fn merges_match_iostat_on_a_loop_device() {
    require("fio", "--version");
    require("iostat", "-V");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("iostat-merges-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let backing = dir.join("loop-backing");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let lo = LoopDev::attach(&backing);
    let dev = lo.name.clone();

    let mut fio = start_fio(&[
        "--ioengine=libaio",
        "--direct=1",
        "--bs=4k",
        "--iodepth=16",
        "--iodepth_batch_submit=16",
        "--iodepth_batch_complete_min=16",
        "--thinktime=2000",
        "--thinktime_blocks=16",
        "--time_based",
        "--runtime=8",
        &format!("--filename=/dev/{dev}"),
        "--name=r",
        "--rw=read",
        "--size=32m",
        "--name=w",
        "--rw=write",
        "--offset=32m",
        "--size=32m",
    ]);
    let (before, after, text) = measure(&Sampler::new(Some(vec![dev.clone()])), &[&dev]);
    assert!(
        fio.still_running(),
        "fio finished before iostat did: the load did not cover the measurement"
    );
    drop(fio);
    drop(lo);
    let _ = std::fs::remove_dir_all(&dir);

    let reports = parse_iostat(&text, &dev);
    assert_eq!(reports.len(), REPORTS, "iostat output:\n{text}");
    let ours: DiskRates = derive(&before, &after)
        .disks
        .remove(&dev)
        .unwrap_or_else(|| panic!("{dev} missing from the snapshots"));
    let mean = |name: &str| reports.iter().map(|r| col(r, name)).sum::<f64>() / REPORTS as f64;
    // Requests asked for in each second: merged ones plus those issued.
    let weighted_pct = |pct: &str, merged: &str, issued: &str| {
        let asked = |r: &[(String, f64)]| col(r, merged) + col(r, issued);
        let total: f64 = reports.iter().map(|r| asked(r)).sum();
        reports.iter().map(|r| col(r, pct) * asked(r)).sum::<f64>() / total
    };
    // (column, iostat, iogauge, absolute tolerance used only when iostat's figure is below 1,
    // i.e. near zero: 0.5/s for rates, 0.05 points for percentages).
    let checks = [
        ("rrqm/s", mean("rrqm/s"), ours.rrqm_s, 0.5),
        ("wrqm/s", mean("wrqm/s"), ours.wrqm_s, 0.5),
        (
            "%rrqm",
            weighted_pct("%rrqm", "rrqm/s", "r/s"),
            ours.rrqm_pct,
            0.05,
        ),
        (
            "%wrqm",
            weighted_pct("%wrqm", "wrqm/s", "w/s"),
            ours.wrqm_pct,
            0.05,
        ),
    ];
    eprintln!(
        "{dev}: iogauge over {:.3} s vs iostat's {REPORTS} reports",
        (after.at_ns - before.at_ns) as f64 / 1e9
    );
    eprintln!(
        "{:>8} {:>12} {:>12} {:>8}",
        "column", "iostat", "iogauge", "diff%"
    );
    let mut bad = Vec::new();
    for (name, theirs, mine, near_zero) in checks {
        let diff = (mine - theirs).abs();
        let pct = diff / theirs.abs().max(f64::MIN_POSITIVE) * 100.0;
        eprintln!("{name:>8} {theirs:>12.3} {mine:>12.3} {pct:>7.3}%");
        let ok = if theirs.abs() < 1.0 {
            diff <= near_zero
        } else {
            diff <= 0.005 * theirs.abs()
        };
        if !ok {
            bad.push(name);
        }
    }
    // The load must have merged in the thousands a second, or the check proves nothing.
    assert!(
        ours.rrqm_s > 1000.0 && ours.wrqm_s > 1000.0,
        "the load on {dev} merged too little to compare: {ours:?}"
    );
    assert!(
        bad.is_empty(),
        "{bad:?} differ by more than 0.5%; iostat said:\n{text}"
    );
}
