//! A whole result seen the same way whatever its kind: the measured window's figures per
//! device (intervals combined, never one of them), per CPU, per block-layer stage, and what
//! the workload asked for. Every rule reads a [`Whole`], so a rule is written once for runs,
//! calibrations and database runs.

use crate::waits::{io_share, DbClass};
use iogauge_model::db::aas::Aas;
use iogauge_model::db::report::DbIntervalReport;
use iogauge_model::derive::{CpuRates, Derived, DiskRates, PerCpuRates};
use iogauge_model::finding::Stretch;
use iogauge_model::hardware::per_cpu_between;
use iogauge_model::interval::IntervalReport;
use iogauge_model::layers::{LayerRates, StageLat, StageRates};
use iogauge_model::sched::JobCpuRates;
use iogauge_model::summary::DirSummary;
use iogauge_model::system::Snapshot;
use iogauge_model::Document;
use iogauge_stats::{Nanos, Phase};
use std::collections::BTreeMap;

/// One direction of what the workload (iogauge's workers) asked for over the window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ask {
    pub iops: f64,
    /// Mean size of one I/O, KiB.
    pub kib: f64,
    /// Mean latency the application saw, µs.
    pub lat_us: f64,
}

/// What a run's workload asked for (a `run` only: a calibration's points each ask
/// differently, and a database's sessions ask in blocks, see [`crate::rules::db`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Work {
    pub read: Ask,
    pub write: Ask,
    /// O_DIRECT (else buffered: the page cache sits between the workload and the devices).
    pub direct: bool,
}

impl Work {
    /// Share of the workload's I/Os that were reads, 0–1.
    pub fn read_share(&self) -> f64 {
        let all = self.read.iops + self.write.iops;
        if all > 0.0 {
            self.read.iops / all
        } else {
            0.0
        }
    }

    /// The workload's mean latency over both directions, µs (weighted by I/Os).
    pub fn lat_us(&self) -> f64 {
        let n = self.read.iops + self.write.iops;
        if n > 0.0 {
            (self.read.iops * self.read.lat_us + self.write.iops * self.write.lat_us) / n
        } else {
            0.0
        }
    }
}

/// One direction's block-layer stages over the window, means weighted by requests.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stages {
    pub req_s: f64,
    pub pre_us: f64,
    pub queue_us: f64,
    pub device_us: f64,
}

impl Stages {
    /// Time of one request below the application: before the queue, in it, in the device.
    pub fn total_us(&self) -> f64 {
        self.pre_us + self.queue_us + self.device_us
    }
}

/// Both directions of one traced device.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LayerWindow {
    /// The job's own requests when the tracer told them from other processes'
    /// (`attributed`), else every request on the device.
    pub read: Stages,
    pub write: Stages,
    /// Every request on the device, the job's and everyone else's.
    pub all_read: Stages,
    pub all_write: Stages,
    /// Whether `read` and `write` are the job's own (the tracer's attribution ran in every
    /// interval).
    pub attributed: bool,
    /// The job's write bytes per second on the device (every request's without attribution).
    pub write_kib_s: f64,
    /// The queue's `nr_requests`, when the tracer recorded it.
    pub nr_requests: Option<u32>,
}

/// Requests in the queue or on the device at a time (Little's law: rate × time there).
fn little(dirs: [Stages; 2]) -> f64 {
    dirs.iter()
        .map(|s| s.req_s * (s.queue_us + s.device_us) / 1e6)
        .sum()
}

impl LayerWindow {
    /// Requests in the queue or on the device at a time, both directions, everyone's: what
    /// fills the queue's `nr_requests`.
    pub fn in_flight(&self) -> f64 {
        little([self.all_read, self.all_write])
    }

    /// The job's own requests in the queue or on the device at a time (everyone's without
    /// attribution).
    pub fn own_in_flight(&self) -> f64 {
        little([self.read, self.write])
    }

    /// The share of the device's requests that were other processes', 0–1; `None` without
    /// attribution or requests.
    pub fn others_share(&self) -> Option<f64> {
        let all = self.all_read.req_s + self.all_write.req_s;
        let own = self.read.req_s + self.write.req_s;
        (self.attributed && all > 0.0).then(|| (1.0 - own / all).clamp(0.0, 1.0))
    }
}

