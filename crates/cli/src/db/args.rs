//! The `db` command line, and its checks.

use crate::store_args::ResultArgs;
use crate::usage::UsageError;
use clap::{Args, Subcommand};
use iogauge_db::{check_overlaps, parse_override, DbError, PgBin, Place, SchemaSpec, DEFAULT_SEED};
use iogauge_model::db::engine::Engine;
use iogauge_model::db::workload::{Driver, Hotspot, RedoStress};
use iogauge_model::units::{parse_duration, parse_size, parse_whole, split_range};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub cmd: DbCommand,
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Create a private cluster on the storage under test (or use --dsn) and load the
    /// SLOB-style schemas: one row per 8 KiB block, keys in shuffled order, an index.
    Setup(SetupArgs),
    /// Run sessions of index reads and updates and measure every layer.
    Run(DbRunArgs),
    /// Back to the data as loaded (a file-level copy taken after setup).
    Reset(WhereArgs),
    /// Remove the private cluster (or iogauge's schemas on a --dsn server).
    Drop(WhereArgs),
}

/// Which server.
#[derive(Args, Debug, Clone)]
pub struct WhereArgs {
    /// Directory of the private cluster, on the storage under test. Default ./iogauge-pg
    /// (./iogauge-mariadb with --engine mariadb).
    #[arg(long, value_name = "DIR", conflicts_with = "dsn")]
    pub dir: Option<PathBuf>,
    /// An existing server instead (postgres://user:pass@host/db or key=value form;
    /// mysql://user:pass@host:port/db for MariaDB/MySQL). From the environment, it keeps
    /// the password off the command line, which every local user can read.
    #[arg(long, value_name = "DSN", env = iogauge_model::secret::DSN_ENV, hide_env_values = true)]
    pub dsn: Option<String>,
    /// The database: postgres (default) or mariadb (InnoDB; also MySQL). A mysql:// DSN
    /// implies mariadb.
    #[arg(long, value_name = "ENGINE", value_parser = engine)]
    pub engine: Option<Engine>,
    /// The MariaDB binaries for a private server (mariadbd, mariadb-install-db); default
    /// the first on PATH or in /usr/sbin.
    #[arg(long, value_name = "DIR", conflicts_with = "dsn")]
    pub mysql_bin: Option<PathBuf>,
}

impl WhereArgs {
    /// The engine asked for, or the one a mysql:// DSN names; one that contradicts its DSN
    /// is refused.
    pub fn engine(&self) -> Result<Engine, UsageError> {
        let by_dsn = self.dsn.as_deref().map(iogauge_db::engine_of_dsn);
        match (self.engine, by_dsn) {
            (Some(e), Some(d)) if e != d => Err(UsageError(format!(
                "--engine {e} with a {} DSN: give the DSN of a {} server (mysql://… for mariadb), or drop --engine",
                d.product(),
                e.product()
            ))),
            (Some(e), _) | (None, Some(e)) => Ok(e),
            (None, None) => Ok(iogauge_db::DEFAULT_ENGINE),
        }
    }

    /// `--dsn`, else `--dir`, else the engine's default directory.
    pub fn place(&self, engine: Engine) -> Place {
        let default = Path::new(engine.default_dir());
        Place::of(self.dir.as_deref().unwrap_or(default), self.dsn.as_deref())
    }
}

fn engine(s: &str) -> Result<Engine, String> {
    s.parse()
}

#[derive(Args, Debug)]
pub struct SetupArgs {
    #[command(flatten)]
    pub place: WhereArgs,
    /// Schemas (one table each; sessions spread over them).
    #[arg(long, default_value_t = 4, value_parser = crate::values::whole(1u32, 1024))]
    pub schemas: u32,
    /// Size of each schema's table: bytes with a unit (64M, 1G) or a bare number of 8 KiB
    /// blocks (one row each).
    #[arg(long, default_value = "64M", value_parser = scale)]
    pub scale: u64,
    /// Connections loading at once (one per schema at most).
    #[arg(long, default_value_t = 2, value_parser = crate::values::whole(1u32, 256))]
    pub load_parallel: u32,
    /// A server setting over iogauge's (repeatable): --pg-set shared_buffers=64MB.
    #[arg(long = "pg-set", value_name = "NAME=VALUE")]
    pub pg_set: Vec<String>,
    /// Read the data with O_DIRECT, as SLOB does (Oracle's filesystemio_options=setall):
    /// PostgreSQL 16+'s `debug_io_direct=data`, a developer option, so each single-block
    /// read reaches the device as one block instead of through the page cache and the
    /// kernel's read-ahead. Same as --pg-set debug_io_direct=data.
    #[arg(long, conflicts_with = "dsn")]
    pub direct_io: bool,
    /// WAL on another device (initdb --waldir); default: with the data. A new directory is
    /// iogauge's until `db drop`; in an existing one iogauge works in its own `iogauge-wal`.
    #[arg(long, value_name = "DIR")]
    pub wal_dir: Option<PathBuf>,
    /// Spread the schemas over these directories, one tablespace each (schema N on the
    /// ((N-1) mod count)-th), as ASM spreads a diskgroup over its disks; default: with the
    /// cluster's data. A new directory is iogauge's until `db drop`; in an existing one
    /// iogauge works in its own `iogauge-ts` and leaves the rest alone.
    #[arg(
        long,
        value_name = "DIR[,DIR...]",
        value_delimiter = ',',
        conflicts_with = "dsn",
        value_parser = crate::values::path_item
    )]
    pub target: Vec<PathBuf>,
    /// The PostgreSQL bin directory for the private cluster (initdb, postgres, pg_ctl);
    /// default the newest on PATH or under /usr/lib/postgresql/*/bin.
    #[arg(long, value_name = "DIR", conflicts_with = "dsn")]
    pub pg_bin: Option<PathBuf>,
}

