//! `iogauge calibrate`'s flags checked as a whole and turned into plain data: a
//! `CalibrateSpec`, the targets, and where the matrix CSV goes.

use super::args::CalibrateArgs;
use crate::target::options::{io_setup, Targets};
use crate::usage::{usage, UsageError};
use iogauge_model::calib::{CalibrateSpec, LargeType, MatrixMode};
use iogauge_model::units::fmt_size;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug)]
pub struct CalibrateOptions {
    pub spec: CalibrateSpec,
    pub targets: Targets,
    pub json: bool,
    /// Trace the block layer beside the sampler (not `--no-trace`).
    pub trace: bool,
    pub store: Option<PathBuf>,
    /// `--label`, checked.
    pub label: Option<String>,
    pub csv: Option<PathBuf>,
}

impl CalibrateOptions {
    pub fn from_args(a: CalibrateArgs) -> Result<CalibrateOptions, UsageError> {
        if a.max_latency.is_zero() {
            return usage("--max-latency must be above 0, as in --max-latency 10ms");
        }
        if a.point_time < Duration::from_millis(500) {
            return usage("--point-time must be at least 500ms (shorter points are mostly noise)");
        }
        if a.large_block < a.block {
            return usage("--large-block must not be smaller than --block");
        }
        if let Some(size) = a.io.size {
            if size < a.large_block {
                return usage(format!(
                    "--size {} is smaller than the large block {}; use a larger --size",
                    fmt_size(size),
                    fmt_size(a.large_block)
                ));
            }
        }
        if a.cache_size == Some(0) {
            return usage("--cache-size must be above 0");
        }
        let matrix = a.matrix.unwrap_or_default();
        let (num_small, num_large) = matrix_levels(matrix, a.num_small, a.num_large)?;
        if a.large_type == LargeType::Seq && a.write_pct > 0 && a.write_pct < 100 {
            return usage(format!(
                "--large-type seq: each stream either reads or writes, so --write-pct {} cannot be mixed into it; use --write-pct 0 or 100, or --large-type rand",
                a.write_pct
            ));
        }
        if let Some(dir) = &a.csv {
            check_csv_dir(dir, matrix)?;
        }
        let spec = CalibrateSpec {
            small_bs: a.block,
            large_bs: a.large_block,
            point_time: a.point_time,
            point_ramp: a.point_time / 4,
            max_latency_us: a.max_latency.as_secs_f64() * 1e6,
            criterion: a.criterion,
            disks: a.disks,
            max_outstanding: CalibrateSpec::ceiling(a.disks),
            write_pct: a.write_pct,
            cache_size: a.cache_size,
            matrix,
            num_small,
            num_large,
            large_type: a.large_type,
            setup: io_setup(&a.io)?,
            io_path: None,
        };
        let targets = Targets::from_args(a.io, spec.setup.direct, spec.write_pct > 0)?;
        // Before anything is created: a region or layout the targets cannot hold is said now,
        // not after a 1 GiB scratch file was made and pre-filled for it.
        iogauge_engine::calibrate::check_planned(&spec, &targets.specs)
            .map_err(|e| UsageError(e.to_string()))?;
        Ok(CalibrateOptions {
            targets,
            spec,
            json: a.result.json,
            trace: !a.result.no_trace,
            store: a.result.store.store,
            label: a.result.label.checked()?,
            csv: a.csv,
        })
    }
}

/// The matrix files iogauge writes with --csv; it never replaces a file it did not create.
pub const CSV_FILES: [&str; 3] = ["iops.csv", "mbps.csv", "lat.csv"];

/// `--num-small`/`--num-large`: required by exactly the modes that fix that level, refused
/// by the others (a level the mode would ignore is a mistake worth saying).
fn matrix_levels(
    mode: MatrixMode,
    num_small: Option<u32>,
    num_large: Option<u32>,
) -> Result<(Option<u32>, Option<u32>), UsageError> {
    let (fix_small, fix_large) = mode.fixes();
    let m = mode.name();
    for (flag, given, fixed, modes) in [
        ("--num-small", num_small, fix_small, "col or point"),
        ("--num-large", num_large, fix_large, "row or point"),
    ] {
        match (given, fixed) {
            (None, true) => {
                return usage(format!(
                    "--matrix {m} needs {flag} N (the outstanding I/Os every cell keeps), as in --matrix {m} {flag} 4"
                ))
            }
            (Some(_), false) => {
                return usage(format!(
                    "{flag} fixes a level of --matrix {modes}, not --matrix {m}: drop {flag} or choose --matrix {modes}"
                ))
            }
            _ => {}
        }
    }
    if mode == MatrixMode::Point && num_small == Some(0) && num_large == Some(0) {
        return usage("--matrix point with --num-small 0 and --num-large 0 does no I/O: give one of them above 0");
    }
    Ok((num_small, num_large))
}

fn check_csv_dir(dir: &Path, matrix: MatrixMode) -> Result<(), UsageError> {
    if matrix == MatrixMode::Basic {
        return usage("--csv writes the matrix files: add --matrix (detailed, row, col or point)");
    }
    // An existing file (or a link to one) would only fail after the whole measurement.
    if std::fs::symlink_metadata(dir).is_ok() && !dir.is_dir() {
        return usage(format!(
            "--csv {} exists and is not a directory; --csv names a directory for the matrix files (created when missing): choose a directory or a new path",
            dir.display()
        ));
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() && !parent.is_dir() {
        return usage(format!(
            "--csv {}: directory {} does not exist; create it or choose another --csv",
            dir.display(),
            parent.display()
        ));
    }
    // Where the files (or the directory for them) will be made, checked now: found when
    // they are written, after the whole calibration, the measurement was lost.
    let writes_in = if dir.is_dir() { dir } else { parent };
    crate::paths::check_output_dir("--csv", dir, writes_in)?;
    if let Some(f) = CSV_FILES.iter().find(|f| dir.join(f).exists()) {
        return usage(format!(
            "--csv {}: {f} already exists and iogauge does not overwrite files; choose an empty directory",
            dir.display()
        ));
    }
    Ok(())
}
