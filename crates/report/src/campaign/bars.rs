//! Bar charts of a metric by case: the means with their 95 % intervals and every repetition,
//! and the headline ratios to the baseline (of means or of trimmed means). Each function
//! appends one `<svg class="chart">`.

use super::cases::case_index;
use crate::svg::draw::{
    cross, hline, legend, no_data, open, short, text, text_width, y_axis, Frame, Side, Swatch, W,
};
use crate::svg::page::{colour, esc};
use crate::svg::scale::{compact, headroom, Fmt, Scale, N};
use iogauge_campaign::{CampaignView, MetricView};
use iogauge_stats::compare::{Ci, Statistic};
use std::fmt::Write as _;

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
    /// What a bar is, for the legend: "mean", "ratio of trimmed means".
    bar: &'a str,
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
        bar: "mean",
        baseline: false,
    };
    bar_chart(out, &bars, &look);
}

/// Whether the metric has anything to normalise: some case has a ratio to the baseline.
pub(super) fn has_ratios(m: &MetricView) -> bool {
    m.cases.iter().any(|c| c.ratio.is_some())
}

/// Ratios to the baseline: bar = the headline ratio (of means or of trimmed means, as the
/// campaign's statistic says), whisker = its 95 % CI, dots = each repetition divided by the
/// baseline's mean (or trimmed mean). The baseline itself sits at 1.0 with its own
/// repetitions in the same units, and with means its mean's interval (there is no interval of
/// one case's trimmed mean to show).
pub(super) fn normalised(out: &mut String, view: &CampaignView, m: &MetricView) {
    let bars: Vec<Bar> = m
        .cases
        .iter()
        .filter_map(|c| {
            let (value, ci, dots) = match &c.ratio {
                Some(r) => (r.headline(), r.headline_ci(), r.normalised.clone()),
                None if view.is_baseline(&c.case) => {
                    let d = &c.describe;
                    let (unit, ci) = match view.statistic {
                        Statistic::Mean => (d.mean, d.ci95),
                        Statistic::Trimmed => (d.trimmed_mean, None),
                    };
                    if unit <= 0.0 {
                        return None;
                    }
                    let ci = ci.map(|ci| Ci {
                        lo: ci.lo / unit,
                        hi: ci.hi / unit,
                    });
                    (1.0, ci, c.samples.iter().map(|x| x / unit).collect())
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
    let bar = match view.statistic {
        Statistic::Mean => "ratio of means",
        Statistic::Trimmed => "ratio of trimmed means",
    };
    let y_title = format!("{} ÷ {} (baseline = 1)", m.label, view.baseline);
    let aria = format!("{}: {bar} to the baseline by case", m.label);
    let look = Look {
        kind: "normalised",
        key: &m.key,
        aria: &aria,
        fmt: Fmt::Times,
        y_title: &y_title,
        unit: "× baseline",
        bar,
        baseline: true,
    };
    bar_chart(out, &bars, &look);
}

/// Where a bar chart's bars go: the value scale, its zero, the bars' width, and the bottom
/// of the plot the case names hang from (rotated when they do not fit their band).
struct Place<'a> {
    s: &'a Scale,
    zero: f64,
    bw: f64,
    y1: f64,
    rotate: bool,
}

/// A bar chart (means or ratios by case): legend, y axis, one bar per case with its interval,
/// repetitions and value, the case names under the bars, and the baseline's line at 1.
fn bar_chart(out: &mut String, bars: &[Bar], look: &Look) {
    let names: Vec<String> = bars.iter().map(|b| short(b.case, 24)).collect();
    let widest = names.iter().map(|n| text_width(n)).fold(0.0, f64::max);
    let band = (W - 84.0) / bars.len().max(1) as f64;
    let rotate = widest > band - 8.0;
    let bottom = if rotate { 20.0 + widest * 0.5 } else { 28.0 };
    let h = 270.0 + bottom;
    let f = Frame::new(W, h, 68.0, 16.0, 44.0, bottom);
    open(out, look.kind, look.key, W, h, look.aria);
    bar_legend(out, &f, look);
    if bars.is_empty() {
        no_data(out, &f, "no data");
        out.push_str("</svg>");
        return;
    }
    let s = bar_scale(bars, look, &f);
    y_axis(out, &f, (&s, 5), Side::Left, look.fmt, look.y_title);
    let zero = s.at(0.0);
    let _ = write!(
        out,
        "<path class=\"ax\" d=\"M{} {}H{}\"/>",
        N(f.x0),
        N(zero),
        N(f.x1)
    );
    let place = Place {
        s: &s,
        zero,
        bw: (band * 0.56).min(64.0),
        y1: f.y1,
        rotate,
    };
    let mut tip = String::new();
    for (i, (b, name)) in bars.iter().zip(&names).enumerate() {
        let cx = f.x0 + band * (i as f64 + 0.5);
        bar(out, &mut tip, b, cx, &place, look);
        case_name(out, cx, name, &place);
    }
    if look.baseline {
        let y = s.at(1.0);
        hline(out, &f, y);
    }
    out.push_str("</svg>");
}

/// The bar chart's legend: mean (or which ratio), interval, run, outlier, and the baseline
/// line.
fn bar_legend(out: &mut String, f: &Frame, look: &Look) {
    let mut items = vec![
        (Swatch::Area("#999"), look.bar),
        (Swatch::Whisker, "95% CI"),
        (Swatch::Dot, "run"),
        (Swatch::Outlier, "outlier"),
    ];
    if look.baseline {
        items.push((Swatch::Dashed("#444"), "baseline"));
    }
    legend(out, f.x0, 14.0, W - 8.0, &items);
}

/// The value axis: from below zero if anything is negative to above every value, interval
/// and repetition (and 1, the baseline, for ratios), with headroom.
fn bar_scale(bars: &[Bar], look: &Look, f: &Frame) -> Scale {
    let finite = |x: &f64| x.is_finite();
    let all = bars.iter().flat_map(|b| {
        let ci = b.ci.map(|c| [c.lo, c.hi]).unwrap_or([b.value; 2]);
        b.dots.iter().copied().chain([b.value]).chain(ci)
    });
    let hi = all.clone().filter(finite).fold(0.0, f64::max);
    let lo = all.filter(finite).fold(0.0, f64::min);
    let hi = headroom(if look.baseline { hi.max(1.0) } else { hi });
    Scale::linear(lo, hi, f.y1, f.y0)
}

/// One case's bar centred on `cx`: the bar, its interval's whisker, the repetitions as dots
/// (outliers as crosses), and its value above the highest of them. `tip` is scratch space.
fn bar(out: &mut String, tip: &mut String, b: &Bar, cx: f64, p: &Place, look: &Look) {
    let top = p.s.at(b.value);
    tip.clear();
    esc(tip, b.case);
    tip.push_str(": ");
    compact(tip, b.value);
    tip.push(' ');
    esc(tip, look.unit);
    if let Some(ci) = b.ci {
        tip.push_str(" (95% CI ");
        compact(tip, ci.lo);
        tip.push('–');
        compact(tip, ci.hi);
        tip.push(')');
    }
    let _ = write!(
        out,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\".75\"><title>{tip}</title></rect>",
        N(cx - p.bw / 2.0),
        N(top.min(p.zero)),
        N(p.bw),
        N((top - p.zero).abs()),
        b.colour
    );
    let mut peak = top;
    if let Some(ci) = b.ci.filter(|c| c.lo.is_finite() && c.hi.is_finite()) {
        let (yl, yh) = (p.s.at(ci.lo), p.s.at(ci.hi));
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
    let peak = dots(out, tip, b, cx, p, look, peak);
    tip.clear();
    compact(tip, b.value);
    if look.baseline {
        tip.push('×');
    }
    text(out, cx, peak - 6.0, "vl", "middle", tip);
}

/// A bar's repetitions, spread across its width; returns `peak` raised to the highest one.
fn dots(
    out: &mut String,
    tip: &mut String,
    b: &Bar,
    cx: f64,
    p: &Place,
    look: &Look,
    mut peak: f64,
) -> f64 {
    let n = b.dots.len();
    for (j, &d) in b.dots.iter().enumerate() {
        if !d.is_finite() {
            continue;
        }
        let x = if n > 1 {
            cx - p.bw * 0.3 + p.bw * 0.6 * j as f64 / (n - 1) as f64
        } else {
            cx
        };
        let y = p.s.at(d);
        peak = peak.min(y);
        tip.clear();
        esc(tip, b.case);
        let _ = write!(tip, " #{}: ", j + 1);
        compact(tip, d);
        tip.push(' ');
        esc(tip, look.unit);
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
    peak
}

/// A case's name under its bar, turned 30° when the names do not fit their bands.
fn case_name(out: &mut String, cx: f64, name: &str, p: &Place) {
    if p.rotate {
        let y = p.y1 + 12.0;
        let _ = write!(
            out,
            "<text x=\"{x}\" y=\"{y}\" text-anchor=\"end\" transform=\"rotate(-30 {x} {y})\">",
            x = N(cx),
            y = N(y)
        );
        esc(out, name);
        out.push_str("</text>");
    } else {
        text(out, cx, p.y1 + 16.0, "", "middle", name);
    }
}
