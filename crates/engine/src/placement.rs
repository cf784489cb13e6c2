//! Where a job's I/Os land: the targets' regions laid out as one logical space (concat), the
//! checks that the space holds the largest block and the `--dist` hot range, and under
//! `--layout` the mapping onto members with the per-member throttle.

use crate::error::EngineError;
use crate::offsets::{check_fits, Extent, Space};
use crate::target::{Target, TargetSpec};
use iogauge_model::spec::{fmt_size, EngineKind, JobSpec};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// What placing a job's I/Os needs of a target: where it is and the bytes it has. An opened
/// [`Target`], or a [`Planned`] one before anything is opened or created.
pub trait Member {
    fn path(&self) -> &Path;
    fn size(&self) -> u64;
}

impl Member for Target {
    fn path(&self) -> &Path {
        &self.info.path
    }
    fn size(&self) -> u64 {
        self.info.size
    }
}

/// A target as it will be: its path, and the bytes it has or will be created with.
#[derive(Clone, Debug)]
pub struct Planned {
    pub path: PathBuf,
    pub size: u64,
}

impl Member for Planned {
    fn path(&self) -> &Path {
        &self.path
    }
    fn size(&self) -> u64 {
        self.size
    }
}

/// The checks of [`layout`] and [`placement`] on the targets as they will be, before any is
/// created or pre-filled: a `--region`, `--layout` or `--dist` that cannot work is said
/// before a 1 GiB scratch file is made for it. Targets whose size cannot be known yet (a
/// missing file without `--size`) leave the checks to the opened targets.
pub fn check_planned(spec: &JobSpec, targets: &[TargetSpec]) -> Result<(), EngineError> {
    let Some(planned) = targets
        .iter()
        .map(|t| {
            crate::target::planned_size(t).map(|size| Planned {
                path: t.path.clone(),
                size,
            })
        })
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(());
    };
    match spec.layout {
        Some(_) => placement(spec, &planned).map(drop),
        None => layout(spec, &planned).map(drop),
    }
}

/// Lays the targets' regions out as the logical space (concat), checking each region is
/// inside its target and holds the largest block.
pub fn layout<M: Member>(spec: &JobSpec, targets: &[M]) -> Result<Space, EngineError> {
    let align = spec.align();
    let mut extents = Vec::with_capacity(targets.len());
    for (i, t) in targets.iter().enumerate() {
        let size = data_size(spec, i, t)?;
        if size < spec.bs.max() {
            return Err(EngineError::Region {
                path: t.path().to_path_buf(),
                why: format!(
                    "its {} bytes are smaller than the block size {}; use a larger target or a smaller --bs",
                    t.size(),
                    fmt_size(spec.bs.max())
                ),
            });
        }
        let (start, end) = spec.region.resolve(size, align).ok_or_else(|| EngineError::Region {
            path: t.path().to_path_buf(),
            why: format!(
                "--region {} lies outside its {size} bytes (or holds no aligned block); pick a region inside the target",
                spec.region
            ),
        })?;
        extents.push(Extent {
            target: i as u32,
            start,
            len: end - start,
        });
    }
    let space = Space::new(extents);
    check_fits(&space, spec.bs.max()).map_err(|e| EngineError::Region {
        path: targets[e.target as usize].path().to_path_buf(),
        why: format!(
            "the tested span ({} bytes of --region {}) is smaller than the block size {}; use a larger --size or region",
            e.len,
            spec.region,
            fmt_size(spec.bs.max())
        ),
    })?;
    check_dist(spec, space.total(), targets.len())?;
    Ok(space)
}

/// Bytes of target `i` the job's region is taken from: all of it, but for the log writer's
/// region at the end of the first target (`--log-bs` without `--log-target`), which must
/// leave room for one block of the job.
fn data_size<M: Member>(spec: &JobSpec, i: usize, t: &M) -> Result<u64, EngineError> {
    let Some(log) = &spec.log else {
        return Ok(t.size());
    };
    if i == 0 && log.in_first_target() && t.size() < log.size.saturating_add(spec.bs.max()) {
        return Err(EngineError::Region {
            path: t.path().to_path_buf(),
            why: format!(
                "its {} cannot hold the log writer's --log-size {} at its end and a --bs {} block of the job before it; use a larger target, a smaller --log-size, or --log-target",
                fmt_size(t.size()),
                fmt_size(log.size),
                fmt_size(spec.bs.max())
            ),
        });
    }
    Ok(log.data_size(i, t.size()))
}

