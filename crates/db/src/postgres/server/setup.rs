//! Setting up the data set: a private cluster initialised, loaded and snapshotted in one go
//! (`db setup`, and `db run` on an empty directory), or the schemas loaded on a server given
//! by DSN. Failed or stopped by Ctrl-C, each removes what it created, so a retry starts clean.

use crate::common::place::check_dir;
use crate::common::schema::SchemaSpec;
use crate::error::DbError;
use crate::postgres::schema;
use crate::postgres::server::cluster::{Cluster, ClusterConfig};
use iogauge_model::db::setup::LoadReport;
use postgres::Config;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Called with (blocks loaded, blocks in all) while loading.
pub type Progress<'a> = &'a dyn Fn(u64, u64);

/// What a private cluster is made with.
pub struct PrivateSetup<'a> {
    pub dir: &'a Path,
    pub wal_dir: Option<&'a Path>,
    /// Directories to spread the schemas over, one tablespace each (`--target`).
    pub tablespaces: &'a [std::path::PathBuf],
    pub overrides: &'a [(String, String)],
    pub spec: &'a SchemaSpec,
    /// The PostgreSQL to use (`--pg-bin`); default the newest found ([`crate::PgBin::find`]).
    pub bin: Option<&'a crate::PgBin>,
}

/// The checks of a private cluster's places before anything is made: each is a directory
/// (or nothing yet) that nobody but root and this user could change ([`check_dir`]).
pub fn check_places(
    dir: &Path,
    wal_dir: Option<&Path>,
    tablespaces: &[std::path::PathBuf],
) -> Result<(), DbError> {
    check_dir("--dir", dir)?;
    if let Some(w) = wal_dir {
        check_dir("--wal-dir", w)?;
    }
    tablespaces
        .iter()
        .try_for_each(|t| check_dir("--target", t))
}

/// Initialises, starts, loads and snapshots a private cluster; returns it running. Failed or
/// stopped by Ctrl-C, it removes what it created — the marker lists it — and nothing else.
pub fn setup_private(
    s: &PrivateSetup<'_>,
    stop: &Arc<AtomicBool>,
    progress: Progress<'_>,
) -> Result<(Cluster, LoadReport), DbError> {
    check_places(s.dir, s.wal_dir, s.tablespaces)?;
    let removed = || {
        format!(
            "db setup stopped; removed what it had created in {}",
            s.dir.display()
        )
    };
    // init removes its own half-built cluster on failure.
    let mut cluster = Cluster::init(&ClusterConfig {
        dir: s.dir.to_path_buf(),
        wal_dir: s.wal_dir.map(Path::to_path_buf),
        tablespaces: s.tablespaces.to_vec(),
        overrides: s.overrides.to_vec(),
        bin: s.bin.cloned(),
        stop: Some(stop.clone()),
        ..Default::default()
    })
    .map_err(|e| e.noting(removed))?;
    let built = cluster
        .start()
        .and_then(|()| cluster.create_tablespaces())
        .and_then(|tablespaces| {
            let spec = SchemaSpec {
                tablespaces,
                ..s.spec.clone()
            };
            schema::setup(&cluster.config(), &spec, stop, progress)
        })
        .and_then(|report| {
            cluster.snapshot_pristine()?;
            Ok(report)
        });
    match built {
        Ok(report) => Ok((cluster, report)),
        Err(e) => {
            let d = s.dir.display().to_string();
            if let Err(gone) = cluster.destroy() {
                return Err(DbError::Cleanup {
                    what: format!(
                        "{}; removing the half-built cluster in {d} failed too",
                        crate::error::chain_text(&e)
                    ),
                    source: Box::new(gone),
                });
            }
            Err(e.noting(removed))
        }
    }
}

/// Loads the schemas on a server given by DSN (`redacted` names it without its password);
/// stopped or failed, the schemas it created are dropped again.
pub fn load_dsn(
    cfg: &Config,
    redacted: &str,
    spec: &SchemaSpec,
    stop: &AtomicBool,
    progress: Progress<'_>,
    during: &str,
) -> Result<LoadReport, DbError> {
    schema::setup(cfg, spec, stop, progress).map_err(|e| {
        e.noting(|| match during {
            "reset" => format!(
                "db reset stopped; the schemas on {redacted} were dropped, load them again with `iogauge db setup --dsn ...`"
            ),
            _ => format!("db setup stopped; dropped the schemas it had loaded on {redacted}"),
        })
    })
}
