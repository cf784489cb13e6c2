//! `iogauge plan`: capacity planning. The flags become [`PlanOptions`] (every bad
//! combination is a usage error naming the flag and the fix), the per-disk figures are
//! resolved (a flag, a profile or a stored calibration), and `iogauge_plan` does the
//! arithmetic and the text.

pub mod args;
pub mod options;

use crate::usage::UsageError;
use anyhow::Context;
use iogauge_model::history::RunStatus;
use iogauge_plan::limits;
use iogauge_plan::{capacity, parse_history, plan_history, size, Disk, Iops, MiBps, Plan};
use iogauge_store::Store;
use options::{DiskSource, Mode, PlanOptions};
use std::io::Write;
use std::process::ExitCode;

/// Per-disk figures of stored calibration `id`: max_iops and max_mbps over num_disks. Only
/// those three fields are read, so documents of any schema version that has them work.
fn calibration_disk(id: i64, store: Option<&std::path::Path>) -> anyhow::Result<(Disk, String)> {
    let store = Store::open_reader_resolved(store).with_context(|| format!("--from-run {id}"))?;
    let run = store.get(id)?.ok_or_else(|| {
        UsageError(format!(
            "--from-run {id}: no run {id} in {}; `iogauge history` lists the stored runs",
            store.path().display()
        ))
    })?;
    let iogauge_model::Document::Calibration(cal) = &run.document else {
        return Err(UsageError(format!(
            "--from-run {id}: run {id} is a {}, not a calibration; pick a calibrate row from `iogauge history`, or give --disk-iops",
            run.row.kind
        ))
        .into());
    };
    if run.row.status == RunStatus::Interrupted {
        // Its search stopped early: max_iops is the best point reached, not the device's.
        return Err(UsageError(format!(
            "--from-run {id}: calibration {id} was interrupted, so its figures cover only the points it reached; run `iogauge calibrate` to the end, or give --disk-iops"
        ))
        .into());
    }
    let disks = Some(cal.num_disks)
        .filter(|&n| n > 0)
        .with_context(|| format!("run {id}: the stored calibration has no num_disks"))?;
    let Some(max_iops) = cal.max_iops.filter(|&v| v > 0.0) else {
        return Err(UsageError(format!(
            "--from-run {id}: calibration {id} has no max_iops (no point met its latency cap); give --disk-iops or use another calibration"
        ))
        .into());
    };
    let max_mbps = cal.max_mbps.filter(|&v| v > 0.0);
    let n = f64::from(disks);
    for (what, per_disk, l) in [
        ("IOPS", Some(max_iops / n), limits::DISK_IOPS),
        ("MB/s", max_mbps.map(|m| m / n), limits::DISK_MBPS),
    ] {
        if let Some(v) = per_disk.filter(|v| !l.holds(*v)) {
            return Err(UsageError(format!(
                "--from-run {id}: calibration {id} gives {v} {what} per disk, outside what a plan takes ({}); give --disk-iops and --disk-mbps instead",
                l.describe()
            ))
            .into());
        }
    }
    let source = format!(
        "calibration {id}: max_iops {}{} over {disks} disks",
        iogauge_plan::render::num(max_iops),
        max_mbps.map_or(String::new(), |m| format!(
            ", max_mbps {}",
            iogauge_plan::render::num(m)
        )),
    );
    Ok((
        Disk {
            iops: Iops(max_iops / n),
            mbps: max_mbps.map(|m| MiBps(m / n)),
        },
        source,
    ))
}

pub fn plan(o: PlanOptions) -> anyhow::Result<ExitCode> {
    let (disk, source) = match o.disk {
        DiskSource::Given { disk, source } => (disk, source),
        DiskSource::Run(id) => {
            let (disk, source) = calibration_disk(id, o.store.as_deref())?;
            if matches!(&o.mode, Mode::Size(w) if w.read_mbps.is_some()) && disk.mbps.is_none() {
                return Err(UsageError(format!(
                    "--mbps: calibration {id} has no max_mbps; add no --mbps, or use --disk-iops with --disk-mbps"
                ))
                .into());
            }
            (disk, source)
        }
    };
    let plan = match o.mode {
        Mode::Size(w) => Plan::Size(size(&w, &o.model, &disk, &o.layout)),
        Mode::History {
            path,
            columns,
            percentile,
        } => {
            let file = std::fs::File::open(&path).map_err(|e| {
                UsageError(format!("--history {}: cannot open: {e}", path.display()))
            })?;
            let periods = parse_history(std::io::BufReader::new(file), &columns)
                .map_err(|e| UsageError(format!("--history {}: {e}", path.display())))?;
            Plan::History(Box::new(plan_history(
                &periods, &o.model, &disk, &o.layout, percentile,
            )))
        }
        Mode::Capacity { read_share } => Plan::Capacity(capacity(
            o.layout.disks.expect("reverse mode has --disks"),
            read_share,
            &o.model,
            &disk,
            o.layout.per_enclosure,
        )),
    };
    let text = if o.json {
        serde_json::to_string_pretty(&plan)? + "\n"
    } else {
        iogauge_plan::render::text(&plan, &source)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}
