//! Layouts (issue #8): how one logical I/O becomes I/Os on the member targets. Pure mapping,
//! no I/O: the engine generates offsets in `0..logical_size()` and issues what [`Layout::map`]
//! returns; member offsets are relative to the start of each member's region.
//!
//! - `concat`: members one after another (what `offsets::Space` does today); an I/O that
//!   runs past a member's end continues on the next member.
//! - `stripe:UNIT`: RAID 0. The logical space is cut into allocation units (AUs) of UNIT
//!   bytes, dealt round-robin over the members: AU `c` lies on member `c mod n` at
//!   `(c / n) × UNIT`. Every member contributes the smallest member's whole AUs, so
//!   `logical_size = n × ⌊min size / UNIT⌋ × UNIT`.
//! - `mirror:N[,stripe:UNIT]`: N = 2 or 3 copies over failure groups, as ASM normal and high
//!   redundancy (and RAID 1/10 when each group is one disk or a fixed set of disks). A bare
//!   `mirror:N` uses ASM's default 1 MiB AU. With G failure groups, logical AU `c = q·G + p`
//!   puts copy `k` (0 = primary) in group `(p + k) mod G`: the primary rotates over the groups
//!   and the N copies always sit in N distinct groups. Each cycle of G AUs gives every group
//!   exactly N AUs; a group hands its AUs out round-robin over its members (so a group of
//!   several disks is striped inside). The AU's index in group `h` is
//!   `q·N + (AUs group h got earlier in the cycle)`, precomputed as a G×N table.
//!   Capacity: the cycle count is bounded by the smallest group, `min_h(|h| × AUs per member)
//!   / N`, plus the cycle prefix that still fits; with equal groups that is `total / N`.
//!   Unequal groups waste the larger groups' excess, as in ASM.
//!   Members that share a copy set are *partners* (ASM's term): losing all of a copy set's
//!   members loses data, so `--degraded` may fail members only while each copy set keeps one.
//!   Two equal groups give RAID 10 (member j of one group partners member j of the other);
//!   one disk per group (the default) gives rotating partners, like RAID 1E or ASM without
//!   `--failgroups`. `--failgroups` is checked but unused by one-copy layouts.
//!
//! Reads go to one live copy (the primary, or one chosen by a caller token for
//! `--read-from balanced`); writes go to every live copy, and the logical write completes when
//! the last one does. A `--degraded` member's reads move to its partners and its writes are
//! dropped ([`Layout::map`] counts them).
//!
//! Not modelled: parity RAID (5/6: read-modify-write, parity rotation), ASM's extent-size
//! growth for large files and its variable partner lists, rebalancing and resync traffic.

use grid::{partners_of, Grid};
use iogauge_model::layout::{LayoutSpec, ReadFrom};
use iogauge_model::spec::{fmt_size, MIN_ALIGN};
use iogauge_stats::Direction;

mod grid;
#[cfg(test)]
mod tests;

/// Why a layout cannot be built. Members are numbered from 1 in `--target` order; the
/// caller may match on the variant to name the path instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("a layout needs at least one target")]
    NoMembers,
    #[error("alignment {0} is not a non-zero multiple of 512 bytes")]
    Align(u64),
    #[error("--failgroups names target #{} but there are {members} targets", member + 1)]
    UnknownMember { member: usize, members: usize },
    #[error("--failgroups lists target #{} twice; list every target once", member + 1)]
    DuplicateMember { member: usize },
    #[error("target #{} is in no failure group; list every target in --failgroups once", member + 1)]
    MissingMember { member: usize },
    #[error("--failgroups has an empty group; separate groups by '/', as in d1,d2/d3,d4")]
    EmptyGroup,
    #[error("{layout} needs at least {} failure groups but there are {groups}; add targets or split --failgroups into more groups", layout.copies)]
    TooFewGroups { layout: LayoutSpec, groups: usize },
    #[error("--degraded names target #{} but there are {members} targets", member + 1)]
    UnknownDegraded { member: usize, members: usize },
    #[error("{layout} keeps one copy, so degrading target #{} loses its data; --degraded needs mirror:2 or mirror:3", member + 1)]
    Unprotected { layout: LayoutSpec, member: usize },
    #[error("degraded targets {} hold every copy of some data at {layout} (they are partners); keep one target of every copy set live", fmt_members(.members))]
    DataLost {
        layout: LayoutSpec,
        members: Vec<usize>,
    },
    #[error("{layout}: target #{} holds {size} bytes, which is not one whole {} unit; use larger targets or a smaller unit", member + 1, fmt_size(*unit))]
    TooSmall {
        layout: LayoutSpec,
        member: usize,
        size: u64,
        unit: u64,
    },
}

fn fmt_members(m: &[usize]) -> String {
    let v: Vec<String> = m.iter().map(|i| format!("#{}", i + 1)).collect();
    v.join(", ")
}

/// One I/O on a member: `offset` is relative to the start of the member's region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberIo {
    pub member: u32,
    pub offset: u64,
    pub len: u32,
    /// Which copy this is (0 = primary); always 0 for concat and stripe.
    pub copy: u8,
}

