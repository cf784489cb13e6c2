//! `iogauge history` and `iogauge show`: the stored runs, read back.

pub mod args;

use crate::usage::UsageError;
use anyhow::Context;
use args::{HistoryArgs, ShowArgs};
use iogauge_model::Document;
use iogauge_report::{Exporter, Json, Text};
use iogauge_store::Store;
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
    if let Some(every) = a.interval {
        let Document::Run(r) = &run.document else {
            return Err(UsageError(format!(
                "--interval re-renders runs; run {} is a {} (show it without --interval)",
                a.id, run.row.kind
            ))
            .into());
        };
        let r = r
            .regrid(every, &run.histograms)
            .map_err(|e| UsageError(format!("run {}: {e}", a.id)))?;
        return print(&if a.json {
            Json.render(&Document::from(r))
        } else {
            iogauge_report::run_text(&r) + "\n" + &iogauge_report::interval_table(&r)
        });
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
