//! Per-layer latency from the kernel's block tracepoints, on real devices: the requests the
//! tracer counts are the completions /proc/diskstats counts; its queue and device medians
//! agree with bpftrace's on the same tracepoints (bcc biolatency's method, an independent
//! implementation); at QD 1 the kernel's time for the job's io_uring I/Os holds all of the
//! application's latency but iogauge's own few µs, and the block stages most of it; many
//! readers of a loop device with few requests wait before the device where one reader does
//! not; and above the rate the tracer times every request, the sample it times still agrees.

mod bpftrace;

use crate::common::*;
use bpftrace::{median, Bpftrace, Seen};
use iogauge_model::layers::{LayerCounters, RingCounters, StageHist};
use serde_json::Value;

/// A disk's `dev_t` as the block tracepoints print it (MKDEV: major << 20 | minor).
fn dev_t(disk: &str) -> u32 {
    let text = std::fs::read_to_string(format!("/sys/block/{disk}/dev")).unwrap();
    let (ma, mi) = text.trim().split_once(':').unwrap();
    (ma.parse::<u32>().unwrap() << 20) | mi.parse::<u32>().unwrap()
}

/// One disk's reads over a run: the tracer's counters between the run's first and last
/// samples, and the reads /proc/diskstats completed between the same two samples.
struct Reads {
    requests: u64,
    diskstats: u64,
    /// The most requests one timed request stood for in any snapshot (1: all were timed).
    timed_one_in: u32,
    pre_queue: StageHist,
    queue: StageHist,
    device: StageHist,
}

fn reads_of(doc: &Value, disk: &str) -> Reads {
    let samples = doc["samples"].as_array().expect("samples");
    assert!(samples.len() >= 2, "{} samples", samples.len());
    let (a, b) = (&samples[0], &samples[samples.len() - 1]);
    let layers = |s: &Value| -> LayerCounters {
        let l = s["layers"].as_array().unwrap_or_else(|| {
            panic!(
                "no layers in a snapshot: tracer not running? {}",
                doc["warnings"]
            )
        });
        let l = l
            .iter()
            .find(|l| l["name"] == disk)
            .expect("the disk's layers");
        serde_json::from_value(l.clone()).unwrap()
    };
    let disk_reads = |s: &Value| {
        let d = s["disks"].as_array().unwrap();
        u(&d.iter().find(|d| d["name"] == disk).expect("disk row")["reads"])
    };
    let all: Vec<LayerCounters> = samples.iter().map(layers).collect();
    let (la, lb) = (&all[0], &all[all.len() - 1]);
    let stage = |f: fn(&LayerCounters) -> &StageHist| span(&all, f);
    Reads {
        requests: lb.read.requests - la.read.requests,
        diskstats: disk_reads(b) - disk_reads(a),
        timed_one_in: all.iter().filter_map(|l| l.timed_one_in).max().unwrap_or(1),
        pre_queue: stage(|l| &l.read.pre_queue),
        queue: stage(|l| &l.read.queue),
        device: stage(|l| &l.read.device),
    }
}

/// One stage from the first of `snapshots` to the last: counts by difference, the buckets of
/// every snapshot after the first (each keeps its own interval's).
fn span<T>(snapshots: &[T], stage: impl Fn(&T) -> &StageHist) -> StageHist {
    let (first, rest) = snapshots.split_first().expect("snapshots");
    let last = rest.last().expect("two snapshots");
    let mut h = stage(last).after(stage(first));
    for s in &rest[..rest.len() - 1] {
        h.add_buckets(stage(s));
    }
    h
}

/// The job's io_uring reads between the run's first and last samples (`Snapshot::ring`).
fn ring_reads(doc: &Value) -> StageHist {
    let samples = doc["samples"].as_array().expect("samples");
    let ring = |s: &Value| -> RingCounters {
        serde_json::from_value(s["ring"].clone())
            .unwrap_or_else(|e| panic!("no io_uring figures in a snapshot ({e}): {}", s["ring"]))
    };
    let all: Vec<RingCounters> = samples.iter().map(ring).collect();
    span(&all, |r| &r.read)
}

fn p50_us(h: &StageHist) -> f64 {
    h.quantile_ns(0.5).expect("requests in the stage") / 1e3
}

