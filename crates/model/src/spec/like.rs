//! `run --like DB_RUN_ID`: the db run a job replays and the shape of its device I/O
//! ([`crate::db::shape`] derives it and turns it into a job).

use crate::db::engine::Engine;
use serde::{Deserialize, Serialize};

/// `run --like ID`: the stored db run replayed and the shape taken from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Like {
    pub run: i64,
    pub shape: IoShape,
    /// The db run's database (its pages' size and its name in the text); PostgreSQL in
    /// documents from before MariaDB, and left out of the JSON for it.
    #[serde(default, skip_serializing_if = "Engine::is_postgres")]
    pub engine: Engine,
}

/// The I/O a db run asked of its storage over the measured window: the reads its data disks
/// completed (summed over the disks) and the data pages the database wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoShape {
    pub reads_s: f64,
    /// The database's data pages written per second (PostgreSQL's buffers; shapes stored
    /// before the log writer: the disks' writes, journal and WAL included).
    pub writes_s: f64,
    /// The disks' mean read size (iostat's rareq-sz) and the page written (8 KiB PostgreSQL,
    /// 16 KiB InnoDB), KiB.
    pub read_kib: f64,
    pub write_kib: f64,
    /// Requests in flight on average (iostat's aqu-sz, summed over the disks).
    pub depth: f64,
    /// The database's log stream (PostgreSQL's WAL writes and syncs), replayed beside the
    /// data I/O as a log writer; `None` without updates (a read-only run) and in shapes
    /// stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogShape>,
    /// Device reads per session operation (reads/s over the sessions' operations/s): an
    /// operation waits for that many reads in a row, which is how a replay's read latency is
    /// put beside the db run's per operation; `None` in shapes stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_per_op: Option<f64>,
    /// InnoDB's doublewrite over the window: every page written went to the doublewrite area
    /// first, in large sequential writes, which the job does not replay (one random write
    /// size); named in the text so the replay's writes are not read as all the disks got.
    /// `None` for PostgreSQL, without it, and in shapes stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doublewrite: Option<Doublewrite>,
}

/// The doublewrite's pages and write calls per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Doublewrite {
    pub pages_s: f64,
    pub writes_s: f64,
}

/// The WAL stream of a db run over its measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogShape {
    /// WAL writes per second and their mean size (`log_writes`, `log_bytes / log_writes`).
    pub writes_s: f64,
    pub write_kib: f64,
    /// Commits per WAL sync: how many commits one sync served (group commit), so a replay's
    /// syncs count as that many commits.
    pub commits_per_sync: f64,
    /// Commits per session operation (the share of operations that update); 0 in shapes
    /// stored before it.
    #[serde(default)]
    pub commits_per_op: f64,
    /// The log was the db run's load: its sessions spent most of their time waiting for the
    /// WAL (a redo test), so how fast the log goes is the measure.
    #[serde(default)]
    pub is_load: bool,
}

/// The most I/Os (and commits) a second a stored shape may hold: ten times the fastest
/// device iogauge has met (1.5 M IOPS), well above any db run's.
const MAX_RATE: f64 = 1e7;
/// The largest request a shape may hold, in KiB: the largest block size (64 MiB).
const MAX_KIB: f64 = (iogauge_stats::units::MAX_BLOCK / 1024) as f64;
/// The deepest queue a shape may hold: `run --qd`'s most.
const MAX_DEPTH: f64 = 4096.0;

impl IoShape {
    /// Every figure finite and in range, or the first that is not, by its name in the JSON
    /// (`log.writes_s`) with its value and range: a stored document is read back, and one
    /// damaged or edited (`reads_s` of -5) must not become a job that replays it.
    pub fn check(&self) -> Result<(), String> {
        let mut figures = vec![
            ("reads_s", self.reads_s, MAX_RATE),
            ("writes_s", self.writes_s, MAX_RATE),
            ("read_kib", self.read_kib, MAX_KIB),
            ("write_kib", self.write_kib, MAX_KIB),
            ("depth", self.depth, MAX_DEPTH),
        ];
        if let Some(x) = self.reads_per_op {
            figures.push(("reads_per_op", x, MAX_RATE));
        }
        if let Some(l) = &self.log {
            figures.extend([
                ("log.writes_s", l.writes_s, MAX_RATE),
                ("log.write_kib", l.write_kib, MAX_KIB),
                ("log.commits_per_sync", l.commits_per_sync, MAX_RATE),
                ("log.commits_per_op", l.commits_per_op, MAX_RATE),
            ]);
        }
        if let Some(d) = &self.doublewrite {
            figures.extend([
                ("doublewrite.pages_s", d.pages_s, MAX_RATE),
                ("doublewrite.writes_s", d.writes_s, MAX_RATE),
            ]);
        }
        for (name, x, max) in figures {
            if !(0.0..=max).contains(&x) {
                return Err(format!("{name} is {x}, outside 0 to {max}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> IoShape {
        IoShape {
            reads_s: 5000.0,
            writes_s: 40.0,
            read_kib: 8.0,
            write_kib: 8.0,
            depth: 3.4,
            log: Some(LogShape {
                writes_s: 100.0,
                write_kib: 8.0,
                commits_per_sync: 1.0,
                commits_per_op: 1.0,
                is_load: false,
            }),
            reads_per_op: Some(1.0),
            doublewrite: None,
        }
    }

    #[test]
    fn out_of_range_figures_are_named() {
        assert_eq!(shape().check(), Ok(()));
        type Edit = fn(&mut IoShape);
        let cases: [(Edit, &str); 6] = [
            (|s| s.reads_s = -5.0, "reads_s is -5, outside 0 to 10000000"),
            (|s| s.depth = f64::NAN, "depth is NaN"),
            (
                |s| s.depth = 1e12,
                "depth is 1000000000000, outside 0 to 4096",
            ),
            (|s| s.read_kib = f64::INFINITY, "read_kib is inf"),
            (
                |s| s.log.as_mut().unwrap().writes_s = -1.0,
                "log.writes_s is -1",
            ),
            (
                |s| {
                    s.doublewrite = Some(Doublewrite {
                        pages_s: 1.0,
                        writes_s: -0.5,
                    });
                },
                "doublewrite.writes_s is -0.5",
            ),
        ];
        for (edit, want) in cases {
            let mut s = shape();
            edit(&mut s);
            let e = s.check().unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
    }
}
