//! Reading campaigns back: `iogauge report` (HTML), `iogauge export` (CSV, Markdown, JSON),
//! `iogauge compare` (two runs, or two cases of a campaign), and the lines `iogauge campaign`
//! prints as it goes.

use super::args::{CampaignOutput, CompareArgs, ExportArgs, Output, ReportArgs};
use crate::store_args::StoreArgs;
use crate::usage::UsageError;
use anyhow::Context;
use iogauge_campaign::digest::{catalogue, digest};
use iogauge_campaign::CampaignView;
use iogauge_model::history::RunStatus;
use iogauge_report::fmt_num;
use iogauge_runner::gather;
use iogauge_stats::compare::{Describe, Ratio, Statistic, Verdict};
use iogauge_store::{CampaignTag, Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

fn open_view(store: &StoreArgs, name: &str) -> anyhow::Result<CampaignView> {
    let store = match Store::open_reader_resolved(store.store.as_deref()) {
        Err(StoreError::Missing { path }) => {
            return Err(UsageError(format!(
                "no campaign {name:?}: the results store {} does not exist yet; run `iogauge campaign FILE` first or pass --store",
                path.display()
            ))
            .into())
        }
        s => s?,
    };
    let mut view = gather(&store, name).map_err(|e| {
        if e.is_usage() {
            UsageError(e.to_string()).into()
        } else {
            anyhow::Error::new(e)
        }
    })?;
    // Campaigns are stored masked; one stored by an older iogauge may not be, and every
    // rendering (report, export, compare) goes through here.
    let mask = iogauge_campaign::load::mask;
    view.file = mask(&view.file);
    for c in &mut view.cases {
        c.args.iter_mut().for_each(|a| *a = mask(a));
        c.vars.values_mut().for_each(|v| *v = mask(v));
    }
    Ok(view)
}

pub fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let out = output_path(&a.out)?;
    let Some(name) = &a.campaign else {
        return results_report(&a.ids, &a.store, out);
    };
    let view = open_view(&a.store, name)?;
    let html = iogauge_report::campaign_html(&view);
    write_output(out, &html)?;
    if let Some(p) = out {
        eprintln!(
            "wrote {} ({} cases, {} runs, {:.1} MB)",
            p.display(),
            view.cases.len(),
            view.cases.iter().map(|c| c.runs.len()).sum::<usize>(),
            html.len() as f64 / 1e6
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `iogauge report ID [ID…]`: stored results of any kind in one HTML file.
fn results_report(ids: &[i64], store: &StoreArgs, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(
                UsageError(format!("result {id} is given twice; give each id once")).into(),
            );
        }
    }
    let store = Store::open_reader_resolved(store.store.as_deref())?;
    let mut runs = Vec::with_capacity(ids.len());
    for &id in ids {
        let run = store.get(id)?.ok_or_else(|| {
            UsageError(format!(
                "no run {id} in {}; `iogauge history` lists the stored runs",
                store.path().display()
            ))
        })?;
        runs.push(run);
    }
    let stored: Vec<iogauge_report::Stored> = runs
        .iter()
        .map(|r| iogauge_report::Stored {
            id: r.row.id,
            document: &r.document,
            histograms: &r.histograms,
        })
        .collect();
    let html = iogauge_report::result_html(&stored)?;
    write_output(out, &html)?;
    if let Some(p) = out {
        eprintln!(
            "wrote {} ({} result{}, {:.1} MB)",
            p.display(),
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            html.len() as f64 / 1e6
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn export(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let (view, out) = open_for_output(&a.out)?;
    let text = match a.format.as_str() {
        "csv" => iogauge_report::campaign_csv(&view),
        "md" => iogauge_report::campaign_markdown(&view),
        _ => iogauge_report::campaign_json(&view),
    };
    write_output(out, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// Checks the output path first (nothing is read for a path that cannot be written), then
/// gathers the campaign.
fn open_for_output(o: &CampaignOutput) -> anyhow::Result<(CampaignView, Option<&Path>)> {
    let out = output_path(&o.out)?;
    Ok((open_view(&o.store, &o.campaign)?, out))
}

/// The output file, checked (`None`: stdout; `-o -` is stdout, as for every Unix tool, not
/// a file named `-`).
fn output_path(o: &Output) -> Result<Option<&Path>, UsageError> {
    let out = o.output.as_deref().filter(|p| *p != Path::new("-"));
    check_output(out, o.force)?;
    Ok(out)
}

/// Refuses an output path that cannot be written as asked, before any work is done.
fn check_output(path: Option<&Path>, force: bool) -> Result<(), UsageError> {
    let Some(p) = path else { return Ok(()) };
    if p.is_dir() {
        return Err(UsageError(format!(
            "-o {}: is a directory; give a file name",
            p.display()
        )));
    }
    if p.exists() && !force {
        return Err(UsageError(format!(
            "-o {}: exists; choose another name or pass --force to replace it",
            p.display()
        )));
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "-o {}: directory {} does not exist; create it first",
            p.display(),
            dir.display()
        )));
    }
    crate::paths::check_output_dir("-o", p, dir)
}

/// Writes whole or not at all: a temporary file beside the target, then a rename.
fn write_output(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    let Some(p) = path else {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .context("writing to stdout");
    };
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("report");
    let tmp = p.with_file_name(format!(".{name}.iogauge-{}", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, p));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("-o {}: writing", p.display()))
}

/// `iogauge compare A B`.
pub fn compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    let text = match &a.campaign {
        Some(name) => {
            let view = open_view(&a.store, name)?;
            compare_cases(&view, &a.a, &a.b, a.json)?
        }
        None => {
            let store = Store::open_reader_resolved(a.store.store.as_deref())?;
            compare_runs(&store, &a.a, &a.b, a.json)?
        }
    };
    write_output(None, &text)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct MetricCompare {
    metric: String,
    unit: String,
    /// A campaign's cases: the figure `a`, `b` and the ratio are of (the campaign's
    /// `statistic`); runs are single figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    statistic: Option<Statistic>,
    a: f64,
    b: f64,
    /// b / a.
    ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    a_stats: Option<Describe>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b_stats: Option<Describe>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ci95: Option<(f64, f64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<String>,
}

fn compare_runs(store: &Store, a: &str, b: &str, json: bool) -> anyhow::Result<String> {
    let load = |s: &str| -> anyhow::Result<(iogauge_campaign::RunDigest, Option<String>)> {
        let id: i64 = s.parse().map_err(|_| {
            UsageError(format!(
                "{s:?} is not a run id; give two ids from `iogauge history`, or two case names with --campaign NAME"
            ))
        })?;
        let run = store.get(id)?.ok_or_else(|| {
            UsageError(format!(
                "no run {id} in {}; `iogauge history` lists the stored runs",
                store.path().display()
            ))
        })?;
        if run.row.status == RunStatus::Interrupted {
            // Compared all the same (it is what the user asked for), but never silently.
            let _ = writeln!(
                std::io::stderr(),
                "warning: run {id} was interrupted: its figures cover only the part that ran"
            );
        }
        let label = run.document.meta().label.clone();
        Ok((digest(id, 1, &run.document, &run.histograms)?, label))
    };
    let ((ra, la), (rb, lb)) = (load(a)?, load(b)?);
    if ra.kind != rb.kind {
        return Err(UsageError(format!(
            "run {a} is a {} and run {b} a {}: compare runs of one kind",
            ra.kind, rb.kind
        ))
        .into());
    }
    let rows: Vec<MetricCompare> = catalogue()
        .iter()
        .filter_map(|m| {
            let (x, y) = (*ra.metrics.get(m.key)?, *rb.metrics.get(m.key)?);
            Some(MetricCompare {
                metric: m.key.to_string(),
                unit: m.unit.to_string(),
                statistic: None,
                a: x,
                b: y,
                ratio: (x > 0.0).then(|| y / x),
                a_stats: None,
                b_stats: None,
                ci95: None,
                verdict: None,
            })
        })
        .collect();
    if json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "a": {"id": ra.id, "kind": ra.kind, "label": la, "started_at": ra.started_at, "interrupted": ra.interrupted},
            "b": {"id": rb.id, "kind": rb.kind, "label": lb, "started_at": rb.started_at, "interrupted": rb.interrupted},
            "metrics": rows,
        }))? + "\n");
    }
    let named = |id: &str, label: &Option<String>, at: &str| match label {
        Some(l) => format!("run {id} [{l}] ({at})"),
        None => format!("run {id} ({at})"),
    };
    let mut s = format!(
        "{} against {}: single runs, so no confidence interval; a campaign's repetitions give one\n",
        named(a, &la, &ra.started_at),
        named(b, &lb, &rb.started_at)
    );
    let _ = writeln!(
        s,
        "{:<24} {:>14} {:>14} {:>8}",
        "metric",
        format!("run {a}"),
        format!("run {b}"),
        "b/a"
    );
    for r in &rows {
        let _ = writeln!(
            s,
            "{:<24} {:>14} {:>14} {:>8}",
            format!("{} ({})", r.metric, r.unit),
            fmt_num(r.a),
            fmt_num(r.b),
            r.ratio.map_or("-".into(), |x| format!("{x:.3}"))
        );
    }
    Ok(s)
}

