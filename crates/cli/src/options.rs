//! Validated options: the raw command line checked as a whole and turned into plain data
//! (a `JobSpec` and target specs). Every error names the flag and the way out.

use crate::args::RunArgs;
use iogauge_engine::spec::fmt_size;
use iogauge_engine::{Access, JobSpec, RwMode, TargetSpec};
use std::path::PathBuf;
use std::time::Duration;

/// Where `iogauge run` works when no --target is given, and the size it creates there.
pub const SCRATCH_DIR: &str = "iogauge-scratch";
pub const SCRATCH_SIZE: u64 = 1 << 30;

/// A command line that cannot work as written (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

#[derive(Debug)]
pub struct RunOptions {
    pub spec: JobSpec,
    pub targets: Vec<TargetSpec>,
    pub access: Access,
    /// The default scratch target is used: its directory may be created.
    pub scratch: bool,
    pub json: bool,
}

impl RunOptions {
    pub fn from_args(a: RunArgs) -> Result<RunOptions, UsageError> {
        let mut spec = JobSpec::new(a.rw);
        if let Some(p) = a.read_pct {
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
        spec.workers = a.workers;
        spec.time = match (a.time, a.ios) {
            (Some(t), _) if t.is_zero() => {
                return usage("--time must be above 0, as in --time 30s")
            }
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) => Some(Duration::from_secs(10)),
        };
        spec.ios = a.ios;
        spec.ramp = a.ramp;
        spec.rate_iops = a.rate_iops;
        spec.region = a.region;
        spec.dist = a.dist;
        spec.engine = a.engine;
        spec.direct = !a.buffered;
        if a.interval < Duration::from_millis(100) || a.interval > Duration::from_secs(3600) {
            return usage("--interval must be between 100ms and 1h");
        }
        spec.interval = a.interval;
        if let Some(s) = a.seed {
            spec.seed = s;
        }
        if !spec.rw.is_random() && spec.dist != iogauge_engine::spec::Dist::Uniform {
            return usage(format!(
                "--dist applies to random modes only (got --rw {})",
                spec.rw
            ));
        }
        if let Some(size) = a.size {
            if size < spec.bs.max() {
                return usage(format!(
                    "--size {} is smaller than the block size {}; use a larger --size",
                    fmt_size(size),
                    fmt_size(spec.bs.max())
                ));
            }
        }
        let scratch = a.targets.is_empty();
        let targets = if scratch {
            vec![TargetSpec {
                path: PathBuf::from(SCRATCH_DIR).join("data"),
                size: Some(a.size.unwrap_or(SCRATCH_SIZE)),
            }]
        } else {
            let mut seen = std::collections::HashSet::new();
            for t in &a.targets {
                if t.as_os_str().is_empty() {
                    return usage("--target is empty; pass a file or device path");
                }
                if !seen.insert(t) {
                    return usage(format!("--target {} is given twice", t.display()));
                }
            }
            a.targets
                .into_iter()
                .map(|path| TargetSpec { path, size: a.size })
                .collect()
        };
        Ok(RunOptions {
            access: Access {
                direct: spec.direct,
                write: spec.rw.writes(),
                allow_overwrite: a.allow_overwrite,
            },
            spec,
            targets,
            scratch,
            json: a.json,
        })
    }
}
