//! The store's file format: the mark and version SQLite keeps in its header, the tables, and
//! how the `status` and `kind` columns decode. Everything else in the store builds on these.

use iogauge_model::history::RunStatus;
use iogauge_model::Kind;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};

/// `PRAGMA application_id` of an iogauge store: "ioga" in ASCII.
pub(super) const APPLICATION_ID: i32 = 0x696f_6761;
/// `PRAGMA user_version`: the schema version; bump (and migrate) on any schema change.
pub(super) const SCHEMA_VERSION: i32 = 3;

/// The runs and their histograms (schema version 1).
// AUTOINCREMENT: run ids are shown to users and named on the command line, so an id must never
// come back after the newest run is deleted.
pub(super) const RUN_TABLES: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT NOT NULL,
    target     TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('complete', 'interrupted')),
    max_iops   REAL,
    max_mbps   REAL,
    max_pmbps  REAL,
    latency_ms REAL,
    disks      INTEGER,
    document   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS histograms (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    label  TEXT NOT NULL,
    data   BLOB NOT NULL,
    PRIMARY KEY (run_id, label)
);
";

/// Tables added in schema version 2.
pub(super) const CAMPAIGN_TABLES: &str = "
CREATE TABLE IF NOT EXISTS campaigns (
    name       TEXT PRIMARY KEY,
    generation INTEGER NOT NULL,
    file       TEXT NOT NULL,
    definition TEXT NOT NULL,
    plan_hash  TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS campaign_runs (
    run_id     INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    campaign   TEXT NOT NULL,
    generation INTEGER NOT NULL,
    case_name  TEXT NOT NULL,
    rep        INTEGER NOT NULL,
    warmup     INTEGER NOT NULL,
    status     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS campaign_runs_by_campaign ON campaign_runs (campaign, generation);
-- A measured repetition is stored complete at most once per generation.
CREATE UNIQUE INDEX IF NOT EXISTS campaign_runs_once
    ON campaign_runs (campaign, generation, case_name, rep)
    WHERE warmup = 0 AND status = 'complete';
";

/// Tables added in schema version 3: captured block-request traces (`iogauge capture`, `db
/// run --capture`, imports), each a row with its header, trailer and summary as JSON (the
/// `iogauge_iolog` types; the store keeps them as text) and its encoded chunks in order. A
/// capture writes its row and chunks as it goes, so one cut short keeps what it recorded
/// (`ended_at` NULL).
pub(super) const TRACE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS traces (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    source     TEXT NOT NULL,
    run_id     INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    header     TEXT NOT NULL,
    trailer    TEXT,
    summary    TEXT
);
CREATE TABLE IF NOT EXISTS trace_chunks (
    trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    data     BLOB NOT NULL,
    PRIMARY KEY (trace_id, seq)
);
";

/// The `status` column: the status by name.
pub(super) struct StatusColumn(pub(super) RunStatus);

impl FromSql for StatusColumn {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "complete" => Ok(StatusColumn(RunStatus::Complete)),
            "interrupted" => Ok(StatusColumn(RunStatus::Interrupted)),
            other => Err(FromSqlError::Other(
                format!("unknown run status {other:?}").into(),
            )),
        }
    }
}

/// The `kind` column: the document's kind by name (`db run` as stores of an early iogauge
/// wrote it for database runs).
pub(super) struct KindColumn(pub(super) Kind);

impl FromSql for KindColumn {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "db run" => Ok(KindColumn(Kind::DbRun)),
            name => Kind::from_name(name)
                .map(KindColumn)
                .ok_or_else(|| FromSqlError::Other(format!("unknown run kind {name:?}").into())),
        }
    }
}
