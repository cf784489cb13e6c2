//! Where each rank works: `{rank}` and `{host}` in its paths, its own seed, its slice of a
//! target every rank shares, the cores it may spread workers over.

use crate::SessionError;
use iogauge_model::spec::{Bound, Region};
use std::path::{Path, PathBuf};

/// What rank 0 records for a rank that sent no part.
pub const LOST: &str = "sent no part: the rank died (killed outright, or its host or network failed); the job was stored without it";

/// Rank `rank`'s 1/`size` of `region` (as IOR splits a shared file into segments), in the
/// region's own unit; bounds of mixed units cannot be split.
pub fn slice_of(region: Region, rank: u32, size: u32) -> Result<Region, SessionError> {
    let cut = |a: f64, b: f64, i: u32| a + (b - a) * f64::from(i) / f64::from(size);
    match (region.start, region.end) {
        (Bound::Pct(a), Bound::Pct(b)) => Ok(Region {
            start: Bound::Pct(cut(a, b, rank)),
            end: Bound::Pct(cut(a, b, rank + 1)),
        }),
        (Bound::Bytes(a), Bound::Bytes(b)) => {
            let at = |i: u32| a + (b - a) / u64::from(size) * u64::from(i);
            let end = if rank + 1 == size { b } else { at(rank + 1) };
            Ok(Region {
                start: Bound::Bytes(at(rank)),
                end: Bound::Bytes(end),
            })
        }
        _ => Err(SessionError::Usage(
            "--region with one bound in % and one in bytes cannot be split between ranks writing one shared target: give both in % or both in bytes, or --shared-offsets".into(),
        )),
    }
}

/// Rank `rank`'s seed: every rank draws its own offsets (ranks reading one shared target with
/// the job's seed would read the same blocks at the same time, and an array's cache would
/// serve all but the first). Rank 0 keeps the job's seed, as stored.
pub fn rank_seed(seed: u64, rank: u32) -> u64 {
    seed.wrapping_add(u64::from(rank).wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// The cores this rank may spread its workers over: the host's, shared with the other ranks
/// on it (Open MPI's `OMPI_COMM_WORLD_LOCAL_SIZE`; without it, all of them).
pub fn rank_cores() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let local = std::env::var("OMPI_COMM_WORLD_LOCAL_SIZE")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1);
    (cores / local).max(1)
}

/// `{rank}` and `{host}` in a target path.
pub fn per_rank(path: &Path, rank: u32, host: &str) -> PathBuf {
    PathBuf::from(per_rank_text(&path.to_string_lossy(), rank, host))
}

/// `{rank}` and `{host}` in a path or a DSN.
pub fn per_rank_text(text: &str, rank: u32, host: &str) -> String {
    text.replace("{rank}", &rank.to_string())
        .replace("{host}", host)
}

/// Whether a path or DSN names something per rank (`{rank}` or `{host}` in it).
pub fn names_a_rank(text: &str) -> bool {
    text.contains("{rank}") || text.contains("{host}")
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_split_between_ranks() {
        let pct = |a, b| Region {
            start: Bound::Pct(a),
            end: Bound::Pct(b),
        };
        assert_eq!(slice_of(pct(0.0, 100.0), 1, 4).unwrap(), pct(25.0, 50.0));
        assert_eq!(slice_of(pct(20.0, 80.0), 2, 3).unwrap(), pct(60.0, 80.0));
        let bytes = |a, b| Region {
            start: Bound::Bytes(a),
            end: Bound::Bytes(b),
        };
        assert_eq!(slice_of(bytes(0, 10), 0, 3).unwrap(), bytes(0, 3));
        assert_eq!(
            slice_of(bytes(0, 10), 2, 3).unwrap(),
            bytes(6, 10),
            "the last takes the rest"
        );
        let mixed = Region {
            start: Bound::Pct(0.0),
            end: Bound::Bytes(1 << 30),
        };
        assert!(slice_of(mixed, 0, 2)
            .unwrap_err()
            .to_string()
            .contains("--shared-offsets"));
    }

    #[test]
    fn ranks_draw_their_own_offsets() {
        assert_eq!(rank_seed(42, 0), 42);
        let seeds: std::collections::BTreeSet<u64> = (0..64).map(|r| rank_seed(42, r)).collect();
        assert_eq!(seeds.len(), 64);
    }

    #[test]
    fn rank_and_host_in_paths() {
        assert_eq!(
            per_rank(Path::new("/d/f.{rank}.{host}"), 3, "n1"),
            PathBuf::from("/d/f.3.n1")
        );
        assert_eq!(
            per_rank(Path::new("/d/shared"), 3, "n1"),
            PathBuf::from("/d/shared")
        );
    }
}
