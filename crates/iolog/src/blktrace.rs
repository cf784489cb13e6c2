//! blktrace's binary records (`struct blk_io_trace` of the kernel's
//! `include/uapi/linux/blktrace_api.h`, as `blktrace` writes them per CPU and `blkparse -d`
//! writes them combined): import, and an export of issue (D) events for tests and tools.
//!
//! A record is 48 bytes — `magic` (`0x65617400 | version 7`), `sequence`, `time` (u64 ns),
//! `sector` (u64, 512 bytes), `bytes`, `action`, `pid`, `device` (the kernel's dev_t:
//! `major << 20 | minor`), `cpu` (u32 each unless said), `error` (u16), `pdu_len` (u16) — then
//! `pdu_len` bytes. The byte order is the tracing machine's; it is read from the magic.
//! `action` holds the category bits (`BLK_TC_*`) in its top 16 bits and the action
//! (`__BLK_TA_*`, plus `__BLK_TA_CGROUP` when the pdu starts with a cgroup id) in the low 16.
//!
//! What blktrace cannot hold: in-flight counts (imported as 0, not known), issuer indices
//! (imported as unknown; [`read_blktrace`] keeps pids and comms as issuers), offsets that are
//! not whole sectors, and whether a flush carried `REQ_PREFLUSH` (a flush is a write with the
//! FLUSH category and no bytes).

use crate::{Device, Flags, Header, IologError, Issuer, Op, Origin, Request};
use std::collections::HashMap;
use std::io::{self, Read, Write};

const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
const RECORD: usize = 48;

// Categories (top 16 bits of `action`), from blktrace_api.h's `enum blktrace_cat`.
const TC_READ: u32 = 1 << 0;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_SYNC: u32 = 1 << 3;
const TC_NOTIFY: u32 = 1 << 10;
const TC_AHEAD: u32 = 1 << 11;
const TC_META: u32 = 1 << 12;
const TC_DISCARD: u32 = 1 << 13;
const TC_FUA: u32 = 1 << 15;
const TC_SHIFT: u32 = 16;
// Actions (low bits), from `enum blktrace_act`.
const TA_QUEUE: u32 = 1;
const TA_ISSUE: u32 = 7;
const TA_CGROUP: u32 = 1 << 8;
// Notify actions: `__BLK_TN_PROCESS` maps a pid to its comm.
const TN_PROCESS: u32 = 0;

/// Whether four bytes are a blktrace magic (either byte order, version ignored).
pub(crate) fn is_magic(b: &[u8]) -> bool {
    let Ok(b) = <[u8; 4]>::try_from(b) else {
        return false;
    };
    u32::from_le_bytes(b) & !0xff == MAGIC || u32::from_be_bytes(b) & !0xff == MAGIC
}

/// One record's fixed part.
struct Raw {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
    cgroup: u64,
    /// The pdu after any cgroup id.
    pdu: Vec<u8>,
}

/// The trace's requests: issue (D) events when it has any, else queue (Q) events (what
/// fio's blktrace replay uses). Issuers are not kept (see [`read_blktrace`]).
pub fn parse_blktrace(r: impl Read) -> Result<(Header, Vec<Request>), IologError> {
    let (header, _, mut requests) = read_blktrace(r)?;
    for q in &mut requests {
        q.issuer = Request::UNKNOWN_ISSUER;
    }
    Ok((header, requests))
}

/// As [`parse_blktrace`], with each request's issuer: the pid blktrace recorded (for D events,
/// whoever dispatched the request), its comm from the trace's process notes (empty when it has
/// none) and the cgroup id when the kernel attached one.
pub fn read_blktrace(r: impl Read) -> Result<(Header, Vec<Issuer>, Vec<Request>), IologError> {
    let mut reader = io::BufReader::new(r);
    let mut offset = 0u64;
    let mut big_endian = None;
    let (mut issued, mut queued) = (Vec::new(), Vec::new());
    let mut comms = HashMap::new();
    while let Some(raw) = next_record(&mut reader, &mut offset, &mut big_endian)? {
        let category = raw.action >> TC_SHIFT;
        let act = raw.action & 0xff;
        if category & TC_NOTIFY != 0 {
            if act == TN_PROCESS {
                let end = raw
                    .pdu
                    .iter()
                    .position(|&b| b == 0)
                    .unwrap_or(raw.pdu.len());
                comms.insert(
                    raw.pid,
                    String::from_utf8_lossy(&raw.pdu[..end]).into_owned(),
                );
            }
            continue;
        }
        match act {
            TA_ISSUE => issued.push(raw),
            TA_QUEUE => queued.push(raw),
            _ => {}
        }
    }
    let (kept, filter) = match issued.is_empty() {
        false => (issued, "issue (D) events"),
        true => (queued, "queue (Q) events"),
    };
    Ok(requests_of(kept, filter, &comms))
}