/// The tracer counted what /proc/diskstats completed, within the requests in flight at the
/// two samples' slightly different instants (the job's and other processes': the disk is
/// shared) and 3%. Seen: up to 0.7% fewer traced on a loop device at QD 1, and on some days
/// up to 2.3% fewer with 32 readers: the completion program then runs fewer times than the
/// kernel completes requests (its own run count says so, with no recursion miss counted),
/// a loss not explained yet (the book's per-layer latency chapter). The stages' counts, timed for 1
/// request in `timed_one_in` each counting as many, estimate the same requests: exactly when
/// all were timed, within 5% when a sample was.
fn agrees_with_diskstats(r: &Reads, qd: u64) {
    let slack = 2 * qd + 8 + 3 * r.diskstats / 100;
    assert!(
        r.requests.abs_diff(r.diskstats) <= slack,
        "traced {} reads, /proc/diskstats {}",
        r.requests,
        r.diskstats
    );
    assert!(r.requests > 1000, "{} reads traced", r.requests);
    let sampled = if r.timed_one_in > 1 {
        r.requests / 20
    } else {
        0
    };
    assert!(
        r.device.count.abs_diff(r.requests) <= slack + sampled,
        "{} reads estimated from those timed (1 in {}), {} counted",
        r.device.count,
        r.timed_one_in,
        r.requests
    );
    // Every request that completed was issued and has a queue stage.
    assert!(
        r.queue.count.abs_diff(r.device.count) <= slack + sampled,
        "{} issued, {} completed; pre-queue {}",
        r.queue.count,
        r.device.count,
        r.pre_queue.count
    );
}

/// iogauge's median within 5% of bpftrace's (or `floor_us`, for medians of a few µs: the
/// two instruments' own run times on the same tracepoints, 1-2 µs here, are more).
fn agree(what: &str, ours_us: f64, theirs: Vec<u64>, floor_us: f64) {
    let theirs_us = median(&theirs) / 1e3;
    let gap = (ours_us - theirs_us).abs();
    assert!(
        gap <= (0.05 * theirs_us).max(floor_us),
        "{what}: iogauge median {ours_us:.2} µs, bpftrace {theirs_us:.2} µs"
    );
    eprintln!("{what}: iogauge median {ours_us:.2} µs, bpftrace {theirs_us:.2} µs");
}

/// A measured run with bpftrace on `disk` beside it, attached (its BEGIN probe fired) before
/// the run starts, so both instruments see the same requests. bpftrace's handlers run before
/// the tracer's on each tracepoint (a tracepoint runs its programs in the order they
/// attached): their cost shifts both ends of a stage alike.
fn run_beside_bpftrace(dir: &std::path::Path, disk: &str, args: &[&str]) -> (Value, Seen) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--json");
    let bt = Bpftrace::start(dir, dev_t(disk));
    let child = spawn(&all);
    let out = child.wait_with_output().expect("iogauge run");
    let seen = bt.stop();
    assert_ran(&out, &format!("iogauge {all:?}"));
    let doc = serde_json::from_slice(&out.stdout).expect("JSON");
    (doc, seen)
}

