//! The capture on the running kernel (root, BTF, clang at build time: what `scripts/test`
//! gives), on loop devices of its own over sparse files in the target directory, so that
//! every request on them is the test's: a known sequence of O_DIRECT reads and writes and an
//! fsync is captured exactly; a child process is left out by a process filter (and counted)
//! but captured without one; a cgroup filter keeps a child's requests made in its cgroup
//! and leaves this process's out; a tiny ring loses events under a burst and counts each
//! loss.

use iogauge_trace::capture::{Capture, CaptureFilter, Event, EventOp, RING_BYTES};
use iogauge_trace::Disk;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// A loop device over a sparse file of its own; detached when dropped, a panic included.
struct Loop {
    dev: PathBuf,
    disk: Disk,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn new() -> Loop {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let backing = dir.path().join("disk");
        File::create(&backing).unwrap().set_len(64 << 20).unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .expect("losetup (util-linux)");
        assert!(
            out.status.success(),
            "losetup: {} (the test needs root and loop devices)",
            String::from_utf8_lossy(&out.stderr)
        );
        let dev = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        let name = dev.file_name().unwrap().to_str().unwrap().to_string();
        let disk = Disk::named(&name).unwrap();
        Loop {
            dev,
            disk,
            _dir: dir,
        }
    }

    fn open_direct(&self) -> File {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&self.dev)
            .unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// Every event until the ring stays empty for 300 ms.
fn drain(c: &mut Capture) -> Vec<Event> {
    let mut all = Vec::new();
    while c
        .poll(Duration::from_millis(300), |e| all.push(e.clone()))
        .unwrap()
        > 0
    {}
    all
}

/// A page-aligned buffer for O_DIRECT.
struct AlignedBuf(Vec<u8>, usize);

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let v = vec![0x5a_u8; len + 4096];
        let off = v.as_ptr().align_offset(4096);
        AlignedBuf(v, off)
    }
    fn get(&mut self, len: usize) -> &mut [u8] {
        &mut self.0[self.1..self.1 + len]
    }
}

fn start(l: &Loop, filter: &CaptureFilter, ring: usize) -> Capture {
    Capture::start(std::slice::from_ref(&l.disk), filter, ring).unwrap()
}

