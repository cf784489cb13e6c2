//! The stored document: one typed value for every result iogauge produces (a run, a
//! calibration, a database run), tagged by `kind` in JSON, over one shared head (`Meta`).
//! Reading goes through [`Document::from_json`], the only place that looks at `kind` and
//! `schema`: it upgrades documents stored by an older iogauge (schema 1) before typing them.
//!
//! Schema 2 keeps every field name schema 1 had, except where the kinds disagreed:
//! - a calibration's `start_time`/`end_time` are `started_at`/`ended_at`, as for the others
//!   (every kind now records `ended_at`);
//! - a database run's `grid` and `workload.think_time` are seconds (schema 1 stored Rust's
//!   `{"secs", "nanos"}` pairs), as every other duration in the documents.
//!
//! Schema 3 keeps in each snapshot's stage histograms (`samples[].layers`, `samples[].ring`)
//! only the buckets of the interval the snapshot ends, where schema 2 kept the whole run's
//! (`crate::layers::StageHist`).

pub use crate::meta::{Kind, Meta, SCHEMA};

use crate::calib::CalibrationReport;
use crate::db::report::DbReport;
use crate::layers::{LayerCounters, RingCounters};
use crate::run::RunReport;
use serde_json::Value;

/// A result's latency histograms (HDR, serialised), labelled as the store keeps them: the
/// whole window's per direction (`read`, `write`, `update`) and, for runs, every interval's.
pub type Histograms = Vec<(String, Vec<u8>)>;

/// `$e` on the report inside `$doc`, whichever its kind: the kinds share `meta` and `warnings`
/// by field name, not by type (`warnings` sits at a different place in each kind's JSON).
macro_rules! each_kind {
    ($doc:expr, $r:ident => $e:expr) => {
        match $doc {
            Document::Run($r) => $e,
            Document::Calibration($r) => $e,
            Document::DbRun($r) => $e,
        }
    };
}

/// A stored result of any kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    Run(Box<RunReport>),
    Calibration(Box<CalibrationReport>),
    DbRun(Box<DbReport>),
}

/// Why a stored text is not a document this iogauge can read.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("no \"{0}\" field: not an iogauge result")]
    Missing(&'static str),
    #[error("kind {0:?} is not one iogauge knows (run, calibrate, db)")]
    UnknownKind(String),
    #[error("schema {found} is newer than this iogauge reads ({SCHEMA}); use a newer iogauge")]
    Newer { found: u64 },
}

impl Document {
    /// Reads a document of any schema iogauge has written, upgrading older ones.
    pub fn from_json(text: &str) -> Result<Document, DocError> {
        Self::from_value(serde_json::from_str(text)?)
    }

    /// [`Document::from_json`] on parsed JSON.
    pub fn from_value(mut v: Value) -> Result<Document, DocError> {
        let kind = Self::kind_of(&v)?;
        upgrade(&mut v, kind)?;
        Ok(match kind {
            Kind::Run => Document::Run(Box::new(serde_json::from_value(v)?)),
            Kind::Calibrate => Document::Calibration(Box::new(serde_json::from_value(v)?)),
            Kind::DbRun => Document::DbRun(Box::new(serde_json::from_value(v)?)),
        })
    }

    /// The kind a JSON value says it is.
    fn kind_of(v: &Value) -> Result<Kind, DocError> {
        let name = v
            .get("kind")
            .and_then(Value::as_str)
            .ok_or(DocError::Missing("kind"))?;
        Kind::from_name(name).ok_or_else(|| DocError::UnknownKind(name.to_string()))
    }

    pub fn meta(&self) -> &Meta {
        each_kind!(self, r => &r.meta)
    }

    pub fn meta_mut(&mut self) -> &mut Meta {
        each_kind!(self, r => &mut r.meta)
    }

    pub fn kind(&self) -> Kind {
        self.meta().kind
    }

    pub fn warnings(&self) -> &[String] {
        each_kind!(self, r => &r.warnings)
    }

    pub fn warnings_mut(&mut self) -> &mut Vec<String> {
        each_kind!(self, r => &mut r.warnings)
    }

    /// What the OS said about the targets before the I/O (absent in runs and database runs
    /// stored before they recorded it).
    pub fn preflight(&self) -> Option<&crate::preflight::Preflight> {
        match self {
            Document::Run(r) => r.preflight.as_ref(),
            Document::Calibration(c) => Some(&c.preflight),
            Document::DbRun(d) => d.preflight.as_ref(),
        }
    }

    /// What limits the storage, ranked ([`crate::finding`]).
    pub fn findings(&self) -> &[crate::finding::Finding] {
        each_kind!(self, r => &r.findings)
    }

    pub fn findings_mut(&mut self) -> &mut Vec<crate::finding::Finding> {
        each_kind!(self, r => &mut r.findings)
    }

    /// The document as printed and exported: pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = each_kind!(self, r => serde_json::to_string_pretty(r))
            .expect("documents always serialise");
        s.push('\n');
        s
    }

    /// The document as the store keeps it: compact JSON, the same document in a sixth of
    /// the bytes of [`Document::to_json`] (its indentation is most of a long run's: nested
    /// histogram buckets one number a line).
    pub fn to_compact_json(&self) -> String {
        each_kind!(self, r => serde_json::to_string(r)).expect("documents always serialise")
    }
}

