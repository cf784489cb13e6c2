//! Every block request issued to some disks, one [`Event`] each, for `iogauge capture`: the
//! program beside this loader (`bpf/capture.bpf.c`, on `block_rq_issue`) writes each into a
//! ring buffer that [`Capture::poll`] empties, as bcc's biosnoop reads its perf buffer.
//!
//! A [`CaptureFilter`] keeps a workload's requests alone (a database's: its cgroups, its
//! processes, its files' writeback); the others are counted, not handed over
//! ([`Capture::others`]). A reader that falls behind loses events rather than slowing the
//! disks: the kernel counts them ([`Capture::dropped`]), and the ring's size
//! ([`RING_BYTES`] by default) says how far behind it may fall.
//!
//! Its cost (`bench/capture`): about 0.2–0.3 µs of BPF time a request (issue and
//! completion) and 0.06–0.1 µs of the reader's CPU an event; 2.3–2.6% of a 2-CPU VM's CPU time
//! at 110,000–184,000 requests a second, 2.4% of fio's IOPS on vda.
//!
//! What an event cannot say: the process is the one running when the request was issued,
//! which is its submitter when issued in its context (a direct or plugged issue), but the
//! kernel thread's when the queue was run from a worker (a flush's request, one held by an
//! I/O scheduler and dispatched later); a process filter then leaves it out, where the
//! cgroup (the bio's, set when it was made) still names the submitter's.

use crate::error::{one_line, Unavailable};
use crate::load::{attach, kernel_btf};
use crate::maps::MAX_DISKS;
use crate::{Disk, FileKey};
use aya::maps::{HashMap, MapData, PerCpuArray, RingBuf};
use aya::{Ebpf, EbpfLoader};
use std::collections::HashSet;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

mod event;
use event::RawEvent;
pub use event::{monotonic_now_ns, Event, EventOp};

/// The object build.rs compiled or copied; empty when there was neither clang nor the
/// committed object.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/capture.bpf.o"));

/// The programs and their tracepoints, in the order they are attached: events at the issue,
/// the in-flight count kept by all. The comes last: attaching one takes milliseconds
/// (the verifier), and a request counted at its issue before its completion's program was
/// there would stay in flight for good (the count crept up by the requests of those
/// milliseconds).
const PROGRAMS: [(&str, &str); 3] = [
    ("on_complete", "block_rq_complete"),
    ("on_requeue", "block_rq_requeue"),
    ("on_issue", "block_rq_issue"),
];

/// The ring's default size: 16 MiB hold about 210,000 events (80 bytes each with the ring's
/// header), two seconds of a fast NVMe disk's 4k requests.
pub const RING_BYTES: usize = 16 << 20;

/// The share of the ring that wakes the reader: the kernel wakes a [`Capture::poll`] once
/// the ring holds a sixteenth of its size not yet read (1 MiB of the default 16: some
/// 13,000 events), not at each event (a wake-up per request would cost the traced requests
/// more than all the rest of the capture). Fewer wait for the poll's timeout.
const WAKE_SHARE: usize = 16;

/// Cgroups a filter keeps at most (`MAX_KEEP_CG`).
pub const MAX_CGROUPS: usize = 8;

/// Processes a filter keeps at most (the `pids` map's entries).
pub const MAX_PIDS: usize = 65_536;

/// Files a filter keeps at most.
pub const MAX_FILES: usize = crate::MAX_FILES as usize;

/// Which requests a capture keeps: those of any of the cgroups (kernfs ids, as
/// [`crate::Attribution::cgroups`]), issued while any of the processes (tgid) ran, or
/// writing or reading a page of any of the files. All empty: every request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureFilter {
    pub cgroups: Vec<u64>,
    pub pids: Vec<u32>,
    pub files: Vec<FileKey>,
}

impl CaptureFilter {
    /// Whether the filter keeps every request.
    pub fn is_empty(&self) -> bool {
        self.cgroups.is_empty() && self.pids.is_empty() && self.files.is_empty()
    }
}

