//! Runs in the store: one row per finished run (its history figures and JSON document) with
//! its histograms, written in one transaction and read back typed.

use super::campaign::{link, CampaignTag};
use super::error::StoreError;
use super::schema::{KindColumn, StatusColumn};
use super::store::Store;
use super::vet::write_failed;
use iogauge_model::history::{RunRow, RunStatus};
use iogauge_model::Document;
use rusqlite::{params, OptionalExtension};

/// The history row's columns; the label is read from the document (a damaged one reads as
/// no label, and the listing still works).
const ROW_COLUMNS: &str = "id, kind, started_at, ended_at, target, status, \
                           max_iops, max_mbps, max_pmbps, latency_ms, disks, \
                           CASE WHEN json_valid(document) THEN json_extract(document, '$.label') END";
/// How many columns ROW_COLUMNS has (the next one selected is at this index).
const ROW_COLUMN_COUNT: usize = 12;

/// One run to store, everything in one transaction. The history row (kind, times, target,
/// status, figures) comes from the document.
#[derive(Clone, Copy, Debug)]
pub struct NewRun<'a> {
    pub document: &'a Document,
    /// Label → serialised HDR histogram.
    pub histograms: &'a [(String, Vec<u8>)],
    /// The campaign run this is, stored with it in the same transaction.
    pub campaign: Option<&'a CampaignTag>,
}

impl NewRun<'_> {
    pub fn status(&self) -> RunStatus {
        if self.document.meta().interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        }
    }
}

/// A history row from a `SELECT {ROW_COLUMNS}`.
fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        kind: r.get::<_, KindColumn>(1)?.0,
        started_at: r.get(2)?,
        ended_at: r.get(3)?,
        target: r.get(4)?,
        status: r.get::<_, StatusColumn>(5)?.0,
        max_iops: r.get(6)?,
        max_mbps: r.get(7)?,
        max_pmbps: r.get(8)?,
        latency_ms: r.get(9)?,
        disks: r.get(10)?,
        label: r.get(11)?,
    })
}

/// A run read back: its row, its document (upgraded to this iogauge's schema), its
/// histograms in insertion order.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub row: RunRow,
    pub document: Document,
    pub histograms: Vec<(String, Vec<u8>)>,
}

impl Store {
    /// Stores a run and its histograms in one transaction; returns the run's id.
    pub fn insert(&mut self, run: &NewRun) -> Result<i64, StoreError> {
        let err = |source| write_failed(&self.path, "storing the run", source);
        // IMMEDIATE takes the write lock up front, so a concurrent writer waits on the busy
        // timeout instead of failing when a read transaction cannot be upgraded.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let doc = run.document;
        let (meta, f) = (doc.meta(), doc.history());
        let ended_at = meta.ended_at.as_deref().unwrap_or(&meta.started_at);
        tx.execute(
            "INSERT INTO runs (kind, started_at, ended_at, target, status, max_iops, max_mbps, \
             max_pmbps, latency_ms, disks, document) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                meta.kind.name(),
                meta.started_at,
                ended_at,
                f.target,
                run.status().as_str(),
                f.max_iops,
                f.max_mbps,
                f.max_pmbps,
                f.latency_ms,
                f.disks,
                doc.to_compact_json(),
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        {
            let mut stmt = tx
                .prepare("INSERT INTO histograms (run_id, label, data) VALUES (?1, ?2, ?3)")
                .map_err(err)?;
            for (label, data) in run.histograms {
                stmt.execute(params![id, label, data]).map_err(err)?;
            }
        }
        if let Some(tag) = run.campaign {
            link(&tx, id, tag, run.status()).map_err(|e| {
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
                    StoreError::RepetitionStored {
                        path: self.path.clone(),
                        campaign: tag.campaign.clone(),
                        case: tag.case.clone(),
                        rep: tag.rep,
                    }
                } else {
                    err(e)
                }
            })?;
        }
        tx.commit().map_err(err)?;
        Ok(id)
    }

    /// Every run, newest first.
    pub fn list(&self) -> Result<Vec<RunRow>, StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "listing runs",
            source,
        };
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {ROW_COLUMNS} FROM runs ORDER BY id DESC"))
            .map_err(err)?;
        let rows = stmt.query_map([], run_row).map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    /// The run `id` with its document and histograms, or `None` if there is no such run.
    pub fn get(&self, id: i64) -> Result<Option<StoredRun>, StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "reading a run",
            source,
        };
        // One read transaction, so the row and its histograms come from the same snapshot.
        let tx = self.conn.unchecked_transaction().map_err(err)?;
        let found = tx
            .query_row(
                &format!("SELECT {ROW_COLUMNS}, document FROM runs WHERE id = ?1"),
                [id],
                |r| Ok((run_row(r)?, document_text(r.get_ref(ROW_COLUMN_COUNT)?))),
            )
            .optional()
            .map_err(err)?;
        let Some((row, text)) = found else {
            return Ok(None);
        };
        let document = Document::from_json(&text).map_err(|source| StoreError::Document {
            path: self.path.clone(),
            id,
            source,
        })?;
        let mut stmt = tx
            .prepare("SELECT label, data FROM histograms WHERE run_id = ?1 ORDER BY rowid")
            .map_err(err)?;
        let histograms = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(err)?
            .collect::<Result<_, _>>()
            .map_err(err)?;
        Ok(Some(StoredRun {
            row,
            document,
            histograms,
        }))
    }
}

/// The stored document as text whatever the column holds: a document damaged by hand (a
/// blob, NULL, bytes that are not UTF-8) then fails as a document naming its run, not as an
/// SQLite type error.
fn document_text(v: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    }
}
