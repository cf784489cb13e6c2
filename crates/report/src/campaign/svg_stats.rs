//! Charts of the figures per case: a metric's means with their 95 % intervals and every
//! repetition, the same normalised to the baseline, the latency percentile curves, and the
//! read:write mix. Each function appends one `<svg class="chart">`.

use super::svg::{colour, compact, esc, headroom, Fmt, Scale, N};
use super::svg_draw::{
    cross, legend, legend_rows, no_data, open, text, text_width, x_axis, y_axis, Frame, Line, Side,
    Swatch,
};
use iogauge_campaign::{CampaignView, CaseView, MetricView};
use iogauge_stats::compare::Ci;
use std::fmt::Write as _;

/// Width of the per-metric charts (two fit side by side in the page).
const W: f64 = 560.0;

/// Left margin of the charts with a y axis: tick labels and the axis title.
const LEFT: f64 = 68.0;

/// Position of case `name` in the campaign, which picks its colour everywhere.
pub(super) fn case_index(view: &CampaignView, name: &str) -> usize {
    view.cases.iter().position(|c| c.name == name).unwrap_or(0)
}

/// One bar: a central value, its interval, and the repetitions as dots.
struct Bar<'a> {
    case: &'a str,
    colour: &'static str,
    value: f64,
    ci: Option<Ci>,
    dots: Vec<f64>,
    outliers: &'a [usize],
}

/// What distinguishes the two bar charts.
struct Look<'a> {
    kind: &'a str,
    key: &'a str,
    aria: &'a str,
    fmt: Fmt,
    y_title: &'a str,
    unit: &'a str,
    /// Dashed reference line at 1.0.
    baseline: bool,
}

/// Means by case: bar = mean, whisker = 95 % CI of the mean, dots = repetitions.
pub(super) fn bars(out: &mut String, view: &CampaignView, m: &MetricView) {
    let bars: Vec<Bar> = m
        .cases
        .iter()
        .map(|c| Bar {
            case: &c.case,
            colour: colour(case_index(view, &c.case)),
            value: c.describe.mean,
            ci: c.describe.ci95,
            dots: c.samples.clone(),
            outliers: &c.describe.outliers,
        })
        .collect();
    let y_title = if m.label == m.unit {
        m.label.clone()
    } else {
        format!("{} ({})", m.label, m.unit)
    };
    let aria = format!("{}: mean by case with 95% intervals", m.label);
    let look = Look {
        kind: "bars",
        key: &m.key,
        aria: &aria,
        fmt: Fmt::Si,
        y_title: &y_title,
        unit: &m.unit,
        baseline: false,
    };
    bar_chart(out, &bars, &look);
}

/// Whether the metric has anything to normalise: some case has a ratio to the baseline.
pub(super) fn has_ratios(m: &MetricView) -> bool {
    m.cases.iter().any(|c| c.ratio.is_some())
}

/// Ratios to the baseline: bar = ratio of means, whisker = its 95 % CI, dots = each
/// repetition divided by the baseline mean. The baseline itself sits at 1.0 with its own
/// repetitions (and its mean's interval) in baseline units.
pub(super) fn normalised(out: &mut String, view: &CampaignView, m: &MetricView) {
    let bars: Vec<Bar> = m
        .cases
        .iter()
        .filter_map(|c| {
            let (value, ci, dots) = match &c.ratio {
                Some(r) => (r.ratio, r.ci95, r.normalised.clone()),
                None if view.is_baseline(&c.case) && c.describe.mean > 0.0 => {
                    let mean = c.describe.mean;
                    let ci = c.describe.ci95.map(|ci| Ci {
                        lo: ci.lo / mean,
                        hi: ci.hi / mean,
                    });
                    (1.0, ci, c.samples.iter().map(|x| x / mean).collect())
                }
                None => return None,
            };
            Some(Bar {
                case: &c.case,
                colour: colour(case_index(view, &c.case)),
                value,
                ci,
                dots,
                outliers: &c.describe.outliers,
            })
        })
        .collect();
    let y_title = format!("{} ÷ {} (baseline = 1)", m.label, view.baseline);
    let aria = format!("{}: ratio to the baseline by case", m.label);
    let look = Look {
        kind: "normalised",
        key: &m.key,
        aria: &aria,
        fmt: Fmt::Times,
        y_title: &y_title,
        unit: "× baseline",
        baseline: true,
    };
    bar_chart(out, &bars, &look);
}

