//! Snapshot tests (insta) of every text renderer, on the real documents captured in
//! `crates/campaign/tests/fixtures` (schema 1, upgraded as `show` reads them) and on small
//! hand-built changes of them for what no fixture holds (a layout, a steady-state wait, an
//! interruption). Inputs are fixed: no clock, no facts of the machine running the tests.
//!
//! The accepted texts live in `snapshots/`. After a deliberate change of a renderer, run the
//! tests with `INSTA_UPDATE=always` (or `cargo insta review`) and read the diff before
//! committing it. Under `CI=true` or `INSTA_UPDATE=no` a changed or missing snapshot fails
//! the test without writing anything.

mod calib;
mod db;
mod findings;
mod history;
mod placement;
mod run;
mod series;
mod watch;

use iogauge_model::calib::CalibrationReport;
use iogauge_model::db::report::DbReport;
use iogauge_model::run::RunReport;
use iogauge_model::Document;

const RUN_RANDREAD: &str = include_str!("../../../campaign/tests/fixtures/run_randread.json");
const RUN_RANDRW: &str = include_str!("../../../campaign/tests/fixtures/run_randrw.json");
const CALIBRATE: &str = include_str!("../../../campaign/tests/fixtures/calibrate.json");
const DB_RUN: &str = include_str!("../../../campaign/tests/fixtures/db_run.json");

fn document(json: &str) -> Document {
    Document::from_json(json).expect("a captured fixture reads as a document")
}

/// `iogauge run` of 8 KiB random reads on a file on vda, with device figures.
fn run_randread() -> RunReport {
    match document(RUN_RANDREAD) {
        Document::Run(r) => *r,
        other => panic!("run_randread.json is a {}", other.meta().kind),
    }
}

/// `iogauge run` of 8 KiB random reads and writes (70% reads), steady, with device figures.
fn run_randrw() -> RunReport {
    match document(RUN_RANDRW) {
        Document::Run(r) => *r,
        other => panic!("run_randrw.json is a {}", other.meta().kind),
    }
}

/// `iogauge calibrate` on a file on a rotational vda.
fn calibration() -> CalibrationReport {
    match document(CALIBRATE) {
        Document::Calibration(c) => *c,
        other => panic!("calibrate.json is a {}", other.meta().kind),
    }
}

/// `iogauge db run` of 4 sessions on a private PostgreSQL 15 cluster.
fn db_run() -> DbReport {
    match document(DB_RUN) {
        Document::DbRun(d) => *d,
        other => panic!("db_run.json is a {}", other.meta().kind),
    }
}

/// Every fixture document, in the order the history table lists them (newest first).
fn documents() -> Vec<Document> {
    [DB_RUN, CALIBRATE, RUN_RANDRW, RUN_RANDREAD]
        .into_iter()
        .map(document)
        .collect()
}
