//! The SLOB/pgio data set: per schema `iogauge_N` one table `cf1` with one row per 8 KiB block,
//! keys loaded in shuffled order (neighbouring keys live in random blocks), a unique index on
//! the key. Loading runs in parallel, one connection per table; verification checks one row
//! per block and measures the data set.
//!
//! One row per block comes from the row size and the fill factor together. With
//! `fillfactor = 10` PostgreSQL inserts a row into a page only while 90% of the page
//! (7,372 bytes) stays free after it (`RelationGetBufferForTuple`). A row here is 645 bytes
//! (648 aligned): an empty page (8,164 bytes usable) takes one, and then has too little room
//! for a second — but still room for ~11 HOT versions of it, so updates (which never change
//! the indexed key) stay on the page. [`rows_per_page`] models the rule; [`verify`] checks the
//! result on the server.

use crate::common::schema::{load_afresh, SchemaSpec, PAD_COLS, PAD_LEN};
use crate::error::DbError;
use crate::postgres::dsn::{connect, describe, server_err};
use iogauge_model::db::setup::{LoadReport, TableCheck};
use iogauge_stats::Bytes;
use postgres::{CancelToken, Client, Config, NoTls};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// What the schemas carry as their comment, so iogauge drops only its own.
const SCHEMA_MARK: &str = "iogauge";
/// Rows per INSERT while loading.
const CHUNK: usize = 2000;

/// `iogauge_tsN`: the N-th tablespace of `db setup --target` (from 1).
pub fn tablespace_name(n: u32) -> String {
    format!("iogauge_ts{n}")
}

pub fn schema_name(schema: u32) -> String {
    format!("iogauge_{schema}")
}

/// `iogauge_N.cf1`; schemas count from 1 (schema 1 is SLOB's hot schema).
pub fn table_name(schema: u32) -> String {
    format!("{}.cf1", schema_name(schema))
}

/// Rows of `tuple_len` bytes that PostgreSQL's insert path puts in one 8 KiB heap page at
/// `fillfactor` (`RelationGetBufferForTuple`: a page takes a row while
/// `MAXALIGN(len) + (100 − fillfactor)% of BLCKSZ ≤ free space − one line pointer`).
pub fn rows_per_page(tuple_len: usize, fillfactor: usize) -> usize {
    const BLCKSZ: usize = 8192;
    const PAGE_HEADER: usize = 24;
    const ITEM_ID: usize = 4;
    let len = tuple_len.div_ceil(8) * 8;
    let save = BLCKSZ * (100 - fillfactor) / 100;
    let mut free = BLCKSZ - PAGE_HEADER;
    let mut n = 0;
    while free >= ITEM_ID && len + save <= free - ITEM_ID {
        free -= len + ITEM_ID;
        n += 1;
    }
    n
}

/// Bytes of one row: 23-byte heap tuple header aligned to 24, two int8, and the padding
/// texts with their 1-byte varlena headers (short values, stored uncompressed).
pub const TUPLE_LEN: usize = 24 + 8 + 8 + PAD_COLS * (PAD_LEN + 1);

fn ddl(schema: u32, tablespace: Option<&str>) -> String {
    let s = schema_name(schema);
    let pads: Vec<String> = (1..=PAD_COLS)
        .map(|i| format!("p{i} text NOT NULL"))
        .collect();
    let plain: Vec<String> = (1..=PAD_COLS)
        .map(|i| format!("ALTER COLUMN p{i} SET STORAGE PLAIN"))
        .collect();
    format!(
        "CREATE SCHEMA {s}; COMMENT ON SCHEMA {s} IS '{SCHEMA_MARK}'; \
         CREATE TABLE {s}.cf1 (key int8 NOT NULL, scratch int8 NOT NULL, {}) \
         WITH (fillfactor = 10, autovacuum_enabled = false, toast.autovacuum_enabled = false){}; \
         ALTER TABLE {s}.cf1 {};",
        pads.join(", "),
        in_tablespace(tablespace),
        plain.join(", ")
    )
}

/// ` TABLESPACE name`, or nothing for the default.
fn in_tablespace(tablespace: Option<&str>) -> String {
    tablespace.map_or(String::new(), |t| format!(" TABLESPACE {t}"))
}