/// The kept events as requests, in time order, with their devices and issuers.
fn requests_of(
    mut kept: Vec<Raw>,
    filter: &str,
    comms: &HashMap<u32, String>,
) -> (Header, Vec<Issuer>, Vec<Request>) {
    // Per-CPU buffers interleave: order by time (stable, so equal times keep file order).
    kept.sort_by_key(|r| r.time);
    let start = kept.first().map_or(0, |r| r.time);
    let (mut devices, mut device_of) = (Vec::new(), HashMap::new());
    let (mut issuers, mut issuer_of) = (Vec::new(), HashMap::new());
    let mut requests = Vec::with_capacity(kept.len());
    for raw in kept {
        let device = *device_of.entry(raw.device).or_insert_with(|| {
            let (major, minor) = (raw.device >> 20, raw.device & 0xf_ffff);
            devices.push(Device {
                name: format!("{major}:{minor}"),
                major,
                minor,
                size: None,
                logical_block: None,
            });
            // u16 devices: a trace of more than 65536 devices folds the rest into the last.
            u16::try_from(devices.len() - 1).unwrap_or(u16::MAX)
        });
        let issuer = *issuer_of.entry((raw.pid, raw.cgroup)).or_insert_with(|| {
            issuers.push(Issuer {
                pid: raw.pid,
                comm: comms.get(&raw.pid).cloned().unwrap_or_default(),
                cgroup: raw.cgroup,
            });
            u32::try_from(issuers.len() - 1).unwrap_or(u32::MAX)
        });
        let (op, flags) = op_of(raw.action >> TC_SHIFT, raw.bytes);
        requests.push(Request {
            at_ns: raw.time.saturating_sub(start),
            device,
            offset: raw.sector.wrapping_mul(512),
            len: raw.bytes,
            op,
            flags,
            issuer,
            in_flight: 0,
        });
    }
    let header = Header {
        origin: Origin::Blktrace,
        started_at: None,
        devices,
        filter: Some(filter.to_owned()),
    };
    (header, issuers, requests)
}

