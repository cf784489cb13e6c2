//! The SLOB data set on InnoDB: per schema (a MariaDB database) `iogauge_N` one table `cf1`
//! where each row the sessions use sits alone in a 16 KiB page.
//!
//! InnoDB keeps rows in primary-key order in its clustered index and caps a row below half a
//! page, so a row cannot fill a page by itself as SLOB's (PCTFREE 99) or pgio's (fillfactor
//! 10) do. Instead each page holds three rows of ~5 KB loaded in key order: the session row
//! at key `3p` between two fillers (`3p − 1`, `3p + 1`) that no session touches. InnoDB's
//! sequential inserts leave the first key (1, a filler) alone on the first leaf and then
//! fill each page with the next three keys, so the session row is the middle record of its
//! page. The middle matters: a primary-key lookup of a page's first record also reads the
//! page before it (the search goes down to the last key below it), and of its last record
//! the page after it — two reads per lookup, measured with two rows a page. `finish` checks
//! the result on the server: leaf pages ≈ session rows.
//!
//! SLOB's neighbouring keys live in random blocks (loaded shuffled); here the clustered index
//! orders rows by key, so the sessions' key `w` is sent to row [`place`]`(w)` — a fixed
//! pseudo-random permutation of the rows — and a work unit is a list of primary-key lookups,
//! each one random single-page read.

use super::conn::MariaTarget;
use crate::common::schema::{load_afresh, SchemaSpec, PAD_COLS, PAD_LEN};
use crate::engine::SetupUi;
use crate::error::DbError;
use iogauge_model::db::setup::{LoadReport, TableCheck};
use iogauge_stats::Bytes;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// What the tables carry as their comment, so iogauge drops only its own.
const MARK: &str = "iogauge";
/// Bytes of the filler column: three rows fit a 16 KiB page, four do not.
const FILL: usize = 4400;
/// Session rows per INSERT while loading (each with its filler).
const CHUNK: u64 = 500;

pub fn schema_name(schema: u32) -> String {
    format!("iogauge_{schema}")
}

pub fn table_name(schema: u32) -> String {
    format!("{}.cf1", schema_name(schema))
}

/// The row of session key `w` (1..=n): `3 · π(w)`, π a fixed pseudo-random permutation of
/// 1..=n (a 4-round Feistel network on the next even power of two, cycle-walked into range).
pub fn place(w: u64, n: u64) -> u64 {
    3 * (permute(w - 1, n) + 1)
}

/// Session rows in a table whose largest key is `max_key` (the last filler, `3n + 1`).
pub fn rows_of(max_key: u64) -> u64 {
    max_key.saturating_sub(1) / 3
}