fn insert_sql(schema: u32) -> String {
    let pads: Vec<String> = (1..=PAD_COLS).map(|i| format!("p{i}")).collect();
    let vals = ["pad"; PAD_COLS].join(", ");
    format!(
        "INSERT INTO {} (key, scratch, {}) SELECT k, 0, {vals} FROM \
         (SELECT k, left(repeat(md5(k::text), {}), {PAD_LEN}) AS pad \
          FROM unnest($1::int8[]) WITH ORDINALITY AS u(k, o) ORDER BY o) s",
        table_name(schema),
        pads.join(", "),
        PAD_LEN.div_ceil(32)
    )
}

/// Creates and loads `spec.schemas` tables, replacing any iogauge schemas already there;
/// calls `progress(rows done, rows total)` about every 100 ms from the calling thread. Ends
/// with [`verify`]. Raising `stop` (Ctrl-C) cancels the loaders' statements and ends it with
/// [`DbError::Interrupted`]; a failed or interrupted load drops the schemas it created, so
/// no half-loaded data set is left behind.
pub fn setup(
    cfg: &Config,
    spec: &SchemaSpec,
    stop: &AtomicBool,
    progress: &dyn Fn(u64, u64),
) -> Result<LoadReport, DbError> {
    if spec.schemas == 0 || spec.blocks_per_schema == 0 {
        return Err(DbError::Usage(
            "schemas and blocks per schema must be at least 1".into(),
        ));
    }
    let mut admin = connect(cfg)?;
    load_afresh(
        &mut admin,
        |a| drop_all(cfg, a),
        || load_all(cfg, spec, stop, progress),
        |a| finish(cfg, spec, a),
        stop,
    )
}

/// The loaders: `load_parallel` connections taking schemas in turn. On `stop`, their
/// statements are cancelled (again every 100 ms, in case one fell between statements).
fn load_all(
    cfg: &Config,
    spec: &SchemaSpec,
    stop: &AtomicBool,
    progress: &dyn Fn(u64, u64),
) -> Result<(), DbError> {
    let total = spec.schemas as u64 * spec.blocks_per_schema;
    let done = AtomicU64::new(0);
    let next = AtomicU32::new(1);
    let failed = AtomicBool::new(false);
    let tokens: Mutex<Vec<CancelToken>> = Mutex::new(Vec::new());
    let threads = spec.load_parallel.clamp(1, spec.schemas);
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                sc.spawn(|| -> Result<(), DbError> {
                    let mut c = connect(cfg)?;
                    tokens
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(c.cancel_token());
                    loop {
                        let schema = next.fetch_add(1, Ordering::Relaxed);
                        if schema > spec.schemas || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        load_one(cfg, &mut c, spec, schema, &done, &failed).inspect_err(|_| {
                            failed.store(true, Ordering::Relaxed);
                        })?;
                    }
                })
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            progress(done.load(Ordering::Relaxed), total);
            if stop.load(Ordering::Relaxed) {
                failed.store(true, Ordering::Relaxed);
                for t in tokens.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                    let _ = t.cancel_query(NoTls);
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut first = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(DbError::Usage("a loader thread panicked".into())));
            if first.is_ok() {
                first = r;
            }
        }
        progress(done.load(Ordering::Relaxed), total);
        first
    })
}

/// After loading: a checkpoint, then one row per block verified.
fn finish(cfg: &Config, spec: &SchemaSpec, admin: &mut Client) -> Result<LoadReport, DbError> {
    // Checkpoint now so the first run does not pay for the load's dirty buffers. Needs
    // superuser or pg_checkpoint on a DSN server; without, the run's first checkpoint will.
    if let Err(e) = admin.batch_execute("CHECKPOINT") {
        if e.code() != Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
            return Err(server_err(cfg, &e));
        }
    }
    let report = verify(cfg, spec.schemas)?;
    if report
        .tables
        .iter()
        .any(|t| t.rows != spec.blocks_per_schema)
    {
        return Err(DbError::Layout {
            what: describe(cfg),
            why: format!(
                "expected {} rows per table, found {:?}",
                spec.blocks_per_schema,
                report.tables.iter().map(|t| t.rows).collect::<Vec<_>>()
            ),
        });
    }
    Ok(report)
}

