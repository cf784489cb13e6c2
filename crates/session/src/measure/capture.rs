//! `iogauge capture` (and `db run --capture`): every block request issued to some whole disks
//! recorded as it is issued (its time, place, size, operation and flags, who issued it, the
//! disk's requests in flight) into a trace, through the kernel's ring buffer
//! (`iogauge_trace::capture`) and a [`TraceSink`] (the store, a file, or both), with its
//! summary. Memory stays bounded however long it runs: the ring, one chunk, the summary's
//! counters and one entry per issuer. What the kernel could not hand over (the ring was
//! full) is counted and said, never hidden.

use crate::traces::TraceSink;
use anyhow::Context;
use iogauge_iolog::{Device, Flags, Header, Issuer, Op, Origin, Request, Summary, Trailer};
use iogauge_trace::capture::{monotonic_now_ns, Capture, CaptureFilter, Event, EventOp};
use iogauge_trace::Disk;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What to capture.
#[derive(Clone, Debug)]
pub struct CapturePlan {
    /// Whole disks.
    pub disks: Vec<Disk>,
    /// Which requests are kept (empty: all).
    pub filter: CaptureFilter,
    /// The filter in words, stored with the trace.
    pub kept: String,
    /// Processes whose descendants join the filter as they are born (a server's backends):
    /// the filter's processes are these and their children, looked up every second.
    pub follow: Vec<u32>,
    /// How long; `None`: until stopped.
    pub time: Option<Duration>,
    /// The kernel ring buffer's bytes.
    pub ring_bytes: usize,
}

/// A finished capture.
pub struct Captured {
    pub id: Option<i64>,
    pub header: Header,
    pub trailer: Trailer,
    pub summary: Summary,
    /// Requests of operations a trace does not hold (secure erase, zone commands…), not
    /// recorded.
    pub unrecorded: u64,
}

/// How often the loop looks at the clock, the stop flag and the followed processes, and
/// hands a chunk not yet full to the store.
const LOOK_EVERY: Duration = Duration::from_millis(100);
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// Starts the capture (attached once this returns: a caller may start its workload then).
pub fn start(plan: &CapturePlan) -> anyhow::Result<Running> {
    let capture = Capture::start(&plan.disks, &plan.filter, plan.ring_bytes)
        .context("capturing block requests")?;
    let header = Header {
        origin: Origin::Iogauge,
        started_at: Some(crate::now()),
        devices: plan
            .disks
            .iter()
            .map(|d| Device {
                name: d.name.clone(),
                major: d.major,
                minor: d.minor,
                size: disk_size(&d.name),
                logical_block: std::fs::read_to_string(format!(
                    "/sys/block/{}/queue/logical_block_size",
                    d.name
                ))
                .ok()
                .and_then(|t| t.trim().parse().ok()),
            })
            .collect(),
        filter: Some(plan.kept.clone()),
    };
    Ok(Running {
        capture,
        header,
        t0: monotonic_now_ns(),
        began: Instant::now(),
        devices: plan
            .disks
            .iter()
            .enumerate()
            .map(|(i, d)| ((d.major, d.minor), i as u16))
            .collect(),
        issuers: HashMap::new(),
        follow: plan.follow.clone(),
        pids: plan.filter.pids.clone(),
        unrecorded: 0,
    })
}

/// `/sys/block/NAME/size` (512-byte sectors) in bytes.
fn disk_size(name: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/sys/block/{name}/size"))
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s * 512)
}

/// A capture attached to its disks.
pub struct Running {
    capture: Capture,
    pub header: Header,
    /// Its start on CLOCK_MONOTONIC: requests' times count from here.
    t0: u64,
    began: Instant,
    devices: HashMap<(u32, u32), u16>,
    issuers: HashMap<(u32, [u8; 16], u64), u32>,
    follow: Vec<u32>,
    /// The filter's processes given, beside the followed ones' families.
    pids: Vec<u32>,
    unrecorded: u64,
}

