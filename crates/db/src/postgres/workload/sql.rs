//! The statements a session runs, the same text in either driver: the client driver
//! prepares them (`worker`), the server driver's procedure runs them as static SQL
//! (`batch`).

use crate::common::schema::pad_cols;
use crate::postgres::schema::table_name;
use iogauge_model::db::workload::RedoStress;

/// Session settings that keep every read a single-block index read, also on a server whose
/// configuration iogauge does not control (the planner would otherwise pick a bitmap or a
/// sequential scan for a large work unit).
pub(crate) const SESSION_SETUP: &str = "SET enable_seqscan = off; SET enable_bitmapscan = off; \
     SET effective_io_concurrency = 0";

/// The read: the sum makes the heap visit necessary (no index-only scan).
pub(crate) fn read_sql(schema: u32, lo: &str, hi: &str) -> String {
    format!(
        "SELECT count(*), sum(scratch) FROM {} WHERE key BETWEEN {lo} AND {hi}",
        table_name(schema)
    )
}

/// The update: always changes `scratch` (a same-value update logs no real change), plus
/// padding per `redo`, set to `pad`.
pub(crate) fn update_sql(schema: u32, redo: RedoStress, lo: &str, hi: &str, pad: &str) -> String {
    let cols = pad_cols(redo);
    let mut set = String::from("scratch = scratch + 1");
    for i in 1..=cols {
        set.push_str(&format!(", p{i} = {pad}"));
    }
    format!(
        "UPDATE {} SET {set} WHERE key BETWEEN {lo} AND {hi}",
        table_name(schema)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_by_redo_stress() {
        assert_eq!(
            read_sql(2, "$1", "$2"),
            "SELECT count(*), sum(scratch) FROM iogauge_2.cf1 WHERE key BETWEEN $1 AND $2"
        );
        let none = update_sql(1, RedoStress::None, "$1", "$2", "$3");
        assert!(none.contains("SET scratch = scratch + 1 WHERE"), "{none}");
        let lite = update_sql(1, RedoStress::Lite, "$1", "$2", "$3");
        assert!(lite.contains("p1 = $3") && !lite.contains("p2"), "{lite}");
        let heavy = update_sql(1, RedoStress::Heavy, "$1", "$2", "$3");
        assert!(heavy.contains("p5 = $3"), "{heavy}");
    }
}
