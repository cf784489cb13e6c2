//! `iogauge db run`: sessions on a real PostgreSQL, with the devices and CPU sampled on the
//! same grid from the moment the sessions start; stored, then printed (or JSON).

use super::args::{overrides, DbRunArgs, SetupArgs};
use super::{has_cluster, setup_private, Target};
use crate::options::UsageError;
use crate::session::{now, stop_flag, store_then_print, Ending};
use iogauge_model::db::report::{DataSet, DbContext, DbReport, DbServer};
use iogauge_model::db::workload::{Grid, Mode, Workload};
use iogauge_model::live::LiveHeader;
use iogauge_model::secret::redact_dsn;
use iogauge_pg::{driver, parse_dsn, schema, Cluster};
use iogauge_probe::{devices_of_path, disks_of_path, sample_grid, Sampler};
use iogauge_store::live::LiveWriter;
use iogauge_store::{NewRun, Store};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Total memory, bytes (MemTotal of /proc/meminfo); 0 if unreadable.
pub fn ram_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn mode(a: &DbRunArgs, schemas: u32) -> Mode {
    match a.sessions {
        Some(sessions) => Mode::Sessions {
            sessions,
            update_pct: f64::from(a.update_pct.unwrap_or(0)),
        },
        None => match (a.readers, a.writers) {
            (None, None) => Mode::ReadersWriters {
                readers: schemas,
                writers: 0,
            },
            (r, w) => Mode::ReadersWriters {
                readers: r.unwrap_or(0),
                writers: w.unwrap_or(0),
            },
        },
    }
}

fn validate(a: &DbRunArgs) -> Result<(), UsageError> {
    if a.time.is_zero() {
        return Err(UsageError(
            "--time must be above 0, as in --time 30s".into(),
        ));
    }
    if a.interval < Duration::from_millis(100) || a.interval > Duration::from_secs(3600) {
        return Err(UsageError("--interval must be between 100ms and 1h".into()));
    }
    if matches!(
        (a.readers, a.writers),
        (Some(0), Some(0)) | (Some(0), None) | (None, Some(0))
    ) {
        return Err(UsageError(
            "no sessions: give --readers N and/or --writers N above 0, or --sessions N".into(),
        ));
    }
    if a.cache_limit.is_some() {
        if a.place.dsn.is_some() {
            return Err(UsageError(
                "--cache-limit applies to a private cluster, not a --dsn server".into(),
            ));
        }
        // SAFETY: geteuid(2) has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(UsageError(
                "--cache-limit needs root (it creates a memory cgroup); run as root or drop the flag".into(),
            ));
        }
    }
    Ok(())
}

