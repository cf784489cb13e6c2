//! The tracer on the running kernel (root, BTF, clang at build time: what `scripts/test`
//! gives): O_DIRECT reads of a file on the disk under the target directory are counted on
//! that disk, each with a device time, and the counters only grow.

use iogauge_trace::{Disk, Tracer};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};

/// The whole disk under `path`'s filesystem, from its st_dev through /sys/dev/block.
fn disk_under(path: &std::path::Path) -> Disk {
    let dev = std::fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc_major(dev), libc_minor(dev));
    let link = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).unwrap();
    // A partition's directory sits inside its disk's.
    let disk_dir = if link.join("partition").exists() {
        link.parent().unwrap().to_path_buf()
    } else {
        link
    };
    let name = disk_dir.file_name().unwrap().to_string_lossy().into_owned();
    Disk::named(&name).unwrap()
}

fn libc_major(dev: u64) -> u32 {
    (((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)) as u32
}

fn libc_minor(dev: u64) -> u32 {
    (((dev >> 12) & 0xffff_ff00) | (dev & 0xff)) as u32
}

#[test]
fn direct_reads_are_counted_with_their_device_time() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("data");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0x5a_u8; 1 << 20];
    for _ in 0..8 {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
    let disk = disk_under(&path);
    let tracer = Tracer::start(std::slice::from_ref(&disk), None).unwrap();
    let before = tracer.read();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap();
    let mut buf = AlignedBuf::new(4096);
    let n = 500u64;
    for i in 0..n {
        f.read_exact_at(buf.as_mut(), (i * 7919 % 2048) * 4096)
            .unwrap();
    }
    let after = tracer.read();
    assert_eq!(after.len(), 1);
    let (a, b) = (&after[0].read, &before[0].read);
    assert_eq!(after[0].name, disk.name);
    let done = a.requests - b.requests;
    // Other processes may read the same disk meanwhile: ours, not wildly more. Some runs
    // count fewer: in 1-3% of runs of this test the completion program ran for up to 9%
    // fewer requests than /proc/diskstats completed (its own run count says so, with no
    // recursion miss counted), a loss not explained yet (the book's per-layer latency chapter).
    assert!(
        (n * 9 / 10..n * 3).contains(&done),
        "{done} reads traced for {n} issued"
    );
    assert!(a.bytes - b.bytes >= done * 4096);
    // Every request completing is counted; those issued before the first reading have no
    // device time.
    let device = a.device.since(&b.device);
    assert!(
        device.count + IN_FLIGHT >= done && device.quantile_ns(0.5).unwrap() > 1_000.0,
        "{device:?}"
    );
    // Every issued request has a queue stage; those whose completion was not counted (above),
    // and another process's request still in flight, have no device stage. Another
    // process's request in flight at the first reading was issued before it and completes
    // after: completions may pass issues by those (seen: 633 for 632 with a QD 4 job on the
    // disk).
    let issued = a.queue.count - b.queue.count;
    assert!(
        issued + IN_FLIGHT >= device.count && issued.saturating_sub(device.count) <= n / 10,
        "{issued} issued, {} completed",
        device.count
    );
    // Every request's first bio was queued while the tracer ran.
    let pre = a.pre_queue.since(&b.pre_queue);
    assert!(pre.count >= n && pre.count <= issued + IN_FLIGHT, "{pre:?}");
    drop(tracer);
}

/// Other processes' requests that may be in flight on the shared disk at a reading.
const IN_FLIGHT: u64 = 64;

/// A page-aligned buffer for O_DIRECT.
struct AlignedBuf(Vec<u8>, usize);

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let v = vec![0u8; len + 4096];
        let off = v.as_ptr().align_offset(4096);
        AlignedBuf(v, off)
    }
    fn as_mut(&mut self) -> &mut [u8] {
        let len = self.0.len() - 4096;
        &mut self.0[self.1..self.1 + len]
    }
}