#[test]
fn on_the_vm_disk_the_layers_agree_with_diskstats_bpftrace_and_the_app() {
    let (_g, d) = root_test(exclusive);
    let t = d.path().join("data");
    let t = t.to_str().unwrap();
    // Created and filled first, so the measured run reads only.
    let first = run_json(&["--target", t, "--size", "256m", "--ios", "100"]);
    let disk = first["targets"][0]["device"]
        .as_str()
        .expect("the disk under the target");
    let args = [
        "--target", t, "--size", "256m", "--bs", "4k", "--qd", "1", "--time", "6s",
    ];
    let (doc, seen) = run_beside_bpftrace(d.path(), disk, &args);
    let r = reads_of(&doc, disk);
    agrees_with_diskstats(&r, 1);
    // The queue's size is recorded with its layers (the full-queue finding reads it).
    let nr = std::fs::read_to_string(format!("/sys/block/{disk}/queue/nr_requests")).unwrap();
    let last = &doc["samples"][doc["samples"].as_array().unwrap().len() - 1]["layers"];
    let mine = last
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == disk)
        .unwrap();
    assert_eq!(mine["nr_requests"].to_string(), nr.trim(), "{mine}");
    agree("vda device (QD 1)", p50_us(&r.device), seen.device, 0.0);
    agree("vda queue (QD 1)", p50_us(&r.queue), seen.queue, 1.5);

    // The layers add up to what the application waited. The kernel's time for the job's
    // io_uring reads (submit → completion posted) is all of it but iogauge's own time: within
    // 5% at the median. The block stages are most of it; the rest of the kernel's time is
    // its submit path (system call, io_uring, filesystem) and the completion's wake-up,
    // which no block tracepoint sees (measured here: 75-90% of the application's p50).
    let layers = p50_us(&r.pre_queue) + p50_us(&r.queue) + p50_us(&r.device);
    let app = f(&doc["summary"]["read"]["lat_us"]["p50"]);
    let kernel = p50_us(&ring_reads(&doc));
    eprintln!(
        "vda QD 1: application p50 {app:.1} µs, kernel (io_uring) {kernel:.1} µs, block stages {layers:.1} µs"
    );
    assert!(
        kernel >= 0.95 * app && kernel <= 1.03 * app,
        "the kernel's {kernel:.1} µs vs the application's p50 {app:.1} µs"
    );
    assert!(
        layers <= 1.03 * kernel && layers >= 0.6 * kernel,
        "pre-queue {:.1} + queue {:.1} + device {:.1} = {layers:.1} µs vs the kernel's {kernel:.1} µs",
        p50_us(&r.pre_queue),
        p50_us(&r.queue),
        p50_us(&r.device)
    );
    // Plausible: a virtual disk's read takes µs to ms; the kernel's own stages far less.
    assert!(
        (5.0..50_000.0).contains(&p50_us(&r.device)),
        "{}",
        p50_us(&r.device)
    );
    assert!(p50_us(&r.pre_queue) < p50_us(&r.device));
}

/// A psync job of `workers` threads, one read in flight each, on `p`.
fn psync<'a>(p: &'a str, workers: &'a str, time: &'a str, bs: &'a str) -> [&'a str; 12] {
    [
        "--target",
        p,
        "--engine",
        "psync",
        "--workers",
        workers,
        "--qd",
        "1",
        "--bs",
        bs,
        "--time",
        time,
    ]
}

/// 32 synchronous readers on a slow loop device ([`SlowDevice`]) with 4 requests: a bio waits
/// for a free request (`pre_queue`, btt's Q2G) while 4 are on the device; one reader never
/// waits. (io_uring at QD 32 does not show it here: a submission that finds no free request
/// is retried by io_uring's workers, and the wait happens before `block_bio_queue`.)
#[test]
fn a_deep_queue_on_a_loop_device_with_few_requests_waits_before_the_device() {
    let (_g, d) = root_test(exclusive);
    let dev = SlowDevice::new(d.path(), 4);
    let (p, name) = (dev.path(), dev.name());
    let shallow = run_json(&psync(p, "1", "2s", "4k"));
    let qd1 = reads_of(&shallow, name);
    agrees_with_diskstats(&qd1, 1);

    let args = psync(p, "32", "5s", "4k");
    let (deep, seen) = run_beside_bpftrace(d.path(), name, &args);
    let qd32 = reads_of(&deep, name);
    agrees_with_diskstats(&qd32, 32);
    agree(
        "loop queue (32 readers)",
        p50_us(&qd32.queue),
        seen.queue.clone(),
        2.5,
    );
    agree(
        "loop device (32 readers)",
        p50_us(&qd32.device),
        seen.device,
        0.0,
    );
    // Means, not medians: the throttle's bursts move a median between runs, while 32 readers
    // on a device held to 2,000 reads/s with 4 requests wait 16 ms an I/O on average, 2 ms of
    // them on the device (Little's law), whatever the bursts.
    let mean_us = |h: &StageHist| h.mean_ns().unwrap_or(0.0) / 1e3;
    let q2d = |r: &Reads| mean_us(&r.pre_queue) + mean_us(&r.queue);
    let (shallow_q2d, deep_q2d, device) = (q2d(&qd1), q2d(&qd32), mean_us(&qd32.device));
    eprintln!(
        "loop Q2D mean: 1 reader {shallow_q2d:.1} µs, 32 readers {deep_q2d:.1} µs (device {device:.1} µs)"
    );
    assert!(
        shallow_q2d < 50.0,
        "1 reader waited {shallow_q2d} µs before the device"
    );
    assert!(
        deep_q2d > 10.0 * shallow_q2d && deep_q2d > 2.0 * device,
        "32 readers over 4 requests: Q2D {deep_q2d} µs, device {device} µs, 1 reader {shallow_q2d} µs"
    );
}