fn permute(x: u64, n: u64) -> u64 {
    let bits = (64 - (n.max(2) - 1).leading_zeros()).div_ceil(2).max(1);
    let mask = (1u64 << bits) - 1;
    let mut v = x;
    loop {
        let (mut l, mut r) = (v >> bits, v & mask);
        for round in 0..4u64 {
            let f = mix(r ^ (round.wrapping_mul(0x9E37_79B9_7F4A_7C15))) & mask;
            (l, r) = (r, l ^ f);
        }
        v = (l << bits) | r;
        if v < n {
            return v;
        }
    }
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn ddl(schema: u32) -> Vec<String> {
    let pads: Vec<String> = (1..=PAD_COLS)
        .map(|i| format!("p{i} CHAR({PAD_LEN}) NOT NULL"))
        .collect();
    vec![
        format!("CREATE DATABASE {}", schema_name(schema)),
        format!(
            "CREATE TABLE {} (k BIGINT NOT NULL PRIMARY KEY, scratch BIGINT NOT NULL, {}, \
             fill VARCHAR(6500) NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC \
             DEFAULT CHARSET=latin1 STATS_PERSISTENT=1 COMMENT='{MARK}'",
            table_name(schema),
            pads.join(", ")
        ),
    ]
}

/// Session rows `lo..=hi` with their fillers, in key order, from MariaDB's sequence engine
/// (the first chunk with the lone leading filler, key 1).
fn insert_sql(schema: u32, lo: u64, hi: u64) -> String {
    let pads: Vec<String> = (1..=PAD_COLS).map(|i| format!("p{i}")).collect();
    let vals = vec![format!("LPAD(seq, {PAD_LEN}, 'p')"); PAD_COLS];
    format!(
        "INSERT INTO {} (k, scratch, {}, fill) SELECT seq, 0, {}, REPEAT('f', {FILL}) \
         FROM {}.seq_{}_to_{}",
        table_name(schema),
        pads.join(", "),
        vals.join(", "),
        schema_name(schema),
        if lo == 1 { 1 } else { 3 * lo - 1 },
        3 * hi + 1
    )
}

/// Creates and loads the tables, replacing iogauge's schemas already there; `progress(rows
/// done, rows total)` from the loading threads. A failed or stopped load drops what it made.
pub fn setup(t: &MariaTarget, spec: &SchemaSpec, ui: &SetupUi<'_>) -> Result<LoadReport, DbError> {
    let mut admin = t.connect()?;
    let stop: &AtomicBool = ui.stop;
    load_afresh(
        &mut admin,
        |a| drop_all(t, a),
        || load_all(t, spec, stop, ui.progress),
        |a| finish(t, spec, a),
        stop,
    )
}

fn load_all(
    t: &MariaTarget,
    spec: &SchemaSpec,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<(), DbError> {
    let total = u64::from(spec.schemas) * spec.blocks_per_schema;
    let done = AtomicU64::new(0);
    let next = AtomicU32::new(1);
    let failed = AtomicBool::new(false);
    let threads = spec.load_parallel.clamp(1, spec.schemas);
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                sc.spawn(|| -> Result<(), DbError> {
                    let mut c = t.connect()?;
                    let err = |e: mysql::Error| t.err(&e);
                    loop {
                        let schema = next.fetch_add(1, Ordering::Relaxed);
                        if schema > spec.schemas
                            || failed.load(Ordering::Relaxed)
                            || stop.load(Ordering::Relaxed)
                        {
                            return Ok(());
                        }
                        for sql in ddl(schema) {
                            c.query_drop(sql).map_err(err)?;
                        }
                        let mut lo = 1;
                        while lo <= spec.blocks_per_schema {
                            if stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                                return Ok(());
                            }
                            let hi = (lo + CHUNK - 1).min(spec.blocks_per_schema);
                            c.query_drop(insert_sql(schema, lo, hi)).map_err(err)?;
                            let d = done.fetch_add(hi - lo + 1, Ordering::Relaxed) + hi - lo + 1;
                            progress(d, total);
                            lo = hi + 1;
                        }
                    }
                })
            })
            .collect();
        let mut first = None;
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(DbError::Usage("a loading thread panicked".into())));
            if let Err(e) = r {
                failed.store(true, Ordering::Relaxed);
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    })
}

/// Statistics refreshed, then every table checked: its rows, and its leaf pages — one per
/// session row, else the rows share pages and reads would not be one page each.
fn finish(t: &MariaTarget, spec: &SchemaSpec, c: &mut Conn) -> Result<LoadReport, DbError> {
    let err = |e: mysql::Error| t.err(&e);
    let mut tables = Vec::new();
    for schema in 1..=spec.schemas {
        c.query_drop(format!("ANALYZE TABLE {}", table_name(schema)))
            .map_err(err)?;
        let check = check_table(t, c, schema)?;
        let rows = check.rows;
        let per_page = check.blocks_used * 10 < rows * 9 || check.blocks_used * 10 > rows * 11;
        if rows != spec.blocks_per_schema || per_page {
            return Err(DbError::Layout {
                what: t.name.clone(),
                why: format!(
                    "{}: {rows} session rows in {} leaf pages, expected {} rows one per page",
                    table_name(schema),
                    check.blocks_used,
                    spec.blocks_per_schema
                ),
            });
        }
        tables.push(check);
    }
    Ok(report(tables))
}

fn report(tables: Vec<TableCheck>) -> LoadReport {
    LoadReport {
        schemas: tables.len() as u32,
        rows: tables.iter().map(|t| t.rows).sum(),
        blocks: tables.iter().map(|t| t.blocks).sum(),
        bytes: Bytes(tables.iter().map(|t| t.total_bytes.0).sum()),
        tables,
        elapsed_s: 0.0,
    }
}