impl SetupArgs {
    pub fn spec(&self) -> SchemaSpec {
        SchemaSpec {
            schemas: self.schemas,
            blocks_per_schema: self.scale,
            load_parallel: self.load_parallel,
            seed: DEFAULT_SEED,
            tablespaces: Vec::new(),
        }
    }

    pub fn validate(&self) -> Result<(), UsageError> {
        if self.scale < 16 {
            return Err(UsageError(
                "--scale must hold at least 16 blocks (128k) per schema".into(),
            ));
        }
        let default = Path::new(self.place.engine()?.default_dir());
        let dir = self.place.dir.as_deref().unwrap_or(default);
        // Nothing of a cluster goes on /proc, /sys or cgroupfs (issue #25 rows 11 and 20).
        let places = [("--dir", Some(dir)), ("--wal-dir", self.wal_dir.as_deref())];
        for (flag, p) in places.into_iter().filter_map(|(f, p)| Some((f, p?))) {
            crate::paths::check_not_kernel(flag, p)?;
        }
        for t in &self.target {
            crate::paths::check_not_kernel("--target", t)?;
        }
        check_overlaps(&self.target, dir, self.wal_dir.as_deref())
            .map_err(|e| UsageError(e.to_string()))
    }

    pub fn overrides(&self) -> anyhow::Result<Vec<(String, String)>> {
        overrides(&self.pg_set)
    }

    /// `--direct-io` made the `--pg-set` it stands for.
    pub fn with_direct_io(mut self) -> SetupArgs {
        if std::mem::take(&mut self.direct_io) {
            self.pg_set.push(DIRECT_IO.into());
        }
        self
    }
}

/// `--pg-bin DIR` checked: a PostgreSQL is there.
pub fn pg_bin(dir: Option<&Path>) -> Result<Option<PgBin>, DbError> {
    dir.map(|d| PgBin::at("--pg-bin", d)).transpose()
}

pub fn overrides(pg_set: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    pg_set
        .iter()
        .map(|s| parse_override(s).map_err(|e| pg_set_error(&e).into()))
        .collect()
}

/// What `--direct-io` sets.
pub const DIRECT_IO: &str = "debug_io_direct=data";

/// A `--pg-set` value iogauge or the server refused, as one line naming the flag.
pub fn pg_set_error(e: &DbError) -> UsageError {
    match e {
        DbError::BadSetting { setting, why } if setting.starts_with("debug_io_direct") => {
            UsageError(format!(
                "--direct-io ({setting}): {why}; PostgreSQL reads with O_DIRECT from version 16 on: \
                 give --pg-bin a PostgreSQL 16 or newer"
            ))
        }
        DbError::BadSetting { setting, why } => UsageError(format!("--pg-set {setting}: {why}")),
        e => UsageError(format!("--pg-set: {e}")),
    }
}

