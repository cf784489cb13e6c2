//! The text of `iogauge db setup` and `iogauge db run`.

use super::db_run;
use crate::{db_run_text, db_setup_text};
use insta::assert_snapshot;
use iogauge_model::db::profile::IoRates;
use iogauge_model::db::report::Setting;
use iogauge_model::db::setup::LoadReport;
use iogauge_model::db::workload::{Mode, RedoStress};
use iogauge_model::run::Steady;
use iogauge_stats::{Bytes, Iops, Millis, SteadyConfig, SteadyCriterion, SteadyReport};
use std::time::Duration;

#[test]
fn db_run_of_the_fixture() {
    assert_snapshot!("run", db_run_text(&db_run()));
}

/// SLOB's readers and writers on a shared server limited by a cgroup, stopped early with an
/// error, throughput that left steady state, and no page-cache comparison.
#[test]
fn db_run_interrupted_with_an_error() {
    let mut r = db_run();
    r.workload.mode = Mode::ReadersWriters {
        readers: 3,
        writers: 1,
    };
    r.workload.redo_stress = RedoStress::Heavy;
    r.server.private = false;
    r.server.location = "host=db1 port=5432 dbname=iogauge".into();
    r.server.cache_limit = Some(128 << 20);
    r.data_set.shared_buffers_bytes = None;
    r.grid.ramp = Duration::ZERO;
    r.meta.interrupted = true;
    r.summary.elapsed_s = 1.75;
    r.summary.db.avg_read_ms = None;
    r.cache = None;
    r.steady = Some(Steady {
        config: SteadyConfig {
            criterion: SteadyCriterion::Deviation { pct: 20.0 },
            window: 5,
            interval_s: 0.25,
            drop_pct: 30.0,
            drop_intervals: 3,
        },
        report: SteadyReport {
            reached_at: Some(0),
            steady_mean: Some(2235.7),
            window_deviation_pct: Some(15.6),
            window_slope_pct_per_s: Some(1.6),
            left_at: Some(5),
            drop_pct_observed: Some(37.5),
        },
        reached_at_s: Some(0.0),
        left_at_s: Some(1.25),
    });
    // PostgreSQL 16+ figures: WAL write and sync time, I/O by process type, think time.
    let db = &mut r.summary.db;
    db.log_writes_s = Iops(290.5);
    db.avg_log_write_ms = Some(Millis(0.041));
    db.avg_log_sync_ms = Some(Millis(1.237));
    db.by_process.client_backends = IoRates {
        reads_s: 141_003.0,
        writes_s: 12.0,
        avg_read_ms: Some(0.0021),
        avg_write_ms: Some(0.03),
    };
    db.by_process.checkpointer.writes_s = 401.0;
    db.by_process.checkpointer.avg_write_ms = Some(0.012);
    r.workload.think_time = Some(Duration::from_millis(1));
    r.workload.think_time_max = Some(Duration::from_millis(5));
    r.error = Some("session 3: terminating connection due to administrator command".into());
    r.warnings
        .push("the server is shared: other clients' I/O is in the figures".into());
    assert_snapshot!("run_interrupted", db_run_text(&r));
}

fn settings() -> Vec<Setting> {
    let s = |name: &str, setting: &str, unit: Option<&str>| Setting {
        name: name.into(),
        setting: setting.into(),
        unit: unit.map(Into::into),
    };
    vec![
        s("shared_buffers", "2048", Some("8kB")),
        s("effective_io_concurrency", "0", None),
        s("checkpoint_timeout", "300", Some("s")),
        s("synchronous_commit", "on", None),
    ]
}

fn load(schemas: u32, blocks_per_schema: u64) -> LoadReport {
    let blocks = u64::from(schemas) * blocks_per_schema;
    LoadReport {
        schemas,
        rows: blocks,
        blocks,
        bytes: Bytes(blocks * 8192 + blocks * 8192 / 32),
        tables: vec![],
        elapsed_s: 12.345,
    }
}

/// A data set that fits in RAM (the page-cache hint).
#[test]
fn setup_that_fits_in_ram() {
    let t = db_setup_text(&load(4, 8192), &settings(), "/tmp/fx/pg", 24 << 30);
    assert_snapshot!("setup_fits", t);
}

/// A data set larger than RAM (sizes in GiB), and one where RAM is unknown (no RAM line).
#[test]
fn setup_larger_than_ram_and_ram_unknown() {
    let big = db_setup_text(&load(16, 131_072), &settings(), "/srv/pg", 8 << 30);
    let unknown = db_setup_text(&load(1, 1024), &[], "/srv/pg", 0);
    assert_snapshot!("setup_large", format!("{big}---\n{unknown}"));
}
