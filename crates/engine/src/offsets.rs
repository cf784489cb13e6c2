//! Offset generation: which I/O comes next (direction, target, offset, length).
//!
//! The tested space is the concatenation of every target's region (the `concat` layout);
//! a logical offset maps to one `(target, offset)` extent. Every offset is aligned to the job's
//! alignment and every I/O lies wholly inside one target's region.

use iogauge_model::spec::{Dist, JobSpec};
use iogauge_stats::Direction;
use rand::SeedableRng;
use rand_core::RngCore;
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The region of one target inside the logical space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub target: u32,
    /// Byte offset inside the target.
    pub start: u64,
    pub len: u64,
}

/// The logical space: target regions one after another.
#[derive(Clone, Debug)]
pub struct Space {
    extents: Vec<Extent>,
    /// `ends[i]` = logical end of extent i (exclusive).
    ends: Vec<u64>,
}

impl Space {
    pub fn new(extents: Vec<Extent>) -> Self {
        let mut acc = 0;
        let ends = extents
            .iter()
            .map(|e| {
                acc += e.len;
                acc
            })
            .collect();
        Space { extents, ends }
    }

    pub fn total(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0)
    }

    pub fn extents(&self) -> &[Extent] {
        &self.extents
    }

    /// Index of the extent holding logical offset `l` (< total).
    fn find(&self, l: u64) -> usize {
        if self.ends.len() == 1 {
            0
        } else {
            self.ends.partition_point(|&e| e <= l)
        }
    }

    fn logical_start(&self, i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            self.ends[i - 1]
        }
    }

    /// Places an I/O of `len` bytes at logical offset `l`: the extent holding `l`, with the
    /// offset pulled back (aligned) so the I/O ends inside that extent.
    fn place(&self, l: u64, len: u64, align: u64) -> (u32, u64) {
        let i = self.find(l);
        let e = self.extents[i];
        let within = l - self.logical_start(i);
        let last = (e.len - len) / align * align;
        (e.target, e.start + within.min(last))
    }
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub dir: Direction,
    pub target: u32,
    pub offset: u64,
    pub len: u32,
}

enum Pattern {
    Uniform,
    Zipf {
        dist: Zipf<f64>,
        blocks: u64,
    },
    Hotspot {
        start: u64,
        len: u64,
        every: u32,
        n: u32,
    },
    /// The worker's own slice `[start, end)` of the space, streamed from its start and
    /// wrapped within it.
    Sequential {
        start: u64,
        end: u64,
        cursor: u64,
    },
}

/// One worker's generator: its own RNG stream, so workers never share state.
pub struct OpGen {
    rng: Xoshiro256PlusPlus,
    space: Space,
    align: u64,
    read_share: u8,
    /// Block sizes with cumulative percentages.
    sizes: Vec<(u64, u8)>,
    pattern: Pattern,
}

/// A multiplier for scattering zipf ranks over the blocks: 2^61 − 1 is prime and larger than
/// any block count, so `rank × P mod n` is a bijection on `0..n` (hot blocks spread out,
/// as fio's zipf spreads them, instead of piling up at the start of the target).
const SCATTER: u128 = (1 << 61) - 1;

