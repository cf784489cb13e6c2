//! `iogauge history` and `iogauge show`: the stored runs, read back.

use crate::args::{HistoryArgs, ShowArgs};
use crate::options::UsageError;
use anyhow::Context;
use iogauge_report::{calibration_body, calibration_head, Exporter, Json, Text};
use iogauge_store::{CalibrationReport, RunReport, Store};
use std::io::Write;
use std::process::ExitCode;

pub fn history(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_resolved(a.store.store.as_deref())?;
    let rows = store.list()?;
    let text = if a.json {
        serde_json::to_string_pretty(&rows)? + "\n"
    } else {
        iogauge_report::history_table(&rows)
    };
    print(&text)
}

pub fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_resolved(a.store.store.as_deref())?;
    let run = store.get(a.id)?.ok_or_else(|| {
        UsageError(format!(
            "no run {} in {}; `iogauge history` lists the stored runs",
            a.id,
            store.path().display()
        ))
    })?;
    let ctx = || format!("run {}: the stored document does not parse", a.id);
    if let Some(every) = a.interval {
        if run.row.kind != "run" {
            return Err(UsageError(format!(
                "--interval re-renders runs; run {} is a {} (show it without --interval)",
                a.id, run.row.kind
            ))
            .into());
        }
        let r: RunReport = serde_json::from_str(&run.document).with_context(ctx)?;
        let r = r
            .regrid(every, &run.histograms)
            .map_err(|e| UsageError(format!("run {}: {e}", a.id)))?;
        return print(&if a.json {
            Json.render(&r)
        } else {
            Text.render(&r) + "\n" + &iogauge_report::interval_table(&r)
        });
    }
    if a.json {
        return print(&(run.document + "\n"));
    }
    let text = match run.row.kind.as_str() {
        "db" => {
            let r: iogauge_store::DbReport =
                serde_json::from_str(&run.document).with_context(ctx)?;
            iogauge_report::db_run_text(&r)
        }
        "calibrate" => {
            let r: CalibrationReport = serde_json::from_str(&run.document).with_context(ctx)?;
            calibration_head(&r) + &calibration_body(&r)
        }
        _ => {
            let r: RunReport = serde_json::from_str(&run.document).with_context(ctx)?;
            Text.render(&r)
        }
    };
    print(&text)
}

fn print(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}
