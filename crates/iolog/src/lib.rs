//! Recorded block I/O: the requests a device was given, as iogauge captures them into a
//! trace (`.iogt` files or chunk BLOBs in the store), what a trace says about itself, its
//! [`Summary`], the [`Fidelity`] of a replay against its original, and import/export of fio
//! iologs and blktrace binaries.
//!
//! Boundary: pure data and formats. No BPF (the capture produces [`Request`]s), no I/O engine
//! (the replay consumes them), no CLI; the only I/O is through the `Read`/`Write`/`BufRead`
//! values the caller hands in, plus [`read_trace_file`]/[`detect`] which open a path.

use serde::{Deserialize, Serialize};
use std::ops::BitOr;

pub mod blktrace;
pub mod chunk;
mod detect;
mod error;
pub mod fidelity;
pub mod file;
pub mod fio;
pub mod hist;
pub mod summary;
#[cfg(test)]
mod testutil;
mod varint;

pub use blktrace::{parse_blktrace, read_blktrace, write_blktrace};
pub use chunk::{ChunkDecoder, ChunkEncoder};
pub use detect::{detect, Format};
pub use error::IologError;
pub use fidelity::{Fidelity, Tolerance};
pub use file::{read_trace_file, TraceContents, TraceReader, TraceWriter};
pub use fio::{parse_fio_iolog, write_fio_iolog_v3};
pub use hist::{ks_distance, HistBuckets};
pub use summary::{summarise, SizeCount, Summary, SummaryBuilder, TopIssuer};

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    Read,
    Write,
    Flush,
    Discard,
}

impl Op {
    /// The two bits the chunk encoding gives an op.
    pub(crate) fn code(self) -> u8 {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Flush => 2,
            Op::Discard => 3,
        }
    }

    pub(crate) fn from_code(code: u8) -> Op {
        match code & 3 {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Flush,
            _ => Op::Discard,
        }
    }

    /// Whether the request moves data (reads and writes: what IOPS, sizes and locality count).
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// Request flags as bits, in the kernel's sense (`REQ_SYNC`, `REQ_FUA`, `REQ_PREFLUSH`,
/// `REQ_META`, `REQ_RAHEAD`). Bits beyond these are kept as they are by every format of
/// this crate that can hold them (the chunk encoding holds all eight).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Flags(pub u8);

impl Flags {
    pub const NONE: Flags = Flags(0);
    pub const SYNC: Flags = Flags(1);
    pub const FUA: Flags = Flags(2);
    pub const PREFLUSH: Flags = Flags(4);
    pub const META: Flags = Flags(8);
    pub const READAHEAD: Flags = Flags(16);

    /// Whether every bit of `other` is set here.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits of both.
    pub fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

/// One block request as the device was given it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// When it was issued, in nanoseconds from the trace's start.
    pub at_ns: u64,
    /// Index into the trace's devices.
    pub device: u16,
    /// Bytes from the start of the device.
    pub offset: u64,
    /// Bytes (0 for a flush).
    pub len: u32,
    pub op: Op,
    pub flags: Flags,
    /// Index into the trace's issuers (`u32::MAX`: unknown).
    pub issuer: u32,
    /// The device's requests in flight when it was issued, itself included; 0: not known.
    pub in_flight: u16,
}

impl Request {
    /// The issuer index that means "not known".
    pub const UNKNOWN_ISSUER: u32 = u32::MAX;

    /// The byte just past the request (offsets near `u64::MAX` wrap rather than panic).
    pub fn end(&self) -> u64 {
        self.offset.wrapping_add(u64::from(self.len))
    }
}

/// A traced device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// Bytes.
    pub size: Option<u64>,
    pub logical_block: Option<u32>,
}

/// Who issued requests: the process in whose context the request was dispatched, and the
/// cgroup its bios carried.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Issuer {
    pub pid: u32,
    pub comm: String,
    pub cgroup: u64,
}

/// Where a trace came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Iogauge,
    Blktrace,
    FioIolog,
}

/// What a trace says about itself (written first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub origin: Origin,
    /// RFC 3339.
    pub started_at: Option<String>,
    pub devices: Vec<Device>,
    /// What was kept, in words.
    pub filter: Option<String>,
}

/// What is known only at the end (written last; a trace cut short has none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trailer {
    pub duration_ns: u64,
    pub requests: u64,
    /// Events the kernel could not hand over; `None`: not known.
    pub dropped: Option<u64>,
    /// Requests on the devices that the filter left out.
    pub others: Option<u64>,
}