impl OpGen {
    /// A generator for worker `worker` of `workers`. `space.total()` must be ≥ the largest block.
    pub fn new(spec: &JobSpec, space: Space, worker: u32, workers: u32) -> Self {
        let align = spec.align();
        let total = space.total();
        let pattern = if !spec.rw.is_random() {
            // Each worker streams its own slice and wraps within it, so workers never read
            // the same blocks (ORION's sequential streams: "each stream has its own
            // sequential region"; fio's jobs with offset_increment loop over their own size).
            // The last slice takes the remainder.
            let workers = u64::from(workers.max(1));
            let slice = total / workers / align * align;
            let start = slice * u64::from(worker);
            let end = if u64::from(worker) + 1 >= workers {
                total
            } else {
                start + slice
            };
            Pattern::Sequential {
                start,
                end,
                cursor: start,
            }
        } else {
            match spec.dist {
                Dist::Uniform => Pattern::Uniform,
                Dist::Zipf { theta } => {
                    let blocks = (total / align).max(1);
                    Pattern::Zipf {
                        dist: Zipf::new(blocks as f64, theta).expect("validated zipf parameters"),
                        blocks,
                    }
                }
                Dist::Hotspot {
                    size,
                    offset,
                    every,
                } => {
                    let start = offset.min(total.saturating_sub(size)) / align * align;
                    Pattern::Hotspot {
                        start,
                        len: size.min(total - start),
                        every,
                        n: 0,
                    }
                }
            }
        };
        let mut cum = 0u8;
        let sizes = spec
            .bs
            .0
            .iter()
            .map(|s| {
                cum += s.pct;
                (s.bs, cum)
            })
            .collect();
        // SplitMix-style seed per worker so streams differ even for adjacent seeds.
        let seed = spec.seed ^ (u64::from(worker) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        OpGen {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            space,
            align,
            read_share: spec.rw.read_share(spec.read_pct),
            sizes,
            pattern,
        }
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift; the bias is below n/2^64).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.rng.next_u64()) * u128::from(n)) >> 64) as u64
    }

    #[inline]
    fn uniform_in(&mut self, start: u64, len: u64, bs: u64) -> u64 {
        let slots = len.saturating_sub(bs) / self.align + 1;
        start + self.below(slots) * self.align
    }

    #[inline]
    pub fn next_op(&mut self) -> Op {
        let dir = match self.read_share {
            100 => Direction::Read,
            0 => Direction::Write,
            r => {
                if self.below(100) < u64::from(r) {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
        };
        let bs = if self.sizes.len() == 1 {
            self.sizes[0].0
        } else {
            let p = self.below(100) as u8;
            self.sizes
                .iter()
                .find(|(_, c)| p < *c)
                .map_or(self.sizes[0].0, |s| s.0)
        };
        let total = self.space.total();
        let logical = match &mut self.pattern {
            Pattern::Uniform => self.uniform_in(0, total, bs),
            Pattern::Zipf { dist, blocks } => {
                let rank = dist.sample(&mut self.rng) as u64 - 1;
                let block = (u128::from(rank) * SCATTER % u128::from(*blocks)) as u64;
                block * self.align
            }
            Pattern::Hotspot {
                start,
                len,
                every,
                n,
            } => {
                *n += 1;
                if *n >= *every {
                    *n = 0;
                    let (s, l) = (*start, *len);
                    self.uniform_in(s, l.max(bs), bs)
                } else {
                    self.uniform_in(0, total, bs)
                }
            }
            Pattern::Sequential { start, end, cursor } => {
                // A slice too small for the block (more workers than blocks) streams the
                // whole space instead.
                let (lo, hi) = if *end - *start >= bs {
                    (*start, *end)
                } else {
                    (0, total)
                };
                let mut here = if *cursor + bs > hi { lo } else { *cursor };
                // An I/O never straddles two targets: skip to the next extent when it would.
                let ext_end = self.space.ends[self.space.find(here)];
                if here + bs > ext_end {
                    here = ext_end;
                }
                if here + bs > hi {
                    here = lo;
                }
                *cursor = here + bs;
                here
            }
        };
        let (target, offset) = self.space.place(logical, bs, self.align);
        Op {
            dir,
            target,
            offset,
            len: bs as u32,
        }
    }
}

/// Checks that a job's block sizes fit in every extent; the error names the smallest.
pub fn check_fits(space: &Space, max_bs: u64) -> Result<(), Extent> {
    match space.extents().iter().find(|e| e.len < max_bs) {
        Some(e) => Err(*e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::spec::{BlockSplit, RwMode};
    use proptest::prelude::*;

    fn spec(rw: RwMode, bs: &str, dist: &str) -> JobSpec {
        let mut j = JobSpec::new(rw);
        j.bs = bs.parse().unwrap();
        j.dist = dist.parse().unwrap();
        j
    }

    fn one(len: u64) -> Space {
        Space::new(vec![Extent {
            target: 0,
            start: 0,
            len,
        }])
    }

    fn inside(space: &Space, op: &Op, align: u64) -> bool {
        op.offset.is_multiple_of(align)
            && space.extents().iter().any(|e| {
                e.target == op.target
                    && op.offset >= e.start
                    && op.offset + u64::from(op.len) <= e.start + e.len
            })
    }

    proptest! {
        /// Offsets are aligned and every I/O lies inside one target's region, for every
        /// pattern, block split and set of extents.
        #[test]
        fn offsets_aligned_and_inside_region(
            lens in proptest::collection::vec(1u64..400, 1..4),
            starts in proptest::collection::vec(0u64..100, 4),
            mode in 0usize..6,
            seed in any::<u64>(),
        ) {
            let (rw, dist) = [
                (RwMode::RandRead, "uniform"),
                (RwMode::RandRw, "zipf:1.1"),
                (RwMode::RandWrite, "hotspot:64k@100k:3"),
                (RwMode::Read, "uniform"),
                (RwMode::Write, "uniform"),
                (RwMode::RandRead, "zipf:0.5"),
            ][mode];
            let mut j = spec(rw, "4k:60,64k:30,16k:10", dist);
            j.seed = seed;
            let extents: Vec<Extent> = lens.iter().enumerate().map(|(i, l)| Extent {
                target: i as u32,
                start: starts[i] * 4096,
                len: (l + 16) * 4096,
            }).collect();
            let space = Space::new(extents);
            let mut g = OpGen::new(&j, space.clone(), 1, 3);
            for _ in 0..2000 {
                let op = g.next_op();
                prop_assert!(inside(&space, &op, j.align()), "{op:?} outside {space:?}");
            }
        }
    }

    #[test]
    fn uniform_covers_the_region_evenly() {
        let j = spec(RwMode::RandRead, "8k", "uniform");
        let mut g = OpGen::new(&j, one(64 << 20), 0, 1);
        let mut buckets = [0u32; 8];
        let n = 200_000;
        for _ in 0..n {
            buckets[(g.next_op().offset / (8 << 20)) as usize] += 1;
        }
        for b in buckets {
            let share = f64::from(b) / f64::from(n);
            assert!((share - 0.125).abs() < 0.005, "bucket share {share}");
        }
    }

    #[test]
    fn read_share_and_block_split_hit_their_percentages() {
        let mut j = spec(RwMode::RandRw, "8k:70,1m:30", "uniform");
        j.read_pct = 25;
        let mut g = OpGen::new(&j, one(1 << 30), 0, 1);
        let (mut reads, mut big) = (0u32, 0u32);
        let n = 100_000;
        for _ in 0..n {
            let op = g.next_op();
            reads += u32::from(op.dir == Direction::Read);
            big += u32::from(op.len == 1 << 20);
        }
        let (r, b) = (
            f64::from(reads) / f64::from(n),
            f64::from(big) / f64::from(n),
        );
        assert!((r - 0.25).abs() < 0.01, "read share {r}");
        assert!((b - 0.30).abs() < 0.01, "1m share {b}");
    }

    #[test]
    fn hotspot_gets_every_nth_io_plus_its_uniform_share() {
        // 64 MiB hot range at 128 MiB of a 1 GiB region, every 4th I/O: expected share
        // 1/4 + 3/4 × 64/1024.
        let j = spec(RwMode::RandRead, "8k", "hotspot:64m@128m:4");
        let mut g = OpGen::new(&j, one(1 << 30), 0, 1);
        let n = 200_000;
        let hot = (0..n)
            .map(|_| g.next_op().offset)
            .filter(|o| (128 << 20..192 << 20).contains(o))
            .count();
        let want = 0.25 + 0.75 * 64.0 / 1024.0;
        let got = hot as f64 / f64::from(n);
        assert!((got - want).abs() < 0.01, "hot share {got}, want {want}");
    }

    #[test]
    fn zipf_top_blocks_get_the_zipf_share_and_are_scattered() {
        // With n blocks and exponent s, the k most popular blocks get H(k,s)/H(n,s) of I/Os.
        let blocks = 1u64 << 14;
        let theta = 1.2;
        let j = spec(RwMode::RandRead, "4k", "zipf:1.2");
        let mut g = OpGen::new(&j, one(blocks * 4096), 0, 1);
        let n = 300_000;
        let mut counts = vec![0u32; blocks as usize];
        for _ in 0..n {
            counts[(g.next_op().offset / 4096) as usize] += 1;
        }
        let h = |k: u64| (1..=k).map(|i| (i as f64).powf(-theta)).sum::<f64>();
        let top = 16;
        let want = h(top) / h(blocks);
        let mut sorted = counts.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let got = sorted[..top as usize]
            .iter()
            .map(|&c| f64::from(c))
            .sum::<f64>()
            / f64::from(n);
        assert!(
            (got - want).abs() < 0.01,
            "top-{top} share {got}, want {want}"
        );
        // The hottest block is not simply block 0..16: ranks are scattered.
        let hottest = counts
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| **c)
            .unwrap()
            .0;
        assert_eq!(hottest, 0, "rank 1 maps to block 0 (0 × P mod n)");
        let second = (0..blocks as usize)
            .filter(|&b| b != 0)
            .max_by_key(|&b| counts[b])
            .unwrap();
        assert!(
            second > 16,
            "rank 2 should land away from the start, got block {second}"
        );
    }

    #[test]
    fn sequential_workers_stream_their_own_slices_and_wrap() {
        let j = spec(RwMode::Read, "1m", "uniform");
        let mut g0 = OpGen::new(&j, one(8 << 20), 0, 2);
        let mut g1 = OpGen::new(&j, one(8 << 20), 1, 2);
        let a: Vec<u64> = (0..5).map(|_| g0.next_op().offset >> 20).collect();
        let b: Vec<u64> = (0..5).map(|_| g1.next_op().offset >> 20).collect();
        assert_eq!(a, [0, 1, 2, 3, 0], "wraps within its own slice");
        assert_eq!(b, [4, 5, 6, 7, 4]);
        // Three workers over 10 MiB: slices of 3, 3 and the remaining 4 MiB.
        let mut g2 = OpGen::new(&j, one(10 << 20), 2, 3);
        let c: Vec<u64> = (0..6).map(|_| g2.next_op().offset >> 20).collect();
        assert_eq!(c, [6, 7, 8, 9, 6, 7]);
        // More workers than blocks: each streams the whole space.
        let mut g = OpGen::new(&j, one(2 << 20), 3, 4);
        let d: Vec<u64> = (0..3).map(|_| g.next_op().offset >> 20).collect();
        assert_eq!(d, [0, 1, 0]);
    }

    #[test]
    fn sequential_never_straddles_targets() {
        let j = spec(RwMode::Write, "64k", "uniform");
        let space = Space::new(vec![
            Extent {
                target: 0,
                start: 0,
                len: 96 << 10,
            },
            Extent {
                target: 1,
                start: 0,
                len: 128 << 10,
            },
        ]);
        let mut g = OpGen::new(&j, space, 0, 1);
        let ops: Vec<(u32, u64)> = (0..4)
            .map(|_| {
                let o = g.next_op();
                (o.target, o.offset >> 10)
            })
            .collect();
        assert_eq!(ops, [(0, 0), (1, 0), (1, 64), (0, 0)]);
        assert!(check_fits(&one(4096), BlockSplit::single(8192).max()).is_err());
    }
}
