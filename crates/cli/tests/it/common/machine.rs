//! Fixtures that change the machine for the length of a test and undo it when dropped: loop
//! devices, a cgroup read-IOPS limit, a device slower than the CPU, mounts and sysctls.

use super::*;

/// A loop device over an image file, detached when dropped.
pub struct Loop(pub String);

impl Loop {
    pub fn new(image: &Path) -> Loop {
        gated("a loop device");
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(image)
            .output()
            .expect("losetup (util-linux) is installed");
        assert_ran(&out, "losetup");
        Loop(String::from_utf8(out.stdout).unwrap().trim().to_string())
    }
}

impl Loop {
    /// A loop device with direct I/O over an image of `mib` MiB written (not sparse) at
    /// `image`: its reads reach the disk under the image, not the page cache holding it.
    pub fn direct(image: &Path, mib: usize) -> Loop {
        std::fs::write(image, vec![0x5a_u8; mib << 20]).unwrap();
        let l = Loop::new(image);
        sh(&format!("losetup --direct-io=on {}", l.0));
        l
    }
}

impl Drop for Loop {
    /// The queue's settings back to a loop device's defaults, then detached: the kernel keeps
    /// them for the next attachment of this loop number (another test's, or a campaign's).
    fn drop(&mut self) {
        let q = format!("/sys/block/{}/queue", self.0.trim_start_matches("/dev/"));
        for (f, v) in [
            ("scheduler", "none"),
            ("nr_requests", "128"),
            ("write_cache", "write back"),
        ] {
            let _ = std::fs::write(format!("{q}/{f}"), v);
        }
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// A cgroup v1 read-IOPS limit on one block device (the root blkio cgroup), lifted when
/// dropped.
pub struct Throttle(String);

const READ_IOPS: &str = "/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device";

impl Throttle {
    pub fn new(dev: &str, iops: u32) -> Throttle {
        let name = dev.trim_start_matches("/dev/");
        let majmin = std::fs::read_to_string(format!("/sys/class/block/{name}/dev"))
            .expect("the loop device's MAJ:MIN")
            .trim()
            .to_string();
        std::fs::write(READ_IOPS, format!("{majmin} {iops}")).expect("cgroup v1 blkio throttle");
        Throttle(majmin)
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::write(READ_IOPS, format!("{} 0", self.0));
    }
}

/// A cgroup v1 write-bandwidth limit on one block device (the root blkio cgroup, which
/// cgroup v1 charges all page-cache writeback to), lifted when dropped.
pub struct WriteBps(String);

const WRITE_BPS: &str = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device";

impl WriteBps {
    pub fn new(dev: &str, bytes_s: u64) -> WriteBps {
        let name = dev.trim_start_matches("/dev/");
        let majmin = std::fs::read_to_string(format!("/sys/class/block/{name}/dev"))
            .expect("the loop device's MAJ:MIN")
            .trim()
            .to_string();
        std::fs::write(WRITE_BPS, format!("{majmin} {bytes_s}")).expect("cgroup v1 blkio throttle");
        WriteBps(majmin)
    }
}

impl Drop for WriteBps {
    fn drop(&mut self) {
        let _ = std::fs::write(WRITE_BPS, format!("{} 0", self.0));
    }
}

/// A device slower than the CPU, whatever the disk under it does: a loop device (`outer`,
/// direct I/O, mq-deadline, `nr_requests` requests) over a second loop device held to
/// [`SlowDevice::READ_IOPS`] reads/s by the cgroup. The outer device's requests take the
/// throttle's time in its device stage (its bios reach the inner device, held there), so a
/// submitter deeper than its `nr_requests` waits for a free request, never for the CPU.
/// Fields drop in order: the outer device is detached before the throttle is lifted and the
/// inner one detached.
pub struct SlowDevice {
    outer: Loop,
    _throttle: Throttle,
    _inner: Loop,
}

impl SlowDevice {
    /// The inner device's read limit: 4 requests in flight take 2 ms each.
    pub const READ_IOPS: u32 = 2000;

    pub fn new(dir: &Path, nr_requests: u32) -> SlowDevice {
        let inner = Loop::direct(&dir.join("slow.img"), 64);
        let throttle = Throttle::new(&inner.0, Self::READ_IOPS);
        let outer = Loop::new(Path::new(&inner.0));
        sh(&format!("losetup --direct-io=on {}", outer.0));
        let q = format!("/sys/block/{}/queue", outer.0.trim_start_matches("/dev/"));
        sh(&format!("echo mq-deadline > {q}/scheduler"));
        sh(&format!("echo {nr_requests} > {q}/nr_requests"));
        SlowDevice {
            outer,
            _throttle: throttle,
            _inner: inner,
        }
    }

    /// `/dev/loopN` of the outer device.
    pub fn path(&self) -> &str {
        &self.outer.0
    }

    /// `loopN`.
    pub fn name(&self) -> &str {
        self.outer.0.trim_start_matches("/dev/")
    }
}

/// A mount that is undone when dropped.
pub struct Mount(pub PathBuf);

impl Mount {
    pub fn new(dir: &Path, fstype: &str, opts: &str) -> Mount {
        gated("a mount");
        std::fs::create_dir_all(dir).unwrap();
        sh(&format!(
            "mount -t {fstype} -o {opts} {fstype} '{}'",
            dir.display()
        ));
        Mount(dir.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A sysctl set for the rest of an exclusive test and put back when dropped, also when the
/// test panics.
pub struct Sysctl {
    path: &'static str,
    old: String,
}

impl Sysctl {
    /// Writes `value` to `path` (under /proc/sys), keeping the value it had.
    pub fn set(path: &'static str, value: &str) -> Sysctl {
        assert_eq!(
            HELD.get(),
            Held::Exclusive,
            "{path} is machine-wide: set it under `let _g = exclusive();`"
        );
        let old = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let s = Sysctl { path, old };
        s.write(value);
        s
    }

    /// Writes another value; the one from before [`Sysctl::set`] still comes back on drop.
    pub fn write(&self, value: &str) {
        std::fs::write(self.path, value).unwrap_or_else(|e| panic!("{}: {e}", self.path));
    }
}

impl Drop for Sysctl {
    fn drop(&mut self) {
        let _ = std::fs::write(self.path, self.old.trim_end());
    }
}

/// Processes that keep every CPU busy (`sh -c 'while :; do :; done'`, one per CPU), killed
/// by their pid when dropped: other processes burning CPU beside the job, as on a shared
/// machine. Only under `exclusive()`: every other test would run beside them.
pub struct Burners(Vec<Child>);

impl Burners {
    pub fn new() -> Burners {
        assert_eq!(
            HELD.get(),
            Held::Exclusive,
            "CPU burners disturb every test: start them under `let _g = exclusive();`"
        );
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let burners = (0..cpus)
            .map(|_| {
                std::process::Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .expect("sh starts")
            })
            .collect();
        // Let them take the CPUs before the job starts.
        std::thread::sleep(Duration::from_millis(300));
        Burners(burners)
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// fio doing O_DIRECT 4 KiB `rw` (randwrite, randread, randrw) at QD 16 on `path` for at most
/// `secs`: a neighbour process on the job's disk. Its jobs run as threads of the one process
/// (`--thread`), killed when dropped, also when the test panics (a forked job would outlive
/// its killed parent and load the disk under the tests after).
pub struct Fio(Child);

impl Fio {
    pub fn start(path: &str, rw: &str, secs: u32) -> Fio {
        let child = std::process::Command::new("fio")
            .args([
                "--name=neighbour",
                "--thread",
                &format!("--filename={path}"),
                "--size=256m",
                &format!("--rw={rw}"),
                "--bs=4k",
                "--direct=1",
                "--ioengine=io_uring",
                "--iodepth=16",
                "--time_based",
                &format!("--runtime={secs}"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("fio is installed (scripts/test installs it)");
        Fio(child)
    }
}

impl Drop for Fio {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// tracefs unmounted, as on a fresh machine without systemd, for the rest of an exclusive
/// test; mounted again when dropped (when nothing mounted it meanwhile), also when the test
/// panics.
pub struct NoTracefs;

const TRACEFS: &str = "/sys/kernel/tracing";

/// Whether tracefs is mounted at /sys/kernel/tracing (its directory is empty when not).
pub fn tracefs_mounted() -> bool {
    std::fs::read_dir(TRACEFS).is_ok_and(|mut d| d.next().is_some())
}

impl NoTracefs {
    pub fn new() -> NoTracefs {
        assert_eq!(
            HELD.get(),
            Held::Exclusive,
            "tracefs is machine-wide: unmount it under `let _g = exclusive();`"
        );
        if tracefs_mounted() {
            sh(&format!("umount {TRACEFS}"));
        }
        assert!(!tracefs_mounted(), "tracefs is still mounted");
        NoTracefs
    }
}

impl Drop for NoTracefs {
    fn drop(&mut self) {
        if !tracefs_mounted() {
            let _ = std::process::Command::new("mount")
                .args(["-t", "tracefs", "nodev", TRACEFS])
                .status();
        }
    }
}
