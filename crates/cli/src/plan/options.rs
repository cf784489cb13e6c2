//! `iogauge plan`'s flags checked as a whole into what to plan, the model, where the per-disk
//! figures come from and the layout. Every bad combination is a usage error naming the flag
//! and the fix.

use super::args::PlanArgs;
use crate::usage::{usage, UsageError};
use iogauge_plan::{Columns, Disk, Iops, Layout, MiBps, Model, Redundancy, Workload};
use std::path::PathBuf;

/// What to plan.
#[derive(Debug)]
pub enum Mode {
    Size(Workload),
    History {
        path: PathBuf,
        columns: Columns,
        percentile: f64,
    },
    /// Reverse: what `Layout::disks` disks serve at this read share.
    Capacity {
        read_share: f64,
    },
}

/// Where the per-disk figures come from.
#[derive(Debug)]
pub enum DiskSource {
    Given { disk: Disk, source: String },
    Run(i64),
}

/// `iogauge plan`'s flags, checked as a whole.
#[derive(Debug)]
pub struct PlanOptions {
    pub mode: Mode,
    pub model: Model,
    pub disk: DiskSource,
    pub layout: Layout,
    pub json: bool,
    pub store: Option<PathBuf>,
}

impl PlanOptions {
    pub fn from_args(a: PlanArgs) -> Result<PlanOptions, UsageError> {
        let mode = mode(&a)?;
        let redundancy = match (a.redundancy, a.write_penalty) {
            (Some(_), Some(_)) => {
                return usage("--redundancy and --write-penalty both set the write penalty; use one")
            }
            (Some(r), None) => r,
            (None, Some(p)) => Redundancy::custom(p)
                .map_err(|e| UsageError(format!("--write-penalty {p}: {e}")))?,
            (None, None) => return usage(
                "say how the data is protected: --redundancy none|mirror|normal|high|raid5|raid6, or --write-penalty N",
            ),
        };
        let disk = disk_source(&a)?;
        let wants_mbps = matches!(mode, Mode::Size(w) if w.read_mbps.is_some());
        if let DiskSource::Given { disk, .. } = &disk {
            if wants_mbps && disk.mbps.is_none() {
                return usage(
                    "--mbps needs the MB/s of one disk: add --disk-mbps N, or use --disk-profile or --from-run",
                );
            }
        }
        Ok(PlanOptions {
            mode,
            model: Model {
                redundancy,
                read_cache_hit: a.read_cache_hit / 100.0,
                target_util: a.target_util / 100.0,
            },
            disk,
            layout: Layout {
                per_enclosure: a.per_enclosure,
                disks: a.disks,
            },
            json: a.json,
            store: a.store.store,
        })
    }
}

fn mode(a: &PlanArgs) -> Result<Mode, UsageError> {
    if a.history.is_none() {
        if a.percentile.is_some() {
            return usage("--percentile applies to --history only; add --history FILE");
        }
        if !a.columns.is_empty() {
            return usage("--columns applies to --history only; add --history FILE");
        }
    }
    match (a.iops, &a.history) {
        (Some(_), Some(_)) => usage("--iops and --history both give the workload; use one"),
        (None, Some(path)) => {
            if a.read_pct.is_some() {
                return usage("--read-pct does not apply to --history: each row has its own read and write IOPS");
            }
            if a.mbps.is_some() {
                return usage("--mbps does not apply to --history: give MB/s in its read_mbps and write_mbps columns");
            }
            let mut columns = Columns::default();
            for pair in &a.columns {
                columns
                    .set(pair)
                    .map_err(|e| UsageError(format!("--columns {pair}: {e}")))?;
            }
            Ok(Mode::History {
                path: path.clone(),
                columns,
                percentile: a.percentile.unwrap_or(95.0),
            })
        }
        (Some(iops), None) => {
            let Some(r) = a.read_pct else {
                return usage(
                    "--iops needs the workload's read share: add --read-pct P (0 for writes only)",
                );
            };
            Ok(Mode::Size(Workload::mix(iops, r / 100.0, a.mbps)))
        }
        (None, None) => {
            if a.mbps.is_some() {
                return usage("--mbps goes with the workload's --iops; add --iops N");
            }
            if a.disks.is_none() {
                return usage("say what to plan: --iops N --read-pct P, --history FILE, or --disks N --read-pct P for what disks can serve");
            }
            let Some(r) = a.read_pct else {
                return usage("--disks alone asks what the disks serve, at a read share: add --read-pct P (0 for writes only)");
            };
            Ok(Mode::Capacity {
                read_share: r / 100.0,
            })
        }
    }
}

fn disk_source(a: &PlanArgs) -> Result<DiskSource, UsageError> {
    let given = [
        a.disk_iops.is_some(),
        a.disk_profile.is_some(),
        a.from_run.is_some(),
    ];
    match given.iter().filter(|g| **g).count() {
        0 => return usage(
            "say what one disk does: --disk-iops N, --disk-profile 7.2k|10k|15k|sata-ssd|nvme, or --from-run ID of a calibration",
        ),
        1 => {}
        _ => return usage(
            "--disk-iops, --disk-profile and --from-run each give the per-disk figures; use one",
        ),
    }
    if a.disk_mbps.is_some() && a.disk_iops.is_none() {
        return usage(
            "--disk-mbps goes with --disk-iops; --disk-profile and --from-run give their own MB/s",
        );
    }
    Ok(match (a.disk_iops, a.disk_profile, a.from_run) {
        (Some(iops), _, _) => DiskSource::Given {
            disk: Disk {
                iops: Iops(iops),
                mbps: a.disk_mbps.map(MiBps),
            },
            source: if a.disk_mbps.is_some() {
                "--disk-iops, --disk-mbps".into()
            } else {
                "--disk-iops".into()
            },
        },
        (_, Some(p), _) => DiskSource::Given {
            disk: Disk {
                iops: Iops(p.iops()),
                mbps: Some(MiBps(p.mbps())),
            },
            source: format!("--disk-profile {p}"),
        },
        (_, _, Some(id)) => DiskSource::Run(id),
        _ => unreachable!("one source was counted"),
    })
}
