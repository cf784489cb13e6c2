//! Traces in the store: a captured (or imported) stream of block requests, kept as its
//! header, its encoded chunks in order and, once it ended, its trailer and summary. A
//! capture writes as it goes ([`Store::begin_trace`], [`Store::add_trace_chunk`], each in its
//! own short transaction, so readers and runs storing beside it wait milliseconds at most),
//! so one cut short keeps every chunk it wrote. The store does not read the JSON or the
//! chunks: `iogauge_iolog` does.

use super::error::StoreError;
use super::store::Store;
use super::vet::write_failed;
use rusqlite::{params, OptionalExtension};

/// A stored trace's row (its chunks are read with [`Store::trace_chunks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRow {
    pub id: i64,
    pub started_at: String,
    /// `None`: cut short (or still being captured).
    pub ended_at: Option<String>,
    /// What was traced, in words (devices, filter).
    pub source: String,
    /// The run it recorded (`db run --capture`).
    pub run_id: Option<i64>,
    /// JSON of the trace's header.
    pub header: String,
    /// JSON of its trailer, once it ended.
    pub trailer: Option<String>,
    /// JSON of its summary, once it ended.
    pub summary: Option<String>,
}

const COLUMNS: &str = "id, started_at, ended_at, source, run_id, header, trailer, summary";

fn trace_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TraceRow> {
    Ok(TraceRow {
        id: r.get(0)?,
        started_at: r.get(1)?,
        ended_at: r.get(2)?,
        source: r.get(3)?,
        run_id: r.get(4)?,
        header: r.get(5)?,
        trailer: r.get(6)?,
        summary: r.get(7)?,
    })
}

impl Store {
    /// A new trace, its header JSON `header`; returns its id.
    pub fn begin_trace(
        &mut self,
        started_at: &str,
        source: &str,
        header: &str,
    ) -> Result<i64, StoreError> {
        let err = |e| write_failed(&self.path, "storing a trace", e);
        self.conn
            .execute(
                "INSERT INTO traces (started_at, source, header) VALUES (?1, ?2, ?3)",
                params![started_at, source, header],
            )
            .map_err(err)?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Chunk `seq` (0, 1, 2 … in order) of trace `id`.
    pub fn add_trace_chunk(&mut self, id: i64, seq: u64, data: &[u8]) -> Result<(), StoreError> {
        let err = |e| write_failed(&self.path, "storing a trace's chunk", e);
        self.conn
            .execute(
                "INSERT INTO trace_chunks (trace_id, seq, data) VALUES (?1, ?2, ?3)",
                params![id, seq as i64, data],
            )
            .map_err(err)?;
        Ok(())
    }

    /// Trace `id` ended at `ended_at` with its trailer and summary (JSON), recording run
    /// `run_id` if it did.
    pub fn finish_trace(
        &mut self,
        id: i64,
        ended_at: &str,
        trailer: &str,
        summary: &str,
        run_id: Option<i64>,
    ) -> Result<(), StoreError> {
        let err = |e| write_failed(&self.path, "finishing a trace", e);
        self.conn
            .execute(
                "UPDATE traces SET ended_at = ?2, trailer = ?3, summary = ?4, run_id = ?5 WHERE id = ?1",
                params![id, ended_at, trailer, summary, run_id],
            )
            .map_err(err)?;
        Ok(())
    }

    /// Every trace, newest first.
    pub fn traces(&self) -> Result<Vec<TraceRow>, StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "listing traces",
            source,
        };
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {COLUMNS} FROM traces ORDER BY id DESC"))
            .map_err(err)?;
        let rows = stmt.query_map([], trace_row).map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    /// Trace `id`'s row, or `None`.
    pub fn trace(&self, id: i64) -> Result<Option<TraceRow>, StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "reading a trace",
            source,
        };
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM traces WHERE id = ?1"),
                [id],
                trace_row,
            )
            .optional()
            .map_err(err)
    }

    /// Hands trace `id`'s chunks to `f` in order, one at a time (a long trace is never
    /// in memory whole); `f` may stop the reading by returning `false`. Each chunk is read
    /// in a statement of its own, so no lock is held between chunks: a replay streaming a
    /// trace for an hour does not keep another iogauge from storing its result.
    pub fn trace_chunks(
        &self,
        id: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<(), StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "reading a trace's chunks",
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, data FROM trace_chunks WHERE trace_id = ?1 AND seq >= ?2 \
                 ORDER BY seq LIMIT 1",
            )
            .map_err(err)?;
        let mut next = 0i64;
        loop {
            let chunk = stmt
                .query_row(params![id, next], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
                })
                .optional()
                .map_err(err)?;
            let Some((seq, data)) = chunk else {
                return Ok(());
            };
            if !f(&data) {
                return Ok(());
            }
            next = seq + 1;
        }
    }

    /// Removes trace `id` and its chunks; whether there was one.
    pub fn delete_trace(&mut self, id: i64) -> Result<bool, StoreError> {
        let err = |e| write_failed(&self.path, "removing a trace", e);
        let n = self
            .conn
            .execute("DELETE FROM traces WHERE id = ?1", [id])
            .map_err(err)?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_goes_in_as_it_is_captured_and_comes_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let id = s.begin_trace("2026-11-29T13:00:00Z", "vda", "{}").unwrap();
        for seq in 0..3u64 {
            s.add_trace_chunk(id, seq, &[seq as u8; 5]).unwrap();
        }
        // Cut short so far: readable, not ended.
        let row = s.trace(id).unwrap().unwrap();
        assert_eq!((row.ended_at, row.summary), (None, None));
        let mut got = Vec::new();
        s.trace_chunks(id, &mut |c| {
            got.push(c.to_vec());
            true
        })
        .unwrap();
        assert_eq!(got, [[0u8; 5], [1; 5], [2; 5]]);
        s.finish_trace(id, "2026-11-29T13:01:00Z", "{\"t\":1}", "{\"s\":1}", None)
            .unwrap();
        let row = s.trace(id).unwrap().unwrap();
        assert_eq!(row.summary.as_deref(), Some("{\"s\":1}"));
        assert_eq!(s.traces().unwrap().len(), 1);
        assert!(s.delete_trace(id).unwrap());
        assert!(s.trace(id).unwrap().is_none());
        let mut n = 0;
        s.trace_chunks(id, &mut |_| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, 0, "its chunks went with it");
    }
}
