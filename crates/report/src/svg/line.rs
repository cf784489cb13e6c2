//! The line chart of named series (time series, curves against outstanding I/Os, latency
//! against IOPS), with its axes, shaded spans and a reference line; long series are bucketed
//! to [`MAX_POINTS`].

use super::draw::{
    hline, legend, legend_rows, no_data, open, text, x_axis, y_axis, Frame, Line, Side, Swatch,
    LEFT, W,
};
use super::scale::{headroom, Fmt, Scale, N};
use std::fmt::Write as _;

/// Dash patterns of a result's series when colour marks the result (several results).
const DASHES: [&str; 4] = ["", "6 3", "2 3", "9 3 2 3"];

/// One line of a chart: (x, y) points, `None` lifting the pen.
pub(crate) struct Series {
    pub name: String,
    pub colour: &'static str,
    /// Index into the dash patterns (0: solid).
    pub dash: usize,
    /// Mark each point with a dot (curves of few points).
    pub dots: bool,
    pub pts: Vec<(f64, Option<f64>)>,
}

/// An axis: its title, how ticks are written, and whether it is logarithmic.
pub(crate) struct Axis {
    pub title: String,
    pub fmt: Fmt,
    pub log: bool,
}

impl Axis {
    pub(crate) fn linear(title: &str, fmt: Fmt) -> Axis {
        Axis {
            title: title.to_string(),
            fmt,
            log: false,
        }
    }

    pub(crate) fn log(title: &str, fmt: Fmt) -> Axis {
        Axis {
            log: true,
            ..Axis::linear(title, fmt)
        }
    }
}

/// A line chart: `data-chart="KIND:KEY"`, its axes, series, shaded spans (start, end, CSS
/// class: `ramp`, `steady`) and an optional horizontal reference line (value, label).
pub(crate) struct Chart {
    pub kind: &'static str,
    pub key: String,
    pub aria: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub spans: Vec<(f64, f64, &'static str)>,
    pub cap: Option<(f64, String)>,
}

/// Most points drawn per line; a longer series is bucketed.
pub(crate) const MAX_POINTS: usize = 600;

/// `pts` in at most [`MAX_POINTS`] buckets: each at its members' mean x, with their mean y —
/// or their largest on a logarithmic (latency) axis, where averaging would hide a spike.
pub(crate) fn thin(pts: &[(f64, Option<f64>)], largest: bool) -> Vec<(f64, Option<f64>)> {
    let k = pts.len().div_ceil(MAX_POINTS).max(1);
    if k == 1 {
        return pts.to_vec();
    }
    pts.chunks(k)
        .map(|c| {
            let x = c.iter().map(|p| p.0).sum::<f64>() / c.len() as f64;
            let ys = c.iter().filter_map(|p| p.1).filter(|y| y.is_finite());
            let y = if largest {
                ys.reduce(f64::max)
            } else {
                let (n, sum) = ys.fold((0usize, 0.0), |(n, s), y| (n + 1, s + y));
                (n > 0).then(|| sum / n as f64)
            };
            (x, y)
        })
        .collect()
}

fn finite(s: &Series) -> impl Iterator<Item = (f64, f64)> + '_ {
    s.pts
        .iter()
        .filter_map(|&(x, y)| Some((x, y?)))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
}

fn scale(lo: f64, hi: f64, axis: &Axis, a: f64, b: f64) -> Scale {
    if axis.log {
        Scale::log(lo, hi, a, b)
    } else {
        Scale::linear(lo.min(0.0), headroom(hi), a, b)
    }
}

/// Draws `c` as one `<svg class="chart">`, long series bucketed.
pub(crate) fn line_chart(out: &mut String, c: &Chart) {
    let thinned: Vec<Series> = c
        .series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            pts: thin(&s.pts, c.y.log),
            ..*s
        })
        .collect();
    draw(out, c, &thinned);
}

/// The legend of `c`: each series, then each kind of span shaded.
fn legend_items(c: &Chart) -> Vec<(Swatch<'_>, &str)> {
    let mut items: Vec<(Swatch, &str)> = c
        .series
        .iter()
        .map(|s| {
            let sw = if s.dash == 0 {
                Swatch::Line(s.colour)
            } else {
                Swatch::Dashed(s.colour)
            };
            (sw, s.name.as_str())
        })
        .collect();
    for (_, _, class) in &c.spans {
        let (colour, label) = match *class {
            "ramp" => ("#ebebeb", "ramp-up"),
            _ => ("#e9f5e3", "steady state"),
        };
        if !items.iter().any(|(_, l)| *l == label) {
            items.push((Swatch::Area(colour), label));
        }
    }
    items
}