/// The cross-check on a loop device: one reader on a loop device over an image on the
/// VM's disk (direct I/O, so each read reaches the disk), bpftrace beside it.
#[test]
fn on_a_loop_device_the_layers_agree_with_bpftrace() {
    let (_g, d) = root_test(exclusive);
    let dev = Loop::direct(&d.path().join("plain.img"), 64);
    let name = dev.0.trim_start_matches("/dev/");
    let (doc, seen) = run_beside_bpftrace(d.path(), name, &psync(&dev.0, "1", "4s", "4k"));
    let r = reads_of(&doc, name);
    agrees_with_diskstats(&r, 1);
    // bpftrace runs a moment longer than the run's first and last samples. (iogauge counts
    // every request, whichever it times.)
    let (ours, theirs) = (r.requests, seen.device.len() as u64);
    assert!(
        ours.abs_diff(theirs) <= 8 + theirs / 1000,
        "both instruments saw every read: iogauge {ours}, bpftrace {theirs}"
    );
    agree("loop device (QD 1)", p50_us(&r.device), seen.device, 0.0);
    agree("loop queue (QD 1)", p50_us(&r.queue), seen.queue, 1.5);
}

/// The job's own reads' device time from the tracer's attribution (`ours` in each
/// snapshot's layers of `disk`), between the run's first and last samples.
fn own_read_device(doc: &Value, disk: &str) -> StageHist {
    let samples = doc["samples"].as_array().expect("samples");
    let own = |s: &Value| -> StageHist {
        let l = s["layers"]
            .as_array()
            .and_then(|l| l.iter().find(|l| l["name"] == disk))
            .unwrap_or_else(|| panic!("no layers of {disk}: {}", doc["warnings"]));
        serde_json::from_value(l["ours"]["read"]["device"].clone()).unwrap_or_else(|e| {
            panic!(
                "no attributed reads ({e}): {}; warnings {}",
                l["ours"], doc["warnings"]
            )
        })
    };
    let all: Vec<StageHist> = samples.iter().map(own).collect();
    span(&all, |h| h)
}

