//! The table of `iogauge history`: every kind, complete and interrupted.

use super::documents;
use crate::history_table;
use insta::assert_snapshot;
use iogauge_model::history::{RunRow, RunStatus};

/// Two rows per fixture document, as the store makes them: the figures from
/// `Document::history`, the end time falling back to the start; once complete, once
/// interrupted.
fn rows() -> Vec<RunRow> {
    let docs = documents();
    let mut id = 2 * docs.len() as i64;
    let mut rows = Vec::new();
    for status in [RunStatus::Interrupted, RunStatus::Complete] {
        for d in &docs {
            let m = d.meta();
            let f = d.history();
            rows.push(RunRow {
                id,
                kind: m.kind,
                started_at: m.started_at.clone(),
                ended_at: m.ended_at.clone().unwrap_or_else(|| m.started_at.clone()),
                target: f.target,
                status,
                max_iops: f.max_iops,
                max_mbps: f.max_mbps,
                max_pmbps: f.max_pmbps,
                latency_ms: f.latency_ms,
                disks: f.disks,
                // One labelled row shows the column.
                label: (id == 2).then(|| "before the firmware update".to_string()),
            });
            id -= 1;
        }
    }
    rows
}

#[test]
fn every_kind_complete_and_interrupted() {
    assert_snapshot!("history", history_table(&rows()));
}

/// Only complete rows: no footnote. An interrupted run without I/O and a calibration
/// without figures show `-`.
#[test]
fn complete_rows_and_rows_without_figures() {
    let mut rows: Vec<RunRow> = rows().split_off(4);
    let mut empty = rows[1].clone();
    empty.id = 9;
    empty.max_iops = None;
    empty.max_mbps = None;
    empty.max_pmbps = None;
    empty.latency_ms = None;
    empty.status = RunStatus::Interrupted;
    let complete = history_table(&rows);
    rows.insert(0, empty);
    assert_snapshot!(
        "history_complete",
        format!("{complete}---\n{}", history_table(&rows))
    );
}

#[test]
fn no_stored_runs() {
    assert_snapshot!("history_empty", history_table(&[]));
}