/// A whole result as the rules read it.
#[derive(Debug, Default)]
pub(crate) struct Whole {
    /// Each device over the measured window (intervals combined by duration and I/Os).
    pub disks: BTreeMap<String, DiskRates>,
    /// The whole disks under the targets (what the workload is compared against).
    pub bottom: Vec<String>,
    /// The devices the targets sit on directly (members of a layout, a loop device, a disk).
    pub entry: Vec<String>,
    /// The machine's CPU over the window.
    pub cpu: Option<CpuRates>,
    /// Each CPU over the window (empty when the snapshots had no per-CPU lines).
    pub cpus: Vec<PerCpuRates>,
    /// Per traced device, when the block-layer tracer ran.
    pub layers: BTreeMap<String, LayerWindow>,
    /// A run's workload.
    pub work: Option<Work>,
    /// The job's own threads over the window (CPU time, run-queue wait), when measured.
    pub job: Option<JobCpuRates>,
    /// Percent of the window some task waited for a CPU (/proc/pressure/cpu), when measured.
    pub psi_cpu: Option<f64>,
    /// A database run's sessions: the share of their DB time in each direction's I/O.
    pub db_waits: Option<DbWaits>,
    /// Other processes' bios on the traced disks over the window, the busiest first (the
    /// tracer's attribution; empty without it).
    pub others: Vec<iogauge_model::layers::Origin>,
}

/// The share (0–1) of a database run's DB time its sessions waited on reads (data-file
/// reads) and on writes (data-file writes and the log at commit), as [`crate::waits`]
/// classes their events: what a device's queue in that direction can cost them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DbWaits {
    pub read: f64,
    pub write: f64,
}

impl Whole {
    pub fn of(doc: &Document) -> Whole {
        Whole::of_window(doc, None)
    }

    /// The result over `within` (a stretch of its measured window: the intervals that begin
    /// in it), or over the whole measured window. What a run asked for, and a database's
    /// waits, are then those intervals' own.
    pub fn of_window(doc: &Document, within: Option<Stretch>) -> Whole {
        let kept = |phase: Phase, t_s: f64| {
            phase == Phase::Measure && within.is_none_or(|w| (w.from_s..w.to_s).contains(&t_s))
        };
        match doc {
            Document::Run(r) => {
                let ivs: Vec<&IntervalReport> = r
                    .intervals
                    .iter()
                    .filter(|i| kept(i.phase, i.t_s))
                    .collect();
                let measured: Vec<(f64, f64, Option<&Derived>)> = ivs
                    .iter()
                    .map(|i| (i.t_s, i.dur_s, i.system.as_ref()))
                    .collect();
                let mut w = Whole::from_intervals(&measured, &r.samples);
                w.bottom = r.hardware.as_ref().map_or(Vec::new(), |h| h.disks.clone());
                w.entry = r.targets.iter().filter_map(|t| t.device.clone()).collect();
                let (read, write) = match within {
                    None => (ask(&r.summary.read), ask(&r.summary.write)),
                    Some(_) => (
                        ask_over(ivs.iter().map(|i| (i.dur_s, &i.read))),
                        ask_over(ivs.iter().map(|i| (i.dur_s, &i.write))),
                    ),
                };
                w.work = Some(Work {
                    read,
                    write,
                    direct: r.options.direct,
                });
                w
            }
            Document::DbRun(d) => {
                let ivs: Vec<&DbIntervalReport> = d
                    .intervals
                    .iter()
                    .filter(|i| kept(i.phase, i.t_s))
                    .collect();
                let measured: Vec<(f64, f64, Option<&Derived>)> = ivs
                    .iter()
                    .map(|i| (i.t_s, i.dur_s, i.system.as_ref()))
                    .collect();
                let mut w = Whole::from_intervals(&measured, &d.samples);
                w.bottom = d.cache.as_ref().map_or(Vec::new(), |c| c.disks.clone());
                w.entry = w.bottom.clone();
                let combined;
                let aas = match within {
                    None => &d.summary.aas,
                    Some(_) => {
                        combined = Aas::combine(ivs.iter().map(|i| &i.aas));
                        &combined
                    }
                };
                w.db_waits = Some(DbWaits {
                    read: io_share(aas, &[DbClass::Read]),
                    write: io_share(aas, &[DbClass::Write, DbClass::Log]),
                });
                w
            }
            Document::Calibration(c) => {
                let measured: Vec<(f64, f64, Option<&Derived>)> = c
                    .points
                    .iter()
                    .flat_map(|p| &p.intervals)
                    .filter(|i| kept(i.phase, i.t_s))
                    .map(|i| (i.t_s, i.dur_s, i.system.as_ref()))
                    .collect();
                let mut w = Whole::from_intervals(&measured, &[]);
                w.bottom = c
                    .preflight
                    .targets
                    .iter()
                    .filter_map(|t| t.device.as_ref())
                    .flat_map(|d| iogauge_model::preflight::leaves(d))
                    .map(|d| d.name.clone())
                    .collect();
                w.entry = c.targets.iter().filter_map(|t| t.device.clone()).collect();
                w
            }
        }
    }