fn compare_cases(view: &CampaignView, a: &str, b: &str, json: bool) -> anyhow::Result<String> {
    for name in [a, b] {
        if !view.cases.iter().any(|c| c.name == name) {
            let names: Vec<&str> = view.cases.iter().map(|c| c.name.as_str()).collect();
            return Err(UsageError(format!(
                "campaign {}: no case {name:?}; its cases are: {}",
                view.name,
                names.join(", ")
            ))
            .into());
        }
    }
    let mut rows = Vec::new();
    for m in &view.metrics {
        let samples = |n: &str| m.cases.iter().find(|c| c.case == n).map(|c| &c.samples);
        let (Some(xa), Some(xb)) = (samples(a), samples(b)) else {
            continue;
        };
        let (Ok(da), Ok(db)) = (Describe::of(xa), Describe::of(xb)) else {
            continue;
        };
        let ratio = Ratio::of(xb, xa, view.statistic, seed_of(&m.key)).ok();
        let figure = |d: &Describe| match view.statistic {
            Statistic::Mean => d.mean,
            Statistic::Trimmed => d.trimmed_mean,
        };
        rows.push(MetricCompare {
            metric: m.key.clone(),
            unit: m.unit.clone(),
            statistic: Some(view.statistic),
            a: figure(&da),
            b: figure(&db),
            ratio: ratio.as_ref().map(Ratio::headline),
            ci95: ratio
                .as_ref()
                .and_then(Ratio::headline_ci)
                .map(|c| (c.lo, c.hi)),
            verdict: ratio
                .as_ref()
                .map(|r| Verdict::of(r).sentence(b, a, m.higher_is_better)),
            a_stats: Some(da),
            b_stats: Some(db),
        });
    }
    if json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "campaign": view.name, "a": a, "b": b, "metrics": rows,
        }))? + "\n");
    }
    let mut s = format!(
        "campaign {}: {b} against {a} ({} of the repetitions)\n",
        view.name,
        view.statistic.plural()
    );
    for r in &rows {
        let _ = writeln!(
            s,
            "{:<24} {:>12} {:>12}  {}",
            format!("{} ({})", r.metric, r.unit),
            fmt_num(r.a),
            fmt_num(r.b),
            r.verdict.as_deref().unwrap_or("-")
        );
    }
    Ok(s)
}

