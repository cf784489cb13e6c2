//! `iogauge history` and `iogauge show`: the stored runs, read back.

pub mod args;

use crate::usage::UsageError;
use anyhow::Context;
use args::{HistoryArgs, ShowArgs};
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
        on_terminal(&iogauge_report::history_table(&rows))
    };
    print(&text)
}

pub fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_reader_resolved(a.store.store.as_deref())?;
    let mut run = store.get(a.id)?.ok_or_else(|| {
        UsageError(format!(
            "no run {} in {}; `iogauge history` lists the stored runs",
            a.id,
            store.path().display()
        ))
    })?;
    if a.rediagnose {
        *run.document.findings_mut() = iogauge_diagnose::diagnose(&run.document);
    }
    if let Some(every) = a.interval {
        let doc = (run.document.regrid(every, &run.histograms))
            .map_err(|e| UsageError(format!("run {}: {e}", a.id)))?;
        return print(&match a.json {
            true => Json.render(&doc),
            false => on_terminal(&iogauge_report::with_intervals(&doc)),
        });
    }
    if a.json {
        return print(&run.document.to_json());
    }
    print(&on_terminal(&Text.render(&run.document)))
}

/// Text made of stored values (labels, paths, names from an older store or another tool's
/// hands) with the characters that would move or hide text on a terminal as escapes (a
/// U+202E in a label reversed the rest of its line); JSON keeps them, as data.
pub fn on_terminal(text: &str) -> String {
    iogauge_model::echo::printable_lines(text).into_owned()
}

fn print(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}