impl From<RunReport> for Document {
    fn from(r: RunReport) -> Self {
        Document::Run(Box::new(r))
    }
}

impl From<CalibrationReport> for Document {
    fn from(c: CalibrationReport) -> Self {
        Document::Calibration(Box::new(c))
    }
}

impl From<DbReport> for Document {
    fn from(d: DbReport) -> Self {
        Document::DbRun(Box::new(d))
    }
}

/// Brings a stored document of any older schema to [`SCHEMA`], in place.
fn upgrade(v: &mut Value, kind: Kind) -> Result<(), DocError> {
    let schema = v
        .get("schema")
        .and_then(Value::as_u64)
        .ok_or(DocError::Missing("schema"))?;
    if schema > u64::from(SCHEMA) {
        return Err(DocError::Newer { found: schema });
    }
    if schema < 2 {
        from_schema_1(v, kind);
    }
    if schema < 3 {
        buckets_per_interval(v);
    }
    if schema < 4 && kind == Kind::DbRun {
        log_names(v);
    }
    v["schema"] = Value::from(SCHEMA);
    Ok(())
}

/// Schema 1 → 2: one name for the start and end times, durations as seconds.
fn from_schema_1(v: &mut Value, kind: Kind) {
    let Some(doc) = v.as_object_mut() else {
        return;
    };
    if kind == Kind::Calibrate {
        for (old, new) in [("start_time", "started_at"), ("end_time", "ended_at")] {
            if let Some(t) = doc.remove(old) {
                doc.insert(new.into(), t);
            }
        }
    }
    if kind == Kind::DbRun {
        if let Some(grid) = doc.get_mut("grid").and_then(Value::as_object_mut) {
            for d in grid.values_mut() {
                secs_of_pair(d);
            }
        }
        if let Some(t) = doc
            .get_mut("workload")
            .and_then(|w| w.get_mut("think_time"))
        {
            secs_of_pair(t);
        }
    }
}

/// Schema 2 → 3: every `samples` array in the document (a run's, each calibration point's, a
/// database run's) keeps each snapshot's interval's buckets only.
fn buckets_per_interval(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    Value::Array(samples) if k == "samples" => fresh_buckets(samples),
                    _ => buckets_per_interval(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(buckets_per_interval),
        _ => {}
    }
}

/// One series of snapshots whose stage histograms are cumulative, rewritten as
/// [`LayerCounters::fresh_since`] the snapshot before. What does not read as layer or ring
/// counters is left as it is.
fn fresh_buckets(samples: &mut [Value]) {
    let mut layers_before: Vec<LayerCounters> = Vec::new();
    let mut ring_before: Option<RingCounters> = None;
    for s in samples {
        if let Some(l) = s.get_mut("layers") {
            if let Ok(cur) = serde_json::from_value::<Vec<LayerCounters>>(l.clone()) {
                if let Ok(f) = serde_json::to_value(LayerCounters::fresh_all(&cur, &layers_before))
                {
                    *l = f;
                }
                layers_before = cur;
            }
        }
        if let Some(r) = s.get_mut("ring") {
            if let Ok(cur) = serde_json::from_value::<RingCounters>(r.clone()) {
                if let Ok(f) = serde_json::to_value(cur.fresh_since(ring_before.as_ref())) {
                    *r = f;
                }
                ring_before = Some(cur);
            }
        }
    }
}

/// Schema 3 → 4: a database run's log is the log, whichever engine's (PostgreSQL's WAL,
/// InnoDB's redo): its fields are renamed wherever they stand in the document.
const LOG_NAMES: [(&str, &str); 14] = [
    ("wal_records", "log_records"),
    ("wal_fpi", "log_fpi"),
    ("wal_bytes", "log_bytes"),
    ("wal_write", "log_writes"),
    ("wal_sync", "log_syncs"),
    ("wal_write_time_ms", "log_write_time_ms"),
    ("wal_sync_time_ms", "log_sync_time_ms"),
    ("wal_untimed", "log_untimed"),
    ("wal_bytes_s", "log_bytes_s"),
    ("wal_writes_s", "log_writes_s"),
    ("wal_syncs_s", "log_syncs_s"),
    ("avg_wal_write_ms", "avg_log_write_ms"),
    ("avg_wal_sync_ms", "avg_log_sync_ms"),
    // The AAS of the log writer process, and its I/O by process type.
    ("walwriter", "log_writer"),
];

fn log_names(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (old, new) in LOG_NAMES {
                if let Some(x) = m.remove(old) {
                    m.insert(new.to_string(), x);
                }
            }
            m.values_mut().for_each(log_names);
        }
        Value::Array(a) => a.iter_mut().for_each(log_names),
        _ => {}
    }
}

/// `{"secs": S, "nanos": N}` (serde's `Duration`) → `S + N/1e9`; anything else unchanged.
fn secs_of_pair(d: &mut Value) {
    let (Some(s), Some(n)) = (
        d.get("secs").and_then(Value::as_u64),
        d.get("nanos").and_then(Value::as_u64),
    ) else {
        return;
    };
    *d = Value::from(s as f64 + n as f64 / 1e9);
}

#[cfg(test)]
mod tests;
