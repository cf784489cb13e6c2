//! A running job's live counts, reduced on their way to rank 0: each rank adds its own
//! interval's counts to what its children sent for the same interval and passes one entry per
//! interval up, so rank 0 hears from its children alone (O(log N) messages an interval up a
//! binomial tree), not from every rank. An entry holds the sum over the ranks it covers and
//! the slowest and fastest of them (I/Os in the interval, with the rank): the job's totals
//! and its spread, live.

/// One interval's counts over the ranks an entry covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveAgg {
    /// Phase and index of the interval (see `Talk`'s `key`).
    pub key: u64,
    /// How many ranks the entry covers.
    pub ranks: u32,
    /// Reads, writes, read bytes, write bytes.
    pub io: [u64; 4],
    /// The fewest I/Os any covered rank did in the interval, and that rank.
    pub slowest: (u64, u32),
    /// The most, and that rank.
    pub fastest: (u64, u32),
}

/// Words (u64) one entry takes on the wire.
pub const WORDS: usize = 10;
/// Words before the entries: the sender's rank and the entries' count.
const HEAD: usize = 2;

impl LiveAgg {
    /// One rank's own interval.
    pub fn one(key: u64, rank: u32, io: [u64; 4]) -> LiveAgg {
        let ios = io[0] + io[1];
        LiveAgg {
            key,
            ranks: 1,
            io,
            slowest: (ios, rank),
            fastest: (ios, rank),
        }
    }

    /// Folds another entry of the same interval in (ties keep the lower rank: the same
    /// answer whatever order entries arrive in).
    pub fn add(&mut self, o: &LiveAgg) {
        if self.ranks == 0 {
            *self = *o;
            return;
        }
        if o.ranks == 0 {
            return;
        }
        self.ranks += o.ranks;
        for (a, b) in self.io.iter_mut().zip(o.io) {
            *a += b;
        }
        let slower = |a: (u64, u32), b: (u64, u32)| a.0 < b.0 || (a.0 == b.0 && a.1 < b.1);
        let faster = |a: (u64, u32), b: (u64, u32)| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
        if slower(o.slowest, self.slowest) {
            self.slowest = o.slowest;
        }
        if faster(o.fastest, self.fastest) {
            self.fastest = o.fastest;
        }
    }
}

/// A message of `from` carrying `entries` (none: a beat, saying the rank is alive).
pub fn encode(from: u32, entries: &[LiveAgg]) -> Vec<u64> {
    let mut v = Vec::with_capacity(HEAD + WORDS * entries.len());
    v.extend([u64::from(from), entries.len() as u64]);
    for e in entries {
        v.extend([
            e.key,
            u64::from(e.ranks),
            e.io[0],
            e.io[1],
            e.io[2],
            e.io[3],
            e.slowest.0,
            u64::from(e.slowest.1),
            e.fastest.0,
            u64::from(e.fastest.1),
        ]);
    }
    v
}

/// The sender and entries of a message; `None` when it is not one `encode` made.
pub fn decode(v: &[u64]) -> Option<(u32, Vec<LiveAgg>)> {
    let (&[from, n], rest) = v.split_first_chunk::<HEAD>()?;
    if rest.len() != WORDS * usize::try_from(n).ok()? {
        return None;
    }
    let narrow = |w: u64| u32::try_from(w).ok();
    let entries = rest
        .chunks_exact(WORDS)
        .map(|c| {
            Some(LiveAgg {
                key: c[0],
                ranks: narrow(c[1])?,
                io: [c[2], c[3], c[4], c[5]],
                slowest: (c[6], narrow(c[7])?),
                fastest: (c[8], narrow(c[9])?),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((narrow(from)?, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reduced in any grouping and order, the entries of one interval give the same sum,
    /// slowest and fastest (ties to the lower rank), and survive the wire.
    #[test]
    fn a_reduction_is_the_same_in_any_order() {
        let ones: Vec<LiveAgg> = [(5u64, 0u32), (2, 1), (9, 2), (2, 3), (9, 4), (7, 5)]
            .iter()
            .map(|&(ios, r)| LiveAgg::one(7, r, [ios, 0, ios * 4096, 0]))
            .collect();
        let flat = ones.iter().fold(LiveAgg::default(), |mut a, e| {
            a.add(e);
            a
        });
        assert_eq!(flat.ranks, 6);
        assert_eq!(flat.io[0], 34);
        assert_eq!(flat.slowest, (2, 1));
        assert_eq!(flat.fastest, (9, 2));
        for split in 1..ones.len() {
            let (a, b) = ones.split_at(split);
            let mut left = b.iter().rev().fold(LiveAgg::default(), |mut a, e| {
                a.add(e);
                a
            });
            let right = a.iter().fold(LiveAgg::default(), |mut a, e| {
                a.add(e);
                a
            });
            let (_, wire) = decode(&encode(3, &[right])).unwrap();
            left.add(&wire[0]);
            assert_eq!(left, flat, "{split}");
        }
        assert_eq!(decode(&encode(9, &[])), Some((9, Vec::new())));
        assert_eq!(decode(&[1, 2, 3]), None);
    }
}