#[derive(Args, Debug)]
pub struct DbRunArgs {
    #[command(flatten)]
    pub place: WhereArgs,
    /// Sessions that only read (SLOB runit's readers).
    #[arg(long, value_parser = crate::values::whole(0u32, 4096))]
    pub readers: Option<u32>,
    /// Sessions that only update.
    #[arg(long, value_parser = crate::values::whole(0u32, 4096))]
    pub writers: Option<u32>,
    /// Sessions that each update with --update-pct probability, else read (SLOB2).
    #[arg(long, conflicts_with_all = ["readers", "writers"],
          value_parser = crate::values::whole(1u32, 4096))]
    pub sessions: Option<u32>,
    /// With --sessions: share of operations that update, in percent.
    #[arg(long, requires = "sessions", value_parser = crate::values::whole(0u8, 100))]
    pub update_pct: Option<u8>,
    /// Rows per operation, through the index from a random key up (SLOB's WORK_UNIT).
    #[arg(long, default_value_t = 64, value_parser = crate::values::whole(1u32, 10000))]
    pub work_unit: u32,
    /// What an update changes besides a counter: none, lite (one padding column) or heavy
    /// (all of them): more WAL per update.
    #[arg(long, default_value = "none", value_parser = redo)]
    pub redo_stress: RedoStress,
    /// Every Nth operation goes to schema 1 (SLOB's HOT_SCHEMA_FREQUENCY).
    #[arg(long, value_parser = crate::values::whole(1u32, u32::MAX))]
    pub hot_schema_every: Option<u32>,
    /// An in-table hot spot (SLOB's HOTSPOT_MB, HOTSPOT_OFFSET_MB, HOTSPOT_FREQUENCY): every
    /// EVERY-th operation works on the SIZE of rows from OFFSET (keys in row order; rows were
    /// loaded shuffled, so their blocks are spread over the table): 64M@128M:4.
    #[arg(long, value_name = "SIZE@OFFSET:EVERY", value_parser = hotspot)]
    pub hotspot: Option<Hotspot>,
    /// Pause between a session's operations: a duration (2ms), or a range MIN..MAX (1ms..5ms)
    /// to draw each pause from uniformly, as SLOB's think time does.
    #[arg(long, value_name = "TIME|MIN..MAX", value_parser = think_time)]
    pub think_time: Option<(Duration, Option<Duration>)>,
    /// Where the sessions' loop runs: server (a PL/pgSQL procedure runs batches of
    /// operations inside the database, one round trip per batch, latency measured there, as
    /// pgio and SLOB do) or client (one statement and round trip per operation, latency
    /// includes the round trip; costs more client CPU).
    /// Default server on PostgreSQL; MariaDB has the client driver only.
    #[arg(long, value_parser = driver)]
    pub driver: Option<Driver>,
    /// Measured time.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub time: Duration,
    /// Run this long first, left out of the figures.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub ramp: Duration,
    /// Length of one interval of the time series.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// As root: run the private server in a memory cgroup of this size (its page cache
    /// included), so reads cannot be served from a large OS cache. The OS cache is dropped
    /// first.
    #[arg(long, value_parser = parse_size)]
    pub cache_limit: Option<u64>,
    /// A server setting for this run (repeatable; private cluster, restarts it).
    #[arg(long = "pg-set", value_name = "NAME=VALUE")]
    pub pg_set: Vec<String>,
    /// Read the data with O_DIRECT, as SLOB does (Oracle's filesystemio_options=setall):
    /// PostgreSQL 16+'s `debug_io_direct=data`, a developer option, so each single-block
    /// read reaches the device as one block instead of through the page cache and the
    /// kernel's read-ahead. For this run; same as --pg-set debug_io_direct=data.
    #[arg(long, conflicts_with = "dsn")]
    pub direct_io: bool,
    /// The PostgreSQL bin directory for a private cluster set up by this run; an existing
    /// cluster must have been made with it. Default the newest found.
    #[arg(long, value_name = "DIR", conflicts_with = "dsn")]
    pub pg_bin: Option<PathBuf>,
    /// Physical disks behind the data, for the reads per disk (ORION's IOPS per spindle,
    /// beside a calibration's --disks in `iogauge compare CAL DB`); default: the disks under
    /// the data the run samples (an array the OS shows as one device needs this).
    #[arg(long, value_parser = crate::values::whole(1u32, 100_000))]
    pub disks: Option<u32>,
    /// Seed for the sessions' key choices.
    #[arg(long, default_value_t = DEFAULT_SEED, value_parser = crate::values::whole(0u64, u64::MAX))]
    pub seed: u64,
    /// Record the run's own block requests on the disks of its data (and WAL) directory into
    /// a stored trace, for `iogauge replay` and `iogauge traces` (a private server, or one
    /// whose data directory is here).
    #[arg(long)]
    pub capture: bool,
    #[command(flatten)]
    pub result: ResultArgs,
}

/// A bare number is blocks; with a unit, bytes rounded up to whole 8 KiB blocks.
fn scale(s: &str) -> Result<u64, String> {
    blocks(s, u64::div_ceil)
}

