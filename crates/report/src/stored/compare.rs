//! `iogauge compare A B` as a function: two stored runs of one kind, figure by figure; a
//! calibration and a database run as the placement study's table ([`crate::placement`]); or
//! two cases of a campaign with the confidence interval of their ratio and its verdict; as
//! text (one table) or JSON.

use super::error::{usage, ReadError};
use super::open::{open_view, stored_run};
use crate::campaign::limits::{case_finding, time_of};
use crate::num::{fmt_num, unsigned_zero};
use crate::placement::placement;
use crate::text::findings::{contrast, finding_line};
use crate::text::placement::placement_text;
use iogauge_campaign::digest::{catalogue, digest};
use iogauge_campaign::view::RunDigest;
use iogauge_campaign::CampaignView;
use iogauge_model::finding::Finding;
use iogauge_model::history::RunStatus;
use iogauge_model::preflight::facts::differences;
use iogauge_model::{Document, Kind};
use iogauge_stats::compare::{Describe, Ratio, Statistic, Verdict};
use iogauge_store::{Store, StoredRun};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// What to compare: runs `a` and `b` (ids), or with `campaign` two of its cases (names).
pub struct CompareOptions<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub campaign: Option<&'a str>,
    /// JSON instead of the table.
    pub json: bool,
}

/// The comparison asked for, from the store at `store` (`--store`, else the default).
/// `warn` hears what the caller should know before the answer (a run that was interrupted).
pub fn compare(
    store: Option<&Path>,
    o: &CompareOptions,
    warn: &mut dyn FnMut(&str),
) -> Result<String, ReadError> {
    match o.campaign {
        Some(name) => compare_cases(&open_view(store, name)?, o.a, o.b, o.json),
        None => {
            let store = Store::open_reader_resolved(store)?;
            compare_runs(&store, o, warn)
        }
    }
}

#[derive(Serialize)]
struct MetricCompare {
    metric: String,
    unit: String,
    /// A campaign's cases: the figure `a`, `b` and the ratio are of (the campaign's
    /// `statistic`); runs are single figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    statistic: Option<Statistic>,
    /// `None` (null): not measured in that result (a run whose disks were not sampled has
    /// no device figures), never 0.
    a: Option<f64>,
    b: Option<f64>,
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

/// Stored result `s` (an id as given); `warn` hears when it was interrupted.
fn load_run(store: &Store, s: &str, warn: &mut dyn FnMut(&str)) -> Result<StoredRun, ReadError> {
    let Ok(id) = s.parse::<i64>() else {
        return usage(format!(
            "{} is not a run id; give two ids from `iogauge history`, or two case names with --campaign NAME",
            iogauge_model::echo::quoted(s)
        ));
    };
    let run = stored_run(store, id)?;
    if run.row.status == RunStatus::Interrupted {
        // Compared all the same (it is what the user asked for), but never silently.
        warn(&format!(
            "run {id} was interrupted: its figures cover only the part that ran"
        ));
    }
    Ok(run)
}

/// What `compare` calls a result of `kind`.
fn noun(kind: Kind) -> &'static str {
    match kind {
        Kind::Run => "run",
        Kind::Calibrate => "calibration",
        Kind::DbRun => "db run",
    }
}

