//! The private cluster's configuration file, `data/iogauge.conf` (included from
//! postgresql.conf), and checking it against the server before it is used: `postgres -C`
//! reads the whole configuration as a start would and refuses what a start would refuse,
//! so a bad `name=value` is reported as the user's mistake and never left in place.

use crate::error::DbError;
use crate::postgres::server::bin::PgBin;
use crate::postgres::server::postmaster::Owner;
use crate::postgres::server::settings::render_conf;
use iogauge_trust::{read_bounded, replace_file};
use std::path::Path;

/// The most a configuration file of the cluster's may hold before it is refused as not
/// PostgreSQL's (initdb's is 30 KiB).
const CONF_LIMIT: u64 = 4 << 20;

/// The file's name in the data directory.
pub const FILE: &str = "iogauge.conf";
const INCLUDE: &str = "include = 'iogauge.conf'";
/// One run's own settings (`db run --pg-set`), included last from iogauge.conf while they
/// exist: written for the run and removed after it (and by the next open, if the run was
/// killed), so they never outlive it.
pub const RUN_FILE: &str = "iogauge-run.conf";
const RUN_INCLUDE: &str = "include_if_exists = 'iogauge-run.conf'";

/// Writes `all` (the defaults, the user's `overrides`, then the managed settings) to
/// `data/iogauge.conf`, includes it from postgresql.conf, and checks the result with
/// `postgres -C`. If the server refuses it, the previous file is put back and the error
/// names the override at fault.
pub fn write(
    owner: &Owner,
    postgres: &Path,
    data: &Path,
    all: &[(String, String)],
    overrides: &[(String, String)],
) -> Result<(), DbError> {
    // data/ is the server account's: read and replace its files, never through a link.
    let conf = data.join(FILE);
    let before = read_bounded(&conf, CONF_LIMIT).ok();
    let text = format!("{}{RUN_INCLUDE}\n", render_conf(all));
    replace_file(&conf, text.as_bytes(), 0o600, owner.ids())?;
    include_once(owner, &data.join("postgresql.conf"), INCLUDE)?;
    let Err(why) = check(owner, postgres, data)? else {
        return Ok(());
    };
    match before {
        Some(b) => replace_file(&conf, &b, 0o600, owner.ids())?,
        None => std::fs::remove_file(&conf).map_err(|e| DbError::io(&conf, e))?,
    }
    Err(refused(&why, overrides))
}

/// Writes one run's `overrides` (then the `managed` settings again: nothing changes those)
/// to `data/iogauge-run.conf`, included last from iogauge.conf (an older cluster's gets the
/// include), and checks the result with `postgres -C`. Refused, the file is removed and the
/// error names the override at fault. [`clear_run`] removes it after the run.
pub fn write_run(
    owner: &Owner,
    postgres: &Path,
    data: &Path,
    overrides: &[(String, String)],
    managed: &[(String, String)],
) -> Result<(), DbError> {
    include_once(owner, &data.join(FILE), RUN_INCLUDE)?;
    let all: Vec<(String, String)> = overrides.iter().chain(managed).cloned().collect();
    let run = data.join(RUN_FILE);
    replace_file(&run, render_conf(&all).as_bytes(), 0o600, owner.ids())?;
    let Err(why) = check(owner, postgres, data)? else {
        return Ok(());
    };
    clear_run(data)?;
    Err(refused(&why, overrides))
}

/// Appends `line` (an include) to the configuration file `conf` unless it is there already.
fn include_once(owner: &Owner, conf: &Path, line: &str) -> Result<(), DbError> {
    let text = read_bounded(conf, CONF_LIMIT)?;
    let text = String::from_utf8_lossy(&text);
    if text.lines().any(|l| l.trim() == line) {
        return Ok(());
    }
    let with = format!("{text}\n{line}\n");
    Ok(replace_file(conf, with.as_bytes(), 0o600, owner.ids())?)
}

/// Removes one run's settings (see [`RUN_FILE`]), if any.
pub fn clear_run(data: &Path) -> Result<(), DbError> {
    let run = data.join(RUN_FILE);
    match std::fs::remove_file(&run) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(DbError::io(&run, e)),
        _ => Ok(()),
    }
}

/// The server refused the configuration with `overrides` in it: which one, and why.
fn refused(why: &str, overrides: &[(String, String)]) -> DbError {
    DbError::BadSetting {
        setting: culprit(why, overrides),
        why: format!("PostgreSQL refuses it: {why}; correct it or leave it out"),
    }
}

