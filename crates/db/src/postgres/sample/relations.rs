//! Reads per relation: `pg_statio_user_tables` and `pg_statio_user_indexes` with each
//! relation's tablespace, read at the measured window's start and end (what is and is not
//! counted per relation: `iogauge_model::db::relations`).
//!
//! One row per table heap, per index, and per table with TOAST data (its `toast_blks_*` as
//! the heap, its `tidx_blks_*` as the index); a table's `idx_blks_*` (all its indexes summed)
//! is left out, since each index has its own row. Same columns on every version iogauge
//! runs on (14-18).

use iogauge_model::db::relations::{RelKind, RelationCounters};
use postgres::{Client, Statement};

/// The snapshot query: schema, relation, kind, tablespace, heap read/hit, index read/hit.
pub(crate) const RELATIONS_SQL: &str = "\
WITH dflt AS (SELECT t.spcname FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace \
              WHERE d.datname = current_database()), \
     spc AS (SELECT c.oid, coalesce(t.spcname, (SELECT spcname FROM dflt)) AS spcname \
             FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace) \
SELECT s.schemaname::text, s.relname::text, 'table', spc.spcname::text, \
       s.heap_blks_read, s.heap_blks_hit, NULL::int8, NULL::int8 \
  FROM pg_statio_user_tables s JOIN spc ON spc.oid = s.relid \
UNION ALL \
SELECT s.schemaname::text, s.relname::text, 'toast', spc.spcname::text, \
       s.toast_blks_read, s.toast_blks_hit, s.tidx_blks_read, s.tidx_blks_hit \
  FROM pg_statio_user_tables s JOIN spc ON spc.oid = s.relid WHERE s.toast_blks_read IS NOT NULL \
UNION ALL \
SELECT i.schemaname::text, i.indexrelname::text, 'index', spc.spcname::text, \
       NULL::int8, NULL::int8, i.idx_blks_read, i.idx_blks_hit \
  FROM pg_statio_user_indexes i JOIN spc ON spc.oid = i.indexrelid";

/// The kind column of [`RELATIONS_SQL`].
fn kind(word: &str) -> RelKind {
    match word {
        "index" => RelKind::Index,
        "toast" => RelKind::Toast,
        _ => RelKind::Table,
    }
}

/// Reads every user relation's counters with the statement prepared from [`RELATIONS_SQL`].
pub(crate) fn snapshot_relations(
    c: &mut Client,
    stmt: &Statement,
) -> Result<Vec<RelationCounters>, postgres::Error> {
    let u = |x: Option<i64>| x.map(|x| x.max(0) as u64);
    Ok(c.query(stmt, &[])?
        .iter()
        .map(|r| RelationCounters {
            schema: r.get(0),
            relation: r.get(1),
            kind: kind(r.get(2)),
            tablespace: r.get::<_, Option<String>>(3).unwrap_or_default(),
            heap_blks_read: u(r.get(4)),
            heap_blks_hit: u(r.get(5)),
            idx_blks_read: u(r.get(6)),
            idx_blks_hit: u(r.get(7)),
        })
        .collect())
}
