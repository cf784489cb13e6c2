//! The per-layer tracer: BPF programs on the kernel's block tracepoints (`src/bpf/layers.bpf.c`)
//! keep, per whole disk and direction, histograms of the time before the request queue, in
//! the queue and on the device, with request, byte, merge, split and requeue counts; the
//! session reads them on its interval grid as [`LayerCounters`] (`Snapshot::layers`). Two
//! more, on io_uring's tracepoints, time this process's own io_uring reads and writes from
//! submit to completion ([`RingCounters`], `Snapshot::ring`): the kernel's whole share of
//! what the application waited, so the rest is iogauge's own time.
//!
//! The stages are timed for a sample of the requests once they come faster than
//! [`TIMED_PER_S`] a second (1 in a power of two, set every reading: [`Tracer::reading`]),
//! each timed request counting for as many; every request is counted. What tracing costs
//! then stays near the tracepoints' own calls at any rate (`bench/trace`).
//!
//! The programs are `tp_btf` (BTF-enabled raw tracepoints), loaded by aya with their CO-RE
//! relocations done against the running kernel's BTF (`/sys/kernel/btf/vmlinux`): no kernel
//! headers, no libbpf. Everything that can stop it — a build without clang, no BTF, no
//! privilege, a verifier refusal, a disk that is gone — is an [`Unavailable`] value with one
//! line saying why; dropping the [`Tracer`] detaches every program.
//!
//! What it cannot see: blk-throttle (cgroup io limits) holds a bio in `submit_bio_noacct`
//! BEFORE `block_bio_queue` fires (the throttled bio is traced when it is dispatched, through
//! `submit_bio_noacct_nocheck`), so time spent throttled is not in `pre_queue`.

pub mod capture;
mod error;
mod files;
mod job;
mod load;
mod maps;

use error::one_line;
pub use error::Unavailable;
pub use files::{FileIo, FileProbe};
pub use job::{Attribution, FileKey, JobCgroup};
use load::attach;

use aya::maps::{Array, HashMap, MapData, PerCpuArray, PerCpuValues};
use aya::{Ebpf, EbpfLoader};
use iogauge_model::layers::{merge_origins, JobCounters, LayerCounters, Origin, RingCounters};
use maps::{Counters, Hist, RingCount, Sampling, DIRECTIONS, MAX_DISKS, MAX_OURS, STAGES};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Requests a second the sampling times at most (about; a power-of-two share of them): above
/// it 1 in 2, 4, 8… is timed. At 1.6 µs of BPF time for a timed request here, 4096 a second
/// cost 0.3% of one CPU; the untimed ones only their programs' calls.
pub const TIMED_PER_S: f64 = 4096.0;

/// How long a salt of the block requests' sampling is kept: a request whose programs run
/// across a change of salt may go untimed, so it changes seldom, but it changes, so that a
/// sector written over and over is timed in some spans and not in others.
const SALT_EVERY: Duration = Duration::from_secs(10);

/// Where this build's BPF objects came from: `"clang"` (compiled from `src/bpf/*.bpf.c` by
/// the build), `"committed"` (the objects committed beside them, on a machine without
/// clang) or `"none"` (neither: the build carries no tracer).
pub const OBJECTS_FROM: &str = env!("IOGAUGE_BPF_OBJECTS");

/// Whether this build carries the tracer's BPF programs ([`OBJECTS_FROM`] is not "none").
pub fn built_in() -> bool {
    !OBJECT.is_empty()
}

/// The BPF object build.rs compiled or copied; empty when there was neither clang nor the
/// committed object.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/layers.bpf.o"));

/// The programs in the object and the tracepoint each one is attached to.
const PROGRAMS: [(&str, &str); 8] = [
    ("on_bio_queue", "block_bio_queue"),
    ("on_split", "block_split"),
    ("on_backmerge", "block_bio_backmerge"),
    ("on_frontmerge", "block_bio_frontmerge"),
    ("on_insert", "block_rq_insert"),
    ("on_issue", "block_rq_issue"),
    ("on_requeue", "block_rq_requeue"),
    ("on_complete", "block_rq_complete"),
];

/// Other processes kept per reading, the busiest first.
const ORIGINS: usize = 8;