fn compare_runs(
    store: &Store,
    o: &CompareOptions,
    warn: &mut dyn FnMut(&str),
) -> Result<String, ReadError> {
    let (a, b) = (o.a, o.b);
    let (sa, sb) = (load_run(store, a, warn)?, load_run(store, b, warn)?);
    let pair = |c: &StoredRun, d: &StoredRun| match (&c.document, &d.document) {
        (Document::Calibration(cal), Document::DbRun(db)) => {
            Some(placement((c.row.id, cal), (d.row.id, db)))
        }
        _ => None,
    };
    // The placement study: the calibration first, in whichever order they were given.
    if let Some(p) = pair(&sa, &sb).or_else(|| pair(&sb, &sa)) {
        return Ok(if o.json {
            serde_json::to_string_pretty(&p)? + "\n"
        } else {
            placement_text(&p)
        });
    }
    let (ka, kb) = (sa.document.kind(), sb.document.kind());
    // A raw stand-in or a replay beside a db run, in either order.
    let beside = match (ka, kb) {
        (Kind::Run, Kind::DbRun) => beside_db(&sa.document),
        (Kind::DbRun, Kind::Run) => beside_db(&sb.document),
        _ => None,
    };
    if ka != kb && beside.is_none() {
        return usage(format!(
            "run {a} is a {} and run {b} a {}: compare two results of one kind, a calibration with a db run, or a db run with its raw stand-in (run --like) or replay",
            noun(ka),
            noun(kb)
        ));
    }
    // What moved besides the storage: a mount option, a write cache, a fragmented file.
    let facts = match (sa.document.preflight(), sb.document.preflight()) {
        (Some(pa), Some(pb)) => differences(pa, pb),
        _ => Vec::new(),
    };
    let digested = |r: &StoredRun| digest(r.row.id, 1, &r.document, &r.histograms);
    let (ra, rb) = (digested(&sa)?, digested(&sb)?);
    let (la, lb) = (&sa.document.meta().label, &sb.document.meta().label);
    let rows = single_rows(&ra, &rb);
    if o.json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "a": {"id": ra.id, "kind": ra.kind, "label": la, "started_at": ra.started_at, "interrupted": ra.interrupted, "finding": ra.finding},
            "b": {"id": rb.id, "kind": rb.kind, "label": lb, "started_at": rb.started_at, "interrupted": rb.interrupted, "finding": rb.finding},
            "metrics": rows,
            "facts_differ": facts,
        }))? + "\n");
    }
    let named = |id: &str, label: &Option<String>, at: &str| match label {
        Some(l) => format!("run {id} [{l}] ({at})"),
        None => format!("run {id} ({at})"),
    };
    let mut s = format!(
        "{} against {}: single runs, so no confidence interval; a campaign's repetitions give one\n",
        named(a, la, &ra.started_at),
        named(b, lb, &rb.started_at)
    );
    let (run_a, run_b) = (format!("run {a}"), format!("run {b}"));
    line(
        &mut s,
        14,
        ["metric", &run_a, &run_b],
        &format!(" {:>8}", "b/a"),
    );
    table(&mut s, &rows, 14, |r| {
        let ratio = r.ratio.map(|x| unsigned_zero(format!("{x:.3}")));
        format!(" {:>8}", ratio.as_deref().unwrap_or("-"))
    });
    let time = if ra.kind.starts_with("db") {
        "DB time"
    } else {
        "I/O time"
    };
    limits(
        &mut s,
        (&run_a, ra.finding.as_ref()),
        (&run_b, rb.finding.as_ref()),
        time,
    );
    notes(&mut s, beside, &facts);
    Ok(s)
}

/// The catalogue's metrics of two single runs, each that one of the two has (the other's
/// then "not measured").
fn single_rows(ra: &RunDigest, rb: &RunDigest) -> Vec<MetricCompare> {
    catalogue()
        .iter()
        .filter_map(|m| {
            let (x, y) = (
                ra.metrics.get(m.key).copied(),
                rb.metrics.get(m.key).copied(),
            );
            x.or(y)?;
            Some(MetricCompare {
                metric: m.key.to_string(),
                unit: m.unit.to_string(),
                statistic: None,
                a: x,
                b: y,
                ratio: x.zip(y).filter(|(x, _)| *x > 0.0).map(|(x, y)| y / x),
                a_stats: None,
                b_stats: None,
                ci95: None,
                verdict: None,
            })
        })
        .collect()
}

/// What a run beside a db run replays.
#[derive(Clone, Copy)]
enum Beside {
    /// `run --like`: the db run's shape.
    Like,
    /// `iogauge replay`: requests captured on a database's disks.
    Replay,
}

/// What run `d` is beside a db run: a raw stand-in (`run --like`), whose figures share the
/// database's names; a replay (of a db run's capture), which shares the devices' figures;
/// or neither, which does not compare with one.
fn beside_db(d: &Document) -> Option<Beside> {
    match d {
        Document::Run(r) if r.options.like.is_some() => Some(Beside::Like),
        Document::Run(r) if r.options.replay.is_some() => Some(Beside::Replay),
        _ => None,
    }
}

/// What the table does not say: a raw stand-in's or a replay's figures beside PostgreSQL's,
/// and the storage facts that differ between the two results.
fn notes(s: &mut String, beside: Option<Beside>, facts: &[String]) {
    match beside {
        // The stand-in's figures are its device's; PostgreSQL's count what the page cache
        // served as reads too (unless it read with O_DIRECT: db run --direct-io).
        Some(Beside::Like) => {
            let _ = writeln!(
                s,
                "the run replays the db run's device I/O (run --like): its db_* figures are the raw device's; the db run's db_physical_reads_s and db_avg_read_ms include page-cache hits unless it ran with --direct-io, so compare device_* for the storage alone"
            );
        }
        // The replay issued the captured block requests (below the page cache) alone; the
        // db run's device figures count its disks' every request, others' included.
        Some(Beside::Replay) => {
            let _ = writeln!(
                s,
                "the run replays block requests captured on a database's disks (iogauge replay): its figures are its targets'; the db run's device_* count every request on its disks, others' too (traces show says how many the capture left out)"
            );
        }
        None => {}
    }
    if !facts.is_empty() {
        let _ = writeln!(s, "storage facts that differ (a → b):");
        for f in facts {
            let _ = writeln!(s, "  {f}");
        }
    }
}

