//! `iogauge run`'s flags checked as a whole and turned into plain data: a `JobSpec` and the
//! targets. Every error names the flag and the way out.

use super::args::RunArgs;
use crate::target::options::{io_setup, Targets};
use crate::usage::{check_interval, check_time, usage, UsageError};
use iogauge_model::spec::{JobSpec, Like, LogStream, RwMode};
use iogauge_model::units::fmt_size;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug)]
pub struct RunOptions {
    pub spec: JobSpec,
    pub targets: Targets,
    /// `--log-target`: the log writer's own target (`None`: none, or at the end of the first).
    pub log_target: Option<Targets>,
    pub json: bool,
    /// Trace the block layer beside the sampler (not `--no-trace`).
    pub trace: bool,
    pub store: Option<PathBuf>,
    /// `--label`, checked.
    pub label: Option<String>,
    /// `--shared-offsets` (over MPI ranks; read by the MPI build only).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub shared_offsets: bool,
    /// `--keep-rank-series` (over MPI ranks).
    pub keep_rank_series: bool,
}

impl RunOptions {
    pub fn from_args(a: RunArgs) -> Result<RunOptions, UsageError> {
        let mut spec = JobSpec::new(a.rw);
        if let (Some(p), None) = (a.read_pct, a.like) {
            if a.rw != RwMode::RandRw {
                return usage(format!(
                    "--read-pct applies to --rw randrw only (got --rw {})",
                    a.rw
                ));
            }
            spec.read_pct = p;
        }
        spec.bs = a.bs;
        spec.qd = a.qd;
        if let Some(id) = a.like {
            let like = like(id, a.result.store.store.as_deref())?;
            let (rw, read_pct, bs, qd) = like.shape.job();
            (spec.rw, spec.read_pct, spec.qd) = (rw, read_pct, qd);
            spec.bs = iogauge_model::spec::BlockSplit::single(bs);
            spec.rate_iops = like.shape.minor_data_rate();
            spec.like = Some(like);
        }
        spec.workers = a.workers;
        spec.time = match (a.time, a.ios) {
            (Some(t), _) => Some(check_time(t)?),
            (None, Some(_)) => None,
            (None, None) => Some(Duration::from_secs(10)),
        };
        spec.ios = a.ios;
        spec.ramp = a.ramp;
        spec.rate_iops = a.rate_iops.or(spec.rate_iops);
        spec.dist = a.dist;
        spec.interval = check_interval(a.interval)?;
        if let Some(criterion) = a.steady {
            if a.steady_window < a.interval * 2 {
                return usage(format!(
                    "--steady-window must hold at least two intervals of {:?} (a slope needs two points); raise it or lower --interval",
                    a.interval
                ));
            }
            if a.steady_timeout <= a.steady_window.max(a.ramp) {
                return usage(
                    "--steady-timeout must be longer than --steady-window and --ramp; raise it, e.g. --steady-timeout 2m",
                );
            }
            spec.steady = Some(iogauge_model::spec::SteadyWait {
                criterion,
                window: a.steady_window,
                timeout: a.steady_timeout,
            });
        }
        spec.set_setup(io_setup(&a.io)?);
        if !spec.rw.is_random() && spec.dist != iogauge_model::spec::Dist::Uniform {
            return usage(format!(
                "--dist applies to random modes only (got --rw {})",
                spec.rw
            ));
        }
        if let Some(size) = a.io.size {
            if size < spec.bs.max() {
                return usage(format!(
                    "--size {} is smaller than the block size {}; use a larger --size",
                    fmt_size(size),
                    fmt_size(spec.bs.max())
                ));
            }
        }
        for (given, flag) in [
            (a.shared_offsets, "--shared-offsets"),
            (a.keep_rank_series, "--keep-rank-series"),
        ] {
            if given && iogauge_session::ranks::launched().is_none() {
                return usage(format!(
                    "{flag} applies to a job over MPI ranks (mpirun -np N iogauge run ...); drop it"
                ));
            }
        }
        spec.log = super::log::stream(&a.log, &a.io, &spec)?;
        // The log at the end of the first target writes there, whatever the job does.
        let in_first = spec.log.as_ref().is_some_and(LogStream::in_first_target);
        let allow_overwrite = a.io.allow_overwrite;
        let targets = Targets::from_args(a.io, spec.direct, spec.rw.writes() || in_first)?;
        let log_target =
            super::log::target(spec.log.as_ref(), &targets, spec.direct, allow_overwrite)?;
        // Before anything is created: a region, layout or hot range the targets cannot hold
        // is said now, not after a 1 GiB scratch file was made and pre-filled for it.
        iogauge_engine::check_planned(&spec, &targets.specs)
            .map_err(|e| UsageError(e.to_string()))?;
        Ok(RunOptions {
            targets,
            log_target,
            spec,
            json: a.result.json,
            trace: !a.result.no_trace,
            store: a.result.store.store,
            label: a.result.label.checked()?,
            shared_offsets: a.shared_offsets,
            keep_rank_series: a.keep_rank_series,
        })
    }
}

/// The shape of stored db run `id`'s device I/O ([`iogauge_model::db::shape`]).
fn like(id: i64, store: Option<&std::path::Path>) -> Result<Like, UsageError> {
    let flag = format!("--like {id}");
    let store = iogauge_store::Store::open_reader_resolved(store)
        .map_err(|e| UsageError(format!("{flag}: {e}")))?;
    let run = store
        .get(id)
        .map_err(|e| UsageError(format!("{flag}: {e}")))?
        .ok_or_else(|| {
            UsageError(format!(
                "{flag}: no run {id} in {}; `iogauge history` lists the stored runs",
                store.path().display()
            ))
        })?;
    let iogauge_model::Document::DbRun(db) = &run.document else {
        return usage(format!(
            "{flag}: run {id} is a {}, not a db run; give a db run's id from `iogauge history`",
            run.row.kind
        ));
    };
    let shape = db.device_shape().ok_or_else(|| {
        UsageError(format!(
            "{flag}: db run {id} has no device figures of its data disks (a server by --dsn, or storage iogauge could not resolve), so there is no shape to replay; give --rw, --bs and --qd"
        ))
    })?;
    // A stored document is read back as it is: a damaged or edited one (-5 reads/s) is
    // refused, not replayed.
    shape.check().map_err(|why| {
        UsageError(format!(
            "{flag}: db run {id}'s stored device figures are out of range (its shape's {why}); the document in {} is damaged or was edited: run the db run again",
            store.path().display()
        ))
    })?;
    Ok(Like {
        run: id,
        shape,
        engine: db.server.engine,
    })
}