/// Whether `bytes` can size the ring: a power of two of at least a page.
fn ring_size_ok(bytes: usize, page: usize) -> bool {
    bytes.is_power_of_two() && bytes >= page && u32::try_from(bytes).is_ok()
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096)
}

/// The attached programs and their ring; dropped = detached.
pub struct Capture {
    ebpf: Ebpf,
    ring: RingBuf<MapData>,
    filtered: bool,
    /// The processes in the `pids` map.
    pids: HashSet<u32>,
}

impl Capture {
    /// Attaches the capture to `disks` (whole disks), keeping the requests `filter` asks for
    /// (empty: all); `ring_bytes` sizes the ring buffer (a power of two of at least the page
    /// size; [`RING_BYTES`] is a default).
    pub fn start(
        disks: &[Disk],
        filter: &CaptureFilter,
        ring_bytes: usize,
    ) -> Result<Capture, Unavailable> {
        if OBJECT.is_empty() {
            return Err(Unavailable::NoClang);
        }
        if disks.len() > MAX_DISKS as usize {
            return Err(Unavailable::TooMany(disks.len()));
        }
        let page = page_size();
        if !ring_size_ok(ring_bytes, page) {
            return Err(Unavailable::RingSize(ring_bytes, page));
        }
        for (n, what, most) in [
            (filter.cgroups.len(), "cgroups", MAX_CGROUPS),
            (filter.pids.len(), "processes", MAX_PIDS),
            (filter.files.len(), "files", MAX_FILES),
        ] {
            if n > most {
                return Err(Unavailable::FilterTooLarge(n, what, most));
            }
        }
        let btf = kernel_btf()?;
        let mut traced = [0u32; MAX_DISKS as usize];
        for (slot, d) in traced.iter_mut().zip(disks) {
            *slot = d.dev_t();
        }
        let mut keep_cg = [0u64; MAX_CGROUPS];
        keep_cg[..filter.cgroups.len()].copy_from_slice(&filter.cgroups);
        let filtered = !filter.is_empty();
        let (n, n_cg, n_files) = (
            disks.len() as u32,
            filter.cgroups.len() as u32,
            filter.files.len() as u32,
        );
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .set_global("traced", &traced, true)
            .set_global("n_traced", &n, true)
            .set_global("filtered", &u32::from(filtered), true)
            .set_global("keep_cg", &keep_cg, true)
            .set_global("n_keep_cg", &n_cg, true)
            .set_global("n_files", &n_files, true)
            .set_global("wake_bytes", &((ring_bytes / WAKE_SHARE) as u64), true)
            .set_max_entries("events", ring_bytes as u32)
            // A map of none cannot be created: one entry, unused, when there is nothing.
            .set_max_entries("pids", if filtered { MAX_PIDS as u32 } else { 1 })
            .set_max_entries("files", n_files.max(1))
            .load(OBJECT)
            .map_err(|e| Unavailable::Load(one_line(&e)))?;
        {
            let mut files = hash_map::<FileKey>(&mut ebpf, "files")?;
            for f in &filter.files {
                files
                    .insert(f, 1, 0)
                    .map_err(|e| Unavailable::Map("files", one_line(&e)))?;
            }
        }
        let ring = ebpf
            .take_map("events")
            .ok_or_else(|| Unavailable::Load("no map events in the object".into()))?;
        let ring = RingBuf::try_from(ring).map_err(|e| Unavailable::Load(one_line(&e)))?;
        let mut capture = Capture {
            ebpf,
            ring,
            filtered,
            pids: HashSet::new(),
        };
        if filtered {
            capture.set_pids(&filter.pids)?;
        }
        for (name, tp) in PROGRAMS {
            attach(&mut capture.ebpf, &btf, name, tp)?;
        }
        Ok(capture)
    }