pub fn run(a: DbRunArgs) -> anyhow::Result<ExitCode> {
    validate(&a)?;
    let stop = stop_flag()?;
    let tag = crate::session::campaign_tag()?;
    let mut store = Store::open_resolved(a.store.store.as_deref())?;
    let pg_set = overrides(&a.pg_set)?;
    let mut warnings = Vec::new();
    // The private cluster (kept alive to the end: dropping it stops the server).
    let mut cluster: Option<Cluster> = None;
    let (cfg, location, devices, disks) = match Target::of(&a.place) {
        Target::Private(dir) => {
            let mut c = if has_cluster(&dir) {
                let mut c = Cluster::open(&dir)?;
                if !pg_set.is_empty() {
                    c.configure(&pg_set)?;
                }
                c
            } else if std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
                return Err(UsageError(format!(
                    "--dir {}: not empty and not created by iogauge; refusing to use it (choose an empty or new directory)",
                    dir.display()
                ))
                .into());
            } else {
                super::check_dir("--dir", &dir)?;
                eprintln!(
                    "no cluster in {}: setting one up (4 schemas of 64 MiB; `iogauge db setup` chooses)",
                    dir.display()
                );
                let s = SetupArgs::defaults(a.place.clone(), a.pg_set.clone());
                let (mut c, _) = setup_private(&dir, &s, &pg_set)?;
                c.stop()?;
                c
            };
            if let Some(limit) = a.cache_limit {
                c.stop()?;
                iogauge_pg::drop_os_cache()?;
                c.set_cache_limit(Some(limit));
            }
            c.start()?;
            let data = c.data_dir();
            let cfg = c.config();
            cluster = Some(c);
            (
                cfg,
                dir.display().to_string(),
                devices_of_path(&data),
                disks_of_path(&data),
            )
        }
        Target::Dsn(dsn) => {
            if !pg_set.is_empty() {
                return Err(UsageError(
                    "--pg-set configures a private cluster; set it on your own server instead"
                        .into(),
                )
                .into());
            }
            warnings.push(
                "an existing server: device figures are not sampled (the server may be elsewhere)"
                    .to_string(),
            );
            (parse_dsn(&dsn)?, redact_dsn(&dsn), vec![], vec![])
        }
    };
    let Some((schemas, blocks)) = schema::discover(&cfg)? else {
        return Err(UsageError(format!(
            "{location}: no iogauge schemas loaded; run `iogauge db setup` first"
        ))
        .into());
    };
    let workload = Workload {
        mode: mode(&a, schemas),
        work_unit: a.work_unit,
        redo_stress: a.redo_stress,
        hot_schema_every: a.hot_schema_every,
        think_time: a.think_time,
        schemas,
        blocks_per_schema: blocks,
        seed: a.seed,
        driver: a.driver,
    };
    let grid = Grid {
        interval: a.interval,
        ramp: a.ramp,
        time: a.time,
    };
    let settings = match &cluster {
        Some(c) => c.settings()?,
        None => {
            let mut client = iogauge_pg::connect(&cfg)?;
            iogauge_pg::settings::settings(&mut client)
                .map_err(|e| anyhow::anyhow!(iogauge_pg::error_text(&e)))?
        }
    };
    let data_set = DataSet {
        schemas,
        blocks_per_schema: blocks,
        bytes: u64::from(schemas) * blocks * 8192,
        ram_bytes: ram_bytes(),
        shared_buffers_bytes: shared_buffers(&settings),
    };
    if a.cache_limit.is_none() && data_set.bytes < data_set.ram_bytes {
        warnings.push(format!(
            "the data set ({} MiB) fits in RAM ({} MiB): the OS page cache can serve reads PostgreSQL counts as physical; use --cache-limit (root) or a larger --scale",
            data_set.bytes >> 20,
            data_set.ram_bytes >> 20
        ));
    }
    let feed = LiveWriter::create(
        store.path(),
        &LiveHeader {
            pid: std::process::id(),
            kind: "db run".into(),
            what: format!("{:?} on {location}", workload.mode),
            started_at: now(),
            db: cluster.as_ref().and_then(|_| socket_addr(&cfg)),
        },
    );

    // Devices and CPU on the sessions' grid, from their barrier release.
    let sampler = Sampler::new((!devices.is_empty()).then(|| devices.clone()));
    let boundaries: Vec<Duration> = grid.slots().iter().map(|s| s.end).collect();
    let done = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel();
    let (sampler, boundaries, done_ref) = (&sampler, &boundaries, &done);
    let (outcome, (samples, sample_error)) = std::thread::scope(|sc| {
        let sampling = sc.spawn(move || {
            let t0 = loop {
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(t0) => break t0,
                    Err(_) if done_ref.load(Ordering::Relaxed) => return (Vec::new(), None),
                    Err(_) => {}
                }
            };
            sample_grid(sampler, t0, boundaries, done_ref)
        });
        let outcome = driver::run(&cfg, &workload, &grid, stop.clone(), move |t0| {
            let _ = tx.send(t0);
        });
        done.store(true, Ordering::Relaxed);
        (outcome, sampling.join().expect("sampler thread"))
    });
    drop(feed);
    let outcome = outcome?;
    let mut report = DbReport::build(
        &outcome,
        DbContext {
            server: DbServer {
                private: cluster.is_some(),
                version: String::new(),
                location,
                cache_limit: a.cache_limit,
                settings,
            },
            workload,
            grid,
            data_set,
            disks,
            samples,
        },
    );
    report.warnings.extend(warnings);
    report.warnings.extend(sample_error);
    if outcome.interrupted && outcome.error.is_none() {
        report
            .warnings
            .push("interrupted: the summary covers only the part that ran".into());
    }
    // Stop the private server before printing: a clean shutdown is part of the run.
    if let Some(mut c) = cluster.take() {
        if let Err(e) = c.stop() {
            report.warnings.push(format!("stopping the server: {e}"));
        }
    }
    report.meta.ended_at = Some(now());
    let text = if a.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        iogauge_report::db_run_text(&report)
    };
    let m = outcome.measured();
    let histograms = vec![
        ("read".to_string(), m.sessions.read_lat.encode()?),
        ("update".to_string(), m.sessions.update_lat.encode()?),
    ];
    let document = iogauge_model::Document::from(report);
    let run = NewRun {
        document: &document,
        histograms: &histograms,
        campaign: tag.as_ref(),
    };
    let ending = match &outcome.error {
        Some(e) => Ending::Failed(e.to_string()),
        None if outcome.interrupted => Ending::Interrupted,
        None => Ending::Complete,
    };
    store_then_print(&mut store, &run, &text, ending)
}

/// shared_buffers in bytes from the settings read back (`setting` in `unit`s, e.g. 8kB).
fn shared_buffers(settings: &[iogauge_model::db::report::Setting]) -> Option<u64> {
    let s = settings.iter().find(|s| s.name == "shared_buffers")?;
    let n: u64 = s.setting.parse().ok()?;
    let unit = match s.unit.as_deref() {
        Some("8kB") => 8192,
        Some("kB") => 1024,
        Some("MB") => 1 << 20,
        Some("B") | None => 1,
        Some(_) => return None,
    };
    Some(n * unit)
}

/// Where `iogauge watch` can reach the private server: its unix socket, no password.
fn socket_addr(cfg: &postgres::Config) -> Option<iogauge_model::live::SocketAddr> {
    let dir = cfg.get_hosts().iter().find_map(|h| match h {
        postgres::config::Host::Unix(p) => Some(p.clone()),
        _ => None,
    })?;
    Some(iogauge_model::live::SocketAddr {
        socket_dir: dir,
        port: cfg.get_ports().first().copied().unwrap_or(5432),
        user: cfg.get_user()?.to_string(),
        dbname: cfg.get_dbname()?.to_string(),
    })
}