/// Each side's top finding in a line, then the sentence saying where their limits differ;
/// nothing for results stored before findings existed.
fn limits(s: &mut String, a: (&str, Option<&Finding>), b: (&str, Option<&Finding>), time: &str) {
    for (name, f) in [a, b] {
        if let Some(f) = f {
            let _ = writeln!(s, "limit of {name}: {}", finding_line(f, time));
        }
    }
    if let Some(c) = contrast(a, b) {
        let _ = writeln!(s, "{c}");
    }
}

fn compare_cases(view: &CampaignView, a: &str, b: &str, json: bool) -> Result<String, ReadError> {
    for name in [a, b] {
        if !view.cases.iter().any(|c| c.name == name) {
            let names: Vec<&str> = view.cases.iter().map(|c| c.name.as_str()).collect();
            return usage(format!(
                "campaign {}: no case {}; its cases are: {}",
                view.name,
                iogauge_model::echo::quoted(name),
                names.join(", ")
            ));
        }
    }
    let rows = case_rows(view, a, b);
    let of = |name: &str| {
        view.cases
            .iter()
            .find(|c| c.name == name)
            .and_then(case_finding)
    };
    if json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "campaign": view.name, "a": a, "b": b, "metrics": rows,
            "a_finding": of(a), "b_finding": of(b),
        }))? + "\n");
    }
    let mut s = format!(
        "campaign {}: {b} against {a} ({} of the repetitions)\n",
        view.name,
        view.statistic.plural()
    );
    table(&mut s, &rows, 12, |r| {
        format!("  {}", r.verdict.as_deref().unwrap_or("-"))
    });
    limits(&mut s, (a, of(a)), (b, of(b)), time_of(view));
    Ok(s)
}

/// Per metric both cases have: their figures (of the campaign's statistic), the ratio b / a
/// with its interval, and the verdict.
fn case_rows(view: &CampaignView, a: &str, b: &str) -> Vec<MetricCompare> {
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
            a: Some(figure(&da)),
            b: Some(figure(&db)),
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
    rows
}

fn seed_of(key: &str) -> u64 {
    iogauge_stats::fnv1a(key.bytes())
}

/// The comparison's table: one [`line`] per metric, figures `width` wide, then `last` (the
/// ratio of two runs, the verdict of two cases).
fn table(
    s: &mut String,
    rows: &[MetricCompare],
    width: usize,
    last: impl Fn(&MetricCompare) -> String,
) {
    let shown = |x: Option<f64>| x.map_or_else(|| NOT_MEASURED.to_string(), fmt_num);
    for r in rows {
        let metric = format!("{} ({})", r.metric, r.unit);
        line(s, width, [&metric, &shown(r.a), &shown(r.b)], &last(r));
    }
}

/// A figure one result has and the other does not (never 0: a device not sampled did not do
/// nothing).
const NOT_MEASURED: &str = "not measured";

/// `metric` in 24 columns, `a` and `b` right-aligned in `width`, then `last` as it is.
fn line(s: &mut String, width: usize, [metric, a, b]: [&str; 3], last: &str) {
    let _ = writeln!(s, "{metric:<24} {a:>width$} {b:>width$}{last}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::findings::tests::finding;
    use iogauge_model::finding::Layer;

    #[test]
    fn each_side_s_limit_then_where_they_differ() {
        let (d, q) = (
            finding(Layer::Device, 0.6, "vda is saturated"),
            finding(Layer::OsQueue, 0.3, "I/Os wait in the queue"),
        );
        let mut s = String::new();
        limits(&mut s, ("run 1", Some(&d)), ("run 2", Some(&q)), "I/O time");
        assert_eq!(
            s,
            "limit of run 1: vda is saturated (60% of the I/O time; vda %util 98%)\n\
             limit of run 2: I/Os wait in the queue (30% of the I/O time; vda %util 98%)\n\
             run 2 is limited by the OS queue where run 1 was limited by the device\n"
        );
        let mut same = String::new();
        limits(&mut same, ("a", Some(&d)), ("b", Some(&d)), "I/O time");
        assert_eq!(same.lines().count(), 2, "{same}");
        let mut old = String::new();
        limits(&mut old, ("a", None), ("b", None), "I/O time");
        assert_eq!(old, "");
    }
}
