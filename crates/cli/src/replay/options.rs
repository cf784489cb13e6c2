//! `iogauge replay`'s flags checked as a whole: the trace opened and read through (a missing
//! or damaged one is said before any target is touched), the job built from it, the targets.

use super::args::{PaceArg, ReplayArgs};
use crate::target::options::{io_setup, Targets};
use crate::usage::{check_interval, usage, UsageError};
use iogauge_model::spec::{JobSpec, Pace, Region, RwMode};
use iogauge_session::measure::replay::{job_of, recorded_depth};
use iogauge_session::traces::{Trace, TraceSource};
use std::path::PathBuf;

pub struct ReplayOptions {
    pub spec: JobSpec,
    pub trace: Trace,
    pub targets: Targets,
    pub json: bool,
    pub trace_layers: bool,
    pub store: Option<PathBuf>,
    pub label: Option<String>,
}

impl ReplayOptions {
    pub fn from_args(a: ReplayArgs) -> Result<ReplayOptions, UsageError> {
        if a.io.region != Region::default() {
            return usage("--region does not apply to a replay: its offsets are the recorded ones, mapped onto the whole target (--map); drop --region");
        }
        let pace = match (a.pace, a.speed, a.depth) {
            (PaceArg::Timed, _, Some(_)) => {
                return usage("--depth applies to --pace fast; a timed replay issues each request at its time, however many are in flight")
            }
            (PaceArg::Fast, Some(_), _) => {
                return usage("--speed applies to --pace timed; a fast replay goes as fast as the target allows")
            }
            (PaceArg::Timed, speed, None) => {
                let speed = speed.unwrap_or(1.0);
                if !(speed.is_finite() && (0.01..=1000.0).contains(&speed)) {
                    return usage(format!("--speed {speed}: give a factor from 0.01 to 1000 (2: twice as fast as recorded)"));
                }
                Pace::Timed { speed }
            }
            // The depth is the recorded one unless told: set once the trace is read.
            (PaceArg::Fast, None, depth) => Pace::Fast {
                depth: depth.unwrap_or(0),
            },
        };
        let source = source(&a.trace, a.result.store.store.as_deref())?;
        let trace =
            Trace::open(source).map_err(|e| UsageError(format!("TRACE {}: {e:#}", a.trace)))?;
        let pace = match pace {
            Pace::Fast { depth: 0 } => Pace::Fast {
                depth: recorded_depth(&trace),
            },
            p => p,
        };
        let mut base = JobSpec::new(RwMode::RandRw);
        base.set_setup(io_setup(&a.io)?);
        base.interval = check_interval(a.interval)?;
        let spec = job_of(&trace, base, pace, a.map.into())
            .map_err(|e| UsageError(format!("TRACE {}: {e}", a.trace)))?;
        let writes = trace.summary.writes > 0;
        let targets = Targets::from_args(a.io, spec.direct, writes)?;
        Ok(ReplayOptions {
            spec,
            trace,
            targets,
            json: a.result.json,
            trace_layers: !a.result.no_trace,
            store: a.result.store.store,
            label: a.result.label.checked()?,
        })
    }
}

/// A stored trace's id (digits) or a file that exists.
fn source(given: &str, store: Option<&std::path::Path>) -> Result<TraceSource, UsageError> {
    if let Ok(id) = given.parse::<i64>() {
        let s = iogauge_store::Store::open_reader_resolved(store)
            .map_err(|e| UsageError(format!("TRACE {given}: {e}")))?;
        return Ok(TraceSource::Stored {
            store: s.path().to_path_buf(),
            id,
        });
    }
    let path = PathBuf::from(given);
    if !path.is_file() {
        return usage(format!(
            "TRACE {given}: neither a stored trace's id (`iogauge traces` lists them) nor a file"
        ));
    }
    Ok(TraceSource::File(path))
}
