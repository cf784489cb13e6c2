//! Runs of the session driver on the shared cluster: reads, updates, counts, stopping, an
//! existing server by DSN, and a server that dies mid-run. All with the default (server)
//! driver, but for the client driver's own run.

use super::util::{check_counts, grid, ms, procs_in, run, workload};
use super::Ctx;
use iogauge_db::ServerDir;
use iogauge_db::{connect, driver, drop_os_cache, parse_dsn, schema};
use iogauge_model::db::workload::{Driver, Mode, RedoStress};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn cold_reads_under_cache_limit(ctx: &mut Ctx) {
    let c = ctx.cluster();
    c.stop().unwrap();
    c.set_cache_limit(Some(8 << 20));
    let e = c.start().unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("too small"), "{e}");
    c.set_cache_limit(Some(56 << 20));
    c.start().unwrap();
    let cg = c.cgroup().expect("server runs in a cgroup").to_path_buf();
    let procs = std::fs::read_to_string(cg.join("cgroup.procs")).unwrap();
    let pid = c.pid().unwrap().to_string();
    assert!(
        procs.lines().any(|l| l == pid),
        "postmaster {pid} not in {}: {procs}",
        cg.display()
    );
    drop_os_cache().unwrap();
    let wl = workload(
        ctx,
        Mode::ReadersWriters {
            readers: 2,
            writers: 0,
        },
    );
    let o = run(ctx, &wl, &grid(500, 2500));
    check_counts(&o, 8);
    assert_eq!(o.intervals.len(), 6);
    assert!(o.intervals[0].ramp && !o.intervals[1].ramp);
    let m = o.measured();
    assert!(m.sessions.read_ops > 0 && m.sessions.update_ops == 0);
    assert!(m.load.blks_read > 0, "physical reads: {:?}", m.load);
    let r = m.rates();
    assert!(
        r.avg_read_ms.is_some_and(|v| v > 0.0),
        "track_io_timing gives read time: {r:?}"
    );
    assert!(r.logical_reads_s >= r.physical_reads_s);
    let read_aas = m.aas.sessions.get("DataFileRead").copied().unwrap_or(0.0);
    assert!(
        read_aas > 0.0,
        "DataFileRead seen in wait events: {:?}",
        m.aas
    );
    assert!(
        m.aas.samples >= 20,
        "about 10 samples a second: {}",
        m.aas.samples
    );
    println!(
        "  reads/s {:.0} (physical {:.0}, {:.3} ms), AAS {:?}",
        r.logical_reads_s,
        r.physical_reads_s,
        r.avg_read_ms.unwrap(),
        m.aas.sessions
    );
    let c = ctx.cluster();
    c.stop().unwrap();
    assert!(!cg.exists(), "cgroup {} removed after stop", cg.display());
    c.set_cache_limit(None);
    c.start().unwrap();
}

pub fn mixed_sessions_counts_add_up(ctx: &mut Ctx) {
    mixed_sessions(ctx, Driver::Server);
}

pub fn client_driver_counts_add_up(ctx: &mut Ctx) {
    mixed_sessions(ctx, Driver::Client);
}

/// Three sessions reading and updating, every third operation on the hot schema. The client
/// driver also pauses between operations; with think time the server driver would run
/// batches of one, so it runs without, in full batches.
fn mixed_sessions(ctx: &mut Ctx, driver: Driver) {
    let mut wl = workload(
        ctx,
        Mode::Sessions {
            sessions: 3,
            update_pct: 50.0,
        },
    );
    wl.driver = driver;
    wl.hot_schema_every = Some(3);
    wl.work_unit = 4;
    if driver == Driver::Client {
        // SLOB's think time range: each pause drawn from 1..3 ms.
        wl.think_time = Some(ms(1));
        wl.think_time_max = Some(ms(3));
    }
    let o = run(ctx, &wl, &grid(0, 1500));
    check_counts(&o, 4);
    assert_eq!(o.session_schema, [1, 2, 1]);
    let m = o.measured();
    assert!(
        m.sessions.read_ops > 0 && m.sessions.update_ops > 0,
        "{:?}",
        m.sessions.per_session
    );
    assert!(
        m.load.tup_updated >= m.sessions.rows_updated,
        "server counted the updates: {:?}",
        m.load
    );
    // Each update commits on its own; the server driver's reads share transactions.
    let commits = match driver {
        Driver::Client => m.sessions.ops(),
        Driver::Server => m.sessions.update_ops,
    };
    assert!(m.load.xact_commit >= commits, "{:?}", m.load);
    let lat = &m.sessions.read_lat;
    println!(
        "  {driver:?} driver: {:.0} ops/s, read mean {:.0} µs",
        m.sessions.ops() as f64 / m.secs,
        lat.mean_ns() / 1e3
    );
    ctx.cluster().reset().unwrap();
}

