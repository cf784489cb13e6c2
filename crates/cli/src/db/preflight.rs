//! The preflight of `db setup` and `db run`, as calibrate's: where the data set (and the WAL)
//! will live or lives — filesystem, device chain, rotational, md arrays, the data set's span
//! of each device — with the warnings (degraded array, short-stroking).

use iogauge_model::preflight::Preflight;
use iogauge_probe::{device_of_path, devices_under, disks_under};
use std::path::{Path, PathBuf};

/// One directory the cluster uses: its path, the data-set bytes on it and its role (`data`,
/// `tablespace`, `wal`).
pub type Target = (PathBuf, u64, Option<&'static str>);

/// The targets of a cluster: the data set's bytes per place (`None`: the data directory),
/// then the WAL directory when it is apart. The data directory is listed even when every
/// schema is in a tablespace (its catalog and, without `--wal-dir`, the WAL are there).
pub fn targets(
    placement: &[(Option<PathBuf>, u64)],
    data_dir: &Path,
    wal_dir: Option<&Path>,
) -> Vec<Target> {
    let in_data: u64 = placement
        .iter()
        .filter(|(at, _)| at.is_none())
        .map(|(_, b)| b)
        .sum();
    let mut out: Vec<Target> = vec![(data_dir.to_path_buf(), in_data, Some("data"))];
    for (at, bytes) in placement {
        if let Some(at) = at {
            out.push((at.clone(), *bytes, Some("tablespace")));
        }
    }
    out.extend(wal_dir.map(|w| (w.to_path_buf(), 0, Some("wal"))));
    out
}

/// Where `db setup` will put the data: `schemas` of `schema_bytes` each, over `tablespaces`
/// round-robin (schema N on the ((N − 1) mod count)-th) or else in the data directory.
pub fn planned(
    tablespaces: &[PathBuf],
    schemas: u32,
    schema_bytes: u64,
) -> Vec<(Option<PathBuf>, u64)> {
    if tablespaces.is_empty() {
        return vec![(None, u64::from(schemas) * schema_bytes)];
    }
    let n = tablespaces.len();
    let mut out: Vec<(Option<PathBuf>, u64)> =
        tablespaces.iter().map(|t| (Some(t.clone()), 0)).collect();
    for s in 0..schemas as usize {
        out[s % n].1 += schema_bytes;
    }
    out
}

/// The preflight of `targets`.
pub fn preflight(targets: &[Target]) -> Preflight {
    iogauge_probe::preflight_roles(targets)
}

/// The devices to sample (every device under every target, each once) and the disks whose
/// reads the database's physical reads are compared with (those under the data and the
/// tablespaces, not the WAL's).
pub fn devices(targets: &[Target]) -> (Vec<String>, Vec<String>) {
    let mut sampled = Vec::new();
    let mut disks = Vec::new();
    for (path, _, role) in targets {
        let Some(dev) = device_of_path(path) else {
            continue;
        };
        sampled.extend(devices_under(&dev));
        if *role != Some("wal") {
            disks.extend(disks_under(&dev));
        }
    }
    for v in [&mut sampled, &mut disks] {
        v.sort();
        v.dedup();
    }
    (sampled, disks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_per_place_then_wal() {
        let p = |s: &str| PathBuf::from(s);
        let placement = [(Some(p("/u01")), 300), (None, 100), (Some(p("/u02")), 200)];
        assert_eq!(
            targets(&placement, Path::new("/pg/data"), Some(Path::new("/redo"))),
            vec![
                (p("/pg/data"), 100, Some("data")),
                (p("/u01"), 300, Some("tablespace")),
                (p("/u02"), 200, Some("tablespace")),
                (p("/redo"), 0, Some("wal")),
            ]
        );
        // Every schema in a tablespace: the data directory still shows, holding none of it.
        assert_eq!(
            targets(&placement[..1], Path::new("/pg/data"), None),
            vec![
                (p("/pg/data"), 0, Some("data")),
                (p("/u01"), 300, Some("tablespace"))
            ]
        );
    }

    #[test]
    fn planned_round_robin() {
        let ts = [PathBuf::from("/a"), PathBuf::from("/b")];
        assert_eq!(
            planned(&ts, 5, 10),
            vec![(Some(ts[0].clone()), 30), (Some(ts[1].clone()), 20)]
        );
        assert_eq!(planned(&[], 5, 10), vec![(None, 50)]);
    }
}