    /// Hands every event the kernel has produced to `f`, waiting up to `timeout` for some
    /// when there are none (poll(2) on the ring's descriptor, which the kernel wakes once the
    /// ring is a sixteenth full: a few events wait for the timeout); returns how many. An
    /// interrupted wait returns 0.
    pub fn poll(&mut self, timeout: Duration, mut f: impl FnMut(&Event)) -> io::Result<usize> {
        let n = self.drain(&mut f)?;
        if n > 0 {
            return Ok(n);
        }
        let mut pfd = libc::pollfd {
            fd: self.ring.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, its count 1.
        if unsafe { libc::poll(&mut pfd, 1, ms) } < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        self.drain(&mut f)
    }

    /// Every event in the ring, to `f`.
    fn drain(&mut self, f: &mut impl FnMut(&Event)) -> io::Result<usize> {
        let mut n = 0;
        while let Some(item) = self.ring.next() {
            let e = Event::parse(&item).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a capture event of {} bytes, not {}: the BPF object does not match its loader",
                        item.len(),
                        size_of::<RawEvent>()
                    ),
                )
            })?;
            f(&e);
            n += 1;
        }
        Ok(n)
    }

    /// Replaces the processes (tgid) whose requests the filter keeps (a database's backends
    /// come and go): the gone removed first, so that the map never holds more than the new.
    pub fn set_pids(&mut self, pids: &[u32]) -> Result<(), Unavailable> {
        if !self.filtered {
            return Err(Unavailable::Unfiltered);
        }
        let new: HashSet<u32> = pids.iter().copied().collect();
        if new.len() > MAX_PIDS {
            return Err(Unavailable::FilterTooLarge(
                new.len(),
                "processes",
                MAX_PIDS,
            ));
        }
        let mut map = hash_map::<u32>(&mut self.ebpf, "pids")?;
        for gone in self.pids.difference(&new) {
            // Not found: not there, as wished.
            let _ = map.remove(gone);
        }
        for pid in new.difference(&self.pids) {
            map.insert(pid, 1, 0)
                .map_err(|e| Unavailable::Map("pids", one_line(&e)))?;
        }
        self.pids = new;
        Ok(())
    }

    /// Events the kernel could not hand over so far (the ring was full), over all CPUs; 0
    /// when the map cannot be read.
    pub fn dropped(&self) -> u64 {
        self.sum("dropped", 1)
    }

    /// Requests on the disks that the filter left out so far, over all CPUs and disks.
    pub fn others(&self) -> u64 {
        self.sum("others", MAX_DISKS)
    }

    /// The sum of a per-CPU array's first `n` counters.
    fn sum(&self, name: &str, n: u32) -> u64 {
        let Some(map) = self
            .ebpf
            .map(name)
            .and_then(|m| PerCpuArray::<&MapData, u64>::try_from(m).ok())
        else {
            return 0;
        };
        (0..n)
            .filter_map(|i| map.get(&i, 0).ok())
            .map(|v| v.iter().sum::<u64>())
            .sum()
    }
}

/// The program's hash map `name`, keyed by `K`, its values a byte.
fn hash_map<'a, K: aya::Pod>(
    ebpf: &'a mut Ebpf,
    name: &'static str,
) -> Result<HashMap<&'a mut MapData, K, u8>, Unavailable> {
    let map = ebpf
        .map_mut(name)
        .ok_or_else(|| Unavailable::Load(format!("no map {name} in the object")))?;
    HashMap::try_from(map).map_err(|e| Unavailable::Map(name, one_line(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_a_power_of_two_pages_at_least() {
        assert!(ring_size_ok(RING_BYTES, 4096));
        assert!(ring_size_ok(4096, 4096));
        assert!(!ring_size_ok(2048, 4096));
        assert!(!ring_size_ok(3 << 20, 4096));
        assert!(!ring_size_ok(1 << 33, 4096));
        let e = Unavailable::RingSize(3000, 4096).to_string();
        assert!(e.contains("3000") && e.contains("power of two"), "{e}");
    }
}
