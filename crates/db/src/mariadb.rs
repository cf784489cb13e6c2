//! MariaDB (InnoDB) beside PostgreSQL, behind the same seam: the SLOB method on the other
//! open-source database storage is bought for.
//!
//! - [`MariaBin`]: `--mysql-bin`, or `mariadbd` on PATH or in /usr/sbin.
//! - [`MariaServer`]: a private server on the directory under test — made by
//!   `mariadb-install-db`, run as iogauge's child (own process group, dies with iogauge,
//!   optionally in a memory cgroup), reachable only by its 0700 unix socket with the
//!   `unix_socket` plugin, removed by `destroy`.
//! - [`MariaTarget`]: where to connect — that socket, or a `--dsn mysql://…` server.
//! - [`schema`]: one session row per 16 KiB page, looked up by primary key.
//! - `sessions`: the run — sessions and the `SHOW GLOBAL STATUS` sampler driven on the grid
//!   by the same driver PostgreSQL's run uses, into the same outcome.

mod activity;
mod bin;
mod conn;
mod dir;
pub(crate) mod engine;
pub mod schema;
mod server;
mod sessions;
mod status;
pub(crate) mod watch;

pub use bin::MariaBin;
pub use conn::{is_mysql_dsn, os_user, MariaTarget};
pub use dir::has_server;
pub use server::{MariaServer, DEFAULTS, MIN_CACHE_LIMIT};

/// A probe on a private server's redo log writes and syncs (see `iogauge_trace::FileProbe`),
/// or why there is none, as a warning for the result.
pub(crate) fn redo_probe(s: &MariaServer) -> Result<iogauge_trace::FileProbe, String> {
    const NONE: &str = "redo write and sync times are not measured";
    let (pid, fd) = s
        .redo_log()
        .ok_or_else(|| format!("{NONE}: the server's redo log (ib_logfile0) is not open"))?;
    iogauge_trace::FileProbe::attach(pid, fd).map_err(|e| format!("{NONE}: {e}"))
}

use crate::common::schema::SchemaSpec;
use crate::engine::SetupUi;
use crate::error::DbError;
use iogauge_model::db::report::Setting;
use iogauge_model::db::setup::LoadReport;
use std::path::Path;

/// Makes a private server in `dir` and loads `spec` on it, the server stopped after: what
/// `db setup --engine mariadb` does; with the settings read while it ran (for the setup's
/// summary: no restart to read them). A failed or stopped setup removes what it made.
pub fn setup_private(
    dir: &Path,
    bin: MariaBin,
    spec: &SchemaSpec,
    ui: &SetupUi<'_>,
) -> Result<(MariaServer, LoadReport, Vec<Setting>), DbError> {
    let mut s = MariaServer::create(dir, bin, ui.stop)?;
    let loaded = s
        .start(None, ui.stop)
        .and_then(|()| schema::setup(&s.target(), spec, ui))
        .and_then(|r| Ok((r, settings(&s.target())?)))
        .and_then(|r| s.stop().map(|()| r))
        .and_then(|r| s.mark_finished().map(|()| r));
    match loaded {
        Ok((r, set)) => Ok((s, r, set)),
        Err(e) => {
            let shown = dir.display().to_string();
            match s.destroy() {
                Ok(()) => Err(e.noting(|| format!("setup stopped; {shown} removed again"))),
                Err(c) => Err(DbError::Cleanup {
                    what: format!("{e}; removing {shown} failed too"),
                    source: Box::new(c),
                }),
            }
        }
    }
}

/// The settings that shape the I/O, as the server has them (`SHOW GLOBAL VARIABLES`; sizes
/// in bytes).
pub fn settings(t: &MariaTarget) -> Result<Vec<Setting>, DbError> {
    use mysql::prelude::Queryable;
    let names: Vec<String> = SHOWN.iter().map(|n| format!("'{n}'")).collect();
    let rows: Vec<(String, String)> = t
        .connect()?
        .query(format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
            names.join(", ")
        ))
        .map_err(|e| t.err(&e))?;
    Ok(rows
        .into_iter()
        .map(|(name, setting)| {
            let unit = name.ends_with("_size").then(|| "B".to_string());
            Setting {
                name,
                setting,
                unit,
            }
        })
        .collect())
}

/// The variables a MariaDB run records.
const SHOWN: [&str; 15] = [
    "version",
    "innodb_page_size",
    "innodb_lru_scan_depth",
    "innodb_buffer_pool_size",
    "innodb_flush_method",
    "innodb_read_ahead_threshold",
    "innodb_random_read_ahead",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_log_file_size",
    "innodb_io_capacity",
    "innodb_flush_neighbors",
    "innodb_buffer_pool_load_at_startup",
    "sync_binlog",
    "log_bin",
];

/// What in a server's settings keeps its device reads from being the sessions' single pages
/// (a server of the user's: iogauge's own has read-ahead off and O_DIRECT), one line each.
pub fn read_path_notes(settings: &[Setting]) -> Vec<String> {
    let get = |n: &str| {
        settings
            .iter()
            .find(|s| s.name == n)
            .map(|s| s.setting.as_str())
    };
    let mut out = Vec::new();
    if let Some(t) = get("innodb_read_ahead_threshold").filter(|t| *t != "0") {
        out.push(format!(
            "innodb_read_ahead_threshold={t}: InnoDB's linear read-ahead is on, so the device can read whole extents the sessions did not ask for (set it to 0 on the server for single-page reads)"
        ));
    }
    if get("innodb_random_read_ahead").is_some_and(|v| v.eq_ignore_ascii_case("ON")) {
        out.push("innodb_random_read_ahead=ON: InnoDB reads ahead at random, so the device can read pages the sessions did not ask for (set it OFF on the server)".into());
    }
    if let Some(m) = get("innodb_flush_method")
        .filter(|m| !crate::common::run::preflight::direct_setting("innodb_flush_method", m))
    {
        out.push(format!(
            "innodb_flush_method={m}: InnoDB reads its data files through the OS page cache, so some page reads never reach the device (O_DIRECT on the server avoids that)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Vec<Setting> {
        pairs
            .iter()
            .map(|(n, v)| Setting {
                name: n.to_string(),
                setting: v.to_string(),
                unit: None,
            })
            .collect()
    }

    #[test]
    fn read_ahead_and_buffered_reads_are_named_and_iogauge_s_settings_pass() {
        let ours: Vec<(&str, &str)> = DEFAULTS
            .iter()
            .copied()
            .filter(|(n, _)| n.contains("read_ahead") || *n == "innodb_flush_method")
            .collect();
        assert_eq!(ours.len(), 3, "{ours:?}");
        assert!(read_path_notes(&set(&ours)).is_empty());
        let theirs = set(&[
            ("innodb_read_ahead_threshold", "56"),
            ("innodb_random_read_ahead", "ON"),
            ("innodb_flush_method", "fsync"),
        ]);
        let notes = read_path_notes(&theirs);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].starts_with("innodb_read_ahead_threshold=56:"));
        assert!(notes[2].contains("page cache"));
        assert!(read_path_notes(&set(&[("innodb_flush_method", "O_DIRECT_NO_FSYNC")])).is_empty());
    }
}
