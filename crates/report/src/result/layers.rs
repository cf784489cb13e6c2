//! Where each interval's I/O time went, per layer, one stacked bar chart per result that has
//! the block tracer's figures: the kernel's stages of the busiest traced disk (before the
//! queue, in the queue, in the device: btt's stages) and, for a run, what is left of the
//! application's mean latency above them: the kernel's submit and completion paths and
//! iogauge's own time, told apart where the tracer timed the job's io_uring I/Os. A database
//! run shows the kernel's stages alone: PostgreSQL's read time counts the reads the page
//! cache served, so it is not the time above the block layer. Results without layer figures
//! (no BPF, or stored before the tracer) draw nothing.

use super::item::{Group, Item};
use crate::split::{busiest, AppSplit};
use crate::svg::draw::WIDE;
use crate::svg::scale::Fmt;
use crate::svg::stack::{stacked_bars, Bar, Stacked};
use iogauge_model::calib::CalibrationReport;
use iogauge_model::db::report::DbReport;
use iogauge_model::derive::Derived;
use iogauge_model::run::{IntervalReport, RunReport};
use std::fmt::Write as _;

/// Bottom to top: the application's side first, the device last.
const LAYERS: [(&str, &str); 4] = [
    ("application + kernel submit", "#bab0ac"),
    ("before the queue", "#edc948"),
    ("OS queue", "#f28e2b"),
    ("device", "#4e79a7"),
];

/// The same, with the kernel's io_uring time splitting the top layer in two.
const RING_LAYERS: [(&str, &str); 5] = [
    ("iogauge", "#bab0ac"),
    ("kernel submit + completion", "#b07aa1"),
    ("before the queue", "#edc948"),
    ("OS queue", "#f28e2b"),
    ("device", "#4e79a7"),
];

/// One bar per interval with layer figures: the layers' mean µs per I/O ([`AppSplit::parts`]),
/// and the layers they are: five where every bar has the kernel's io_uring time, else four.
pub(super) fn bars(r: &RunReport) -> (Vec<Bar>, &'static [(&'static str, &'static str)]) {
    let (entry, disks) = crate::split::run_devs(r);
    app_bars(
        r.intervals.iter().map(|iv| (0.0, iv)),
        (&entry, &disks),
        r.options.direct,
    )
}

/// A calibration's bars: its points one after another on one time axis (each point's
/// intervals start at its own zero, so each is moved by the points before it), one bar per
/// interval as for a run. Points run in the order measured: depth rising within each step.
pub(super) fn calib_bars(
    c: &CalibrationReport,
) -> (Vec<Bar>, &'static [(&'static str, &'static str)]) {
    let mut at = 0.0;
    let mut intervals = Vec::new();
    for p in &c.points {
        let end = p
            .intervals
            .iter()
            .map(|iv| iv.t_s + iv.dur_s.max(0.0))
            .fold(0.0, f64::max);
        intervals.extend(p.intervals.iter().map(|iv| (at, iv)));
        at += end;
    }
    // A calibration's I/Os are O_DIRECT.
    app_bars(intervals.into_iter(), (&[], &[]), true)
}

/// [`bars`] of intervals each moved by its offset, seconds.
fn app_bars<'a>(
    intervals: impl Iterator<Item = (f64, &'a IntervalReport)>,
    devs: crate::split::Devs,
    direct: bool,
) -> (Vec<Bar>, &'static [(&'static str, &'static str)]) {
    let splits: Vec<(f64, &IntervalReport, AppSplit)> = intervals
        .filter_map(|(at, iv)| Some((at, iv, AppSplit::of(iv, devs, direct)?)))
        .collect();
    let ring = !splits.is_empty() && splits.iter().all(|(_, _, s)| s.kernel_us.is_some());
    let bars = splits
        .into_iter()
        .map(|(at, iv, mut s)| {
            if !ring {
                s.kernel_us = None;
            }
            Bar {
                t0: at + iv.t_s,
                t1: at + iv.t_s + iv.dur_s.max(0.0),
                parts: s.parts(),
            }
        })
        .collect();
    (bars, if ring { &RING_LAYERS } else { &LAYERS })
}

/// A database run's bars: the kernel's stages alone.
pub(super) fn db_bars(r: &DbReport) -> Vec<Bar> {
    let disks = r.cache.as_ref().map_or(&[][..], |c| &c.disks[..]);
    r.intervals
        .iter()
        .filter_map(|iv| {
            let sys: &Derived = iv.system.as_ref()?;
            let (_, s) = busiest(sys, disks)?;
            Some(Bar {
                t0: iv.t_s,
                t1: iv.t_s + iv.dur_s.max(0.0),
                parts: s.stages_us().to_vec(),
            })
        })
        .collect()
}

/// [`db_bars`] with their layers: the kernel's stages.
fn db_bars_of(r: &DbReport) -> (Vec<Bar>, &'static [(&'static str, &'static str)]) {
    (db_bars(r), &LAYERS[1..])
}