fn draw(out: &mut String, c: &Chart, series: &[Series]) {
    let items = legend_items(c);
    let rows = legend_rows(LEFT, W - 8.0, items.iter().map(|(_, l)| *l));
    let top = 24.0 + 16.0 * rows as f64;
    let h = 250.0 + top;
    let f = Frame::new(W, h, LEFT, 24.0, top, 46.0);
    open(out, c.kind, &c.key, W, h, &c.aria);
    legend(out, f.x0, 14.0, W - 8.0, &items);
    let pts = || series.iter().flat_map(finite);
    let positive = |v: f64| !c.y.log || v > 0.0;
    let (xlo, xhi) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
        (a.min(x), b.max(x))
    });
    let ys = pts().map(|(_, y)| y).filter(|y| positive(*y));
    let (ylo, yhi) = ys
        .chain(c.cap.as_ref().map(|(v, _)| *v))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
            (a.min(y), b.max(y))
        });
    if !(xlo.is_finite() && yhi.is_finite()) {
        no_data(out, &f, "nothing recorded");
        out.push_str("</svg>");
        return;
    }
    let xs = if c.x.log {
        Scale::log(xlo, xhi, f.x0, f.x1)
    } else {
        let end = c.spans.iter().map(|s| s.1).fold(xhi, f64::max);
        Scale::linear(xlo.min(0.0), if end > 0.0 { end } else { 1.0 }, f.x0, f.x1)
    };
    let ysc = scale(ylo, yhi, &c.y, f.y1, f.y0);
    for (a, z, class) in &c.spans {
        let _ = write!(
            out,
            "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            N(xs.at(*a)),
            N(f.y0),
            N((xs.at(*z) - xs.at(*a)).max(0.0)),
            N(f.y1 - f.y0)
        );
    }
    y_axis(out, &f, (&ysc, 5), Side::Left, c.y.fmt, &c.y.title);
    x_axis(out, &f, &xs, c.x.fmt, &c.x.title, None);
    if let Some((v, label)) = &c.cap {
        let y = ysc.at(*v);
        hline(out, &f, y);
        text(out, f.x1 - 4.0, y - 4.0, "", "end", label);
    }
    for s in series {
        line(out, s, (&xs, &ysc), &positive);
    }
    out.push_str("</svg>");
}

/// One series: its path, lifted where a value is missing (or not positive on a log axis),
/// and its dots.
fn line(out: &mut String, s: &Series, (xs, ys): (&Scale, &Scale), positive: &dyn Fn(f64) -> bool) {
    let mut attrs = format!("class=\"ln\" stroke=\"{}\"", s.colour);
    let dash = DASHES[s.dash % DASHES.len()];
    if !dash.is_empty() {
        let _ = write!(attrs, " stroke-dasharray=\"{dash}\"");
    }
    let mut l = Line::start(out, &attrs);
    for &(x, y) in &s.pts {
        match y.filter(|v| positive(*v)) {
            Some(y) => l.point(xs.at(x), ys.at(y)),
            None => l.gap(),
        }
    }
    l.finish(false);
    if s.dots {
        for (x, y) in finite(s).filter(|(_, y)| positive(*y)) {
            let _ = write!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"2.6\" fill=\"{}\"/>",
                N(xs.at(x)),
                N(ys.at(y)),
                s.colour
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_series_are_bucketed_keeping_latency_spikes() {
        let pts: Vec<(f64, Option<f64>)> = (0..6000)
            .map(|i| (i as f64, Some(if i == 4321 { 1e6 } else { 100.0 })))
            .collect();
        let mean = thin(&pts, false);
        let max = thin(&pts, true);
        assert_eq!(mean.len(), MAX_POINTS);
        assert!(
            mean.iter().all(|p| p.1.unwrap() < 1e6),
            "a spike averaged in"
        );
        assert_eq!(
            max.iter().filter(|p| p.1 == Some(1e6)).count(),
            1,
            "kept on a latency axis"
        );
        assert_eq!(thin(&pts[..10], false), pts[..10].to_vec());
    }
}