pub fn writers_make_wal_and_write_buffers(ctx: &mut Ctx) {
    let mut wl = workload(
        ctx,
        Mode::ReadersWriters {
            readers: 1,
            writers: 2,
        },
    );
    wl.redo_stress = RedoStress::Heavy;
    let cfg = ctx.cluster().config();
    // A checkpoint inside the window makes the checkpointer write the dirtied buffers.
    let ckpt = std::thread::spawn(move || {
        std::thread::sleep(ms(1200));
        connect(&cfg).unwrap().batch_execute("CHECKPOINT").unwrap();
    });
    let o = run(ctx, &wl, &grid(0, 2000));
    ckpt.join().unwrap();
    check_counts(&o, 8);
    let m = o.measured();
    assert!(m.sessions.update_ops > 0 && m.sessions.read_ops > 0);
    assert!(
        m.load.log_bytes.0 > 0 && m.load.log_records > 0,
        "{:?}",
        m.load
    );
    assert!(m.load.buffers_written() > 0, "{:?}", m.load);
    assert!(
        m.load.buffers_checkpointer > 0,
        "checkpoint wrote: {:?}",
        m.load
    );
    // Heavy redo logs the rewritten padding: well over 600 bytes per updated row.
    assert!(
        m.load.log_bytes.0 > m.sessions.rows_updated * 600,
        "{:?}",
        m.load
    );
    let r = m.rates();
    // track_wal_io_timing: the log writer's write and sync times are measured (from
    // pg_stat_wal before 18, pg_stat_io's WAL rows from 18).
    assert!(
        m.load.log_writes > 0 && m.load.log_syncs > 0,
        "{:?}",
        m.load
    );
    assert!(
        r.avg_log_write_ms.is_some_and(|v| v.0 > 0.0)
            && r.avg_log_sync_ms.is_some_and(|v| v.0 > 0.0),
        "WAL write and sync latency: {r:?}"
    );
    println!(
        "  updates/s {:.0}, WAL {:.0} B/s, writes/s {:.0} ({:.3} ms), syncs/s {:.0} ({:.3} ms), written/s {:?}, AAS {:?}",
        m.sessions.update_ops as f64 / m.secs,
        r.log_bytes_s.0,
        r.log_writes_s.0,
        r.avg_log_write_ms.map_or(0.0, |m| m.0),
        r.log_syncs_s.0,
        r.avg_log_sync_ms.map_or(0.0, |m| m.0),
        r.buffers_written_s,
        m.aas.sessions
    );
    ctx.cluster().reset().unwrap();
}

/// A user's server may time neither the data files' reads nor the WAL (`track_io_timing` and
/// `track_wal_io_timing` off, their defaults): the reads, writes and syncs are still counted,
/// and their averages are unknown (`None`, "not measured" in the text), never 0.
pub fn untimed_reads_and_wal_are_unknown_not_zero(ctx: &mut Ctx) {
    // One statement at a time: ALTER SYSTEM refuses a transaction block.
    let set = |ctx: &mut Ctx, how: &str| {
        let mut c = ctx.cluster().client().unwrap();
        for name in ["track_io_timing", "track_wal_io_timing"] {
            c.batch_execute(&format!("ALTER SYSTEM {}", how.replace("NAME", name)))
                .unwrap();
        }
        c.query_one("SELECT pg_reload_conf()", &[]).unwrap();
    };
    set(ctx, "SET NAME = off");
    drop_os_cache().unwrap();
    let mut wl = workload(
        ctx,
        Mode::ReadersWriters {
            readers: 1,
            writers: 1,
        },
    );
    wl.redo_stress = RedoStress::Heavy;
    let o = run(ctx, &wl, &grid(0, 1500));
    set(ctx, "RESET NAME");
    let m = o.measured();
    assert!(m.load.reads_untimed && m.load.log_untimed, "{:?}", m.load);
    assert!(m.load.log_syncs > 0, "{:?}", m.load);
    let r = m.rates();
    assert_eq!(
        (r.avg_log_write_ms, r.avg_log_sync_ms),
        (None, None),
        "{r:?}"
    );
    if m.load.blks_read > 0 {
        assert_eq!(r.avg_read_ms, None, "{r:?}");
    }
    ctx.cluster().reset().unwrap();
}

