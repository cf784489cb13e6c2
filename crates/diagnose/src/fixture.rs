//! Hand-built documents for the rules' unit tests: a run, a database run and a calibration
//! whose window figures are set directly, as a real result would carry them.

use iogauge_model::db::aas::Aas;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::{
    CacheCompare, DataSet, DbContext, DbIntervalReport, DbReport, DbServer,
};
use iogauge_model::db::workload::{Driver, Grid, Mode, RedoStress, Workload};
use iogauge_model::derive::{CpuRates, Derived, DiskRates};
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::hardware::Hardware;
use iogauge_model::layers::{LayerRates, StageLat, StageRates};
use iogauge_model::run::{IntervalReport, RunReport};
use iogauge_model::sched::JobCpuRates;
use iogauge_model::spec::{JobSpec, RwMode};
use iogauge_model::summary::DirSummary;
use iogauge_model::target::{TargetInfo, TargetKind};
use iogauge_model::Document;
use iogauge_stats::{LatSummary, Phase};
use std::time::{Duration, SystemTime};

/// A direction's figures: IOPS, KiB per I/O, mean latency µs.
pub fn dir(iops: f64, kib: f64, lat_us: f64) -> DirSummary {
    DirSummary {
        ios: (iops * 10.0) as u64,
        bytes: (iops * 10.0 * kib * 1024.0) as u64,
        iops,
        mbps: iops * kib / 1024.0,
        lat_us: LatSummary {
            mean: lat_us,
            p50: lat_us,
            ..LatSummary::default()
        },
    }
}

/// A 10 s O_DIRECT run on a file on `vda` with these figures, and `vda`'s.
pub fn run(read: DirSummary, write: DirSummary, vda: DiskRates) -> RunReport {
    let mut r = RunReport::from_series(
        JobSpec::new(RwMode::RandRw),
        vec![TargetInfo {
            path: "data".into(),
            kind: TargetKind::File,
            fs: Some("ext4".into()),
            device: Some("vda".into()),
            size: 1 << 30,
            created: true,
            owned: true,
            direct: true,
            writable: true,
        }],
        SystemTime::UNIX_EPOCH,
        &[],
        false,
    );
    r.summary.elapsed_s = 10.0;
    r.summary.read = read;
    r.summary.write = write;
    r.hardware = Some(Hardware {
        disks: vec!["vda".into()],
        ..Hardware::default()
    });
    r.intervals = (0..10)
        .map(|i| IntervalReport {
            phase: Phase::Measure,
            t_s: f64::from(i),
            dur_s: 1.0,
            read: DirSummary::default(),
            write: DirSummary::default(),
            system: Some(Derived {
                cpu: CpuRates {
                    user: 3.0,
                    system: 2.0,
                    idle: 95.0,
                    ..CpuRates::default()
                },
                ..Derived::default()
            }),
        })
        .collect();
    set_disk(&mut r, "vda", &vda);
    r
}

/// `name`'s figures in every interval of `r`.
pub fn set_disk(r: &mut RunReport, name: &str, d: &DiskRates) {
    for i in &mut r.intervals {
        if let Some(s) = &mut i.system {
            s.disks.insert(name.into(), d.clone());
        }
    }
}

/// The job's own threads' figures in every interval of `r`: CPU-seconds and run-queue wait
/// (thread-seconds) per second, with every CPU busy (others' work or the job's).
pub fn set_job(r: &mut RunReport, cpu_s: f64, wait_s: f64) {
    for i in &mut r.intervals {
        if let Some(s) = &mut i.system {
            s.job = Some(JobCpuRates {
                cpu_s,
                wait_s,
                threads: 4,
            });
            s.psi_cpu_some_pct = Some(60.0);
            s.cpu.idle = 0.0;
            s.cpu.system = 40.0;
            s.cpu.user = 60.0;
        }
    }
}

/// `name`'s block-layer stages (µs: before the queue, queue, device) for reads in every
/// interval of `r`.
pub fn set_layers(r: &mut RunReport, name: &str, req_s: f64, pre: f64, queue: f64, device: f64) {
    let lat = |us: f64| {
        Some(StageLat {
            mean_us: us,
            p50_us: us,
            p99_us: us,
        })
    };
    for i in &mut r.intervals {
        if let Some(s) = &mut i.system {
            s.layers.insert(
                name.into(),
                LayerRates {
                    read: StageRates {
                        req_s,
                        req_kib: 8.0,
                        pre_queue: lat(pre),
                        queue: lat(queue),
                        device: lat(device),
                        ..StageRates::default()
                    },
                    ..LayerRates::default()
                },
            );
        }
    }
}