/// The io_uring programs, attached when the kernel has io_uring's tracepoints (a kernel
/// without io_uring traces the block layer all the same).
const RING_PROGRAMS: [(&str, &str); 2] = [
    ("on_ring_submit", "io_uring_submit_req"),
    ("on_ring_complete", "io_uring_complete"),
];

/// A whole disk to trace: its kernel name and `dev_t` numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disk {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// `queue/nr_requests`: the requests the queue holds (a bio finding none waits before
    /// `block_rq_insert`); `None` where the queue has no such file.
    pub nr_requests: Option<u32>,
}

impl Disk {
    /// The whole disk `name` (`vda`, `loop3`) from `/sys/block/NAME/dev`; a partition or a
    /// name that is not a block device is an error.
    pub fn named(name: &str) -> Result<Disk, Unavailable> {
        let path = format!("/sys/block/{name}/dev");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Unavailable::Disk(name.into(), format!("{path}: {e}")))?;
        let (major, minor) = parse_dev(&text).ok_or_else(|| {
            Unavailable::Disk(name.into(), format!("{path}: {text:?} is not MAJOR:MINOR"))
        })?;
        let nr_requests = std::fs::read_to_string(format!("/sys/block/{name}/queue/nr_requests"))
            .ok()
            .and_then(|t| t.trim().parse().ok());
        Ok(Disk {
            name: name.into(),
            major,
            minor,
            nr_requests,
        })
    }

    /// The kernel's `dev_t` (`MKDEV`: major << 20 | minor), as the BPF programs key disks.
    fn dev_t(&self) -> u32 {
        (self.major << 20) | self.minor
    }
}

/// Entries for the map of requests' stages, which keeps one per request struct it has seen
/// (never deleted): twice the requests the disks' queues hold (`mq/` hardware queues times
/// `nr_requests`, at least 256 each), so a queue resized while traced still fits; at least
/// 65,536.
fn request_slots(disks: &[Disk]) -> u32 {
    let held: u64 = disks
        .iter()
        .map(|d| {
            let queues = std::fs::read_dir(format!("/sys/block/{}/mq", d.name))
                .map_or(1, |dir| dir.count().max(1)) as u64;
            queues * u64::from(d.nr_requests.unwrap_or(0).max(256))
        })
        .sum();
    (2 * held).clamp(65_536, u64::from(u32::MAX)) as u32
}

fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (ma, mi) = text.trim().split_once(':')?;
    Some((ma.parse().ok()?, mi.parse().ok()?))
}

/// The attached programs and the disks they count; dropped = detached.
pub struct Tracer {
    ebpf: Ebpf,
    disks: Vec<Disk>,
    /// Whether the io_uring programs are attached.
    ring: bool,
    /// Whether requests are attributed (the job has a cgroup of its own).
    attributed: bool,
    sampler: Mutex<Sampler>,
    /// Other processes' cumulative bios at the previous reading, by pid.
    origins: Mutex<std::collections::HashMap<u32, maps::Origin>>,
}

/// One reading of the tracer ([`Tracer::reading`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// Each traced disk's counters since the tracer started.
    pub layers: Vec<LayerCounters>,
    /// The traced process's io_uring I/Os since the tracer started.
    pub ring: Option<RingCounters>,
    /// Other processes' bios since the previous reading, the busiest first (at most 8).
    pub others: Vec<Origin>,
}

/// The programs' `sampling` map and what decides it: the rates since the previous reading.
struct Sampler {
    map: Array<MapData, Sampling>,
    now: Sampling,
    /// The previous reading: when, the disks' requests, the traced process's io_uring requests.
    last: Option<(Instant, u64, u64)>,
    salted: Instant,
}

/// The sampling shift for `rate` requests a second: 1 in 2^shift timed keeps the timed ones
/// at or below [`TIMED_PER_S`].
fn shift_for(rate: f64) -> u32 {
    if rate <= TIMED_PER_S {
        return 0;
    }
    ((rate / TIMED_PER_S).log2().ceil() as u32).min(20)
}

fn new_salt() -> u32 {
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish() as u32
}