    /// The window of `measured` (start s, duration s, figures) combined.
    fn from_intervals(measured: &[(f64, f64, Option<&Derived>)], samples: &[Snapshot]) -> Whole {
        let with: Vec<(f64, &Derived)> = measured
            .iter()
            .filter_map(|(_, d, s)| Some((*d, (*s)?)))
            .collect();
        let mut names: Vec<&String> = with.iter().flat_map(|(_, d)| d.disks.keys()).collect();
        names.sort();
        names.dedup();
        let disks = names
            .into_iter()
            .map(|n| {
                let parts: Vec<(f64, &DiskRates)> = with
                    .iter()
                    .filter_map(|(t, d)| Some((*t, d.disks.get(n)?)))
                    .collect();
                (n.clone(), DiskRates::combine(&parts))
            })
            .collect();
        let combined = Derived::combine(&with);
        let cpu = combined.as_ref().map(|d| d.cpu.clone()).filter(sampled);
        let cpus = match (measured.first(), measured.last()) {
            (Some(a), Some(b)) => per_cpu_between(
                samples,
                Nanos((a.0 * 1e9) as u64),
                Nanos(((b.0 + b.1) * 1e9) as u64),
            ),
            _ => Vec::new(),
        };
        Whole {
            disks,
            cpu,
            cpus,
            layers: layers(&with),
            job: combined.as_ref().and_then(|d| d.job),
            psi_cpu: combined.as_ref().and_then(|d| d.psi_cpu_some_pct),
            others: iogauge_model::layers::merge_origins(with.iter().flat_map(|(_, d)| &d.others)),
            ..Whole::default()
        }
    }

    /// The busiest CPU over the window: (its number, its rates), or the machine's when the
    /// snapshots had no per-CPU lines.
    pub fn busiest_cpu(&self) -> Option<(Option<u32>, CpuRates)> {
        match self
            .cpus
            .iter()
            .filter(|c| sampled(&c.rates))
            .max_by(|a, b| a.rates.working().total_cmp(&b.rates.working()))
        {
            Some(c) => Some((Some(c.cpu), c.rates.clone())),
            None => self.cpu.clone().map(|c| (None, c)),
        }
    }

    /// `f` summed over the bottom disks.
    pub fn bottom_sum(&self, f: impl Fn(&DiskRates) -> f64) -> f64 {
        self.bottom
            .iter()
            .filter_map(|n| self.disks.get(n))
            .map(f)
            .sum()
    }

    /// The I/O-weighted mean await (queue and device, iostat's r_await/w_await) of the
    /// entry devices, ms, over both directions; `None` when they completed nothing.
    pub fn entry_await_ms(&self) -> Option<f64> {
        let (mut n, mut t) = (0.0, 0.0);
        for d in self.entry_rates() {
            n += d.r_s + d.w_s;
            t += d.r_s * d.r_await + d.w_s * d.w_await;
        }
        (n > 0.0).then(|| t / n)
    }

    /// The request-weighted mean time the entry devices' bios spent before the request queue
    /// (the tracer's `pre_queue`: waiting for a free request, throttling), µs; 0 untraced.
    /// diskstats starts a request's time when the request is allocated, so its await leaves
    /// this out.
    pub fn entry_pre_queue_us(&self) -> f64 {
        let names = if self.entry.is_empty() {
            &self.bottom
        } else {
            &self.entry
        };
        let (mut n, mut t) = (0.0, 0.0);
        for l in names.iter().filter_map(|n| self.layers.get(n)) {
            for s in [l.read, l.write] {
                n += s.req_s;
                t += s.req_s * s.pre_us;
            }
        }
        if n > 0.0 {
            t / n
        } else {
            0.0
        }
    }