/// A device's window figures: reads/s, read await ms, writes/s, write await ms, %util,
/// aqu-sz; MB/s from 8 KiB requests.
pub fn disk(r_s: f64, r_await: f64, w_s: f64, w_await: f64, util: f64, aqu: f64) -> DiskRates {
    DiskRates {
        r_s,
        w_s,
        r_mb_s: r_s * 8.0 / 1024.0,
        w_mb_s: w_s * 8.0 / 1024.0,
        rareq_sz: if r_s > 0.0 { 8.0 } else { 0.0 },
        wareq_sz: if w_s > 0.0 { 8.0 } else { 0.0 },
        r_await,
        w_await,
        util,
        aqu_sz: aqu,
        ..DiskRates::default()
    }
}

/// A 10 s database run whose sessions' AAS is `aas` (event, AAS) and whose cache compare is
/// `cache`.
pub fn db(aas: &[(&str, f64)], cache: Option<CacheCompare>) -> DbReport {
    let workload = Workload {
        mode: Mode::ReadersWriters {
            readers: 4,
            writers: 0,
        },
        work_unit: 1,
        redo_stress: RedoStress::None,
        hot_schema_every: None,
        think_time: None,
        think_time_max: None,
        hotspot: None,
        schemas: 1,
        blocks_per_schema: 1000,
        seed: 1,
        driver: Driver::before_the_choice(),
        first_session: 0,
    };
    let mut r = DbReport::build(
        &DbOutcome::default(),
        DbContext {
            server: DbServer::default(),
            workload,
            grid: Grid {
                interval: Duration::from_secs(1),
                ramp: Duration::ZERO,
                time: Duration::from_secs(10),
            },
            data_set: DataSet::default(),
            disks: vec!["vda".into()],
            num_disks: None,
            write_disks: vec!["vda".into()],
            samples: Vec::new(),
            preflight: None,
        },
    );
    r.summary.elapsed_s = 10.0;
    r.summary.aas = Aas {
        samples: 100,
        sessions: aas.iter().map(|(e, a)| ((*e).to_string(), *a)).collect(),
        ..Aas::default()
    };
    r.cache = cache;
    r
}

/// [`db`] on MariaDB, with the settings iogauge's private server records.
pub fn maria(aas: &[(&str, f64)]) -> DbReport {
    let mut r = db(aas, None);
    r.server.engine = iogauge_model::db::engine::Engine::Mariadb;
    r.server.settings = [
        ("innodb_buffer_pool_size", "16777216"),
        ("innodb_flush_log_at_trx_commit", "1"),
    ]
    .iter()
    .map(|(n, v)| iogauge_model::db::report::Setting {
        name: (*n).into(),
        setting: (*v).into(),
        unit: None,
    })
    .collect();
    r
}

/// One measured 10 s interval of `r`, on the data's disk `name`, in which its writes took `queue` µs in Linux's
/// queue and `device` µs in the device, `req_s` a second.
pub fn db_write_stages(r: &mut DbReport, name: &str, req_s: f64, queue: f64, device: f64) {
    let lat = |us: f64| {
        Some(StageLat {
            mean_us: us,
            p50_us: us,
            p99_us: us,
        })
    };
    let mut system = Derived::default();
    system.layers.insert(
        name.into(),
        LayerRates {
            write: StageRates {
                req_s,
                req_kib: 16.0,
                pre_queue: lat(0.0),
                queue: lat(queue),
                device: lat(device),
                ..StageRates::default()
            },
            ..LayerRates::default()
        },
    );
    // The data's disks, which the rules compare with (no reads compared: no cache share).
    r.cache.get_or_insert_with(|| CacheCompare {
        disks: vec![name.into()],
        db_physical_reads_s: 0.0,
        db_read_mb_s: 0.0,
        device_reads_s: 0.0,
        device_read_mb_s: 0.0,
        page_cache_pct: None,
        note: None,
    });
    r.intervals.push(DbIntervalReport {
        phase: Phase::Measure,
        t_s: 0.0,
        dur_s: 10.0,
        sessions: Default::default(),
        db: Default::default(),
        aas: r.summary.aas.clone(),
        device_writes_per_db_write: None,
        system: Some(system),
    });
}

/// The findings of `doc`, and the first one of `layer` (panics in a test when missing).
pub fn of(doc: impl Into<Document>) -> Vec<Finding> {
    crate::diagnose(&doc.into())
}

pub fn find(v: &[Finding], layer: Layer) -> &Finding {
    v.iter()
        .find(|f| f.layer == layer)
        .unwrap_or_else(|| panic!("no {layer:?} finding in {v:#?}"))
}

/// The evidence figure whose `what` contains `needle`.
pub fn evidence(f: &Finding, needle: &str) -> f64 {
    f.evidence
        .iter()
        .find(|e| e.what.contains(needle))
        .unwrap_or_else(|| panic!("no evidence '{needle}' in {f:#?}"))
        .value
}
