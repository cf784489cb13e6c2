//! Which rank talks to which: the shape the ranks' messages follow up to rank 0 (live counts,
//! each rank's part at the end) and out from any rank (a stop).
//!
//! A **binomial tree** (MPI's own for reductions of large data, MPICH's `MPIR_Reduce_binomial`):
//! rank `r`'s parent is `r` with its lowest set bit cleared, its children `r + 2^k` for every
//! `2^k` below that bit. Rank 0 has ⌈log2 N⌉ children, every path to it is at most that long,
//! so rank 0 receives O(log N) messages each the size of one rank's merged part, and the end
//! of a job costs O(log N) steps. A **star** is every rank a child of rank 0 (the flat
//! gather, kept where the merge is in rank order: calibrate's points, db runs).

use std::ops::Range;

/// The shape of the ranks' messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Every rank a child of rank 0.
    Star,
    /// A binomial tree (see the module's doc).
    Binomial,
}

impl Shape {
    /// The rank `rank` reports to; none for rank 0.
    pub fn parent(self, rank: u32) -> Option<u32> {
        match (self, rank) {
            (_, 0) => None,
            (Shape::Star, _) => Some(0),
            (Shape::Binomial, r) => Some(r & (r - 1)),
        }
    }

    /// The ranks that report to `rank` in a job of `size`, smallest subtree first.
    pub fn children(self, rank: u32, size: u32) -> Vec<u32> {
        match (self, rank) {
            (Shape::Star, 0) => (1..size).collect(),
            (Shape::Star, _) => Vec::new(),
            (Shape::Binomial, r) => {
                let below = match r {
                    0 => size.max(1).next_power_of_two(),
                    r => r & r.wrapping_neg(),
                };
                (0..u32::BITS)
                    .map(|k| 1u32 << k)
                    .take_while(|b| *b < below)
                    .map(|b| r + b)
                    .take_while(|c| *c < size)
                    .collect()
            }
        }
    }

    /// The ranks whose parts reach rank 0 through `rank` (itself included): a range.
    pub fn subtree(self, rank: u32, size: u32) -> Range<u32> {
        match (self, rank) {
            (_, 0) => 0..size,
            (Shape::Star, r) => r..r + 1,
            (Shape::Binomial, r) => r..(r + (r & r.wrapping_neg())).min(size),
        }
    }

    /// The ranks next to `rank` (its parent and children): where a stop it hears goes on.
    pub fn neighbours(self, rank: u32, size: u32) -> Vec<u32> {
        let mut n: Vec<u32> = self.parent(rank).into_iter().collect();
        n.extend(self.children(rank, size));
        n
    }
}

/// What goes up the tree at the end of a job: one rank's part, and once merged, a whole
/// subtree's. Merging is exact and in any grouping or order the same (series added interval
/// by interval, histograms bucket by bucket), so rank 0's result equals a flat merge's.
pub trait Bundle: serde::Serialize + serde::de::DeserializeOwned {
    /// Folds a child's subtree in; `bytes`: the size of the message it came in.
    fn absorb(&mut self, child: Self, bytes: u64) -> anyhow::Result<()>;
    /// The ranks `lost` whose parts never came: `first` died (it went silent), the others'
    /// parts went through it. `heard`: the live reports it sent, and the reads and writes
    /// they counted (over its subtree).
    fn lost(lost: Range<u32>, heard: (u64, [u64; 2])) -> Self;
    /// Made ready to send or to hand to rank 0's document (merged state encoded).
    fn seal(&mut self) -> anyhow::Result<()>;
}

/// One rank's row in a bundle: what every kind of part keeps per rank.
pub trait RankRow: Sized {
    fn rank(&self) -> u32;
    /// Bytes it sent on its way to rank 0.
    fn sent_mut(&mut self) -> &mut u64;
    /// The row of a rank whose part never came, saying `why`.
    fn lost(rank: u32, why: String) -> Self;
}

/// A child's rows joined to `mine`, in rank order; `bytes`, the size of the message they
/// came in, counted as sent by the child itself (the first of its rows).
pub fn join_rows<R: RankRow>(mine: &mut Vec<R>, mut theirs: Vec<R>, bytes: u64) {
    if let Some(first) = theirs.first_mut() {
        *first.sent_mut() += bytes;
    }
    mine.append(&mut theirs);
    mine.sort_by_key(R::rank);
}