    /// The entry devices' window figures (the bottom disks when no entry device is known).
    pub fn entry_rates(&self) -> Vec<&DiskRates> {
        let names = if self.entry.is_empty() {
            &self.bottom
        } else {
            &self.entry
        };
        let mut seen: Vec<&String> = names.iter().collect();
        seen.sort();
        seen.dedup();
        seen.into_iter().filter_map(|n| self.disks.get(n)).collect()
    }
}

/// Whether CPU figures were sampled at all: all zero (no tick, or no snapshot) would read as
/// 100% busy.
fn sampled(c: &CpuRates) -> bool {
    c.user + c.system + c.iowait + c.steal + c.idle > 0.0
}

/// One direction over several intervals (duration, figures): I/Os per second of their
/// time, mean size and mean latency weighted by their I/Os.
fn ask_over<'a>(parts: impl Iterator<Item = (f64, &'a DirSummary)>) -> Ask {
    let (mut secs, mut ios, mut bytes, mut lat) = (0.0, 0.0, 0.0, 0.0);
    for (dur, d) in parts {
        secs += dur;
        ios += d.ios as f64;
        bytes += d.bytes as f64;
        lat += d.ios as f64 * d.lat_us.mean;
    }
    if ios <= 0.0 || secs <= 0.0 {
        return Ask::default();
    }
    Ask {
        iops: ios / secs,
        kib: bytes / 1024.0 / ios,
        lat_us: lat / ios,
    }
}

fn ask(d: &DirSummary) -> Ask {
    Ask {
        iops: d.iops,
        kib: if d.ios > 0 {
            d.bytes as f64 / 1024.0 / d.ios as f64
        } else {
            0.0
        },
        lat_us: d.lat_us.mean,
    }
}

/// Per traced device, each stage's mean over the intervals, weighted by their requests.
fn layers(with: &[(f64, &Derived)]) -> BTreeMap<String, LayerWindow> {
    let mut names: Vec<&String> = with.iter().flat_map(|(_, d)| d.layers.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|n| {
            let dir = |pick: fn(&LayerRates) -> &StageRates| {
                let parts: Vec<(f64, &StageRates)> = with
                    .iter()
                    .filter_map(|(t, d)| Some((*t, pick(d.layers.get(n)?))))
                    .collect();
                stages(&parts)
            };
            let attributed = with
                .iter()
                .filter_map(|(_, d)| d.layers.get(n))
                .all(|l| l.ours.is_some());
            let secs: f64 = with.iter().map(|(t, _)| t).sum();
            let write_kib: f64 = with
                .iter()
                .filter_map(|(t, d)| {
                    let w = d.layers.get(n)?.own().1;
                    Some(t * w.req_s * w.req_kib)
                })
                .sum();
            let w = LayerWindow {
                read: dir(|l| l.own().0),
                write: dir(|l| l.own().1),
                all_read: dir(|l| &l.read),
                all_write: dir(|l| &l.write),
                attributed,
                write_kib_s: if secs > 0.0 { write_kib / secs } else { 0.0 },
                nr_requests: with
                    .iter()
                    .filter_map(|(_, d)| d.layers.get(n)?.nr_requests)
                    .max(),
            };
            (n.clone(), w)
        })
        .collect()
}

fn stages(parts: &[(f64, &StageRates)]) -> Stages {
    let secs: f64 = parts.iter().map(|(t, _)| t).sum();
    let reqs: f64 = parts.iter().map(|(t, s)| t * s.req_s).sum();
    if reqs <= 0.0 || secs <= 0.0 {
        return Stages::default();
    }
    let mean = |f: fn(&StageRates) -> Option<StageLat>| {
        parts
            .iter()
            .map(|(t, s)| t * s.req_s * f(s).map_or(0.0, |l| l.mean_us))
            .sum::<f64>()
            / reqs
    };
    Stages {
        req_s: reqs / secs,
        pre_us: mean(|s| s.pre_queue),
        queue_us: mean(|s| s.queue),
        device_us: mean(|s| s.device),
    }
}