#[test]
fn a_known_sequence_is_captured_exactly() {
    let l = Loop::new();
    let mut c = start(&l, &CaptureFilter::default(), RING_BYTES);
    let f = l.open_direct();
    let mut buf = AlignedBuf::new(1 << 20);
    // (op, offset, bytes): distinct offsets and sizes, none larger than a request holds.
    let sequence = [
        (EventOp::Write, 0, 4096),
        (EventOp::Write, 1 << 20, 8192),
        (EventOp::Read, 64 << 10, 16384),
        (EventOp::Read, (3 << 20) + 4096, 4096),
        (EventOp::Write, 8 << 20, 65536),
        (EventOp::Read, 8 << 20, 65536),
        (EventOp::Write, 20 << 20, 12288),
    ];
    for (op, off, len) in sequence {
        match op {
            EventOp::Read => f.read_exact_at(buf.get(len), off).unwrap(),
            _ => f.write_all_at(buf.get(len), off).unwrap(),
        }
    }
    f.sync_all().unwrap();
    let events = drain(&mut c);
    let me = std::process::id();
    let comm = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
    let comm = comm.trim_end();
    let ours: Vec<(EventOp, u64, usize)> = events
        .iter()
        .filter(|e| e.op != EventOp::Flush)
        .map(|e| (e.op, e.offset().unwrap(), e.bytes as usize))
        .collect();
    assert_eq!(ours, sequence, "{events:#?}");
    for e in events.iter().filter(|e| e.op != EventOp::Flush) {
        assert_eq!(e.dev, (l.disk.major, l.disk.minor));
        assert_eq!(e.tgid, me, "{e:?}");
        assert!(e.in_flight >= 1 && e.cgroup != 0, "{e:?}");
        // A direct write is REQ_SYNC (blkdev's dio_bio_write_op).
        assert!(e.op != EventOp::Write || e.sync, "{e:?}");
        assert_eq!(e.comm(), comm, "{e:?}");
    }
    // The fsync is one cache flush (the loop device has a write cache when its file has an
    // fsync), of no bytes, issued after the writes; by whichever thread ran the flush.
    let flushes: Vec<&Event> = events.iter().filter(|e| e.op == EventOp::Flush).collect();
    assert_eq!(flushes.len(), 1, "{events:#?}");
    let flush = flushes[0];
    assert!(
        flush.bytes == 0 && flush.preflush && flush.offset().is_none(),
        "{flush:?}"
    );
    assert!(flushes[0].at_ns >= events[sequence.len() - 1].at_ns);
    assert_eq!((c.dropped(), c.others()), (0, 0));
    // Times are CLOCK_MONOTONIC, in order of issue.
    assert!(events.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
    assert!(events[0].at_ns <= iogauge_trace::capture::monotonic_now_ns());
}

#[test]
fn a_process_filter_leaves_a_child_out_and_counts_it() {
    let l = Loop::new();
    let me = std::process::id();
    let filter = CaptureFilter {
        pids: vec![me],
        ..CaptureFilter::default()
    };
    let mut kept = start(&l, &filter, RING_BYTES);
    let mut all = start(&l, &CaptureFilter::default(), RING_BYTES);
    let f = l.open_direct();
    let mut buf = AlignedBuf::new(4096);
    for i in 0..10 {
        f.read_exact_at(buf.get(4096), i * 4096).unwrap();
    }
    let dd = Command::new("dd")
        .arg(format!("if={}", l.dev.display()))
        .args([
            "of=/dev/null",
            "bs=4k",
            "count=50",
            "skip=1000",
            "iflag=direct",
            "status=none",
        ])
        .spawn()
        .expect("dd (coreutils)");
    let child = dd.id();
    assert!(dd.wait_with_output().unwrap().status.success());
    let (k, a) = (drain(&mut kept), drain(&mut all));
    let by = |v: &[Event], tgid: u32| v.iter().filter(|e| e.tgid == tgid).count();
    assert_eq!((by(&k, me), by(&k, child), k.len()), (10, 0, 10), "{k:#?}");
    assert_eq!((by(&a, me), by(&a, child), a.len()), (10, 50, 60), "{a:#?}");
    assert_eq!((kept.others(), all.others()), (50, 0));
    // Replaced: this process is left out too, then kept again.
    kept.set_pids(&[child]).unwrap();
    f.read_exact_at(buf.get(4096), 0).unwrap();
    assert!(drain(&mut kept).is_empty());
    assert_eq!(kept.others(), 51);
    kept.set_pids(&[me]).unwrap();
    f.read_exact_at(buf.get(4096), 0).unwrap();
    assert_eq!(drain(&mut kept).len(), 1);
    // A capture of everything has no processes to replace.
    assert!(all.set_pids(&[me]).is_err());
}

/// A blkio (cgroup v1) or io (v2) cgroup of the test's; removed when dropped.
struct Cgroup(PathBuf);

impl Cgroup {
    fn new() -> Cgroup {
        let root = ["/sys/fs/cgroup/blkio", "/sys/fs/cgroup"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.join("cgroup.procs").exists())
            .expect("a cgroup hierarchy with the io controller");
        let dir = root.join(format!("iogauge-capture-test-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        Cgroup(dir)
    }

    /// Its kernfs id: the inode number of its directory.
    fn id(&self) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&self.0).unwrap())
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_cgroup_filter_keeps_the_requests_made_in_it() {
    let l = Loop::new();
    let cg = Cgroup::new();
    let filter = CaptureFilter {
        cgroups: vec![cg.id()],
        ..CaptureFilter::default()
    };
    let mut c = start(&l, &filter, RING_BYTES);
    let f = l.open_direct();
    let mut buf = AlignedBuf::new(4096);
    for i in 0..10 {
        f.read_exact_at(buf.get(4096), i * 4096).unwrap();
    }
    // A child moves itself into the cgroup before it reads: its bios carry the cgroup.
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec dd if={} of=/dev/null bs=4k count=20 skip=100 iflag=direct status=none",
        cg.0.display(),
        l.dev.display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let events = drain(&mut c);
    assert_eq!(events.len(), 20, "{events:#?}");
    assert!(events
        .iter()
        .all(|e| e.cgroup == cg.id() && e.comm() == "dd"));
    assert_eq!(c.others(), 10);
}

#[test]
fn a_tiny_ring_drops_under_a_burst_and_counts_every_loss() {
    let l = Loop::new();
    let mut c = start(&l, &CaptureFilter::default(), 4096);
    let f = l.open_direct();
    let mut buf = AlignedBuf::new(4096);
    let issued = 5000;
    // Not read meanwhile: 4 KiB hold about 50 events.
    for i in 0..issued {
        f.read_exact_at(buf.get(4096), (i % 4096) * 4096).unwrap();
    }
    let captured = drain(&mut c).len() as u64;
    let dropped = c.dropped();
    assert!(
        dropped > 0 && captured > 0,
        "{captured} captured, {dropped} dropped"
    );
    assert_eq!(captured + dropped, issued);
}

/// The count of requests in flight holds under load: requests already in flight when the
/// capture starts and data-less flushes completed without being issued do not move it, the
/// issue's program is attached after the completion's, so the count never passes the
/// submitters' concurrency and a lone request after a busy spell finds itself alone.
#[test]
fn in_flight_counts_the_requests_truly_in_flight() {
    let l = Loop::new();
    let threads = 4;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut events = Vec::new();
    let mut c = None;
    std::thread::scope(|s| {
        for t in 0..threads {
            let (f, stop) = (l.open_direct(), &stop);
            s.spawn(move || {
                let mut buf = AlignedBuf::new(8192);
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let off = ((i * 7919 + t * 131) % 8000) * 8192;
                    if i.is_multiple_of(3) {
                        f.write_all_at(buf.get(8192), off).unwrap();
                    } else {
                        f.read_exact_at(buf.get(8192), off).unwrap();
                    }
                    if i.is_multiple_of(500) {
                        f.sync_data().unwrap();
                    }
                    i += 1;
                }
            });
        }
        // Started while the submitters are busy: some requests are in flight already.
        std::thread::sleep(Duration::from_millis(200));
        let mut cap = start(&l, &CaptureFilter::default(), RING_BYTES);
        let until = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < until {
            cap.poll(Duration::from_millis(50), |e| events.push(e.clone()))
                .unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        c = Some(cap);
    });
    let mut c = c.unwrap();
    let mut buf = AlignedBuf::new(4096);
    l.open_direct().read_exact_at(buf.get(4096), 0).unwrap();
    events.extend(drain(&mut c));
    assert!(events.len() > 1000, "{} events", events.len());
    let most = events.iter().map(|e| e.in_flight).max().unwrap();
    // Each submitter has one request or one flush in flight at a time.
    assert!(
        most <= threads as u32,
        "{most} in flight with {threads} submitters"
    );
    let last = events.last().unwrap();
    assert_eq!((last.op, last.in_flight), (EventOp::Read, 1), "{last:?}");
}

#[test]
fn a_ring_that_is_not_a_power_of_two_is_refused() {
    let disk = Disk {
        name: "loop0".into(),
        major: 7,
        minor: 0,
        nr_requests: None,
    };
    let e = Capture::start(&[disk], &CaptureFilter::default(), 3 << 20)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("power of two"), "{e}");
}
