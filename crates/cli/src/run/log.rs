//! `run --log-bs` and its companions checked into the job's [`LogStream`], and the log's own
//! target (`--log-target`) opened the way the job's targets are: created at `--log-size`
//! when missing, an existing file or device only when handed over. Every error names the
//! flag and the way out.

use super::args::LogArgs;
use crate::target::args::TargetArgs;
use crate::target::options::{same_target, Targets, SCRATCH_SIZE};
use crate::usage::{usage, UsageError};
use iogauge_engine::{Access, TargetSpec};
use iogauge_model::spec::{fmt_size, JobSpec, LogStream, DEFAULT_LOG_SIZE, LOG_ALIGN};

/// The log stream `a` asks for beside `spec`'s job (its block sizes and layout set) on the
/// targets of `io`, or `None` without `--log-bs`. Under `--like` a db run that wrote WAL
/// gives the size (its mean WAL write) when `--log-bs` does not; one that wrote none gives
/// no log writer, and the other `--log-*` flags then go unused. A `--log-target` that is the
/// job's first target puts the log at its end, as leaving it out does.
pub fn stream(
    a: &LogArgs,
    io: &TargetArgs,
    spec: &JobSpec,
) -> Result<Option<LogStream>, UsageError> {
    let like = spec.like.as_ref();
    let from_like = like.and_then(|l| l.shape.log.as_ref()).map(|l| l.bs());
    let Some(bs) = a.log_bs.map(|b| b.bytes()).or(from_like) else {
        let given = a.log_target.is_some() || a.log_size.is_some() || a.log_rate.is_some();
        if let (Some(l), true) = (like, given) {
            eprintln!(
                "note: db run {} made no updates (read-only), so there is no WAL stream to replay; the --log-* flags are unused",
                l.run
            );
        } else if given {
            return usage(
                "--log-target, --log-size and --log-rate shape the log writer: add --log-bs SIZE (or --like a db run that wrote WAL)",
            );
        }
        return Ok(None);
    };
    let in_first = a
        .log_target
        .as_deref()
        .zip(io.targets.first())
        .is_some_and(|(l, t)| same_target(l, t));
    let size = a.log_size.unwrap_or(DEFAULT_LOG_SIZE);
    if size == 0 || !size.is_multiple_of(LOG_ALIGN) {
        return usage(format!(
            "--log-size {size} must be a non-zero multiple of 4k (the log's start in its target is aligned to it), e.g. --log-size 64m"
        ));
    }
    if size < bs {
        return usage(format!(
            "--log-size {} is smaller than --log-bs {}; raise --log-size",
            fmt_size(size),
            fmt_size(bs)
        ));
    }
    let log = LogStream {
        bs,
        target: a.log_target.clone().filter(|_| !in_first),
        size,
        rate: a.log_rate.or(like.and_then(|l| l.shape.log_rate())),
    };
    if log.in_first_target() {
        if spec.layout.is_some() {
            return usage(
                "--log-bs without --log-target puts the log at the end of the first target, which --layout spreads the job over; give the log its own --log-target",
            );
        }
        // The size of the first target when it is known now (a file iogauge creates).
        let first = io.size.or(io.targets.is_empty().then_some(SCRATCH_SIZE));
        if let Some(have) = first.filter(|&t| t < size.saturating_add(spec.bs.max())) {
            return usage(format!(
                "--log-size {} does not fit in the target's {} beside the job (the log takes its last --log-size bytes, the job needs a --bs {} block before them); raise --size, lower --log-size or give --log-target",
                fmt_size(size),
                fmt_size(have),
                fmt_size(spec.bs.max())
            ));
        }
    }
    Ok(Some(log))
}

/// The log's own target (`--log-target`), opened for writing as `targets` are (O_DIRECT
/// when `direct`, handed over by `--allow-overwrite` when it exists); never one of them.
pub fn target(
    log: Option<&LogStream>,
    targets: &Targets,
    direct: bool,
    allow_overwrite: bool,
) -> Result<Option<Targets>, UsageError> {
    let Some((path, size)) = log.and_then(|l| Some((l.target.as_ref()?, l.size))) else {
        return Ok(None);
    };
    if path.as_os_str().is_empty() {
        return usage("--log-target is empty; pass a file or device path");
    }
    if let Some(t) = targets.specs.iter().find(|t| same_target(&t.path, path)) {
        return usage(format!(
            "--log-target {} is the job's target {}; give the log a file or device of its own, or give the first --target (or no --log-target) to put it at that target's end",
            path.display(),
            t.path.display()
        ));
    }
    Ok(Some(Targets {
        specs: vec![TargetSpec {
            path: path.clone(),
            size: Some(size),
        }],
        access: Access {
            direct,
            write: true,
            allow_overwrite,
        },
        scratch: false,
    }))
}