/// The rows of ranks `lost` whose parts never came: the first died (it went silent), the
/// others' parts went through it; `heard`, what its part of the tree reported live.
pub fn lost_rows<R: RankRow>(lost: Range<u32>, (_, [reads, writes]): (u64, [u64; 2])) -> Vec<R> {
    let first = lost.start;
    lost.map(|rank| {
        R::lost(
            rank,
            match rank == first {
                true => format!(
                    "{} (it reported {reads} reads and {writes} writes live before, with the ranks whose parts came through it, which are not in the summary)",
                    super::place::LOST
                ),
                false => format!(
                    "its part went to rank 0 through rank {first}, which sent nothing: lost with it"
                ),
            },
        )
    })
    .collect()
}

/// A job's bundles merged up `shape` as the ranks do it (each rank's own, then each child's
/// subtree as a bundle that went through the wire's form), without MPI: for tests that the
/// tree's merge is the flat merge.
#[cfg(test)]
pub fn fold<B: Bundle>(shape: Shape, own: Vec<B>) -> B {
    fn up<B: Bundle>(shape: Shape, r: u32, own: &mut [Option<B>]) -> B {
        let size = own.len() as u32;
        let mut b = own[r as usize].take().expect("each rank's bundle once");
        // Children in reverse: the order they arrive in is any.
        for c in shape.children(r, size).into_iter().rev() {
            let mut child = up(shape, c, own);
            child.seal().unwrap();
            let wire = serde_json::to_vec(&child).unwrap();
            b.absorb(serde_json::from_slice(&wire).unwrap(), wire.len() as u64)
                .unwrap();
        }
        b
    }
    let mut own: Vec<Option<B>> = own.into_iter().map(Some).collect();
    let mut b = up(shape, 0, &mut own);
    b.seal().unwrap();
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ⌈log2 N⌉: the longest path to rank 0 up a binomial tree of `size` ranks.
    fn depth(size: u32) -> u32 {
        match size {
            0 | 1 => 0,
            n => u32::BITS - (n - 1).leading_zeros(),
        }
    }

    /// Every rank but 0 has one parent, is its parent's child, lies in its parent's subtree;
    /// the subtrees of a rank's children and itself partition its own; rank 0 has ⌈log2 N⌉
    /// children.
    #[test]
    fn the_binomial_tree_covers_every_rank_once() {
        for size in 1..=70u32 {
            for shape in [Shape::Star, Shape::Binomial] {
                let mut seen = vec![0u32; size as usize];
                for r in 0..size {
                    for c in shape.children(r, size) {
                        assert_eq!(shape.parent(c), Some(r), "{shape:?} {size} {c}");
                        seen[c as usize] += 1;
                    }
                    let mut covered: Vec<u32> = vec![r];
                    for c in shape.children(r, size) {
                        covered.extend(shape.subtree(c, size));
                    }
                    covered.sort();
                    assert_eq!(covered, shape.subtree(r, size).collect::<Vec<_>>(), "{r}");
                }
                assert_eq!(seen[0], 0);
                assert!(seen[1..].iter().all(|s| *s == 1), "{shape:?} {size}");
            }
            let kids = Shape::Binomial.children(0, size).len() as u32;
            assert_eq!(kids, depth(size), "{size}");
        }
        assert_eq!(Shape::Binomial.children(0, 8), [1, 2, 4]);
        assert_eq!(Shape::Binomial.children(4, 8), [5, 6]);
        assert_eq!(Shape::Binomial.children(4, 6), [5]);
        assert_eq!(Shape::Binomial.parent(6), Some(4));
        assert_eq!(depth(1000), 10);
        assert_eq!(depth(1024), 10);
        assert_eq!(depth(1025), 11);
    }

    /// Every path up the tree is at most `depth` hops.
    #[test]
    fn every_path_is_at_most_log2_hops() {
        for size in [2u32, 3, 5, 8, 64, 1000] {
            let d = depth(size);
            for r in 0..size {
                let (mut at, mut hops) = (r, 0);
                while let Some(p) = Shape::Binomial.parent(at) {
                    at = p;
                    hops += 1;
                }
                assert!(hops <= d, "{size} {r}");
            }
        }
    }
}
