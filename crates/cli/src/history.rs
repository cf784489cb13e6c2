//! `iogauge history` and `iogauge show`: the stored runs, read back.

pub mod args;

use crate::usage::UsageError;
use anyhow::Context;
use args::{HistoryArgs, ShowArgs};
use iogauge_model::Document;
use iogauge_report::{Exporter, Json, Text};
use iogauge_store::{Store, StoreError};
use std::io::Write;
use std::process::ExitCode;

pub fn history(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    // A reader: a missing store is an empty history, and stays missing.
    let rows = match Store::open_reader_resolved(a.store.store.as_deref()) {
        Ok(store) => store.list()?,
        Err(StoreError::Missing { path }) if !a.json => {
            return print(&format!(
                "no stored runs (no results store at {} yet)\n",
                path.display()
            ))
        }
        Err(StoreError::Missing { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let text = if a.json {
        serde_json::to_string_pretty(&rows)? + "\n"
    } else {
        iogauge_report::history_table(&rows)
    };
    print(&text)
}

pub fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_reader_resolved(a.store.store.as_deref())?;
    let run = store.get(a.id)?.ok_or_else(|| {
        UsageError(format!(
            "no run {} in {}; `iogauge history` lists the stored runs",
            a.id,
            store.path().display()
        ))
    })?;
    if let Some(every) = a.interval {
        let bad = |e: iogauge_model::regrid::RegridError| UsageError(format!("run {}: {e}", a.id));
        let (doc, table) = match &run.document {
            Document::Run(r) => {
                let r = r.regrid(every, &run.histograms).map_err(bad)?;
                let t = iogauge_report::run_text(&r) + "\n" + &iogauge_report::interval_table(&r);
                (Document::from(r), t)
            }
            Document::Calibration(c) => {
                let c = c.regrid(every, &run.histograms).map_err(bad)?;
                let t = iogauge_report::calibration_head(&c)
                    + &iogauge_report::calibration_intervals(&c);
                (Document::from(c), t)
            }
            Document::DbRun(d) => {
                let d = d.regrid(every, &run.histograms).map_err(bad)?;
                let t =
                    iogauge_report::db_run_text(&d) + "\n" + &iogauge_report::db_interval_table(&d);
                (Document::from(d), t)
            }
        };
        return print(&if a.json { Json.render(&doc) } else { table });
    }
    if a.json {
        return print(&run.document.to_json());
    }
    print(&Text.render(&run.document))
}

fn print(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}