/// A validated layout over concrete members: maps logical I/Os to member I/Os.
#[derive(Clone, Debug)]
pub struct Layout {
    spec: LayoutSpec,
    read_from: ReadFrom,
    logical: u64,
    /// Failure group of every member (one per member unless `--failgroups` says otherwise).
    group_of: Vec<u32>,
    failed: Vec<bool>,
    any_failed: bool,
    partners: Vec<Vec<u32>>,
    place: Place,
}

#[derive(Clone, Debug)]
enum Place {
    /// Logical `[starts[i], ends[i])` is member i's `[0, ends[i] − starts[i])`.
    Concat {
        starts: Vec<u64>,
        ends: Vec<u64>,
    },
    Grid(Grid),
}

/// Failure group of every member, checking that `fgroups` lists each of the `n` members
/// exactly once and has no empty group.
fn group_of(fgroups: &[Vec<usize>], n: usize) -> Result<Vec<u32>, LayoutError> {
    let mut group_of = vec![u32::MAX; n];
    for (g, members) in fgroups.iter().enumerate() {
        if members.is_empty() {
            return Err(LayoutError::EmptyGroup);
        }
        for &m in members {
            match group_of.get_mut(m) {
                None => {
                    return Err(LayoutError::UnknownMember {
                        member: m,
                        members: n,
                    })
                }
                Some(x) if *x != u32::MAX => {
                    return Err(LayoutError::DuplicateMember { member: m })
                }
                Some(x) => *x = g as u32,
            }
        }
    }
    match group_of.iter().position(|&g| g == u32::MAX) {
        Some(m) => Err(LayoutError::MissingMember { member: m }),
        None => Ok(group_of),
    }
}

/// Which of the `n` members `--degraded` fails; a layout of one copy has none to lose.
fn failed_members(
    spec: LayoutSpec,
    degraded: &[usize],
    n: usize,
) -> Result<Vec<bool>, LayoutError> {
    let mut failed = vec![false; n];
    for &m in degraded {
        *failed.get_mut(m).ok_or(LayoutError::UnknownDegraded {
            member: m,
            members: n,
        })? = true;
        if spec.copies == 1 {
            return Err(LayoutError::Unprotected {
                layout: spec,
                member: m,
            });
        }
    }
    Ok(failed)
}

/// Concat's logical `[starts[i], ends[i])` of each member's `align`-rounded size; the index
/// of the first member too small to hold one aligned block.
fn concat(member_sizes: &[u64], align: u64) -> Result<(Vec<u64>, Vec<u64>), usize> {
    let n = member_sizes.len();
    let (mut starts, mut ends, mut acc) = (Vec::with_capacity(n), Vec::with_capacity(n), 0);
    for (i, &size) in member_sizes.iter().enumerate() {
        let usable = size / align * align;
        if usable == 0 {
            return Err(i);
        }
        starts.push(acc);
        acc += usable;
        ends.push(acc);
    }
    Ok((starts, ends))
}

