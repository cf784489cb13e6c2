//! Deterministic request streams for the tests: a splitmix64 generator (Vigna's, as in
//! `java.util.SplittableRandom`) and the two reference traces the chunk sizes are measured on.

use crate::{Flags, Op, Request};

pub(crate) struct Rng(pub u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponential with the given mean (inverse transform).
    pub(crate) fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }

    /// In-flight count wandering by at most one a step within 1..=32.
    fn wander(&mut self, q: u16) -> u16 {
        match self.next() % 3 {
            0 => q.saturating_sub(1).max(1),
            1 => (q + 1).min(32),
            _ => q,
        }
    }
}

/// 8 KiB random aligned reads over 16 GiB at 20,000 IOPS (exponential inter-arrivals).
pub(crate) fn random_reads(n: usize, seed: u64) -> Vec<Request> {
    let mut rng = Rng(seed);
    let (mut at, mut q) = (0.0f64, 16u16);
    let blocks = (16u64 << 30) / 8192;
    (0..n)
        .map(|_| {
            at += rng.exp(50_000.0);
            q = rng.wander(q);
            Request {
                at_ns: at as u64,
                device: 0,
                offset: (rng.next() % blocks) * 8192,
                len: 8192,
                op: Op::Read,
                flags: Flags::NONE,
                issuer: 0,
                in_flight: q,
            }
        })
        .collect()
}

/// 128 KiB sequential reads at 16,000 IOPS (exponential inter-arrivals).
pub(crate) fn sequential_reads(n: usize, seed: u64) -> Vec<Request> {
    let mut rng = Rng(seed);
    let (mut at, mut q) = (0.0f64, 4u16);
    (0..n)
        .map(|i| {
            at += rng.exp(62_500.0);
            q = rng.wander(q);
            Request {
                at_ns: at as u64,
                device: 0,
                offset: i as u64 * 131_072,
                len: 131_072,
                op: Op::Read,
                flags: Flags::READAHEAD,
                issuer: 0,
                in_flight: q,
            }
        })
        .collect()
}

/// A temporary directory under the workspace's `target/tmp` (never the machine's /tmp).
pub(crate) fn scratch() -> tempfile::TempDir {
    let base = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp");
    std::fs::create_dir_all(base).expect("target/tmp can be created");
    tempfile::Builder::new()
        .prefix("iolog-")
        .tempdir_in(base)
        .expect("a temporary directory under target/tmp")
}

/// A header with `n` devices named `dev0`, `dev1`, ...
pub(crate) fn header(origin: crate::Origin, n: usize) -> crate::Header {
    crate::Header {
        origin,
        started_at: Some("2026-11-29T13:00:00Z".into()),
        devices: (0..n)
            .map(|i| crate::Device {
                name: format!("dev{i}"),
                major: 259,
                minor: i as u32,
                size: Some(16 << 30),
                logical_block: Some(512),
            })
            .collect(),
        filter: None,
    }
}