impl Sampler {
    /// The next interval's sampling from the rates since the previous reading (cumulative
    /// `requests` of the disks, `ring` of the traced process's io_uring), written to the programs
    /// when it changed.
    fn adapt(&mut self, requests: u64, ring: u64) {
        let at = Instant::now();
        let mut next = self.now;
        if let Some((then, r0, k0)) = self.last {
            let secs = at.duration_since(then).as_secs_f64();
            if secs > 0.0 {
                next.shift = shift_for(requests.saturating_sub(r0) as f64 / secs);
                next.ring_shift = shift_for(ring.saturating_sub(k0) as f64 / secs);
            }
        }
        self.last = Some((at, requests, ring));
        if at.duration_since(self.salted) >= SALT_EVERY {
            next.salt = new_salt();
            self.salted = at;
        }
        // A sampling that cannot be written leaves the one before in force.
        if next != self.now && self.map.set(0, next, 0).is_ok() {
            self.now = next;
        }
    }
}

/// Most of the job's files whose writeback the tracer attributes (a database's data and WAL
/// files: a PostgreSQL data directory of a few schemas holds a few thousand).
pub const MAX_FILES: u32 = 65_536;

/// Entries of the `our_inodes` map: one per file of the job's, at least the program's 256.
fn file_slots(attribution: Option<&Attribution>) -> u32 {
    let n = attribution
        .map_or(0, |a| a.files.len())
        .min(MAX_FILES as usize);
    (n as u32).max(256)
}

/// `1 << shift` when it is more than 1.
fn one_in(shift: u32) -> Option<u32> {
    (shift > 0).then(|| 1 << shift)
}

impl Tracer {
    /// Loads the programs, tells them `disks` (whole disks) and attaches them; io_uring is
    /// traced for this process; requests are told apart by `attribution` when given.
    pub fn start(disks: &[Disk], attribution: Option<&Attribution>) -> Result<Tracer, Unavailable> {
        Tracer::start_for(disks, std::process::id(), attribution)
    }

    /// [`Tracer::start`], with io_uring traced for the process `tgid` instead (bench/trace's
    /// `flip` traces a run it did not start).
    pub fn start_for(
        disks: &[Disk],
        tgid: u32,
        attribution: Option<&Attribution>,
    ) -> Result<Tracer, Unavailable> {
        if OBJECT.is_empty() {
            return Err(Unavailable::NoClang);
        }
        if disks.len() > MAX_DISKS as usize {
            return Err(Unavailable::TooMany(disks.len()));
        }
        let btf = load::kernel_btf()?;
        let mut traced = [0u32; MAX_DISKS as usize];
        for (slot, d) in traced.iter_mut().zip(disks) {
            *slot = d.dev_t();
        }
        let n = disks.len() as u32;
        // At least one entry: a map of none cannot be created.
        let per_disk = n.max(1) * DIRECTIONS;
        let mut ours = [0u64; MAX_OURS];
        let n_ours = attribution.map_or(0, |a| a.cgroups.len().min(MAX_OURS)) as u32;
        for (slot, id) in ours
            .iter_mut()
            .zip(attribution.iter().flat_map(|a| &a.cgroups))
        {
            *slot = *id;
        }
        let io_subsys = attribution.map_or(0, |a| a.io_subsys);
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .set_global("traced", &traced, true)
            .set_global("n_traced", &n, true)
            .set_global("ring_tgid", &tgid, true)
            .set_global("ours_cg", &ours, true)
            .set_global("n_ours", &n_ours, true)
            .set_global("io_subsys", &io_subsys, true)
            .set_max_entries("counters", per_disk)
            .set_max_entries("hists", per_disk * STAGES)
            .set_max_entries("ours_counters", per_disk)
            .set_max_entries("ours_hists", per_disk * STAGES)
            .set_max_entries("started", request_slots(disks))
            .set_max_entries("our_inodes", file_slots(attribution))
            .load(OBJECT)
            .map_err(|e| Unavailable::Load(one_line(&e)))?;
        if let Some(a) = attribution.filter(|_| n_ours > 0) {
            let map = ebpf
                .map_mut("our_inodes")
                .ok_or_else(|| Unavailable::Load("no map our_inodes in the object".into()))?;
            let mut files: HashMap<&mut MapData, FileKey, u8> =
                HashMap::try_from(map).map_err(|e| Unavailable::Load(one_line(&e)))?;
            for f in a.files.iter().take(MAX_FILES as usize) {
                files
                    .insert(f, 1, 0)
                    .map_err(|e| Unavailable::Load(one_line(&e)))?;
            }
        }
        for (name, tp) in PROGRAMS {
            attach(&mut ebpf, &btf, name, tp)?;
        }
        let ring = RING_PROGRAMS
            .iter()
            .all(|(name, tp)| attach(&mut ebpf, &btf, name, tp).is_ok());
        let map = ebpf
            .take_map("sampling")
            .ok_or_else(|| Unavailable::Load("no map sampling in the object".into()))?;
        let mut map = Array::try_from(map).map_err(|e| Unavailable::Load(one_line(&e)))?;
        let now = Sampling {
            salt: new_salt(),
            ..Sampling::default()
        };
        map.set(0, now, 0)
            .map_err(|e| Unavailable::Load(one_line(&e)))?;
        Ok(Tracer {
            ebpf,
            disks: disks.to_vec(),
            ring,
            attributed: n_ours > 0,
            origins: Mutex::default(),
            sampler: Mutex::new(Sampler {
                map,
                now,
                last: None,
                salted: Instant::now(),
            }),
        })
    }

