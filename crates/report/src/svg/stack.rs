//! Stacked bars over time: one bar per interval (averaged into at most [`MAX_POINTS`] bars on
//! long runs), each split into layers bottom to top. The result report draws where each
//! interval's I/O time went with it (application and kernel submit, pre-queue, queue,
//! device).

use super::draw::{legend, legend_rows, no_data, open, x_axis, y_axis, Frame, Side, Swatch};
use super::line::MAX_POINTS;
use super::scale::{headroom, Fmt, Scale, N};
use std::fmt::Write as _;

/// One bar: its time span (seconds from the start) and each layer's height, bottom first.
pub(crate) struct Bar {
    pub t0: f64,
    pub t1: f64,
    pub parts: Vec<f64>,
}

/// A stacked bar chart over time.
pub(crate) struct Stacked<'a> {
    pub key: String,
    pub aria: String,
    /// Layer names and colours, bottom first.
    pub layers: &'a [(&'a str, &'a str)],
    pub y_title: &'a str,
    pub fmt: Fmt,
    pub bars: Vec<Bar>,
}

/// `bars` averaged in runs of consecutive bars, at most [`MAX_POINTS`] left.
fn thin(bars: &[Bar]) -> Vec<Bar> {
    let k = bars.len().div_ceil(MAX_POINTS).max(1);
    bars.chunks(k)
        .map(|c| {
            let n = c.len() as f64;
            let width = c.iter().map(|b| b.parts.len()).max().unwrap_or(0);
            Bar {
                t0: c[0].t0,
                t1: c[c.len() - 1].t1,
                parts: (0..width)
                    .map(|i| {
                        c.iter()
                            .map(|b| {
                                b.parts
                                    .get(i)
                                    .copied()
                                    .filter(|v| v.is_finite())
                                    .unwrap_or(0.0)
                            })
                            .sum::<f64>()
                            / n
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The chart, `W` wide.
pub(crate) fn stacked_bars(out: &mut String, c: &Stacked, w: f64) {
    let names = c.layers.iter().map(|(n, _)| *n);
    let rows = legend_rows(68.0, w - 8.0, names);
    let top = 20.0 + 16.0 * rows as f64;
    let h = top + 160.0 + 42.0;
    let f = Frame::new(w, h, 68.0, 20.0, top, 42.0);
    open(out, "stack", &c.key, w, h, &c.aria);
    let items: Vec<(Swatch, &str)> = c
        .layers
        .iter()
        .map(|(n, col)| (Swatch::Area(col), *n))
        .collect();
    legend(out, f.x0, 14.0, w - 8.0, &items);
    let bars = thin(&c.bars);
    let end = bars.iter().map(|b| b.t1).fold(0.0, f64::max);
    let xs = Scale::linear(0.0, if end > 0.0 { end } else { 1.0 }, f.x0, f.x1);
    x_axis(out, &f, &xs, Fmt::Secs, "time since start", None);
    let total = |b: &Bar| b.parts.iter().filter(|v| v.is_finite()).sum::<f64>();
    let max = bars.iter().map(total).fold(0.0, f64::max);
    if bars.is_empty() || max <= 0.0 {
        no_data(out, &f, "no layer figures");
        out.push_str("</svg>");
        return;
    }
    let ys = Scale::linear(0.0, headroom(max), f.y1, f.y0);
    y_axis(out, &f, (&ys, 4), Side::Left, c.fmt, c.y_title);
    for (l, (_, col)) in c.layers.iter().enumerate() {
        let _ = write!(out, "<path fill=\"{col}\" d=\"");
        for b in &bars {
            let below: f64 = b.parts.iter().take(l).filter(|v| v.is_finite()).sum();
            let v = b
                .parts
                .get(l)
                .copied()
                .filter(|v| v.is_finite() && *v > 0.0);
            let Some(v) = v else { continue };
            let (x0, x1) = (xs.at(b.t0), xs.at(b.t1));
            let (y0, y1) = (ys.at(below + v), ys.at(below));
            // A gap of a pixel between bars when they are wide enough to show it.
            let wd = if x1 - x0 > 3.0 {
                x1 - x0 - 1.0
            } else {
                x1 - x0
            };
            let _ = write!(
                out,
                "M{} {}h{}v{}h{}z",
                N(x0),
                N(y0),
                N(wd),
                N(y1 - y0),
                N(-wd)
            );
        }
        out.push_str("\"/>");
    }
    out.push_str("</svg>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(bars: Vec<Bar>) -> String {
        let mut out = String::new();
        let layers = [("app <&>", "#111"), ("device", "#222")];
        stacked_bars(
            &mut out,
            &Stacked {
                key: "k".into(),
                aria: "where the time went".into(),
                layers: &layers,
                y_title: "µs",
                fmt: Fmt::Micros,
                bars,
            },
            1100.0,
        );
        out
    }

    #[test]
    fn one_path_per_layer_a_rect_per_bar_escaped_and_finite() {
        let bars = (0..4)
            .map(|i| Bar {
                t0: f64::from(i),
                t1: f64::from(i + 1),
                parts: vec![10.0, if i == 2 { f64::NAN } else { 90.0 }],
            })
            .collect();
        let svg = chart(bars);
        assert_eq!(svg.matches("<path fill=").count(), 2, "{svg}");
        assert_eq!(svg.matches('z').count(), 4 + 3, "{svg}");
        assert!(
            svg.contains("app &lt;&amp;&gt;") && !svg.contains("NaN"),
            "{svg}"
        );
    }

    #[test]
    fn nothing_to_draw_says_so_and_long_runs_are_thinned() {
        assert!(chart(Vec::new()).contains("no layer figures"));
        let many: Vec<Bar> = (0..5000)
            .map(|i| Bar {
                t0: f64::from(i),
                t1: f64::from(i + 1),
                parts: vec![1.0],
            })
            .collect();
        assert!(thin(&many).len() <= MAX_POINTS);
    }
}
