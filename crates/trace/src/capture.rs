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
use std::time::{Duration, Instant};

/// The object build.rs compiled or copied; empty when there was neither clang nor the
/// committed object.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/capture.bpf.o"));

/// The programs and their tracepoints: events at the issue, the in-flight count kept by all.
const PROGRAMS: [(&str, &str); 3] = [
    ("on_issue", "block_rq_issue"),
    ("on_complete", "block_rq_complete"),
    ("on_requeue", "block_rq_requeue"),
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

/// A request's operation (`enum req_op`, the low 8 bits of its flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventOp {
    Read,
    Write,
    /// A cache flush, 0 bytes (an fsync's `REQ_PREFLUSH` becomes one).
    Flush,
    Discard,
    WriteZeroes,
    /// Any other operation, by its number (secure erase, zone operations, drivers' own).
    Other(u8),
}

impl EventOp {
    /// The operation of a request's `cmd_flags`. The numbers of these five have been the same
    /// since Linux 4.10 (`include/linux/blk_types.h`), unlike the flags' bits.
    pub fn of(cmd_flags: u32) -> EventOp {
        match (cmd_flags & 0xff) as u8 {
            0 => EventOp::Read,
            1 => EventOp::Write,
            2 => EventOp::Flush,
            3 => EventOp::Discard,
            9 => EventOp::WriteZeroes,
            op => EventOp::Other(op),
        }
    }
}

/// One block request issued to a traced disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// When it was issued: nanoseconds of CLOCK_MONOTONIC (`bpf_ktime_get_ns`), comparable
    /// with [`monotonic_now_ns`]; [`Event::instant`] makes it an [`Instant`].
    pub at_ns: u64,
    /// The disk (major, minor).
    pub dev: (u32, u32),
    /// Its first 512-byte sector from the start of the disk (`u64::MAX` for a flush).
    pub sector: u64,
    pub bytes: u32,
    pub op: EventOp,
    /// `REQ_SYNC`, `REQ_FUA`, `REQ_PREFLUSH`, `REQ_META`, `REQ_RAHEAD`.
    pub sync: bool,
    pub fua: bool,
    pub preflush: bool,
    pub meta: bool,
    pub readahead: bool,
    /// The flags as the kernel had them (operation and flags; bits vary between kernels).
    pub cmd_flags: u32,
    /// The process and thread running when it was issued (see the module's doc).
    pub tgid: u32,
    pub pid: u32,
    /// That thread's name, NUL-padded ([`Event::comm`]).
    pub comm: [u8; 16],
    /// Its first bio's cgroup (kernfs id); 0 when it has no bio (a flush).
    pub cgroup: u64,
    /// The disk's requests in flight once it was issued, this one included (counted from the
    /// capture's start: those issued before it are not counted).
    pub in_flight: u32,
}

impl Event {
    /// The thread's name: `comm` up to its NUL.
    pub fn comm(&self) -> String {
        let end = self.comm.iter().position(|b| *b == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.comm[..end]).into_owned()
    }

    /// Its offset in bytes from the start of the disk; `None` for a request at no place (a
    /// flush, whose sector the kernel sets to -1).
    pub fn offset(&self) -> Option<u64> {
        self.sector.checked_mul(512)
    }