/// One table as the server sees it: session rows (half the rows), leaf pages of the primary
/// key, all its pages, and its bytes.
fn check_table(t: &MariaTarget, c: &mut Conn, schema: u32) -> Result<TableCheck, DbError> {
    let err = |e: mysql::Error| t.err(&e);
    let name = schema_name(schema);
    let max: Option<Option<u64>> = c
        .query_first(format!("SELECT MAX(k) FROM {}", table_name(schema)))
        .map_err(err)?;
    let rows = max.flatten().map_or(0, rows_of);
    let leaf: Option<u64> = c
        .exec_first(
            "SELECT stat_value FROM mysql.innodb_index_stats WHERE database_name = ? \
             AND table_name = 'cf1' AND index_name = 'PRIMARY' AND stat_name = 'n_leaf_pages'",
            (&name,),
        )
        .map_err(err)?;
    let size: Option<(u64, u64)> = c
        .exec_first(
            "SELECT data_length, data_length + index_length FROM information_schema.tables \
             WHERE table_schema = ? AND table_name = 'cf1'",
            (&name,),
        )
        .map_err(err)?;
    let (data, total) = size.unwrap_or_default();
    Ok(TableCheck {
        schema,
        rows,
        blocks_used: leaf.unwrap_or(0),
        blocks: data / 16384,
        total_bytes: Bytes(total),
        location: None,
    })
}

/// iogauge's schemas on this server, counted from 1 without a gap, and the session rows of
/// the first; `None` when there are none.
pub fn discover(t: &MariaTarget) -> Result<Option<(u32, u64)>, DbError> {
    let mut c = t.connect()?;
    let ours = ours(t, &mut c)?;
    let n = (1..).take_while(|i| ours.contains(i)).count() as u32;
    if n == 0 {
        return Ok(None);
    }
    let max: Option<Option<u64>> = c
        .query_first(format!("SELECT MAX(k) FROM {}", table_name(1)))
        .map_err(|e| t.err(&e))?;
    Ok(Some((n, max.flatten().map_or(0, rows_of))))
}

/// The numbers of the schemas whose table carries iogauge's mark.
fn ours(t: &MariaTarget, c: &mut Conn) -> Result<Vec<u32>, DbError> {
    let names: Vec<String> = c
        .exec(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'cf1' \
             AND table_comment = ? AND table_schema LIKE 'iogauge\\_%'",
            (MARK,),
        )
        .map_err(|e| t.err(&e))?;
    Ok(names
        .iter()
        .filter_map(|n| n.strip_prefix("iogauge_")?.parse().ok())
        .collect())
}

/// Drops iogauge's schemas (those whose table carries its mark), nothing else.
pub fn drop_all(t: &MariaTarget, c: &mut Conn) -> Result<(), DbError> {
    for n in ours(t, c)? {
        c.query_drop(format!("DROP DATABASE {}", schema_name(n)))
            .map_err(|e| t.err(&e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_is_a_permutation_onto_middle_keys_that_scatters_neighbours() {
        for n in [1u64, 2, 3, 16, 100, 1000, 4097] {
            let mut seen: Vec<u64> = (1..=n).map(|w| place(w, n)).collect();
            assert!(seen.iter().all(|k| k % 3 == 0 && (3..=3 * n).contains(k)));
            assert_eq!(rows_of(3 * n + 1), n);
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len() as u64, n, "a bijection for n = {n}");
        }
        // Neighbouring keys land far apart: a work unit is random reads, not a scan.
        let n = 100_000;
        let near = (1..1000)
            .filter(|&w| place(w, n).abs_diff(place(w + 1, n)) < 3 * n / 100)
            .count();
        assert!(near < 40, "{near} of 999 neighbours within 1%");
    }

    #[test]
    fn loads_keys_in_order_with_a_filler_either_side_of_each_session_row() {
        let sql = insert_sql(3, 1, 500);
        assert!(sql.contains("INTO iogauge_3.cf1"), "{sql}");
        assert!(sql.ends_with("FROM iogauge_3.seq_1_to_1501"), "{sql}");
        assert!(insert_sql(3, 501, 1000).ends_with("seq_1502_to_3001"));
    }
}
