//! The BPF maps' values as the programs lay them out (`struct counters`, `struct hist` in
//! `bpf/layers.bpf.c`), and their conversion to the model's [`StageCounters`].

use iogauge_model::layers::{StageCounters, StageHist};

/// `struct ring_counters`: one direction's io_uring requests and their summed time.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingCount {
    pub count: u64,
    pub sum_ns: u64,
}

// SAFETY: `repr(C)`, two u64 fields, no padding: every bit pattern is a valid value.
unsafe impl aya::Pod for RingCount {}

/// One direction's io_uring counts over every CPU's copy.
pub fn sum_ring(per_cpu: &[RingCount]) -> RingCount {
    per_cpu.iter().fold(RingCount::default(), |t, c| RingCount {
        count: t.count + c.count,
        sum_ns: t.sum_ns + c.sum_ns,
    })
}

/// The ring stage's histogram of one direction.
pub fn ring_hist(c: RingCount, h: &Hist) -> StageHist {
    stage_hist(c.count, c.sum_ns, Some(h))
}

/// `struct sampling`: which requests the programs time.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sampling {
    /// Block requests: 1 in 2^shift is timed, by a hash of its first sector and `salt`.
    pub shift: u32,
    pub salt: u32,
    /// This process's io_uring requests: 1 in 2^ring_shift, at random.
    pub ring_shift: u32,
    pub pad: u32,
}

// SAFETY: `repr(C)`, four u32 fields, no padding: every bit pattern is a valid value.
unsafe impl aya::Pod for Sampling {}

/// `struct origin`: another process's bios on the traced disks (cumulative).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub comm: [u8; 16],
    pub bios: u64,
    pub bytes: u64,
    pub writeback: u64,
}

// SAFETY: `repr(C)`, a byte array of 16 then u64 fields, no padding: every bit pattern is a
// valid value.
unsafe impl aya::Pod for Origin {}

impl Origin {
    /// The process's name: `comm` up to its NUL.
    pub fn name(&self) -> String {
        let end = self.comm.iter().position(|b| *b == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.comm[..end]).into_owned()
    }
}

/// Disks the programs can count (`MAX_DISKS`).
pub const MAX_DISKS: u32 = 64;
/// Cgroups the programs attribute to the job at most (`MAX_OURS`).
pub const MAX_OURS: usize = 4;
/// Read and write.
pub const DIRECTIONS: u32 = 2;
/// Pre-queue, queue, device (`enum stage`).
pub const STAGES: u32 = 3;
/// Buckets of one histogram (`BUCKETS`): `bucket_of` of 2^63 is below it.
pub const BUCKETS: usize = 1024;

/// `struct counters`: one direction of one disk.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub requests: u64,
    pub bytes: u64,
    pub merges: u64,
    pub splits: u64,
    pub requeues: u64,
    pub count: [u64; STAGES as usize],
    pub sum_ns: [u64; STAGES as usize],
}

// SAFETY: `repr(C)`, only u64 fields, no padding: every bit pattern is a valid value.
unsafe impl aya::Pod for Counters {}

/// `struct hist`: counts by `bucket_of`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Hist {
    pub buckets: [u64; BUCKETS],
}

// SAFETY: `repr(C)` array of u64: every bit pattern is a valid value.
unsafe impl aya::Pod for Hist {}

/// One direction's counters over every CPU's copy (the programs count per CPU).
pub fn sum_counters(per_cpu: &[Counters]) -> Counters {
    per_cpu.iter().fold(Counters::default(), |mut t, c| {
        t.requests += c.requests;
        t.bytes += c.bytes;
        t.merges += c.merges;
        t.splits += c.splits;
        t.requeues += c.requeues;
        for s in 0..STAGES as usize {
            t.count[s] += c.count[s];
            t.sum_ns[s] += c.sum_ns[s];
        }
        t
    })
}

/// One stage's histogram over every CPU's copy.
pub fn sum_hists(per_cpu: &[Hist]) -> Hist {
    per_cpu.iter().fold(
        Hist {
            buckets: [0; BUCKETS],
        },
        |mut t, h| {
            for (a, b) in t.buckets.iter_mut().zip(h.buckets.iter()) {
                *a += b;
            }
            t
        },
    )
}

fn stage_hist(count: u64, sum_ns: u64, h: Option<&Hist>) -> StageHist {
    let buckets = h.map_or_else(Vec::new, |h| {
        (0u32..)
            .zip(h.buckets.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(b, n)| (b, *n))
            .collect()
    });
    StageHist {
        count,
        sum_ns,
        buckets,
    }
}

/// One direction's counters and its requeues, from its map values (`hists` by stage: a
/// histogram that could not be read is empty).
pub fn stage_counters(c: Counters, hists: &[Option<Hist>]) -> (StageCounters, u64) {
    let h = |s: usize| {
        stage_hist(
            c.count[s],
            c.sum_ns[s],
            hists.get(s).and_then(Option::as_ref),
        )
    };
    (
        StageCounters {
            requests: c.requests,
            bytes: c.bytes,
            merges: c.merges,
            splits: c.splits,
            pre_queue: h(0),
            queue: h(1),
            device: h(2),
        },
        c.requeues,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::layers::bucket_of;

    #[test]
    fn map_values_become_stage_counters() {
        let mut device = Hist {
            buckets: [0; BUCKETS],
        };
        device.buckets[bucket_of(100_000) as usize] = 3;
        device.buckets[bucket_of(2_000_000) as usize] = 1;
        let c = Counters {
            requests: 4,
            bytes: 4 * 4096,
            requeues: 1,
            count: [0, 0, 4],
            sum_ns: [0, 0, 2_300_000],
            ..Default::default()
        };
        let (s, requeues) = stage_counters(c, &[None, None, Some(device)]);
        assert_eq!((s.requests, s.bytes, requeues), (4, 16384, 1));
        assert_eq!(
            s.device.buckets,
            [(bucket_of(100_000), 3), (bucket_of(2_000_000), 1)]
        );
        assert_eq!(s.device.mean_ns(), Some(575_000.0));
        assert!(s.queue.buckets.is_empty() && s.pre_queue.count == 0);
    }

    #[test]
    fn the_largest_bucket_fits() {
        assert!((bucket_of(1 << 63) as usize) < BUCKETS);
    }
}