    /// What a snapshot keeps: the disks' counters ([`Tracer::read`]) and the traced process's
    /// io_uring's ([`Tracer::ring`]), each saying which share of its requests was timed
    /// since the reading before; then the sampling is set for the next interval from the
    /// rates since that reading.
    pub fn reading(&self) -> Reading {
        let others = self.others();
        let (mut layers, mut ring) = (self.read(), self.ring());
        let mut s = self.sampler.lock().unwrap_or_else(PoisonError::into_inner);
        for l in &mut layers {
            l.timed_one_in = one_in(s.now.shift);
        }
        if let Some(r) = &mut ring {
            r.timed_one_in = one_in(s.now.ring_shift);
        }
        let requests = layers.iter().map(|l| l.read.requests + l.write.requests);
        let ring_requests = ring.as_ref().map_or(0, |r| r.read.count + r.write.count);
        s.adapt(requests.sum(), ring_requests);
        Reading {
            layers,
            ring,
            others,
        }
    }

    /// Other processes' bios since the previous call, the busiest first (at most
    /// [`ORIGINS`]); none without attribution.
    fn others(&self) -> Vec<Origin> {
        if !self.attributed {
            return Vec::new();
        }
        let Some(map) = self
            .ebpf
            .map("others")
            .and_then(|m| HashMap::<&MapData, u32, maps::Origin>::try_from(m).ok())
        else {
            return Vec::new();
        };
        let now: std::collections::HashMap<u32, maps::Origin> = map.iter().flatten().collect();
        let mut before = self.origins.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh: Vec<Origin> = now
            .iter()
            .filter_map(|(pid, o)| {
                let b = before.get(pid).filter(|b| b.comm == o.comm).copied();
                let b = b.unwrap_or_default();
                let bios = o.bios.saturating_sub(b.bios);
                (bios > 0).then(|| Origin {
                    pid: *pid,
                    comm: o.name(),
                    bios,
                    bytes: o.bytes.saturating_sub(b.bytes),
                    writeback: o.writeback.saturating_sub(b.writeback),
                })
            })
            .collect();
        *before = now;
        let mut out = merge_origins(&fresh);
        out.truncate(ORIGINS);
        out
    }

    /// The traced process's io_uring reads and writes (this one's, unless
    /// [`Tracer::start_for`]) since the tracer started: the kernel's whole time for each,
    /// submit to completion. `None` when the kernel has no io_uring
    /// tracepoints or the maps cannot be read.
    pub fn ring(&self) -> Option<RingCounters> {
        if !self.ring {
            return None;
        }
        let counts =
            PerCpuArray::<&MapData, RingCount>::try_from(self.ebpf.map("ring_counters")?).ok()?;
        let hists = PerCpuArray::<&MapData, Hist>::try_from(self.ebpf.map("ring_hists")?).ok()?;
        let dir = |d: u32| {
            let c = maps::sum_ring(&counts.get(&d, 0).ok()?);
            let h = maps::sum_hists(&hists.get(&d, 0).ok()?);
            Some(maps::ring_hist(c, &h))
        };
        Some(RingCounters {
            read: dir(0)?,
            write: dir(1)?,
            timed_one_in: None,
        })
    }