/// Runs `postgres -D data -C port`: `Ok(Err(reason))` if the configuration has errors.
fn check(owner: &Owner, postgres: &Path, data: &Path) -> Result<Result<(), String>, DbError> {
    let out = owner
        .command(postgres, data)
        .arg("-D")
        .arg(data)
        .args(["-C", "port"])
        .output()
        .map_err(|e| DbError::io(postgres, e))?;
    if out.status.success() {
        return Ok(Ok(()));
    }
    Ok(Err(reason(&String::from_utf8_lossy(&out.stderr))))
}

/// The server's reason from its log lines: the first LOG (or FATAL) message and the HINT
/// after it, without the timestamps.
pub(crate) fn reason(stderr: &str) -> String {
    // `include_if_exists` of a run's settings logs that the file is missing whenever no run
    // has any: news, not the reason.
    let msg = |tag: &str| {
        stderr.lines().find_map(|l| {
            let (_, m) = l.split_once(tag)?;
            let m = m.trim();
            (!m.starts_with("skipping missing configuration file")).then(|| m.to_string())
        })
    };
    let first = msg("LOG:").or_else(|| msg("FATAL:"));
    let hint = msg("HINT:");
    match (first, hint) {
        (Some(m), Some(h)) => format!("{m} ({h})"),
        (Some(m), None) => m,
        _ => {
            let t = stderr.trim().replace('\n', ": ");
            if t.is_empty() {
                "the configuration has errors".into()
            } else {
                t
            }
        }
    }
}

/// The override the server's message names (`parameter "name"`), as the user wrote it;
/// else all of them.
fn culprit(why: &str, overrides: &[(String, String)]) -> String {
    overrides
        .iter()
        .rev()
        .find(|(n, _)| why.contains(&format!("\"{n}\"")))
        .map(|(n, v)| vec![format!("{n}={v}")])
        .unwrap_or_else(|| overrides.iter().map(|(n, v)| format!("{n}={v}")).collect())
        .join(" ")
}

/// The cgroup's limit covers the server's shared memory (never reclaimable without swap)
/// and its processes too: refuse a limit that would leave no page cache, or get the server
/// OOM-killed mid-run.
pub fn check_cache_limit(
    owner: &Owner,
    bin: &PgBin,
    data: &Path,
    limit: u64,
) -> Result<(), DbError> {
    const HEADROOM: u64 = 32 << 20;
    if bin.major < 15 {
        return Ok(());
    }
    let postgres = bin.tool("postgres");
    let out = owner
        .command(&postgres, data)
        .arg("-D")
        .arg(data)
        .args(["-C", "shared_memory_size"])
        .output()
        .map_err(|e| DbError::io(&postgres, e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(shm_mb) = text.trim().parse::<u64>().ok() else {
        return Err(DbError::Start {
            dir: data.to_path_buf(),
            why: format!(
                "cannot read shared_memory_size: {}",
                reason(&String::from_utf8_lossy(&out.stderr))
            ),
        });
    };
    let need = (shm_mb << 20) + HEADROOM;
    if limit < need {
        return Err(DbError::Usage(format!(
            "cache limit {} MiB is too small: the server's shared memory is {shm_mb} MiB \
             and its processes need about 32 MiB more; give at least {} MiB",
            limit >> 20,
            need >> 20
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_from_captured_server_output() {
        let bogus = "2026-11-23 17:04:03.858 UTC [13388] LOG:  invalid value for parameter \
                     \"shared_buffers\": \"bogus\"\n2026-11-23 17:04:03.858 UTC [13388] HINT:  \
                     Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \
                     \"TB\".\n2026-11-23 17:04:03.858 UTC [13388] FATAL:  configuration file \
                     \"/x/data/iogauge.conf\" contains errors\n";
        let r = reason(bogus);
        assert!(
            r.starts_with("invalid value for parameter \"shared_buffers\": \"bogus\" (Valid units"),
            "{r}"
        );
        let o = vec![
            ("work_mem".to_string(), "8MB".to_string()),
            ("shared_buffers".to_string(), "bogus".to_string()),
        ];
        assert_eq!(culprit(&r, &o), "shared_buffers=bogus");
        let unknown = "… LOG:  unrecognized configuration parameter \"x\" in file \
                       \"/x/data/iogauge.conf\" line 8\n… FATAL:  configuration file contains errors\n";
        assert_eq!(
            reason(unknown),
            "unrecognized configuration parameter \"x\" in file \"/x/data/iogauge.conf\" line 8"
        );
        assert_eq!(
            culprit("syntax error", &o),
            "work_mem=8MB shared_buffers=bogus"
        );
        assert_eq!(reason(""), "the configuration has errors");
        let skipped =
            format!("… LOG:  skipping missing configuration file \"/x/data/{RUN_FILE}\"\n{bogus}");
        assert!(reason(&skipped).starts_with("invalid value for parameter \"shared_buffers\""));
    }
}