/// Reads one record, `None` at a clean end of the stream.
fn next_record(
    r: &mut impl Read,
    offset: &mut u64,
    big_endian: &mut Option<bool>,
) -> Result<Option<Raw>, IologError> {
    let at = *offset;
    let error = |what: String| IologError::Blktrace { offset: at, what };
    let mut b = [0u8; RECORD];
    let n = read_full(r, &mut b).map_err(|e| error(e.to_string()))?;
    if n == 0 {
        return Ok(None);
    }
    if n < RECORD {
        return Err(error(format!(
            "the file ends {n} bytes into a {RECORD}-byte record"
        )));
    }
    let magic_bytes: [u8; 4] = [b[0], b[1], b[2], b[3]];
    let be = *big_endian.get_or_insert(u32::from_be_bytes(magic_bytes) & !0xff == MAGIC);
    let u32_at = |i: usize| {
        let v = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if be {
            u32::from_be_bytes(v)
        } else {
            u32::from_le_bytes(v)
        }
    };
    let u64_at = |i: usize| {
        let (first, second) = (u64::from(u32_at(i)), u64::from(u32_at(i + 4)));
        if be {
            first << 32 | second
        } else {
            second << 32 | first
        }
    };
    let magic = u32_at(0);
    if magic & !0xff != MAGIC || magic & 0xff != VERSION {
        return Err(error(format!(
            "magic {magic:#010x}, not blktrace's {:#010x} (version 7)",
            MAGIC | VERSION
        )));
    }
    let pdu_len = usize::from(if be {
        u16::from_be_bytes([b[46], b[47]])
    } else {
        u16::from_le_bytes([b[46], b[47]])
    });
    let mut pdu = vec![0u8; pdu_len];
    let got = read_full(r, &mut pdu).map_err(|e| error(e.to_string()))?;
    if got < pdu_len {
        return Err(error(format!("the file ends inside a {pdu_len}-byte pdu")));
    }
    *offset += (RECORD + pdu_len) as u64;
    let action = u32_at(28);
    let mut cgroup = 0;
    if action & TA_CGROUP != 0 && pdu.len() >= 8 {
        let id: [u8; 8] = pdu[..8].try_into().unwrap_or_default();
        cgroup = if be {
            u64::from_be_bytes(id)
        } else {
            u64::from_le_bytes(id)
        };
        pdu.drain(..8);
    }
    Ok(Some(Raw {
        time: u64_at(8),
        sector: u64_at(16),
        bytes: u32_at(24),
        action,
        pid: u32_at(32),
        device: u32_at(36),
        cgroup,
        pdu,
    }))
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The kernel's categories as an op and flags (`__blk_add_trace` sets WRITE for every write
/// op, FLUSH for `REQ_OP_FLUSH` and for `REQ_PREFLUSH`, DISCARD for discards).
fn op_of(category: u32, bytes: u32) -> (Op, Flags) {
    let op = if category & TC_DISCARD != 0 {
        Op::Discard
    } else if category & TC_FLUSH != 0 && bytes == 0 {
        Op::Flush
    } else if category & TC_WRITE != 0 {
        Op::Write
    } else {
        Op::Read
    };
    let mut flags = Flags::NONE;
    for (tc, flag) in [
        (TC_SYNC, Flags::SYNC),
        (TC_FUA, Flags::FUA),
        (TC_META, Flags::META),
        (TC_AHEAD, Flags::READAHEAD),
    ] {
        if category & tc != 0 {
            flags = flags | flag;
        }
    }
    if category & TC_FLUSH != 0 && op != Op::Flush {
        flags = flags | Flags::PREFLUSH;
    }
    (op, flags)
}

fn category_of(r: &Request) -> u32 {
    let mut c = match r.op {
        Op::Read => TC_READ,
        Op::Write => TC_WRITE,
        Op::Flush => TC_WRITE | TC_FLUSH,
        Op::Discard => TC_WRITE | TC_DISCARD,
    };
    for (flag, tc) in [
        (Flags::SYNC, TC_SYNC),
        (Flags::FUA, TC_FUA),
        (Flags::META, TC_META),
        (Flags::READAHEAD, TC_AHEAD),
        (Flags::PREFLUSH, TC_FLUSH),
    ] {
        if r.flags.contains(flag) {
            c |= tc;
        }
    }
    c
}

/// Writes the requests as blktrace issue (D) events, little-endian, on CPU 0, pid 0 (the
/// header holds no pids), devices as `major << 20 | minor` of the header's devices.
pub fn write_blktrace(
    mut w: impl Write,
    header: &Header,
    requests: impl IntoIterator<Item = Request>,
) -> io::Result<()> {
    for (seq, r) in requests.into_iter().enumerate() {
        let d = header.devices.get(usize::from(r.device)).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("request {seq}: device {} is not in the header", r.device),
            )
        })?;
        let mut b = Vec::with_capacity(RECORD);
        b.extend_from_slice(&(MAGIC | VERSION).to_le_bytes());
        b.extend_from_slice(&(seq as u32).to_le_bytes());
        b.extend_from_slice(&r.at_ns.to_le_bytes());
        b.extend_from_slice(&(r.offset / 512).to_le_bytes());
        b.extend_from_slice(&r.len.to_le_bytes());
        b.extend_from_slice(&(category_of(&r) << TC_SHIFT | TA_ISSUE).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(d.major << 20 | (d.minor & 0xf_ffff)).to_le_bytes());
        b.extend_from_slice(&[0; 8]); // cpu, error, pdu_len
        w.write_all(&b)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{header, random_reads, scratch, sequential_reads};
    use proptest::prelude::*;

    /// What survives blktrace: whole sectors, no issuer, no in-flight, no PREFLUSH on flushes.
    fn blktrace_able(mut reqs: Vec<Request>) -> Vec<Request> {
        let ops = [Op::Read, Op::Write, Op::Flush, Op::Discard];
        for (i, r) in reqs.iter_mut().enumerate() {
            r.op = ops[i % 4];
            r.device = (i % 3) as u16;
            r.flags = Flags((i % 32) as u8);
            if r.op == Op::Flush {
                r.len = 0;
                r.flags = Flags(r.flags.0 & !Flags::PREFLUSH.0);
            }
            r.offset &= !511;
            r.issuer = Request::UNKNOWN_ISSUER;
            r.in_flight = 0;
        }
        reqs
    }

    /// A record as the kernel would write it, in either byte order.
    fn record(be: bool, time: u64, action: u32, pid: u32, pdu: &[u8]) -> Vec<u8> {
        let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let u64b = |v: u64| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut b = Vec::new();
        b.extend_from_slice(&u32b(MAGIC | VERSION));
        b.extend_from_slice(&u32b(0));
        b.extend_from_slice(&u64b(time));
        b.extend_from_slice(&u64b(2048));
        b.extend_from_slice(&u32b(4096));
        b.extend_from_slice(&u32b(action));
        b.extend_from_slice(&u32b(pid));
        b.extend_from_slice(&u32b(8 << 20 | 16));
        b.extend_from_slice(&u32b(1));
        b.extend_from_slice(
            &(if be {
                0u16.to_be_bytes()
            } else {
                0u16.to_le_bytes()
            }),
        );
        let n = pdu.len() as u16;
        b.extend_from_slice(&(if be { n.to_be_bytes() } else { n.to_le_bytes() }));
        b.extend_from_slice(pdu);
        b
    }

    #[test]
    fn written_d_events_parse_back_to_the_same_requests() {
        let mut reqs = random_reads(500, 5);
        let last = reqs[499].at_ns;
        reqs.extend(sequential_reads(500, 6).into_iter().map(|mut r| {
            r.at_ns += last;
            r
        }));
        let reqs = blktrace_able(reqs);
        let h = header(Origin::Iogauge, 3);
        let mut bytes = Vec::new();
        write_blktrace(&mut bytes, &h, reqs.iter().copied()).unwrap();
        let (h2, got) = parse_blktrace(&bytes[..]).unwrap();
        // Times are counted from the first event.
        let t0 = reqs[0].at_ns;
        let want: Vec<Request> = reqs
            .iter()
            .map(|r| Request {
                at_ns: r.at_ns - t0,
                ..*r
            })
            .collect();
        assert!(got == want, "requests differ");
        let names: Vec<_> = h2.devices.iter().map(|d| (d.major, d.minor)).collect();
        let wanted: Vec<_> = h.devices.iter().map(|d| (d.major, d.minor)).collect();
        assert_eq!(names, wanted);
        assert_eq!(h2.filter.as_deref(), Some("issue (D) events"));
    }

    #[test]
    fn either_byte_order_q_when_no_d_and_comms_and_cgroups() {
        for be in [false, true] {
            let q = (TC_WRITE | TC_SYNC) << TC_SHIFT | TA_QUEUE;
            let mut cg = 77u64.to_le_bytes().to_vec();
            if be {
                cg = 77u64.to_be_bytes().to_vec();
            }
            let mut bytes = record(be, 1_000, q, 42, &[]);
            bytes.extend(record(be, 500, q | TA_CGROUP, 43, &cg));
            bytes.extend(record(
                be,
                600,
                TC_NOTIFY << TC_SHIFT | TN_PROCESS,
                42,
                b"postgres\0",
            ));
            // A completion: neither kept nor an error.
            bytes.extend(record(be, 700, TC_READ << TC_SHIFT | 8, 42, &[]));
            let (h, issuers, reqs) = read_blktrace(&bytes[..]).unwrap();
            assert_eq!(h.filter.as_deref(), Some("queue (Q) events"));
            assert_eq!((h.devices[0].major, h.devices[0].minor), (8, 16));
            assert_eq!(reqs.len(), 2, "be={be}");
            assert_eq!((reqs[0].at_ns, reqs[1].at_ns), (0, 500), "sorted by time");
            assert_eq!(
                (reqs[0].op, reqs[0].flags, reqs[0].offset),
                (Op::Write, Flags::SYNC, 2048 * 512)
            );
            assert_eq!(issuers[usize::try_from(reqs[0].issuer).unwrap()].cgroup, 77);
            let pg = &issuers[usize::try_from(reqs[1].issuer).unwrap()];
            assert_eq!((pg.pid, pg.comm.as_str()), (42, "postgres"));
            assert!(is_magic(&bytes[..4]), "be={be}");
        }
    }

    #[test]
    fn damaged_records_say_where() {
        let good = record(false, 1, TC_READ << TC_SHIFT | TA_ISSUE, 1, &[]);
        let mut two = good.clone();
        two.extend_from_slice(&good[..30]);
        let msg = parse_blktrace(&two[..]).unwrap_err().to_string();
        assert!(msg.contains("byte 48") && msg.contains("30 bytes"), "{msg}");
        let mut bad = good.clone();
        bad.extend_from_slice(&good);
        bad[48] = 0x06;
        let msg = parse_blktrace(&bad[..]).unwrap_err().to_string();
        assert!(
            msg.contains("byte 48") && msg.contains("0x65617406"),
            "{msg}"
        );
    }

    /// blkparse reads what we write, when it is installed (it is not on every machine).
    #[test]
    fn blkparse_reads_our_d_events() {
        if std::process::Command::new("blkparse")
            .arg("-V")
            .output()
            .is_err()
        {
            eprintln!("blkparse is not installed: cross-check skipped");
            return;
        }
        let dir = scratch();
        let reqs = blktrace_able(random_reads(100, 8));
        let path = dir.path().join("t.blktrace.0");
        let mut f = std::fs::File::create(&path).unwrap();
        write_blktrace(&mut f, &header(Origin::Iogauge, 3), reqs.iter().copied()).unwrap();
        let out = std::process::Command::new("blkparse")
            .args(["-i", "t", "-D"])
            .arg(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let d_lines = text
            .lines()
            .filter(|l| l.split_whitespace().nth(5) == Some("D"))
            .count();
        assert_eq!(d_lines, reqs.len(), "{text}");
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse_blktrace(&bytes[..]);
            let mut framed = record(false, 1, TA_ISSUE, 1, &[]);
            framed.extend_from_slice(&bytes);
            let _ = parse_blktrace(&framed[..]);
        }
    }
}