/// fio reading and writing the disk at QD 16 beside one psync reader: the disk's reads are
/// mostly fio's, and the tracer's device median of the job's own reads agrees within 5% with
/// bpftrace's, filtered to the job's threads (#45: the device stage of the job alone).
#[test]
fn beside_a_neighbour_the_job_s_own_device_time_agrees_with_bpftrace() {
    let (_g, d) = root_test(exclusive);
    let t = d.path().join("data");
    let t = t.to_str().unwrap();
    let first = run_json(&["--target", t, "--size", "128m", "--ios", "100"]);
    let disk = first["targets"][0]["device"]
        .as_str()
        .expect("the disk under the target")
        .to_string();
    let theirs = d.path().join("theirs").display().to_string();
    let fio = Fio::start(&theirs, "randrw", 20);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let bt = Bpftrace::start_for_job(d.path(), dev_t(&disk));
    let out = command()
        .args(["run", "--json"])
        .args(psync(t, "1", "5s", "4k"))
        .output()
        .expect("iogauge run");
    let seen = bt.stop();
    drop(fio);
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let own = own_read_device(&doc, &disk);
    let all = reads_of(&doc, &disk);
    let others = doc["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["rule"] == "neighbours"))
        .map(|f| f["title"].to_string())
        .unwrap_or_default();
    eprintln!(
        "beside fio: the job's reads {} of the disk's {} reads; {others}",
        own.count, all.requests
    );
    assert!(
        own.count > 0 && own.count * 2 < all.requests,
        "the job's reads told from fio's: {} of {}",
        own.count,
        all.requests
    );
    agree(
        "the job's own device time beside fio",
        p50_us(&own),
        seen.device,
        0.0,
    );
}

#[test]
fn no_trace_leaves_the_layers_out() {
    let (_g, d) = root_test(shared);
    let t = d.path().join("data");
    let t = t.to_str().unwrap();
    let doc = run_json(&["--target", t, "--size", "16m", "--time", "1s", "--no-trace"]);
    let samples = doc["samples"].as_array().expect("samples");
    assert!(samples.iter().all(|s| s.get("layers").is_none()));
    assert!(
        !doc["warnings"].to_string().contains("per-layer"),
        "{}",
        doc["warnings"]
    );
    let doc = run_json(&["--target", t, "--size", "16m", "--time", "1s"]);
    let samples = doc["samples"].as_array().expect("samples");
    assert!(samples
        .iter()
        .all(|s| s["layers"].as_array().is_some_and(|l| !l.is_empty())));
    // The interval figures are derived from them.
    let iv = measured(&doc).next().expect("an interval");
    assert!(
        iv["layers"].as_object().is_some_and(|m| !m.is_empty()),
        "{iv}"
    );
}

/// With tracefs unmounted (a fresh machine without systemd) the block-layer programs still
/// attach (by BTF, through no tracefs): the run prints its split, and mounts nothing.
#[test]
fn the_split_needs_no_tracefs() {
    let (_g, d) = root_test(exclusive);
    let t = d.path().join("data");
    let t = t.to_str().unwrap();
    let _unmounted = NoTracefs::new();
    let text = text_of(&["run", "--target", t, "--size", "16m", "--time", "1s"]);
    assert!(text.contains("where an I/O's time went"), "{text}");
    assert!(!text.contains("per-layer latency unavailable"), "{text}");
    assert!(!tracefs_mounted(), "a run mounted tracefs");
}

/// Above `TIMED_PER_S` requests a second the tracer times a sample (1 in 2^k, each counting
/// for 2^k): 32 reads in flight on a loop device over an image in memory (a tmpfs file) run at
/// tens of thousands a second, bpftrace timing every one beside it. The requests are counted
/// exactly, the stages' counts estimate them within 5%, and the sample's device median agrees
/// with bpftrace's over every read; the job's io_uring reads are sampled too, and estimate
/// the same reads.
#[test]
fn above_the_timed_rate_a_sample_is_timed_and_still_agrees_with_bpftrace() {
    let (_g, d) = root_test(exclusive);
    let shm = tempfile::tempdir_in("/dev/shm").expect("a tmpfs at /dev/shm");
    let image = shm.path().join("fast.img");
    std::fs::write(&image, vec![0x5a_u8; 64 << 20]).unwrap();
    let dev = Loop::new(&image);
    let name = dev.0.trim_start_matches("/dev/");
    let args = [
        "--target", &dev.0, "--rw", "randread", "--bs", "4k", "--qd", "32", "--time", "4s",
    ];
    let (doc, seen) = run_beside_bpftrace(d.path(), name, &args);
    let r = reads_of(&doc, name);
    let rate = r.requests as f64 / 4.0;
    assert!(
        r.timed_one_in >= 4,
        "{rate:.0} reads/s, yet 1 in {} timed",
        r.timed_one_in
    );
    agrees_with_diskstats(&r, 32);
    let theirs = seen.device.len() as u64;
    assert!(
        r.requests.abs_diff(theirs) <= 64 + theirs / 1000,
        "every read counted: iogauge {}, bpftrace {theirs}",
        r.requests
    );
    agree(
        &format!("fast loop device (QD 32, 1 in {} timed)", r.timed_one_in),
        p50_us(&r.device),
        seen.device,
        0.0,
    );
    let samples = doc["samples"].as_array().unwrap();
    let ring_one_in = samples
        .iter()
        .filter_map(|s| s["ring"]["timed_one_in"].as_u64())
        .max()
        .unwrap_or(1);
    let ring = ring_reads(&doc);
    assert!(ring_one_in >= 4, "io_uring: 1 in {ring_one_in} timed");
    assert!(
        ring.count.abs_diff(r.requests) <= r.requests / 10,
        "io_uring reads estimated {} (1 in {ring_one_in} timed), the disk's {}",
        ring.count,
        r.requests
    );
}
