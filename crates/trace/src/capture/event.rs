//! A captured request as the program writes it (`struct event` in `bpf/capture.bpf.c`) and
//! as [`Capture::poll`](super::Capture::poll) hands it over: decoded from the ring's bytes
//! here, apart from the reading, so that it is tested on records made by hand.

use std::time::{Duration, Instant};

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
pub(super) struct RawEvent {
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
    pub(super) fn parse(bytes: &[u8]) -> Option<Event> {
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
