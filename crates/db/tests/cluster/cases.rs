//! The test cases, run in this order on the shared cluster. Each leaves the cluster running
//! with its pristine data or restores it.

use super::guards::*;
use super::runs::*;
use super::util::{grid, procs_in};
use super::Ctx;
use iogauge_db::ServerDir;
use iogauge_db::{connect, driver, parse_dsn, schema, Cluster, ClusterConfig, PgBin};
use iogauge_model::db::workload::{Driver, Mode, RedoStress, Workload};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

type Case = (&'static str, fn(&mut Ctx));

pub fn all() -> Vec<Case> {
    vec![
        ("load_gives_one_row_per_block", load_gives_one_row_per_block),
        ("only_iogauge_may_connect", only_iogauge_may_connect),
        (
            "refused_setting_keeps_the_configuration",
            refused_setting_keeps_the_configuration,
        ),
        (
            "init_cleans_up_after_failure_and_ctrl_c",
            init_cleans_up_after_failure_and_ctrl_c,
        ),
        (
            "interrupted_load_drops_its_schemas",
            interrupted_load_drops_its_schemas,
        ),
        ("settings_are_read_back", settings_are_read_back),
        (
            "wrong_dsn_is_a_one_line_error",
            wrong_dsn_is_a_one_line_error,
        ),
        (
            "missing_postgres_is_a_clear_error",
            missing_postgres_is_a_clear_error,
        ),
        (
            "separate_wal_dir_is_reset_and_dropped",
            separate_wal_dir_is_reset_and_dropped,
        ),
        (
            "foreign_directories_are_refused",
            foreign_directories_are_refused,
        ),
        ("cold_reads_under_cache_limit", cold_reads_under_cache_limit),
        ("mixed_sessions_counts_add_up", mixed_sessions_counts_add_up),
        ("client_driver_counts_add_up", client_driver_counts_add_up),
        (
            "writers_make_wal_and_write_buffers",
            writers_make_wal_and_write_buffers,
        ),
        (
            "untimed_reads_and_wal_are_unknown_not_zero",
            untimed_reads_and_wal_are_unknown_not_zero,
        ),
        ("reset_restores_changed_rows", reset_restores_changed_rows),
        (
            "stop_flag_interrupts_promptly",
            stop_flag_interrupts_promptly,
        ),
        ("existing_server_by_dsn", existing_server_by_dsn),
        (
            "dropping_the_cluster_stops_its_server",
            dropping_the_cluster_stops_its_server,
        ),
        (
            "server_death_ends_the_run_with_an_error",
            server_death_ends_the_run_with_an_error,
        ),
    ]
}

fn load_gives_one_row_per_block(ctx: &mut Ctx) {
    let r = schema::verify(&ctx.cluster().config(), 2).unwrap();
    assert_eq!((r.schemas, r.rows, r.blocks), (2, 4000, 4000));
    for t in &r.tables {
        assert_eq!(
            (t.rows, t.blocks_used, t.blocks),
            (2000, 2000, 2000),
            "{t:?}"
        );
    }
    assert!(
        r.bytes.0 >= 4000 * 8192,
        "data set {} below its heap",
        r.bytes
    );
    assert_eq!(
        schema::discover(&ctx.cluster().config()).unwrap(),
        Some((2, 2000))
    );
    // Keys were loaded shuffled: neighbouring keys live in distant blocks.
    let mut c = ctx.cluster().client().unwrap();
    let far: i64 = c
        .query_one(
            "SELECT count(*) FROM (SELECT (ctid::text::point)[0] AS b, \
             lag((ctid::text::point)[0]) OVER (ORDER BY key) AS p FROM iogauge_1.cf1) s \
             WHERE abs(b - p) > 10",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(
        far > 1800,
        "only {far} of 1999 neighbours are more than 10 blocks apart"
    );
}

fn settings_are_read_back(ctx: &mut Ctx) {
    let s = ctx.cluster().settings().unwrap();
    let get = |n: &str| {
        s.iter()
            .find(|x| x.name == n)
            .unwrap_or_else(|| panic!("{n} not read back"))
    };
    assert_eq!(get("shared_buffers").setting, "2048");
    assert_eq!(get("shared_buffers").unit.as_deref(), Some("8kB"));
    assert_eq!(get("track_io_timing").setting, "on");
    assert_eq!(get("track_wal_io_timing").setting, "on");
    assert_eq!(get("enable_bitmapscan").setting, "off");
    assert_eq!(get("effective_io_concurrency").setting, "0");
    assert_eq!(get("listen_addresses").setting, "");
    assert_eq!(get("work_mem").setting, "8192", "an override");
    assert!(get("server_version")
        .setting
        .starts_with(&ctx.cluster().bin().major.to_string()));
}

fn wrong_dsn_is_a_one_line_error(_ctx: &mut Ctx) {
    let cfg =
        parse_dsn("host=/nonexistent-iogauge port=5999 user=bench password=s3cret dbname=bench")
            .unwrap();
    let e = connect(&cfg).err().expect("no server there");
    let m = e.to_string();
    assert!(e.is_usage());
    assert!(!m.contains('\n') && !m.contains("s3cret"), "{m}");
    assert!(m.contains("bench@/nonexistent-iogauge:5999/bench"), "{m}");
    let wl = Workload {
        first_session: 0,
        mode: Mode::Sessions {
            sessions: 1,
            update_pct: 0.0,
        },
        work_unit: 1,
        redo_stress: RedoStress::None,
        hot_schema_every: None,
        think_time: None,
        think_time_max: None,
        hotspot: None,
        schemas: 1,
        blocks_per_schema: 10,
        seed: 1,
        driver: Driver::Server,
    };
    let e = driver::run(
        &cfg,
        &wl,
        &grid(0, 100),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .expect_err("run against no server");
    assert!(e.is_usage() && !e.to_string().contains('\n'), "{e}");
    let e = parse_dsn("postgres://bench:s3cret@dbhost:notaport/bench").unwrap_err();
    assert!(!e.to_string().contains("s3cret"), "{e}");
}

fn missing_postgres_is_a_clear_error(_ctx: &mut Ctx) {
    let e = PgBin::find_in(&[], None).unwrap_err();
    let m = e.to_string();
    assert!(e.is_usage());
    assert!(
        m.contains("not found") && m.contains("apt-get install postgresql"),
        "{m}"
    );
    let e = PgBin::find_in(
        &["/nonexistent".into()],
        Some(Path::new("/nonexistent/lib")),
    )
    .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/lib/*/bin"), "{e}");
    // And the real lookup finds this machine's PostgreSQL (or the whole binary failed).
    assert!(PgBin::find().unwrap().major >= 14);
}

fn foreign_directories_are_refused(ctx: &mut Ctx) {
    let d = ctx.dir.with_file_name("iogauge-pg-foreign");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("precious"), "user data").unwrap();
    let e = Cluster::init(&ClusterConfig {
        dir: d.clone(),
        ..Default::default()
    })
    .unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("not created by iogauge"),
        "{e}"
    );
    let e = Cluster::open(&d).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("no iogauge cluster"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "nothing was added"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("precious")).unwrap(),
        "user data"
    );
    std::fs::remove_dir_all(&d).unwrap();
    // The shared cluster's own directory is in use: a second opener is refused.
    let e = Cluster::open(&ctx.dir).unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
    let e = Cluster::init(&ClusterConfig {
        dir: ctx.dir.clone(),
        ..Default::default()
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("already holds an iogauge cluster"),
        "{e}"
    );
}

fn dropping_the_cluster_stops_its_server(ctx: &mut Ctx) {
    let data = ctx.cluster().data_dir();
    assert!(!procs_in(&data).is_empty());
    drop(ctx.cluster.take());
    assert!(
        procs_in(&data).is_empty(),
        "left behind: {:?}",
        procs_in(&data)
    );
    ctx.cluster = Some(Cluster::open(&ctx.dir).unwrap());
    ctx.cluster().start().unwrap();
}

fn separate_wal_dir_is_reset_and_dropped(ctx: &mut Ctx) {
    let dir = ctx.dir.with_file_name("iogauge-pg-waltest");
    let wal = ctx.dir.with_file_name("iogauge-pg-waltest-wal");
    if dir.exists() {
        Cluster::open(&dir).unwrap().destroy().unwrap();
    }
    let mut c = Cluster::init(&ClusterConfig {
        dir: dir.clone(),
        wal_dir: Some(wal.clone()),
        overrides: vec![iogauge_db::parse_override("max_connections=20").unwrap()],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        std::fs::read_link(c.data_dir().join("pg_wal")).unwrap(),
        wal
    );
    c.start().unwrap();
    let count = |c: &Cluster| -> i64 {
        let mut cl = c.client().unwrap();
        cl.query_one("SELECT count(*) FROM t", &[]).unwrap().get(0)
    };
    c.client()
        .unwrap()
        .batch_execute("CREATE TABLE t (x int); INSERT INTO t VALUES (1)")
        .unwrap();
    c.snapshot_pristine().unwrap();
    c.client()
        .unwrap()
        .batch_execute("INSERT INTO t SELECT generate_series(1, 10000)")
        .unwrap();
    assert_eq!(count(&c), 10001);
    c.reset().unwrap();
    assert_eq!(count(&c), 1, "data and WAL both restored");
    c.destroy().unwrap();
    assert!(
        !dir.exists() && !wal.exists(),
        "drop removes both directories"
    );
}