impl Running {
    /// Records into `sink` until `time` has passed or `stop` is raised, telling `progress`
    /// (seconds, requests, dropped) about once a second; then ends the trace.
    pub fn record(
        mut self,
        mut sink: TraceSink,
        time: Option<Duration>,
        stop: &AtomicBool,
        run_id: Option<i64>,
        progress: &mut dyn FnMut(f64, u64, u64),
    ) -> anyhow::Result<Captured> {
        let mut looked = Instant::now();
        let mut followed = Instant::now() - FOLLOW_EVERY;
        loop {
            let now = Instant::now();
            let over = time.is_some_and(|t| now >= self.began + t);
            if over || stop.load(Ordering::Relaxed) {
                break;
            }
            if !self.follow.is_empty() && now >= followed + FOLLOW_EVERY {
                self.refresh_pids();
                followed = now;
            }
            self.drain(&mut sink, LOOK_EVERY)?;
            sink.tick()?;
            if looked.elapsed() >= Duration::from_secs(1) {
                progress(
                    self.began.elapsed().as_secs_f64(),
                    sink.requests(),
                    self.capture.dropped(),
                );
                looked = Instant::now();
            }
        }
        // What the kernel handed over before the end.
        while self.drain(&mut sink, Duration::ZERO)? > 0 {}
        let trailer = Trailer {
            duration_ns: monotonic_now_ns().saturating_sub(self.t0),
            requests: sink.requests(),
            dropped: Some(self.capture.dropped()),
            others: (!self.devices.is_empty() && self.filtered()).then(|| self.capture.others()),
        };
        let (id, summary) = sink.finish(&trailer, run_id)?;
        Ok(Captured {
            id,
            header: self.header,
            trailer,
            summary,
            unrecorded: self.unrecorded,
        })
    }

    /// Only the summary of what arrives until `stop` is raised (nothing stored), with the
    /// requests' times from the first, over `duration(first_ns, last_ns)`; and how many the
    /// kernel could not hand over.
    pub fn summarise(
        mut self,
        stop: &AtomicBool,
        duration: impl FnOnce(u64, u64) -> u64,
    ) -> anyhow::Result<(Summary, u64)> {
        let mut b = iogauge_iolog::SummaryBuilder::new(self.devices.len());
        let mut issuers: Vec<Issuer> = Vec::new();
        let (mut first, mut last) = (None::<u64>, 0u64);
        loop {
            let ending = stop.load(Ordering::Relaxed);
            let (t0, devices, known) = (self.t0, &self.devices, &mut self.issuers);
            let n = self
                .capture
                .poll(if ending { Duration::ZERO } else { LOOK_EVERY }, |e| {
                    let mut add = |i| {
                        issuers.push(i);
                        (issuers.len() - 1) as u32
                    };
                    if let Some(mut r) = request_of(e, t0, devices, known, &mut add) {
                        let f = *first.get_or_insert(r.at_ns);
                        last = last.max(r.at_ns);
                        r.at_ns = r.at_ns.saturating_sub(f);
                        b.push(&r);
                    }
                })
                .context("reading the capture's ring buffer")?;
            if ending && n == 0 {
                break;
            }
        }
        let span = first.map_or(0, |f| duration(f, last));
        Ok((
            b.finish_with_issuers(span, &issuers),
            self.capture.dropped(),
        ))
    }

    fn filtered(&self) -> bool {
        self.header
            .filter
            .as_deref()
            .is_some_and(|f| f != EVERYTHING)
    }

    /// The events waiting (or arriving within `wait`), into `sink`; how many.
    fn drain(&mut self, sink: &mut TraceSink, wait: Duration) -> anyhow::Result<usize> {
        let mut failed = None;
        let n = {
            let (t0, devices, issuers, unrecorded) = (
                self.t0,
                &self.devices,
                &mut self.issuers,
                &mut self.unrecorded,
            );
            self.capture
                .poll(wait, |e| {
                    if failed.is_some() {
                        return;
                    }
                    let mut add = |i| sink.add_issuer(i);
                    match request_of(e, t0, devices, issuers, &mut add) {
                        Some(r) => {
                            if let Err(x) = sink.push(&r) {
                                failed = Some(x);
                            }
                        }
                        None => *unrecorded += 1,
                    }
                })
                .context("reading the capture's ring buffer")?
        };
        failed.map_or(Ok(n), Err)
    }

    /// The filter's processes: those given and every descendant of the followed ones now.
    fn refresh_pids(&mut self) {
        let mut pids = self.pids.clone();
        pids.extend(descendants(&self.follow));
        pids.sort_unstable();
        pids.dedup();
        // A process gone meanwhile is only a stale entry; a map refusal leaves the old set.
        let _ = self.capture.set_pids(&pids);
    }
}

/// The filter's words when it keeps everything.
pub const EVERYTHING: &str = "every request on these disks";

