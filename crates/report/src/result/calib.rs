//! A calibration's pictures, as ORION draws them: IOPS of small I/Os and MB/s of large ones
//! against outstanding I/Os, latency against IOPS (the knee, with the cap), each step's
//! latency percentile curve, and the mixed matrix as heat maps.

use super::curves::curves;
use super::item::Group;
use crate::svg::heat_map::heat_map;
use crate::svg::line::{line_chart, Axis, Chart, Series};
use crate::svg::page::esc;
use crate::svg::scale::Fmt;
use iogauge_campaign::digest::DigestError;
use iogauge_model::calib::{CalibrationReport, PointReport, Step};

/// The points of `step` that count (a superseded point was measured again), by depth.
fn points(c: &CalibrationReport, step: Step) -> Vec<&PointReport> {
    let mut v: Vec<&PointReport> = c
        .points
        .iter()
        .filter(|p| p.point.step == step && !p.point.superseded)
        .collect();
    v.sort_by_key(|p| p.point.outstanding);
    v
}

fn dotted(mut s: Series) -> Series {
    s.dots = true;
    s
}

pub(super) fn section(out: &mut String, g: &Group<CalibrationReport>) -> Result<(), DigestError> {
    out.push_str("<h2 id=\"calibrations\">Calibrations</h2>\n<p class=\"note\">Each point is one depth of outstanding I/Os measured on its own (superseded points, measured again, are left out). The knee is where latency turns up while IOPS stops growing; the dashed line is the latency cap the search kept under.</p>\n<div class=\"charts\">");
    let curve_of = |step: Step, k: usize, what: &str, y: fn(&PointReport) -> f64| {
        g.items
            .iter()
            .filter(|(_, c)| !points(c, step).is_empty())
            .map(|(it, c)| {
                let pts = points(c, step)
                    .iter()
                    .map(|p| (f64::from(p.point.outstanding), Some(y(p))))
                    .collect();
                dotted(g.series(it, k, what, pts))
            })
            .collect::<Vec<_>>()
    };
    let depth = |key: &str, what: &str, y: Axis, series: Vec<Series>| Chart {
        kind: "curve",
        key: key.to_string(),
        aria: format!("{what} against outstanding I/Os, results {}", g.ids()),
        x: Axis::log("outstanding I/Os", Fmt::Si),
        y,
        series,
        spans: Vec::new(),
        cap: None,
    };
    line_chart(
        out,
        &depth(
            "iops",
            "small-I/O IOPS",
            Axis::linear("IOPS (small I/Os)", Fmt::Si),
            curve_of(Step::Small, 0, "IOPS", |p| p.point.iops),
        ),
    );
    line_chart(
        out,
        &depth(
            "mbps",
            "large-I/O MB/s",
            Axis::linear("MB/s (large I/Os)", Fmt::Si),
            curve_of(Step::Large, 1, "MB/s", |p| p.point.mbps),
        ),
    );
    knee(out, g);
    out.push_str("</div>\n");
    // Each step's merged histogram (`small`, `large`, `single`, `matrix small`).
    curves(out, g)?;
    matrix(out, g);
    super::layers::calib_section(out, g);
    Ok(())
}

/// Latency (the search's criterion, and p99) against IOPS over the small-I/O points.
fn knee(out: &mut String, g: &Group<CalibrationReport>) {
    let mut series = Vec::new();
    for (it, c) in &g.items {
        let pts = points(c, Step::Small);
        if pts.is_empty() {
            continue;
        }
        let crit = c.options.criterion;
        let line = |f: &dyn Fn(&PointReport) -> f64| {
            pts.iter()
                .map(|p| (p.point.iops, Some(f(p))))
                .collect::<Vec<_>>()
        };
        let name = format!("{crit:?} latency").to_lowercase();
        series.push(dotted(g.series(
            it,
            0,
            &name,
            line(&|p| crit.of(&p.point.lat_us)),
        )));
        series.push(dotted(g.series(
            it,
            1,
            "p99 latency",
            line(&|p| p.point.lat_us.p99),
        )));
    }
    // One cap line: the first calibration's (a second with another cap is in its summary).
    let cap = g.items.first().map(|(_, c)| {
        let o = &c.options;
        (
            o.max_latency_us,
            format!("cap {} ms", o.max_latency_us / 1e3),
        )
    });
    line_chart(
        out,
        &Chart {
            kind: "curve",
            key: "knee".into(),
            aria: format!("latency against IOPS of small I/Os, results {}", g.ids()),
            x: Axis::linear("IOPS (small I/Os)", Fmt::Si),
            y: Axis::log("latency", Fmt::Micros),
            series,
            spans: Vec::new(),
            cap,
        },
    );
}

/// ORION's matrix: small IOPS and large MB/s at each (small, large) depth, one pair of heat
/// maps per calibration that ran it.
fn matrix(out: &mut String, g: &Group<CalibrationReport>) {
    let with: Vec<_> = g
        .items
        .iter()
        .filter(|(_, c)| !c.matrix.is_empty())
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str("<h3>Mixed matrix</h3>\n<p class=\"note\">Small random I/Os while large ones stream: each cell is one measurement at that many outstanding small (across) and large (up) I/Os.</p>\n");
    for (it, c) in with {
        let m = &c.matrix;
        out.push_str("<h4>");
        esc(out, &it.name());
        out.push_str("</h4>\n<div class=\"charts\">");
        let iops: Vec<(u32, u32, f64)> =
            m.iter().map(|c| (c.small, c.large, c.small_iops)).collect();
        let mbps: Vec<(u32, u32, f64)> =
            m.iter().map(|c| (c.small, c.large, c.large_mbps)).collect();
        let axes = ("outstanding small I/Os", "outstanding large I/Os");
        let key = it.s.id.to_string();
        heat_map(
            out,
            &format!("{key}:iops"),
            "small-I/O IOPS in each cell",
            axes,
            Fmt::Si,
            &iops,
        );
        heat_map(
            out,
            &format!("{key}:mbps"),
            "large-I/O MB/s in each cell",
            axes,
            Fmt::Si,
            &mbps,
        );
        out.push_str("</div>\n");
    }
}