    /// The disks' counters since the tracer started: a few map reads per disk, cheap enough
    /// for every interval. A map that cannot be read gives that disk's counters as zero
    /// rather than stopping the run's sampling.
    pub fn read(&self) -> Vec<LayerCounters> {
        let counters = self
            .ebpf
            .map("counters")
            .and_then(|m| PerCpuArray::<&MapData, Counters>::try_from(m).ok());
        let hists = self
            .ebpf
            .map("hists")
            .and_then(|m| PerCpuArray::<&MapData, Hist>::try_from(m).ok());
        let ours = self.attributed.then(|| {
            let c = self
                .ebpf
                .map("ours_counters")
                .and_then(|m| PerCpuArray::<&MapData, Counters>::try_from(m).ok());
            let h = self
                .ebpf
                .map("ours_hists")
                .and_then(|m| PerCpuArray::<&MapData, Hist>::try_from(m).ok());
            (c, h)
        });
        self.disks
            .iter()
            .enumerate()
            .map(|(slot, d)| {
                let i = |dir: u32| slot as u32 * DIRECTIONS + dir;
                let (read, write) = (
                    dir_counters(counters.as_ref(), hists.as_ref(), i(0)),
                    dir_counters(counters.as_ref(), hists.as_ref(), i(1)),
                );
                let ours = ours.as_ref().map(|(c, h)| {
                    Box::new(JobCounters {
                        read: dir_counters(c.as_ref(), h.as_ref(), i(0)).0,
                        write: dir_counters(c.as_ref(), h.as_ref(), i(1)).0,
                    })
                });
                LayerCounters {
                    name: d.name.clone(),
                    major: d.major,
                    minor: d.minor,
                    nr_requests: d.nr_requests,
                    requeues: read.1 + write.1,
                    read: read.0,
                    write: write.0,
                    timed_one_in: None,
                    ours,
                }
            })
            .collect()
    }
}

/// One direction's counters (index `i`) from a counters map and a histograms map, and its
/// requeues; a map that cannot be read gives zeros (empty histograms).
fn dir_counters(
    counters: Option<&PerCpuArray<&MapData, Counters>>,
    hists: Option<&PerCpuArray<&MapData, Hist>>,
    i: u32,
) -> (iogauge_model::layers::StageCounters, u64) {
    let c = counters
        .and_then(|a| a.get(&i, 0).ok())
        .map(|v| maps::sum_counters(&v));
    let h: Vec<Option<Hist>> = (0..STAGES)
        .map(|s| {
            hists
                .and_then(|a| a.get(&(i * STAGES + s), 0).ok())
                .map(|v: PerCpuValues<Hist>| maps::sum_hists(&v))
        })
        .collect();
    maps::stage_counters(c.unwrap_or_default(), &h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_numbers_parse_as_sysfs_writes_them() {
        assert_eq!(parse_dev("253:0\n"), Some((253, 0)));
        assert_eq!(parse_dev("7:3"), Some((7, 3)));
        assert_eq!(parse_dev("253"), None);
        assert_eq!(parse_dev("a:b"), None);
        let d = Disk {
            name: "loop3".into(),
            major: 7,
            minor: 3,
            nr_requests: None,
        };
        assert_eq!(d.dev_t(), 7 << 20 | 3);
    }

    #[test]
    fn a_disk_that_is_not_there_is_an_error_not_a_panic() {
        let e = Disk::named("no-such-disk").unwrap_err().to_string();
        assert!(
            e.starts_with("block device no-such-disk: /sys/block/no-such-disk/dev"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn the_timed_share_keeps_timed_requests_under_the_budget() {
        assert_eq!(shift_for(0.0), 0);
        assert_eq!(shift_for(TIMED_PER_S), 0);
        assert_eq!(shift_for(TIMED_PER_S + 1.0), 1);
        assert_eq!(shift_for(50_000.0), 4);
        for rate in [5_000.0, 50_000.0, 1e6, 1e7] {
            let s = shift_for(rate);
            assert!(rate / f64::from(1u32 << s) <= TIMED_PER_S, "{rate}");
            assert!(rate / f64::from(1u32 << (s - 1)) > TIMED_PER_S, "{rate}");
        }
        assert_eq!(shift_for(1e12), 20);
        assert_eq!((one_in(0), one_in(3)), (None, Some(8)));
    }

    #[test]
    fn errors_are_one_line() {
        let e = std::io::Error::other("verifier says\nline 1\n\nR1 invalid mem access\n");
        assert_eq!(one_line(&e), "verifier says … line 1 R1 invalid mem access");
    }
}