fn bar_chart(out: &mut String, bars: &[Bar], look: &Look) {
    let names: Vec<String> = bars.iter().map(|b| short(b.case, 24)).collect();
    let widest = names.iter().map(|n| text_width(n)).fold(0.0, f64::max);
    let band = (W - 84.0) / bars.len().max(1) as f64;
    let rotate = widest > band - 8.0;
    let bottom = if rotate { 20.0 + widest * 0.5 } else { 28.0 };
    let h = 270.0 + bottom;
    let f = Frame::new(W, h, 68.0, 16.0, 44.0, bottom);
    open(out, look.kind, look.key, W, h, look.aria);
    let mut items = vec![
        (
            Swatch::Area("#999"),
            if look.baseline { "ratio" } else { "mean" },
        ),
        (Swatch::Whisker, "95% CI"),
        (Swatch::Dot, "run"),
        (Swatch::Outlier, "outlier"),
    ];
    if look.baseline {
        items.push((Swatch::Dashed("#444"), "baseline"));
    }
    legend(out, f.x0, 14.0, W - 8.0, &items);
    if bars.is_empty() {
        no_data(out, &f, "no data");
        out.push_str("</svg>");
        return;
    }
    let finite = |x: &f64| x.is_finite();
    let all = bars.iter().flat_map(|b| {
        let ci = b.ci.map(|c| [c.lo, c.hi]).unwrap_or([b.value; 2]);
        b.dots.iter().copied().chain([b.value]).chain(ci)
    });
    let hi = all.clone().filter(finite).fold(0.0, f64::max);
    let lo = all.filter(finite).fold(0.0, f64::min);
    let hi = headroom(if look.baseline { hi.max(1.0) } else { hi });
    let s = Scale::linear(lo, hi, f.y1, f.y0);
    y_axis(out, &f, (&s, 5), Side::Left, look.fmt, look.y_title);
    let zero = s.at(0.0);
    let _ = write!(
        out,
        "<path class=\"ax\" d=\"M{} {}H{}\"/>",
        N(f.x0),
        N(zero),
        N(f.x1)
    );
    let bw = (band * 0.56).min(64.0);
    let mut tip = String::new();
    for (i, (b, name)) in bars.iter().zip(&names).enumerate() {
        let cx = f.x0 + band * (i as f64 + 0.5);
        let top = s.at(b.value);
        tip.clear();
        esc(&mut tip, b.case);
        tip.push_str(": ");
        compact(&mut tip, b.value);
        tip.push(' ');
        esc(&mut tip, look.unit);
        if let Some(ci) = b.ci {
            tip.push_str(" (95% CI ");
            compact(&mut tip, ci.lo);
            tip.push('–');
            compact(&mut tip, ci.hi);
            tip.push(')');
        }
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\".75\"><title>{tip}</title></rect>",
            N(cx - bw / 2.0),
            N(top.min(zero)),
            N(bw),
            N((top - zero).abs()),
            b.colour
        );
        let mut peak = top;
        if let Some(ci) = b.ci.filter(|c| c.lo.is_finite() && c.hi.is_finite()) {
            let (yl, yh) = (s.at(ci.lo), s.at(ci.hi));
            peak = peak.min(yh);
            let _ = write!(
                out,
                "<path class=\"eb\" d=\"M{x} {yl}V{yh}M{l} {yl}h12M{l} {yh}h12\"/>",
                x = N(cx),
                yl = N(yl),
                yh = N(yh),
                l = N(cx - 6.0)
            );
        }
        let n = b.dots.len();
        for (j, &d) in b.dots.iter().enumerate() {
            if !d.is_finite() {
                continue;
            }
            let x = if n > 1 {
                cx - bw * 0.3 + bw * 0.6 * j as f64 / (n - 1) as f64
            } else {
                cx
            };
            let y = s.at(d);
            peak = peak.min(y);
            tip.clear();
            esc(&mut tip, b.case);
            let _ = write!(tip, " #{}: ", j + 1);
            compact(&mut tip, d);
            tip.push(' ');
            esc(&mut tip, look.unit);
            if b.outliers.contains(&j) {
                tip.push_str(" (outlier)");
                out.push_str("<path class=\"o\" d=\"");
                cross(out, x, y);
                let _ = write!(out, "\"><title>{tip}</title></path>");
            } else {
                let _ = write!(
                    out,
                    "<circle class=\"s\" cx=\"{}\" cy=\"{}\" r=\"2.8\"><title>{tip}</title></circle>",
                    N(x),
                    N(y)
                );
            }
        }
        tip.clear();
        compact(&mut tip, b.value);
        if look.baseline {
            tip.push('×');
        }
        text(out, cx, peak - 6.0, "vl", "middle", &tip);
        if rotate {
            let y = f.y1 + 12.0;
            let _ = write!(
                out,
                "<text x=\"{x}\" y=\"{y}\" text-anchor=\"end\" transform=\"rotate(-30 {x} {y})\">",
                x = N(cx),
                y = N(y)
            );
            esc(out, name);
            out.push_str("</text>");
        } else {
            text(out, cx, f.y1 + 16.0, "", "middle", name);
        }
    }
    if look.baseline {
        let y = s.at(1.0);
        let _ = write!(
            out,
            "<path class=\"bl\" d=\"M{} {}H{}\"/>",
            N(f.x0),
            N(y),
            N(f.x1)
        );
    }
    out.push_str("</svg>");
}