fn seed_of(key: &str) -> u64 {
    iogauge_stats::fnv1a(key.bytes())
}

/// One line on a stored campaign run: its headline figures and its id.
pub fn run_line(store: &Store, tag: &CampaignTag) -> anyhow::Result<String> {
    let runs = store.campaign_runs(&tag.campaign, tag.generation)?;
    let Some(link) = runs.iter().rev().find(|r| {
        r.case == tag.case && r.rep == tag.rep && !r.warmup && r.status == RunStatus::Complete
    }) else {
        anyhow::bail!(
            "campaign {}: the run of case {:?} repetition {} finished but is not in the store",
            tag.campaign,
            tag.case,
            tag.rep
        );
    };
    let run = store
        .get(link.run_id)?
        .context("a campaign run vanished from the store")?;
    let d = digest(link.run_id, link.rep, &run.document, &run.histograms)?;
    Ok(format!("{} (run {})", headline(&d.metrics), link.run_id))
}

/// Metrics a campaign prints first, in this order, when a run has them.
const HEADLINE: &[&str] = &[
    "iops",
    "max_iops",
    "ops_s",
    "mbps",
    "max_mbps",
    "db_physical_reads_s",
    "read_lat_p99_ms",
    "write_lat_p99_ms",
    "latency_ms",
    "op_read_lat_p99_ms",
    "op_update_lat_p99_ms",
];

/// The headline figures of a run, labelled.
fn headline(metrics: &BTreeMap<String, f64>) -> String {
    let parts: Vec<String> = HEADLINE
        .iter()
        .filter_map(|k| {
            let m = iogauge_campaign::digest::metric(k)?;
            let v = metrics.get(*k)?;
            Some(if m.unit == "ms" {
                format!("{} {} ms", m.label, fmt_num(*v))
            } else {
                format!("{} {}", fmt_num(*v), m.unit)
            })
        })
        .take(4)
        .collect();
    parts.join(", ")
}

/// The verdict; else the bare ratio when there are too few repetitions for one.
fn judgement(view: &CampaignView, c: &iogauge_campaign::MetricCase) -> String {
    match (&c.verdict, &c.ratio, view.baseline_of(&c.case)) {
        _ if view.is_baseline(&c.case) => "(baseline)".into(),
        (Some(v), _, _) => v.clone(),
        (None, Some(r), Some(b)) => {
            format!(
                "{:.2}× {b} (too few repetitions for a verdict)",
                r.headline()
            )
        }
        _ => String::new(),
    }
}

/// The end-of-campaign summary: per headline metric, each case's mean, spread and verdict.
pub fn verdicts_text(view: &CampaignView) -> String {
    let mut s = format!(
        "\ncampaign {}: {} cases, baseline {:?}, ratios of {}\n",
        view.name,
        view.cases.len(),
        view.baseline,
        view.statistic.plural()
    );
    let shown = view
        .metrics
        .iter()
        .filter(|m| HEADLINE.contains(&m.key.as_str()))
        .take(4);
    for m in shown {
        let _ = writeln!(s, "\n{} ({}):", m.label, m.unit);
        for c in &m.cases {
            let d = &c.describe;
            let _ = writeln!(
                s,
                "  {:<28} n={:<3} mean {:>10}  median {:>10}  trimmed {:>10}  CV {:>5}  {}",
                c.case,
                d.n,
                fmt_num(d.mean),
                fmt_num(d.median),
                fmt_num(d.trimmed_mean),
                d.cv.map_or("-".into(), |v| format!("{:.1}%", v * 100.0)),
                judgement(view, c)
            );
        }
    }
    for w in &view.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}