/// A bare number of 8 KiB blocks (rows), or bytes with a unit turned into blocks by `round`
/// (up for a size, down for an offset).
fn blocks(s: &str, round: fn(u64, u64) -> u64) -> Result<u64, String> {
    let t = s.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
        return t
            .parse()
            .map_err(|_| format!("'{s}' is not a number of blocks"));
    }
    Ok(round(parse_size(t)?, 8192))
}

/// `SIZE@OFFSET:EVERY`, sizes in bytes with a unit (or bare 8 KiB blocks, as --scale):
/// SIZE rounded up and OFFSET down to whole rows.
fn hotspot(s: &str) -> Result<Hotspot, String> {
    let form = || format!("'{s}' is not SIZE@OFFSET:EVERY (e.g. 64M@128M:4)");
    let (size, rest) = s.split_once('@').ok_or_else(form)?;
    let (offset, every) = rest.split_once(':').ok_or_else(form)?;
    let offset_blocks = blocks(offset, |b, n| b / n)?;
    let size_blocks = scale(size)?;
    let every = parse_whole(every.trim(), 1, u64::from(u32::MAX))
        .map_err(|e| format!("'{s}': EVERY is {e}"))? as u32;
    if size_blocks == 0 || every == 0 {
        return Err(format!("'{s}': SIZE and EVERY must be above 0"));
    }
    Ok(Hotspot {
        offset_blocks,
        size_blocks,
        every,
    })
}

/// `2ms`, or `1ms..5ms` (MAX not below MIN).
fn think_time(s: &str) -> Result<(Duration, Option<Duration>), String> {
    match split_range(s, "1ms..5ms")? {
        None => Ok((parse_duration(s)?, None)),
        Some((lo, hi)) => {
            let (lo, hi) = (parse_duration(lo.trim())?, parse_duration(hi.trim())?);
            if hi < lo {
                return Err(format!(
                    "'{s}': the range ends before it starts; give MIN..MAX"
                ));
            }
            Ok((lo, Some(hi)))
        }
    }
}

fn redo(s: &str) -> Result<RedoStress, String> {
    [RedoStress::None, RedoStress::Lite, RedoStress::Heavy]
        .into_iter()
        .find(|r| r.name() == s)
        .ok_or_else(|| format!("'{s}' is not a redo stress: use none, lite or heavy"))
}

fn driver(s: &str) -> Result<Driver, String> {
    match s {
        "server" => Ok(Driver::Server),
        "client" => Ok(Driver::Client),
        _ => Err(format!("'{s}' is not a driver: use server or client")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn scale_in_blocks_or_bytes() {
        assert_eq!(super::scale("1000"), Ok(1000));
        assert_eq!(super::scale("64M"), Ok(8192));
        assert_eq!(super::scale("1G"), Ok(131_072));
        assert_eq!(super::scale("10k"), Ok(2));
        assert!(super::scale("x").is_err());
    }

    #[test]
    fn hotspot_size_at_offset_every() {
        let h = |o, s, e| super::Hotspot {
            offset_blocks: o,
            size_blocks: s,
            every: e,
        };
        assert_eq!(super::hotspot("64M@128M:4"), Ok(h(16_384, 8192, 4)));
        assert_eq!(super::hotspot("100@0:1"), Ok(h(0, 100, 1)));
        assert_eq!(super::hotspot("10k@9k:2"), Ok(h(1, 2, 2)));
        for bad in ["64M", "64M@1M", "64M@1M:x", "0@0:1", "1M@0:0", "x@0:1"] {
            assert!(super::hotspot(bad).is_err(), "{bad}");
        }
        // Issue #25 row 17: a frequency past u32 says the range, not Rust's parse error.
        let e = super::hotspot("64M@0:18446744073709551616").unwrap_err();
        assert!(e.contains("EVERY is above 4294967295"), "{e}");
    }

    #[test]
    fn think_time_or_its_range() {
        let ms = super::Duration::from_millis;
        assert_eq!(super::think_time("2ms"), Ok((ms(2), None)));
        assert_eq!(super::think_time("1ms..5ms"), Ok((ms(1), Some(ms(5)))));
        assert!(super::think_time("5ms..1ms")
            .unwrap_err()
            .contains("MIN..MAX"));
        assert!(super::think_time("1ms..").is_err());
        // Issue #25 row 18: three dots were read as 1ms..0.5ms.
        assert!(super::think_time("1ms...5ms")
            .unwrap_err()
            .contains("more than two dots"));
    }

    #[test]
    fn drivers() {
        assert_eq!(
            super::driver("client"),
            Ok(iogauge_model::db::workload::Driver::Client)
        );
        assert_eq!(
            super::driver("server"),
            Ok(iogauge_model::db::workload::Driver::Server)
        );
        assert!(super::driver("both")
            .unwrap_err()
            .contains("server or client"));
    }
}