/// `s` cut to `max` characters with an ellipsis.
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
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

/// x of percentile `p` on the nines scale, −log10(1 − p/100); `None` at or past 100.
fn nines(p: f64) -> Option<f64> {
    (0.0..100.0)
        .contains(&p)
        .then(|| -(1.0 - p / 100.0).log10())
        .filter(|x| x.is_finite())
}

/// Latency against percentile for one direction, one line per case; x on the nines scale,
/// y logarithmic.
pub(super) fn latcurve(out: &mut String, view: &CampaignView, label: &str) {
    let curves = || {
        view.cases.iter().enumerate().filter_map(move |(i, c)| {
            c.lat_curves
                .iter()
                .find(|l| l.label == label)
                .map(|l| (i, c, l))
        })
    };
    let pts = || {
        curves().flat_map(|(_, _, l)| {
            l.points.iter().filter_map(|&(p, y)| {
                nines(p)
                    .filter(|_| y > 0.0 && y.is_finite())
                    .map(|x| (x, y))
            })
        })
    };
    let xmax = pts().map(|(x, _)| x).fold(2.0, f64::max).ceil().min(9.0);
    let ymin = pts().map(|(_, y)| y).fold(f64::INFINITY, f64::min);
    let ymax = pts().map(|(_, y)| y).fold(0.0, f64::max);
    let names: Vec<String> = curves().map(|(_, c, _)| short(&c.name, 24)).collect();
    let items: Vec<(Swatch, &str)> = curves()
        .zip(&names)
        .map(|((i, _, _), n)| (Swatch::Line(colour(i)), n.as_str()))
        .collect();
    let rows = legend_rows(LEFT, W - 8.0, names.iter().map(|n| n.as_str()));
    let top = 24.0 + 16.0 * rows as f64;
    let h = 300.0 + top;
    let f = Frame::new(W, h, LEFT, 30.0, top, 46.0);
    let aria = format!("{label} latency by percentile, one line per case");
    open(out, "latcurve", label, W, h, &aria);
    legend(out, f.x0, 14.0, W - 8.0, &items);
    if ymax <= 0.0 {
        no_data(out, &f, "no latency recorded");
        out.push_str("</svg>");
        return;
    }
    let xs = Scale::linear(0.0, xmax, f.x0, f.x1);
    let ys = Scale::log(ymin, ymax, f.y1, f.y0);
    let y_title = format!("{label} latency");
    y_axis(out, &f, (&ys, 5), Side::Left, Fmt::Micros, &y_title);
    let ticks: Vec<f64> = std::iter::once(2f64.log10())
        .chain((1..=xmax as usize).map(|k| k as f64))
        .collect();
    x_axis(
        out,
        &f,
        &xs,
        Fmt::Nines,
        "percentile (nines scale)",
        Some(&ticks),
    );
    for (i, _, l) in curves() {
        let attrs = format!("class=\"ln\" stroke=\"{}\"", colour(i));
        let mut line = Line::start(out, &attrs);
        for &(p, y) in &l.points {
            match nines(p).filter(|_| y > 0.0) {
                Some(x) => line.point(xs.at(x), ys.at(y)),
                None => line.gap(),
            }
        }
        line.finish(false);
    }
    out.push_str("</svg>");
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
