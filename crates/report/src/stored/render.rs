//! `iogauge report` and `iogauge export` as functions: what the store holds, rendered. The
//! caller checked where the output goes and writes it.

use super::error::{usage, ReadError};
use super::open::{open_view, stored_run};
use crate::campaign::{
    campaign_csv, campaign_csv_relative, campaign_html, campaign_html_relative, campaign_json,
    campaign_json_relative, campaign_markdown, campaign_markdown_relative,
};
use crate::result::{result_html, Stored};
use iogauge_store::Store;
use std::path::Path;

/// What `iogauge report` draws.
pub enum Subject<'a> {
    /// Stored results of any kind, in this order (`iogauge report ID [ID…]`).
    Results(&'a [i64]),
    /// A campaign (`--campaign NAME`); with `relative` (`--relative`) every figure is a
    /// ratio to its baseline case, and no absolute figure is shown.
    Campaign { name: &'a str, relative: bool },
}

/// A report, and what it holds in words for the line that names the file written.
pub struct Report {
    pub html: String,
    /// `3 cases, 12 runs` or `2 results`.
    pub contents: String,
}

/// The HTML report of `subject` from the store at `store` (`--store`, else the default).
pub fn report(store: Option<&Path>, subject: Subject) -> Result<Report, ReadError> {
    match subject {
        Subject::Results(ids) => results_report(store, ids),
        Subject::Campaign { name, relative } => {
            let view = open_view(store, name)?;
            let html = if relative {
                campaign_html_relative(&view)
            } else {
                campaign_html(&view)
            };
            let contents = format!(
                "{} cases, {} runs",
                view.cases.len(),
                view.cases.iter().map(|c| c.runs.len()).sum::<usize>()
            );
            Ok(Report { html, contents })
        }
    }
}

/// Stored results of any kind in one HTML page.
fn results_report(store: Option<&Path>, ids: &[i64]) -> Result<Report, ReadError> {
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return usage(format!("result {id} is given twice; give each id once"));
        }
    }
    let store = Store::open_reader_resolved(store)?;
    let runs = ids
        .iter()
        .map(|&id| stored_run(&store, id))
        .collect::<Result<Vec<_>, _>>()?;
    let stored: Vec<Stored> = runs
        .iter()
        .map(|r| Stored {
            id: r.row.id,
            document: &r.document,
            histograms: &r.histograms,
        })
        .collect();
    Ok(Report {
        html: result_html(&stored)?,
        contents: format!(
            "{} result{}",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" }
        ),
    })
}

/// The formats of `iogauge export`.
#[derive(Clone, Copy, Debug)]
pub enum Format {
    Csv,
    Markdown,
    Json,
}

/// Campaign `name` from the store at `store` in `format`; with `relative`, in ratios to its
/// baseline case only.
pub fn export(
    store: Option<&Path>,
    name: &str,
    format: Format,
    relative: bool,
) -> Result<String, ReadError> {
    let view = open_view(store, name)?;
    Ok(match (format, relative) {
        (Format::Csv, false) => campaign_csv(&view),
        (Format::Markdown, false) => campaign_markdown(&view),
        (Format::Json, false) => campaign_json(&view),
        (Format::Csv, true) => campaign_csv_relative(&view),
        (Format::Markdown, true) => campaign_markdown_relative(&view),
        (Format::Json, true) => campaign_json_relative(&view),
    })
}