/// The request an event records, its issuer numbered on first sight; `None` for an
/// operation a trace does not hold.
fn request_of(
    e: &Event,
    t0: u64,
    devices: &HashMap<(u32, u32), u16>,
    issuers: &mut HashMap<(u32, [u8; 16], u64), u32>,
    add_issuer: &mut dyn FnMut(Issuer) -> u32,
) -> Option<Request> {
    let op = match e.op {
        EventOp::Read => Op::Read,
        // Write-zeroes writes, without data pages: a replay writes it.
        EventOp::Write | EventOp::WriteZeroes => Op::Write,
        EventOp::Flush => Op::Flush,
        EventOp::Discard => Op::Discard,
        EventOp::Other(_) => return None,
    };
    let device = *devices.get(&e.dev)?;
    let mut flags = Flags::NONE;
    for (on, f) in [
        (e.sync, Flags::SYNC),
        (e.fua, Flags::FUA),
        (e.preflush, Flags::PREFLUSH),
        (e.meta, Flags::META),
        (e.readahead, Flags::READAHEAD),
    ] {
        if on {
            flags = flags.union(f);
        }
    }
    let issuer = *issuers
        .entry((e.tgid, e.comm, e.cgroup))
        .or_insert_with(|| {
            add_issuer(Issuer {
                pid: e.tgid,
                comm: e.comm(),
                cgroup: e.cgroup,
            })
        });
    Some(Request {
        at_ns: e.at_ns.saturating_sub(t0),
        device,
        offset: e.offset().unwrap_or(0),
        len: e.bytes,
        op,
        flags,
        issuer,
        in_flight: e.in_flight.min(u32::from(u16::MAX)) as u16,
    })
}

/// The whole disk a path's requests go to: a block device's own (a partition's disk), or
/// the one holding the filesystem a file or directory is on; why not, in words.
pub fn disk_of(path: &std::path::Path) -> Result<String, String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let link = format!("/sys/dev/block/{major}:{minor}");
    let sys = std::fs::canonicalize(&link).map_err(|_| {
        format!(
            "{}: on device {major}:{minor}, which is no block device (tmpfs, NFS, overlay, btrfs's own numbers); give the disk with --device",
            path.display()
        )
    })?;
    // A partition's directory sits in its disk's, beside the disk's `queue`.
    let disk = if sys.join("partition").exists() {
        sys.parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or(sys)
    } else {
        sys
    };
    disk.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| format!("{}: no disk name under {link}", path.display()))
}

/// The whole disks holding `paths` ([`disk_of`] each), each once, sorted.
pub fn disks_of<'a>(
    paths: impl IntoIterator<Item = &'a std::path::Path>,
) -> Result<Vec<Disk>, String> {
    let mut names: Vec<String> = paths.into_iter().map(disk_of).collect::<Result<_, _>>()?;
    names.sort();
    names.dedup();
    names
        .iter()
        .map(|n| Disk::named(n).map_err(|e| e.to_string()))
        .collect()
}

/// The processes of a database server running on data directory `dir`: those whose working
/// directory it is (PostgreSQL's postmaster and backends, MariaDB's mysqld work there), the
/// first of each family (a process whose parent is one of them is followed as its child).
pub fn servers_on(dir: &std::path::Path) -> Vec<u32> {
    let Ok(want) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let on: Vec<(u32, u32)> = procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == want))
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parent_of(&stat)?))
        })
        .collect();
    on.iter()
        .filter(|(_, parent)| !on.iter().any(|(p, _)| p == parent))
        .map(|(pid, _)| *pid)
        .collect()
}

/// The io controller's cgroup of process `pid` as the kernel numbers it (the inode of its
/// directory: cgroup v1's `blkio` hierarchy, else v2's), or `None` when it is the root one
/// (shared by every process not placed elsewhere: no use to a filter) or cannot be found.
pub fn io_cgroup_of(pid: u32) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let (root, path) = text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        if controllers.split(',').any(|c| c == "blkio" || c == "io") {
            Some(("/sys/fs/cgroup/blkio", path))
        } else if controllers.is_empty() && l.starts_with("0::") {
            Some(("/sys/fs/cgroup", path))
        } else {
            None
        }
    })?;
    if path == "/" {
        return None;
    }
    std::fs::metadata(format!("{root}{path}"))
        .ok()
        .map(|m| m.ino())
}

/// Every process descended from `roots` (children, their children…), from /proc's `stat`
/// files (the fourth field is the parent).
pub fn descendants(roots: &[u32]) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parent_of(&stat)?))
        })
        .collect();
    let mut out: Vec<u32> = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// The parent in a `/proc/PID/stat` line: after the command's closing parenthesis (a
/// command may hold spaces and parentheses), the state, then the parent's id.
fn parent_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_is_read_past_a_command_with_spaces_and_parentheses() {
        assert_eq!(parent_of("42 (post gres) (x)) S 7 42 42 0"), Some(7));
        assert_eq!(parent_of("42 (init) S 0 1"), Some(0));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn this_process_is_among_its_parents_descendants() {
        let me = std::process::id();
        let parent = parent_of(&std::fs::read_to_string("/proc/self/stat").unwrap()).unwrap();
        let d = descendants(&[parent]);
        assert!(d.contains(&parent) && d.contains(&me), "{d:?}");
    }
}