fn load_one(
    cfg: &Config,
    c: &mut Client,
    spec: &SchemaSpec,
    schema: u32,
    done: &AtomicU64,
    failed: &AtomicBool,
) -> Result<(), DbError> {
    let err = |e: postgres::Error| server_err(cfg, &e);
    let ts = spec.tablespace_of(schema);
    c.batch_execute(&ddl(schema, ts)).map_err(err)?;
    c.batch_execute("SET synchronous_commit = off")
        .map_err(err)?;
    let mut keys: Vec<i64> = (1..=spec.blocks_per_schema as i64).collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(
        spec.seed ^ (schema as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    keys.shuffle(&mut rng);
    let stmt = c.prepare(&insert_sql(schema)).map_err(err)?;
    for chunk in keys.chunks(CHUNK) {
        if failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        c.execute(&stmt, &[&chunk]).map_err(err)?;
        done.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    if failed.load(Ordering::Relaxed) {
        return Ok(());
    }
    let t = table_name(schema);
    // VACUUM sets hint bits and the visibility map now, so the first reads of a run do not
    // dirty every page they touch.
    c.batch_execute(&format!(
        "CREATE UNIQUE INDEX cf1_key ON {t} (key){}",
        in_tablespace(ts)
    ))
    .map_err(err)?;
    // Its own statement: VACUUM cannot run in the implicit transaction of a multi-statement
    // query.
    c.batch_execute(&format!("VACUUM (ANALYZE) {t}"))
        .map_err(err)
}

/// Drops every schema iogauge created (those carrying its comment) on this server; refuses
/// when a schema with an iogauge name is not iogauge's.
pub fn drop_all(cfg: &Config, c: &mut Client) -> Result<(), DbError> {
    let err = |e: postgres::Error| server_err(cfg, &e);
    let rows = c
        .query(
            "SELECT nspname, coalesce(obj_description(oid, 'pg_namespace'), '') = $1 \
             FROM pg_namespace WHERE nspname ~ '^iogauge_[0-9]+$'",
            &[&SCHEMA_MARK],
        )
        .map_err(err)?;
    for r in &rows {
        let (name, ours): (String, bool) = (r.get(0), r.get(1));
        if !ours {
            return Err(DbError::Usage(format!(
                "schema {name} on {} was not created by iogauge; refusing to replace it",
                describe(cfg)
            )));
        }
    }
    for r in &rows {
        let name: String = r.get(0);
        c.batch_execute(&format!("DROP SCHEMA {name} CASCADE"))
            .map_err(err)?;
    }
    Ok(())
}

/// The loaded data set's shape: (schemas, blocks per schema), from iogauge's schemas on the
/// server; `None` when there are none.
pub fn discover(cfg: &Config) -> Result<Option<(u32, u64)>, DbError> {
    let mut c = connect(cfg)?;
    let err = |e: postgres::Error| server_err(cfg, &e);
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname ~ '^iogauge_[0-9]+$' \
             AND obj_description(oid, 'pg_namespace') = $1",
            &[&SCHEMA_MARK],
        )
        .map_err(err)?
        .get(0);
    if n == 0 {
        return Ok(None);
    }
    let max: Option<i64> = c
        .query_one(&format!("SELECT max(key) FROM {}", table_name(1)), &[])
        .map_err(err)?
        .get(0);
    Ok(Some((n as u32, max.unwrap_or(0) as u64)))
}

/// What loads iogauge's schemas on this server again with the same rows: their shape as
/// found, with `seed`; `None` when there are none.
pub fn reload_spec(cfg: &Config, seed: u64) -> Result<Option<SchemaSpec>, DbError> {
    Ok(
        discover(cfg)?.map(|(schemas, blocks_per_schema)| SchemaSpec {
            schemas,
            blocks_per_schema,
            load_parallel: schemas.min(4),
            seed,
            tablespaces: Vec::new(),
        }),
    )
}

/// Where the loaded data set lives: per tablespace directory (`None`: the database's default,
/// with the cluster's data) the bytes of iogauge's tables and indexes there, in schema order.
pub fn placement(cfg: &Config) -> Result<Vec<(Option<std::path::PathBuf>, u64)>, DbError> {
    let mut c = connect(cfg)?;
    let rows = c
        .query(
            "SELECT nullif(pg_tablespace_location(c.reltablespace), ''), \
             sum(pg_total_relation_size(c.oid))::int8 \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relname = 'cf1' AND n.nspname ~ '^iogauge_[0-9]+$' \
             AND obj_description(n.oid, 'pg_namespace') = $1 \
             GROUP BY 1 ORDER BY min(substr(n.nspname, 9)::int)",
            &[&SCHEMA_MARK],
        )
        .map_err(|e| server_err(cfg, &e))?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.get::<_, Option<String>>(0).map(Into::into),
                r.get::<_, i64>(1) as u64,
            )
        })
        .collect())
}