/// A heading, then one chart per result with bars (`bars` of it); nothing without.
fn charts<T>(
    out: &mut String,
    g: &Group<T>,
    (id, note): (&str, &str),
    bars: impl Fn(&T) -> (Vec<Bar>, &'static [(&'static str, &'static str)]),
) {
    let mut head = false;
    for (it, r) in &g.items {
        let (bars, layers) = bars(r);
        if bars.is_empty() {
            continue;
        }
        if !head {
            let _ = write!(
                out,
                "<h3 id=\"{id}\">Where the I/O time went</h3>\n<p class=\"note\">"
            );
            out.push_str(note);
            out.push_str("</p>\n");
            head = true;
        }
        chart(out, it, layers, bars);
    }
}

fn chart(out: &mut String, it: &Item, layers: &[(&str, &str)], bars: Vec<Bar>) {
    stacked_bars(
        out,
        &Stacked {
            key: it.s.id.to_string(),
            aria: format!(
                "{}: where each interval's I/O time went, per layer",
                it.name()
            ),
            layers,
            y_title: "mean per I/O",
            fmt: Fmt::Micros,
            bars,
        },
        WIDE,
    );
}

/// The runs' charts.
pub(super) fn section(out: &mut String, g: &Group<RunReport>) {
    let note = "Per interval, the mean time of an I/O in each layer: the busiest traced disk's device time (issue → complete), OS queue (insert → issue) and time before the queue (throttling, splitting), and above them what is left of the application's mean latency: the kernel's submit and completion paths (the kernel's time for the job's io_uring I/Os, submit → completion, less the block stages) and iogauge's own time (the application's latency less the kernel's), one layer where the kernel's io_uring time is not known.";
    charts(out, g, ("layers", note), bars);
}

/// The calibrations' charts.
pub(super) fn calib_section(out: &mut String, g: &Group<CalibrationReport>) {
    let note = "Per interval of each point, points one after another as they were measured (the outstanding I/Os rising within each step), the mean time of an I/O in each layer, as for a run: the busiest traced disk's device time, OS queue and time before the queue, and above them the kernel's submit and completion paths and iogauge's own time. Device time that grows with the depth is the device saturating (the USE method's saturation); queue time that grows is Linux holding requests the device could take.";
    charts(out, g, ("calib-layers", note), calib_bars);
}

/// The database runs' charts.
pub(super) fn db_section(out: &mut String, g: &Group<DbReport>) {
    let note = "Per interval, the mean time of a request to the busiest traced disk in each of the kernel's layers: device (issue → complete), OS queue (insert → issue) and before the queue (throttling, splitting).";
    charts(out, g, ("db-layers", note), db_bars_of);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{result_html, Stored};
    use crate::split::tests::rates;
    use crate::text::findings::tests::finding;
    use iogauge_model::finding::Layer;
    use iogauge_model::Document;

    const RUN: &str = include_str!("../../../campaign/tests/fixtures/run_randread.json");

    fn run() -> RunReport {
        match Document::from_json(RUN).expect("the fixture reads") {
            Document::Run(r) => *r,
            _ => unreachable!("run_randread.json is a run"),
        }
    }

    fn page(r: RunReport) -> String {
        let d = Document::from(r);
        let s = [Stored {
            id: 5,
            document: &d,
            histograms: &[],
        }];
        result_html(&s).expect("renders")
    }

    /// The fixture with the tracer's figures on vda from the second interval on.
    fn traced() -> RunReport {
        let mut r = run();
        for iv in r.intervals.iter_mut().skip(1) {
            let sys = iv.system.as_mut().expect("the fixture has samples");
            sys.layers
                .insert("vda".into(), rates(50_000.0, 100.0, 300.0));
        }
        r
    }

    #[test]
    fn a_bar_is_the_application_s_latency_split_by_layer() {
        let r = traced();
        let (b, layers) = bars(&r);
        assert_eq!(layers.len(), 4);
        assert_eq!(b.len(), r.intervals.len() - 1);
        let iv = &r.intervals[1];
        let app = iv.read.lat_us.mean;
        assert_eq!(b[0].parts[1..], [1.0, 100.0, 300.0]);
        assert!(
            (b[0].parts.iter().sum::<f64>() - app).abs() < 1e-6,
            "{:?} vs {app}",
            b[0].parts
        );
        assert!(bars(&run()).0.is_empty());
    }

    #[test]
    fn the_kernel_s_io_uring_time_splits_iogauge_from_the_kernel_s_submit_path() {
        use iogauge_model::layers::{RingRates, StageLat};
        let mut r = traced();
        let app = r.intervals[1].read.lat_us.mean;
        // The kernel's time: the block stages (1 + 100 + 300 µs) and 20 µs more.
        let kernel = 421.0_f64.min(app - 1.0);
        for iv in r.intervals.iter_mut().skip(1) {
            let sys = iv.system.as_mut().expect("the fixture has samples");
            sys.ring = Some(RingRates {
                read: Some(StageLat {
                    mean_us: kernel,
                    p50_us: kernel,
                    p99_us: kernel,
                }),
                write: None,
            });
        }
        let (b, layers) = bars(&r);
        assert_eq!(layers.len(), 5);
        assert_eq!(b[0].parts[2..], [1.0, 100.0, 300.0]);
        assert!(
            (b[0].parts[0] - (app - kernel)).abs() < 1e-6,
            "{:?}",
            b[0].parts
        );
        assert!(
            (b[0].parts[1] - (kernel - 401.0)).abs() < 1e-6,
            "{:?}",
            b[0].parts
        );
        assert!((b[0].parts.iter().sum::<f64>() - app).abs() < 1e-6);
        // One interval without it: the chart falls back to four layers throughout.
        r.intervals[2].system.as_mut().unwrap().ring = None;
        let (b, layers) = bars(&r);
        assert_eq!((layers.len(), b[0].parts.len()), (4, 4));
    }

    #[test]
    fn a_calibration_s_points_follow_each_other_on_one_time_axis() {
        const CAL: &str = include_str!("../../../campaign/tests/fixtures/calibrate.json");
        let Document::Calibration(mut c) = Document::from_json(CAL).unwrap() else {
            unreachable!("calibrate.json is a calibration")
        };
        assert!(calib_bars(&c).0.is_empty(), "no layer figures, no bars");
        let mut want = Vec::new();
        let mut at = 0.0;
        for p in &mut c.points {
            for iv in &mut p.intervals {
                if let Some(sys) = iv.system.as_mut() {
                    sys.layers.insert("vda".into(), rates(1000.0, 10.0, 200.0));
                    if iv.read.ios + iv.write.ios > 0 {
                        want.push(at + iv.t_s);
                    }
                }
            }
            at += p.intervals.last().map_or(0.0, |iv| iv.t_s + iv.dur_s);
        }
        assert!(c.points.len() > 1 && !want.is_empty());
        let (b, layers) = calib_bars(&c);
        assert_eq!(layers.len(), 4);
        assert_eq!(b.iter().map(|b| b.t0).collect::<Vec<_>>(), want);
        assert!(b.windows(2).all(|w| w[0].t0 < w[1].t0), "in order");
        // The stages in their proportions (1, 10, 200 µs), scaled to the fixture's shorter
        // application latency (see `AppSplit::parts`).
        let p = &b[0].parts;
        assert!(
            (p[2] / p[1] - 10.0).abs() < 1e-9 && (p[3] / p[1] - 200.0).abs() < 1e-9,
            "{p:?}"
        );
        let doc = Document::Calibration(c);
        let s = [Stored {
            id: 4,
            document: &doc,
            histograms: &[],
        }];
        let html = result_html(&s).unwrap();
        assert_eq!(html.matches("data-chart=\"stack:4\"").count(), 1);
        assert!(html.contains("id=\"calib-layers\""));
    }

    #[test]
    fn a_db_run_s_bars_are_the_kernel_s_stages() {
        const DB: &str = include_str!("../../../campaign/tests/fixtures/db_run.json");
        let Document::DbRun(mut d) = Document::from_json(DB).unwrap() else {
            unreachable!("db_run.json is a db run")
        };
        assert!(db_bars(&d).is_empty());
        let sys = d.intervals[2]
            .system
            .as_mut()
            .expect("the fixture has samples");
        sys.layers.insert("vda".into(), rates(900.0, 40.0, 250.0));
        let b = db_bars(&d);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].parts, [1.0, 40.0, 250.0]);
        let doc = Document::DbRun(d);
        let s = [Stored {
            id: 9,
            document: &doc,
            histograms: &[],
        }];
        let html = result_html(&s).unwrap();
        assert_eq!(html.matches("data-chart=\"stack:9\"").count(), 1);
        assert!(!html.contains("application + kernel submit"));
    }

    #[test]
    fn findings_and_the_layer_chart_escaped_and_only_when_present() {
        let old = page(run());
        assert!(!old.contains("data-chart=\"stack:") && !old.contains("<ol class=\"find\">"));
        let mut r = traced();
        let mut f = finding(Layer::OsQueue, 0.4, "the <queue> & more");
        f.next = "raise nr_requests <now>".into();
        r.findings = vec![finding(Layer::Device, 0.5, "vda busy"), f];
        let html = page(r);
        assert_eq!(html.matches("data-chart=\"stack:5\"").count(), 1, "{html}");
        assert!(html.contains("<h3 id=\"layers\">"));
        let list = &html[html.find("<ol class=\"find\">").expect("a findings list")..];
        let list = &list[..list.find("</ol>").unwrap()];
        assert!(
            list.find("vda busy").unwrap() < list.find("the &lt;queue&gt; &amp; more").unwrap()
        );
        assert!(
            list.contains("50% of the I/O time") && list.contains("raise nr_requests &lt;now&gt;")
        );
        assert!(list.contains("(the USE method)"), "{list}");
        assert!(!html.contains("NaN") && !html.contains("<queue>"));
    }
}
