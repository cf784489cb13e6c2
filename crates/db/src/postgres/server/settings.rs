//! Server settings: the private cluster's defaults for physical I/O testing, the user's
//! `name=value` overrides, the configuration file they become, and reading back what is in
//! force from `pg_settings` so it can be printed and stored.

use crate::error::DbError;
use iogauge_model::db::report::Setting;
use postgres::Client;

/// The private cluster's settings, each overridable. Why each one:
/// - `shared_buffers` small, so the data set cannot hide in PostgreSQL's own cache;
/// - `track_io_timing` on, so `pg_stat_database.blk_read_time` measures read latency;
/// - `track_wal_io_timing` on, so the WAL's write and sync times (the log writer's latency:
///   SLOB's log file parallel write) are measured, not left at 0;
/// - `enable_bitmapscan` off and `effective_io_concurrency` 0, so index reads stay
///   single-block (SLOB sets Oracle's `_db_block_prefetch_*` to 0 for the same reason);
/// - `max_connections` room for 128+ sessions plus samplers;
/// - `autovacuum` stays on server-wide; the test tables turn it off themselves
///   (`autovacuum_enabled=false`), as the issue asks.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("shared_buffers", "16MB"),
    ("track_io_timing", "on"),
    ("track_wal_io_timing", "on"),
    ("enable_bitmapscan", "off"),
    ("effective_io_concurrency", "0"),
    ("max_connections", "300"),
];

/// Settings iogauge sets itself, after the user's, and refuses as overrides: where the
/// private server listens (its unix socket only, no TCP) and who may connect. Letting
/// `--pg-set` change them would open the server to other local users or lose it.
pub const MANAGED: &[&str] = &[
    "listen_addresses",
    "port",
    "unix_socket_directories",
    "unix_socket_group",
    "unix_socket_permissions",
    "hba_file",
    "ident_file",
    "data_directory",
    "config_file",
    "external_pid_file",
];

/// Settings always read back besides those not at their default.
pub const REPORTED: &[&str] = &[
    "server_version",
    "shared_buffers",
    "track_io_timing",
    "track_wal_io_timing",
    "enable_bitmapscan",
    "enable_seqscan",
    "effective_io_concurrency",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "wal_level",
    "wal_buffers",
    "checkpoint_timeout",
    "max_wal_size",
    "bgwriter_delay",
    "bgwriter_lru_maxpages",
    "block_size",
];

/// Parses `name=value`. Names are PostgreSQL parameter names (letters, digits, `_`, and `.`
/// for extension parameters), not one of the [`MANAGED`] ones; the value is everything after
/// the first `=`, on one line (a line break would end the configuration line), may be empty.
/// Whether the server accepts the value is checked against the server itself
/// (`Cluster::configure`).
pub fn parse_override(s: &str) -> Result<(String, String), DbError> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| DbError::Setting(s.to_string()))?;
    let name = name.trim().to_ascii_lowercase();
    let ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !ok || value.chars().any(char::is_control) {
        return Err(DbError::Setting(s.to_string()));
    }
    if MANAGED.contains(&name.as_str()) {
        return Err(DbError::BadSetting {
            setting: s.to_string(),
            why: "iogauge manages this one: the private server listens only on the unix \
                  socket in its directory, for iogauge's own account; leave it out"
                .into(),
        });
    }
    Ok((name, value.trim().to_string()))
}

/// The defaults with `overrides` applied (a later value for the same name wins), in order.
pub fn merged(overrides: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = DEFAULTS
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    for (n, v) in overrides {
        match out.iter_mut().find(|(m, _)| m == n) {
            Some(slot) => slot.1 = v.clone(),
            None => out.push((n.clone(), v.clone())),
        }
    }
    out
}

/// Renders settings as `postgresql.conf` lines. Every value is single-quoted (PostgreSQL
/// accepts a quoted string for parameters of any type), with `'` doubled.
pub fn render_conf(settings: &[(String, String)]) -> String {
    let mut out = String::from("# Written by iogauge: settings for physical I/O testing.\n");
    for (n, v) in settings {
        out.push_str(&format!("{n} = '{}'\n", v.replace('\'', "''")));
    }
    out
}

/// The settings in force that matter for a run: every one not at its built-in default plus
/// [`REPORTED`], sorted by name.
pub fn settings(client: &mut Client) -> Result<Vec<Setting>, postgres::Error> {
    let names: Vec<String> = REPORTED.iter().map(|s| s.to_string()).collect();
    let rows = client.query(
        "SELECT name, setting, unit FROM pg_settings \
         WHERE source NOT IN ('default', 'override', 'client', 'session') OR name = ANY($1) \
         ORDER BY name",
        &[&names],
    )?;
    Ok(rows
        .iter()
        .map(|r| Setting {
            name: r.get(0),
            setting: r.get(1),
            unit: r.get(2),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_parsing_table() {
        for (s, want) in [
            ("shared_buffers=64MB", Some(("shared_buffers", "64MB"))),
            (" Work_Mem = 4MB ", Some(("work_mem", "4MB"))),
            ("work_mem=", Some(("work_mem", ""))),
            ("search_path=a,b=c", Some(("search_path", "a,b=c"))),
            (
                "pg_stat_statements.max=100",
                Some(("pg_stat_statements.max", "100")),
            ),
            ("no_equals", None),
            ("=x", None),
            ("bad name=1", None),
            ("1abc=2", None),
            ("work_mem=1\nfsync=off", None),
            ("listen_addresses=*", None),
            ("Unix_Socket_Permissions=0777", None),
            ("hba_file=/tmp/x", None),
        ] {
            let got = parse_override(s).ok();
            let got = got.as_ref().map(|(n, v)| (n.as_str(), v.as_str()));
            assert_eq!(got, want, "{s}");
        }
        assert!(parse_override("x y=1").unwrap_err().is_usage());
        let e = parse_override("listen_addresses=*").unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("iogauge manages"),
            "{e}"
        );
    }

    #[test]
    fn overrides_replace_defaults_and_append_new_names() {
        let m = merged(&[
            ("shared_buffers".into(), "1GB".into()),
            ("work_mem".into(), "8MB".into()),
        ]);
        assert_eq!(m[0], ("shared_buffers".into(), "1GB".into()));
        assert_eq!(m.len(), DEFAULTS.len() + 1);
        assert_eq!(m.last().unwrap(), &("work_mem".into(), "8MB".into()));
    }

    #[test]
    fn conf_quotes_every_value() {
        let c = render_conf(&[
            ("listen_addresses".into(), String::new()),
            ("x".into(), "it's".into()),
        ]);
        assert!(c.contains("listen_addresses = ''\n"), "{c}");
        assert!(c.contains("x = 'it''s'\n"), "{c}");
    }
}