impl Layout {
    /// Validates `spec` over members of `member_sizes` bytes (their regions) and builds the
    /// placement. `failgroups` holds member indices (default: one member per group);
    /// `degraded` the failed members. Sizes and the logical size are rounded down to `align`.
    pub fn new(
        spec: LayoutSpec,
        member_sizes: &[u64],
        failgroups: Option<Vec<Vec<usize>>>,
        degraded: &[usize],
        align: u64,
    ) -> Result<Layout, LayoutError> {
        let n = member_sizes.len();
        if n == 0 {
            return Err(LayoutError::NoMembers);
        }
        if align == 0 || !align.is_multiple_of(MIN_ALIGN) {
            return Err(LayoutError::Align(align));
        }
        let fgroups = failgroups.unwrap_or_else(|| (0..n).map(|i| vec![i]).collect());
        let group_of = group_of(&fgroups, n)?;
        let copies = usize::from(spec.copies);
        if fgroups.len() < copies {
            return Err(LayoutError::TooFewGroups {
                layout: spec,
                groups: fgroups.len(),
            });
        }
        let failed = failed_members(spec, degraded, n)?;
        let too_small = |member: usize, unit: u64| LayoutError::TooSmall {
            layout: spec,
            member,
            size: member_sizes[member],
            unit,
        };
        let Some(unit) = spec.unit() else {
            let (starts, ends) = concat(member_sizes, align).map_err(|m| too_small(m, align))?;
            return Ok(Layout {
                spec,
                read_from: ReadFrom::Primary,
                logical: ends[n - 1],
                group_of,
                failed,
                any_failed: false,
                partners: vec![Vec::new(); n],
                place: Place::Concat { starts, ends },
            });
        };
        let (small, &min) = member_sizes
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| **s)
            .unwrap();
        let aus = min / unit;
        if aus == 0 {
            return Err(too_small(small, unit));
        }
        // One copy ignores failure groups: stripe deals AUs over the members in target order.
        let groups: Vec<Vec<u32>> = if copies == 1 {
            (0..n as u32).map(|m| vec![m]).collect()
        } else {
            fgroups
                .iter()
                .map(|g| g.iter().map(|&m| m as u32).collect())
                .collect()
        };
        let grid = Grid::new(unit, copies, groups);
        let logical = grid.chunks(aus) * unit / align * align;
        if logical == 0 {
            return Err(too_small(small, unit));
        }
        // Partners and data loss count only the AUs the logical space reaches.
        let partners =
            partners_of(&grid, logical.div_ceil(unit), n, &failed).map_err(|members| {
                LayoutError::DataLost {
                    layout: spec,
                    members,
                }
            })?;
        Ok(Layout {
            spec,
            read_from: ReadFrom::Primary,
            logical,
            group_of,
            any_failed: failed.contains(&true),
            failed,
            partners,
            place: Place::Grid(grid),
        })
    }

    /// Sets the read policy (`--read-from`); it matters only for mirrors.
    pub fn with_read_from(mut self, read_from: ReadFrom) -> Self {
        self.read_from = read_from;
        self
    }

    /// Maps a logical I/O to member I/Os in `out` (cleared first, so the caller can reuse one
    /// vector and the hot path never allocates once it has grown). The I/O is split at AU
    /// boundaries (member ends for concat); a read goes to one live copy of each piece,
    /// chosen by `choose` under `ReadFrom::Balanced`; a write to every live copy, in copy
    /// order. Returns the number of piece copies dropped because their member is degraded.
    /// `offset + len` must not exceed `logical_size()`.
    pub fn map(
        &self,
        dir: Direction,
        offset: u64,
        len: u32,
        choose: u64,
        out: &mut Vec<MemberIo>,
    ) -> u32 {
        out.clear();
        let end = offset + u64::from(len);
        debug_assert!(
            end <= self.logical,
            "I/O [{offset}, {end}) past {}",
            self.logical
        );
        let mut off = offset;
        let mut dropped = 0;
        match &self.place {
            Place::Concat { starts, ends } => {
                let mut i = ends.partition_point(|&e| e <= off);
                while off < end {
                    let piece = end.min(ends[i]) - off;
                    out.push(MemberIo {
                        member: i as u32,
                        offset: off - starts[i],
                        len: piece as u32,
                        copy: 0,
                    });
                    off += piece;
                    i += 1;
                }
            }
            Place::Grid(g) => {
                while off < end {
                    let (c, within) = (off / g.unit, off % g.unit);
                    let piece = (g.unit - within).min(end - off);
                    let io = |k: usize| {
                        let (member, au) = g.locate(c, k);
                        MemberIo {
                            member,
                            offset: au * g.unit + within,
                            len: piece as u32,
                            copy: k as u8,
                        }
                    };
                    match dir {
                        Direction::Write => {
                            for k in 0..g.copies {
                                let w = io(k);
                                if self.failed[w.member as usize] {
                                    dropped += 1;
                                } else {
                                    out.push(w);
                                }
                            }
                        }
                        Direction::Read => out.push(io(self.pick(g, c, choose))),
                    }
                    off += piece;
                }
            }
        }
        dropped
    }

    /// The copy a read of logical AU `c` goes to: the first live copy, or the
    /// `choose mod live`-th live one when balanced.
    #[inline]
    fn pick(&self, g: &Grid, c: u64, choose: u64) -> usize {
        let nth = match self.read_from {
            ReadFrom::Primary => 0,
            ReadFrom::Balanced if !self.any_failed => return (choose % g.copies as u64) as usize,
            ReadFrom::Balanced => {
                let live = (0..g.copies)
                    .filter(|&k| !self.failed[g.locate(c, k).0 as usize])
                    .count();
                (choose % live as u64) as usize
            }
        };
        if !self.any_failed {
            return nth;
        }
        (0..g.copies)
            .filter(|&k| !self.failed[g.locate(c, k).0 as usize])
            .nth(nth)
            .expect("Layout::new rejects copy sets with no live member")
    }

    /// Bytes of the logical space: the range the offset generator draws from.
    pub fn logical_size(&self) -> u64 {
        self.logical
    }

    pub fn members(&self) -> usize {
        self.group_of.len()
    }

    pub fn spec(&self) -> LayoutSpec {
        self.spec
    }

    pub fn read_from(&self) -> ReadFrom {
        self.read_from
    }

    /// Copies of every block.
    pub fn copies(&self) -> u32 {
        u32::from(self.spec.copies)
    }

    /// Member writes per logical byte written with every member live ("2× writes at
    /// mirror:2"); a degraded member's share is dropped instead.
    pub fn write_amplification(&self) -> u32 {
        self.copies()
    }

    /// The failure group of `member` (its index in `--failgroups`).
    pub fn failgroup_of(&self, member: usize) -> u32 {
        self.group_of[member]
    }

    pub fn is_degraded(&self, member: usize) -> bool {
        self.failed[member]
    }

    /// The degraded members, in index order.
    pub fn degraded(&self) -> impl Iterator<Item = usize> + '_ {
        self.failed
            .iter()
            .enumerate()
            .filter(|(_, f)| **f)
            .map(|(i, _)| i)
    }

    /// Members holding copies of `member`'s data: where its reads go when it is degraded.
    pub fn partners(&self, member: usize) -> &[u32] {
        &self.partners[member]
    }
}