/// `--dist hotspot:SIZE@OFFSET:EVERY` must lie inside the span the offsets are drawn from
/// (the regions of all targets, laid end to end); past it the generator silently clamped
/// the hot range onto other blocks.
pub(crate) fn check_dist(spec: &JobSpec, span: u64, targets: usize) -> Result<(), EngineError> {
    let iogauge_model::spec::Dist::Hotspot {
        size,
        offset,
        every,
    } = spec.dist
    else {
        return Ok(());
    };
    if offset.checked_add(size).is_some_and(|end| end <= span) {
        return Ok(());
    }
    Err(EngineError::Unsupported(format!(
        "--dist hotspot:{}@{}:{every}: the hot range {}..{} ends past the tested span, {} (--region {} of {targets} target(s)); put it inside: OFFSET + SIZE <= {}",
        fmt_size(size),
        fmt_size(offset),
        fmt_size(offset),
        offset.checked_add(size).map_or_else(|| "2^64".into(), fmt_size),
        fmt_size(span),
        spec.region,
        fmt_size(span)
    )))
}

/// A layout over the targets' regions, ready for the workers: the mapping, where each
/// member's region starts, and the optional per-member throttle.
#[derive(Debug)]
pub struct Placement {
    pub layout: crate::layout::Layout,
    pub starts: Vec<u64>,
    pub throttle: Option<Throttle>,
}

/// `--member-iops`: one token bucket per member, shared by every worker, kept as GCRA's
/// theoretical arrival time (ns from t0): a member I/O may start at its reservation, which
/// moves the member's next free time one period on. A member may bank up to `BURST` of
/// idle time, so one member's backlog holding up the workers (they issue in order) does not
/// cost the others their rate; over a window the rate still holds within BURST's worth.
#[derive(Debug)]
pub struct Throttle {
    period_ns: u64,
    tat: Vec<std::sync::atomic::AtomicU64>,
}

/// How much idle time a throttled member may bank.
const BURST_NS: u64 = 50_000_000;

impl Throttle {
    pub fn new(members: usize, iops: u64) -> Self {
        Throttle {
            period_ns: 1_000_000_000 / iops.max(1),
            tat: (0..members)
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect(),
        }
    }

    /// Reserves one I/O on `member` at or after `now_ns`; returns when it may start.
    #[inline]
    pub fn reserve(&self, member: usize, now_ns: u64) -> u64 {
        let t = &self.tat[member];
        let mut cur = t.load(Ordering::Relaxed);
        loop {
            let start = cur.max(now_ns.saturating_sub(BURST_NS));
            match t.compare_exchange_weak(
                cur,
                start + self.period_ns,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return start,
                Err(seen) => cur = seen,
            }
        }
    }
}

/// The space a job's offsets are drawn in: under `--layout` the layout's logical space (the
/// workers map each offset onto its members), else the targets' regions ([`layout`]).
pub fn offset_space(
    spec: &JobSpec,
    targets: &[Target],
    placement: Option<&Placement>,
) -> Result<Space, EngineError> {
    match placement {
        Some(p) => Ok(Space::new(vec![Extent {
            target: 0,
            start: 0,
            len: p.layout.logical_size(),
        }])),
        None => layout(spec, targets),
    }
}

/// Builds the job's layout over the targets' regions, or `None` without `--layout`.
pub fn placement<M: Member>(
    spec: &JobSpec,
    targets: &[M],
) -> Result<Option<Placement>, EngineError> {
    let Some(opts) = &spec.layout else {
        return Ok(None);
    };
    if spec.engine != EngineKind::IoUring {
        return Err(EngineError::Layout(
            "layouts run on --engine io_uring only; drop --engine psync".into(),
        ));
    }
    let space = layout(spec, targets)?;
    let (starts, sizes): (Vec<u64>, Vec<u64>) =
        space.extents().iter().map(|e| (e.start, e.len)).unzip();
    let names: Vec<String> = targets
        .iter()
        .map(|t| t.path().display().to_string())
        .collect();
    let groups = opts
        .failgroups
        .as_ref()
        .map(|g| g.resolve(&names))
        .transpose()
        .map_err(EngineError::Layout)?;
    let degraded = opts
        .degraded
        .iter()
        .map(|d| iogauge_model::layout::target_index(&names, d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| EngineError::Layout(format!("--degraded: {e}")))?;
    let layout = crate::layout::Layout::new(opts.spec, &sizes, groups, &degraded, spec.align())
        .map_err(|e| EngineError::Layout(e.to_string()))?
        .with_read_from(opts.read_from);
    check_dist(spec, layout.logical_size(), targets.len())?;
    if layout.logical_size() < spec.bs.max() {
        return Err(EngineError::Layout(format!(
            "{} over these targets holds {} bytes, less than the block size {}; use larger targets",
            opts.spec,
            layout.logical_size(),
            fmt_size(spec.bs.max())
        )));
    }
    let throttle = opts.member_iops.map(|n| Throttle::new(targets.len(), n));
    Ok(Some(Placement {
        layout,
        starts,
        throttle,
    }))
}