fn scratch_and_changed_pads(ctx: &mut Ctx) -> (i64, i64) {
    let mut c = ctx.cluster().client().unwrap();
    let r = c
        .query_one(
            "SELECT sum(scratch)::int8, count(*) FILTER \
             (WHERE p1 <> left(repeat(md5(key::text), 4), 120)) FROM iogauge_1.cf1",
            &[],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

pub fn reset_restores_changed_rows(ctx: &mut Ctx) {
    assert_eq!(
        scratch_and_changed_pads(ctx),
        (0, 0),
        "pristine to begin with"
    );
    let mut wl = workload(
        ctx,
        Mode::ReadersWriters {
            readers: 0,
            writers: 2,
        },
    );
    wl.redo_stress = RedoStress::Lite;
    let o = run(ctx, &wl, &grid(0, 800));
    check_counts(&o, 8);
    // Every update is its own transaction with the server driver too: one commit each, not
    // one per batch.
    let m = o.measured();
    assert!(
        m.sessions.update_ops > 64 && m.load.xact_commit >= m.sessions.update_ops,
        "{} updates, {} commits",
        m.sessions.update_ops,
        m.load.xact_commit
    );
    let (scratch, pads) = scratch_and_changed_pads(ctx);
    assert!(
        scratch > 0 && pads > 0,
        "the writers changed rows: {scratch} {pads}"
    );
    let t = Instant::now();
    ctx.cluster().reset().unwrap();
    println!("  reset in {:.2}s", t.elapsed().as_secs_f64());
    assert!(ctx.cluster().pid().is_some(), "reset restarts the server");
    assert_eq!(scratch_and_changed_pads(ctx), (0, 0));
    schema::verify(&ctx.cluster().config(), 2).unwrap();
}

pub fn stop_flag_interrupts_promptly(ctx: &mut Ctx) {
    let wl = workload(
        ctx,
        Mode::ReadersWriters {
            readers: 2,
            writers: 1,
        },
    );
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let cfg = ctx.cluster().config();
    let t = Instant::now();
    let o = driver::run(&cfg, &wl, &grid(0, 30_000), stop, move |_| {
        std::thread::spawn(move || {
            std::thread::sleep(ms(1000));
            s2.store(true, Ordering::SeqCst);
        });
    })
    .unwrap();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?}");
    assert!(o.interrupted && o.error.is_none(), "{:?}", o.error);
    assert!(
        !o.intervals.is_empty() && o.intervals.len() <= 4,
        "{}",
        o.intervals.len()
    );
    check_counts(&o, 8);
    // Stopping the cluster leaves no process of it behind.
    let data = ctx.cluster().data_dir();
    assert!(!procs_in(&data).is_empty());
    ctx.cluster().stop().unwrap();
    assert!(
        procs_in(&data).is_empty(),
        "left behind: {:?}",
        procs_in(&data)
    );
    assert!(!data.join("postmaster.pid").exists());
    ctx.cluster().reset().unwrap();
    ctx.cluster().start().unwrap();
}

pub fn existing_server_by_dsn(ctx: &mut Ctx) {
    let dsn = format!(
        "host={} port=5432 user={} dbname=iogauge password=unused",
        ctx.cluster().run_dir().display(),
        ctx.cluster().config().get_user().unwrap()
    );
    let cfg = parse_dsn(&dsn).unwrap();
    let wl = workload(
        ctx,
        Mode::Sessions {
            sessions: 2,
            update_pct: 0.0,
        },
    );
    let o = driver::run(
        &cfg,
        &wl,
        &grid(0, 600),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .unwrap();
    assert!(o.error.is_none());
    check_counts(&o, 8);
    assert_eq!(schema::discover(&cfg).unwrap(), Some((2, 2000)));
    // The server driver's procedures live in iogauge's schemas, so dropping those drops them.
    let procs: Vec<String> = connect(&cfg)
        .unwrap()
        .query(
            "SELECT pronamespace::regnamespace::text FROM pg_proc WHERE proname = 'slob_batch' \
             ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(procs, ["iogauge_1", "iogauge_2"]);
}

pub fn server_death_ends_the_run_with_an_error(ctx: &mut Ctx) {
    let wl = workload(
        ctx,
        Mode::ReadersWriters {
            readers: 2,
            writers: 1,
        },
    );
    let pid = ctx.cluster().pid().unwrap() as i32;
    let cfg = ctx.cluster().config();
    let t = Instant::now();
    let o = driver::run(
        &cfg,
        &wl,
        &grid(0, 30_000),
        Arc::new(AtomicBool::new(false)),
        move |_| {
            std::thread::spawn(move || {
                std::thread::sleep(ms(800));
                // SAFETY: kill(2) on the postmaster this test started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            });
        },
    )
    .unwrap();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(o.interrupted);
    let e = o.error.expect("the run reports the dead server");
    assert!(e.contains("went away") && !e.contains('\n'), "{e}");
    println!("  error: {e}");
    let e = ctx.cluster().check_alive().unwrap_err();
    assert!(e.to_string().contains("died"), "{e}");
    let data = ctx.cluster().data_dir();
    let gone = (0..250).any(|_| {
        std::thread::sleep(ms(20));
        procs_in(&data).is_empty()
    });
    assert!(
        gone,
        "backends outlived the postmaster: {:?}",
        procs_in(&data)
    );
    ctx.cluster().reset().unwrap();
    ctx.cluster().start().unwrap();
}