    /// [`Event::at_ns`] as an [`Instant`] (Rust's is CLOCK_MONOTONIC on Linux, but has no
    /// constructor from nanoseconds: it is the clock's now less the event's age).
    pub fn instant(&self) -> Instant {
        let now = Instant::now();
        let age = monotonic_now_ns().saturating_sub(self.at_ns);
        now.checked_sub(Duration::from_nanos(age)).unwrap_or(now)
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds: the clock of [`Event::at_ns`].
pub fn monotonic_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_MONOTONIC is always there on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `struct event` in `bpf/capture.bpf.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct RawEvent {
    at: u64,
    sector: u64,
    cgroup: u64,
    dev: u32,
    bytes: u32,
    cmd_flags: u32,
    flags: u32,
    tgid: u32,
    pid: u32,
    in_flight: u32,
    pad: u32,
    comm: [u8; 16],
}

/// `FLAG_*` in `bpf/capture.bpf.c`: the flags decoded there with the running kernel's bits.
const FLAG_SYNC: u32 = 1;
const FLAG_FUA: u32 = 2;
const FLAG_PREFLUSH: u32 = 4;
const FLAG_META: u32 = 8;
const FLAG_RAHEAD: u32 = 16;

impl Event {
    /// The event in a ring record; `None` when it is not `struct event`'s size.
    fn parse(bytes: &[u8]) -> Option<Event> {
        if bytes.len() != size_of::<RawEvent>() {
            return None;
        }
        // SAFETY: the length is checked; RawEvent is plain integers, valid for any bits; the
        // read is unaligned.
        let r: RawEvent = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
        Some(Event {
            at_ns: r.at,
            dev: (r.dev >> 20, r.dev & 0xf_ffff),
            sector: r.sector,
            bytes: r.bytes,
            op: EventOp::of(r.cmd_flags),
            sync: r.flags & FLAG_SYNC != 0,
            fua: r.flags & FLAG_FUA != 0,
            preflush: r.flags & FLAG_PREFLUSH != 0,
            meta: r.flags & FLAG_META != 0,
            readahead: r.flags & FLAG_RAHEAD != 0,
            cmd_flags: r.cmd_flags,
            tgid: r.tgid,
            pid: r.pid,
            comm: r.comm,
            cgroup: r.cgroup,
            in_flight: r.in_flight,
        })
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

    /// An event as the program writes it: its fields in `struct event`'s order.
    fn record(cmd_flags: u32, flags: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(5_000_000_000u64.to_ne_bytes());
        b.extend(2048u64.to_ne_bytes());
        b.extend(77u64.to_ne_bytes());
        for v in [(7 << 20) | 3, 65536, cmd_flags, flags, 100, 101, 4, 0u32] {
            b.extend(v.to_ne_bytes());
        }
        b.extend(*b"postgres\0\0\0\0\0\0\0\0");
        b
    }

    #[test]
    fn a_record_is_decoded_field_by_field() {
        let e = Event::parse(&record(1 | (1 << 11), FLAG_SYNC | FLAG_FUA)).unwrap();
        assert_eq!(e.dev, (7, 3));
        assert_eq!(
            (e.sector, e.offset(), e.bytes),
            (2048, Some(1 << 20), 65536)
        );
        assert_eq!((e.op, e.sync, e.fua), (EventOp::Write, true, true));
        assert!(!e.preflush && !e.meta && !e.readahead);
        assert_eq!((e.tgid, e.pid, e.cgroup, e.in_flight), (100, 101, 77, 4));
        assert_eq!(e.comm(), "postgres");
        assert_eq!(e.at_ns, 5_000_000_000);
        assert!(Event::parse(&record(0, 0)[1..]).is_none());
    }

    #[test]
    fn operations_are_the_kernel_s_numbers() {
        let ops = [0, 1, 2, 3, 9, 5, 35].map(EventOp::of);
        use EventOp::*;
        assert_eq!(
            ops,
            [
                Read,
                Write,
                Flush,
                Discard,
                WriteZeroes,
                Other(5),
                Other(35)
            ]
        );
        // The flags above the operation do not change it.
        assert_eq!(EventOp::of(1 | 1 << 18 | 1 << 17), Write);
    }

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

    #[test]
    fn the_clock_is_the_monotonic_one() {
        let (a, i) = (monotonic_now_ns(), Instant::now());
        let e = Event {
            at_ns: a,
            ..Event::parse(&record(0, 0)).unwrap()
        };
        assert!(e.instant().duration_since(i) < Duration::from_millis(50));
        assert!(i.duration_since(e.instant()) < Duration::from_millis(50));
    }
}
