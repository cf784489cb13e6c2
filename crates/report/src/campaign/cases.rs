//! Charts of the figures per case: the latency percentile curves and the read:write mix
//! (a metric's bars are in `bars.rs`), and a case's colour index, which every per-case
//! chart shares. Each chart function appends one `<svg class="chart">`.

use crate::svg::draw::{legend, no_data, open, short, text, text_width, x_axis, Frame, Swatch};
use crate::svg::latency::latency_curves;
use crate::svg::page::colour;
use crate::svg::scale::{Fmt, Scale, N};
use iogauge_campaign::{CampaignView, CaseView, LatCurve};
use std::fmt::Write as _;

/// Position of case `name` in the campaign, which picks its colour everywhere.
pub(super) fn case_index(view: &CampaignView, name: &str) -> usize {
    view.cases.iter().position(|c| c.name == name).unwrap_or(0)
}

/// Direction labels of the latency curves, in first-seen case order.
pub(super) fn lat_labels(view: &CampaignView) -> Vec<&str> {
    let mut labels: Vec<&str> = Vec::new();
    for c in &view.cases {
        for l in &c.lat_curves {
            if !labels.contains(&l.label.as_str()) {
                labels.push(&l.label);
            }
        }
    }
    labels
}

/// Latency against percentile for one direction, one line per case; x on the nines scale,
/// y logarithmic.
pub(super) fn latcurve(out: &mut String, view: &CampaignView, label: &str) {
    let lines: Vec<(String, &'static str, &LatCurve)> = view
        .cases
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let l = c.lat_curves.iter().find(|l| l.label == label)?;
            Some((short(&c.name, 24), colour(i), l))
        })
        .collect();
    let aria = format!("{label} latency by percentile, one line per case");
    latency_curves(out, label, &aria, &lines);
}

/// Mean read share of a case's runs, and each run's share.
fn read_shares(c: &CaseView) -> (Option<f64>, Vec<f64>) {
    let v: Vec<f64> = c
        .runs
        .iter()
        .filter_map(|r| r.read_share)
        .filter(|x| x.is_finite())
        .map(|x| x.clamp(0.0, 1.0))
        .collect();
    let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    (mean, v)
}

/// One stacked horizontal bar per case: mean share of reads and of writes, with a tick at
/// each run's read share.
pub(super) fn rw(out: &mut String, view: &CampaignView) {
    const RW_W: f64 = 900.0;
    const ROW: f64 = 26.0;
    let names: Vec<String> = view.cases.iter().map(|c| short(&c.name, 30)).collect();
    let left = names.iter().map(|n| text_width(n)).fold(40.0, f64::max) + 16.0;
    let h = 40.0 + ROW * view.cases.len().max(1) as f64 + 40.0;
    let f = Frame::new(RW_W, h, left, 24.0, 40.0, 40.0);
    open(
        out,
        "rw",
        "read_share",
        RW_W,
        h,
        "read and write share of I/Os by case",
    );
    let (read, write) = ("#4e79a7", "#f28e2b");
    legend(
        out,
        f.x0,
        14.0,
        RW_W - 8.0,
        &[
            (Swatch::Area(read), "read"),
            (Swatch::Area(write), "write"),
            (Swatch::Line("#222"), "one run's read share"),
        ],
    );
    let xs = Scale::linear(0.0, 100.0, f.x0, f.x1);
    x_axis(out, &f, &xs, Fmt::Pct, "share of workload I/Os", None);
    if view.cases.is_empty() {
        no_data(out, &f, "no cases");
    }
    let mut label = String::new();
    for (i, (c, name)) in view.cases.iter().zip(&names).enumerate() {
        let y = f.y0 + ROW * i as f64;
        text(out, f.x0 - 8.0, y + 17.0, "", "end", name);
        let (mean, runs) = read_shares(c);
        let Some(share) = mean else {
            text(out, f.x0 + 6.0, y + 17.0, "nd", "start", "no I/O recorded");
            continue;
        };
        let xm = xs.at(share * 100.0);
        let _ = write!(
            out,
            "<rect x=\"{x0}\" y=\"{y}\" width=\"{wr}\" height=\"18\" fill=\"{read}\"/><rect x=\"{xm}\" y=\"{y}\" width=\"{ww}\" height=\"18\" fill=\"{write}\"/>",
            x0 = N(f.x0),
            y = N(y + 4.0),
            wr = N(xm - f.x0),
            xm = N(xm),
            ww = N(f.x1 - xm)
        );
        for (val, x0, x1, what) in [(share, f.x0, xm, "read"), (1.0 - share, xm, f.x1, "write")] {
            label.clear();
            let _ = write!(label, "{:.0}% {what}", val * 100.0);
            if x1 - x0 > text_width(&label) + 8.0 {
                text(out, (x0 + x1) / 2.0, y + 17.0, "in", "middle", &label);
            }
        }
        for r in runs {
            let x = xs.at(r * 100.0);
            let _ = write!(
                out,
                "<path class=\"tk\" d=\"M{} {}v22\"/>",
                N(x),
                N(y + 2.0)
            );
        }
    }
    out.push_str("</svg>");
}