/// Checks one row per block in each table (rows = distinct blocks holding a row = blocks in
/// the table) and measures the data set.
pub fn verify(cfg: &Config, schemas: u32) -> Result<LoadReport, DbError> {
    let mut c = connect(cfg)?;
    let mut tables = Vec::new();
    for schema in 1..=schemas {
        let t = table_name(schema);
        let r = c
            .query_one(
                &format!(
                    "SELECT count(*), count(DISTINCT (ctid::text::point)[0]), \
                     pg_relation_size('{t}') / current_setting('block_size')::int8, \
                     pg_total_relation_size('{t}'), \
                     (SELECT nullif(pg_tablespace_location(reltablespace), '') FROM pg_class \
                      WHERE oid = '{t}'::regclass AND reltablespace <> 0) FROM {t}"
                ),
                &[],
            )
            .map_err(|e| server_err(cfg, &e))?;
        let check = TableCheck {
            schema,
            rows: r.get::<_, i64>(0) as u64,
            blocks_used: r.get::<_, i64>(1) as u64,
            blocks: r.get::<_, i64>(2) as u64,
            total_bytes: Bytes(r.get::<_, i64>(3) as u64),
            location: r.get::<_, Option<String>>(4).map(Into::into),
        };
        if check.rows != check.blocks_used || check.rows != check.blocks {
            return Err(DbError::Layout {
                what: format!("{t} on {}", describe(cfg)),
                why: format!(
                    "not one row per block: {} rows in {} blocks, table has {} blocks; \
                     run setup again",
                    check.rows, check.blocks_used, check.blocks
                ),
            });
        }
        tables.push(check);
    }
    Ok(LoadReport {
        schemas,
        rows: tables.iter().map(|t| t.rows).sum(),
        blocks: tables.iter().map(|t| t.blocks).sum(),
        bytes: Bytes(tables.iter().map(|t| t.total_bytes.0).sum()),
        tables,
        elapsed_s: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_page_with_room_for_hot_updates() {
        assert_eq!(TUPLE_LEN, 645);
        assert_eq!(rows_per_page(TUPLE_LEN, 10), 1);
        // The same row at the default fill factor packs 12 to a page.
        assert_eq!(rows_per_page(TUPLE_LEN, 100), 12);
        // The window where fillfactor 10 gives exactly one row: roughly 400..=792 bytes.
        assert_eq!(rows_per_page(380, 10), 2);
        assert_eq!(rows_per_page(790, 10), 1);
        // Room left on the page after the one row: ~11 more versions for HOT updates.
        let left = 8192 - 24 - (648 + 4);
        assert!(left / (648 + 4) >= 10);
    }

    #[test]
    fn names() {
        assert_eq!(table_name(3), "iogauge_3.cf1");
        assert!(ddl(1, None).contains("fillfactor = 10"));
        assert!(ddl(1, None).contains("autovacuum_enabled = false"));
        assert!(!ddl(1, None).contains("TABLESPACE"));
        assert!(ddl(2, Some("iogauge_ts2")).contains("= false) TABLESPACE iogauge_ts2;"));
        let spec = SchemaSpec {
            schemas: 5,
            blocks_per_schema: 1,
            load_parallel: 1,
            seed: 1,
            tablespaces: vec![tablespace_name(1), tablespace_name(2)],
        };
        let placed: Vec<_> = (1..=5).map(|s| spec.tablespace_of(s).unwrap()).collect();
        assert_eq!(
            placed,
            [
                "iogauge_ts1",
                "iogauge_ts2",
                "iogauge_ts1",
                "iogauge_ts2",
                "iogauge_ts1"
            ]
        );
        assert!(insert_sql(2).contains("INSERT INTO iogauge_2.cf1"));
    }
}
