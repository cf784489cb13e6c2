//! SVG drawing primitives every chart uses: the chart element, text, axes, legends and a
//! compact polyline that lifts its pen over missing values. Every number goes through [`N`]
//! or the scales of `scale.rs`, so no attribute can hold NaN or infinity.

use super::page::esc;
use super::scale::{tick_label, Fmt, Scale, N};
use std::fmt::Write as _;

/// Width of a chart two of which fit side by side in the page.
pub(crate) const W: f64 = 560.0;

/// Width of a chart across the page: a run over time.
pub(crate) const WIDE: f64 = 1100.0;

/// Left margin of a chart with a y axis: tick labels and the axis title.
pub(crate) const LEFT: f64 = 68.0;

/// The plot area inside a chart of `w` × `h` pixels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl Frame {
    /// Margins: left, right, top, bottom.
    pub(crate) fn new(w: f64, h: f64, l: f64, r: f64, t: f64, b: f64) -> Frame {
        Frame {
            x0: l,
            x1: (w - r).max(l + 1.0),
            y0: t,
            y1: (h - b).max(t + 1.0),
        }
    }
}

/// Opens `<svg class="chart" data-chart="kind:key">` with a fixed size and an accessible
/// label.
pub(crate) fn open(out: &mut String, kind: &str, key: &str, w: f64, h: f64, label: &str) {
    let _ = write!(out, "<svg class=\"chart\" data-chart=\"{kind}:");
    esc(out, key);
    let _ = write!(
        out,
        "\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"",
        N(w),
        N(h),
        N(w),
        N(h)
    );
    esc(out, label);
    out.push_str("\">");
}

/// Text at (`x`, `y`) with a class (`""` for none) and an anchor (`start`, `middle`, `end`).
pub(crate) fn text(out: &mut String, x: f64, y: f64, class: &str, anchor: &str, s: &str) {
    let _ = write!(out, "<text x=\"{}\" y=\"{}\"", N(x), N(y));
    if !class.is_empty() {
        let _ = write!(out, " class=\"{class}\"");
    }
    if anchor != "start" {
        let _ = write!(out, " text-anchor=\"{anchor}\"");
    }
    out.push('>');
    esc(out, s);
    out.push_str("</text>");
}

/// A dashed reference line across the plot area at `y` (a baseline, a cap).
pub(crate) fn hline(out: &mut String, f: &Frame, y: f64) {
    let _ = write!(
        out,
        "<path class=\"bl\" d=\"M{} {}H{}\"/>",
        N(f.x0),
        N(y),
        N(f.x1)
    );
}

/// A message in the middle of the plot area, for charts with nothing to draw.
pub(crate) fn no_data(out: &mut String, f: &Frame, s: &str) {
    text(
        out,
        (f.x0 + f.x1) / 2.0,
        (f.y0 + f.y1) / 2.0,
        "nd",
        "middle",
        s,
    );
}

/// Which side of the plot a y axis is on.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Side {
    Left,
    Right,
}

/// A y axis: about `n` tick labels, grid lines (left axis only) and a rotated title.
pub(crate) fn y_axis(
    out: &mut String,
    f: &Frame,
    (s, n): (&Scale, usize),
    side: Side,
    fmt: Fmt,
    title: &str,
) {
    let (ticks, step) = s.ticks(n);
    let mut label = String::new();
    out.push_str("<g class=\"ax\">");
    for &t in &ticks {
        let y = s.at(t);
        if side == Side::Left {
            let _ = write!(
                out,
                "<line class=\"gr\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
                N(f.x0),
                N(f.x1),
                N(y),
                N(y)
            );
        }
        label.clear();
        tick_label(&mut label, t, step, fmt);
        let (x, anchor) = match side {
            Side::Left => (f.x0 - 6.0, "end"),
            Side::Right => (f.x1 + 6.0, "start"),
        };
        text(out, x, y + 3.5, "", anchor, &label);
    }
    let (x, rot) = match side {
        Side::Left => (12.0, -90),
        Side::Right => (f.x1 + 52.0, 90),
    };
    let y = (f.y0 + f.y1) / 2.0;
    let _ = write!(
        out,
        "<text class=\"at\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate({rot} {} {})\">",
        N(x),
        N(y),
        N(x),
        N(y)
    );
    esc(out, title);
    out.push_str("</text></g>");
}

/// An x axis along the bottom of `f`, at the given tick values or the scale's own.
pub(crate) fn x_axis(
    out: &mut String,
    f: &Frame,
    s: &Scale,
    fmt: Fmt,
    title: &str,
    at: Option<&[f64]>,
) {
    let (ticks, step) = match at {
        Some(t) => (t.to_vec(), 1.0),
        None => s.ticks(8),
    };
    let mut label = String::new();
    out.push_str("<g class=\"ax\">");
    let _ = write!(
        out,
        "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
        N(f.x0),
        N(f.x1),
        N(f.y1),
        N(f.y1)
    );
    for &t in &ticks {
        let x = s.at(t);
        let _ = write!(
            out,
            "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
            N(x),
            N(x),
            N(f.y1),
            N(f.y1 + 4.0)
        );
        label.clear();
        tick_label(&mut label, t, step, fmt);
        text(out, x, f.y1 + 15.0, "", "middle", &label);
    }
    if !title.is_empty() {
        text(out, (f.x0 + f.x1) / 2.0, f.y1 + 30.0, "at", "middle", title);
    }
    out.push_str("</g>");
}

/// What a legend entry shows.
#[derive(Clone, Copy)]
pub(crate) enum Swatch<'a> {
    Line(&'a str),
    Dashed(&'a str),
    Area(&'a str),
    Dot,
    Outlier,
    Whisker,
}

/// Estimated width of `s` at the charts' 11 px font.
pub(crate) fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * 6.3
}

/// `s` cut to `max` characters with an ellipsis.
pub(crate) fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// Width of a legend entry: swatch, label, gap.
fn entry_width(label: &str) -> f64 {
    22.0 + text_width(label) + 14.0
}

/// Rows a [`legend`] from `x` wrapping before `max_x` takes for these labels (at least 1).
pub(crate) fn legend_rows<'a>(x: f64, max_x: f64, labels: impl Iterator<Item = &'a str>) -> usize {
    let (mut cx, mut rows) = (x, 1);
    for label in labels {
        let w = entry_width(label);
        if cx + w > max_x && cx > x {
            cx = x;
            rows += 1;
        }
        cx += w;
    }
    rows
}

/// A horizontal legend from (`x`, `y`), wrapping before `max_x` into rows 16 px apart.
pub(crate) fn legend(out: &mut String, x: f64, y: f64, max_x: f64, items: &[(Swatch, &str)]) {
    out.push_str("<g class=\"lg\">");
    let (mut cx, mut cy) = (x, y);
    for (sw, label) in items {
        let w = entry_width(label);
        if cx + w > max_x && cx > x {
            cx = x;
            cy += 16.0;
        }
        let (sx, sy) = (N(cx), N(cy));
        let _ = match sw {
            Swatch::Line(c) => write!(
                out,
                "<path d=\"M{sx} {sy}h16\" stroke=\"{c}\" stroke-width=\"2\"/>"
            ),
            Swatch::Dashed(c) => write!(
                out,
                "<path d=\"M{sx} {sy}h16\" stroke=\"{c}\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/>"
            ),
            Swatch::Area(c) => write!(
                out,
                "<rect x=\"{sx}\" y=\"{}\" width=\"16\" height=\"10\" fill=\"{c}\"/>",
                N(cy - 5.0)
            ),
            Swatch::Dot => write!(
                out,
                "<circle class=\"s\" cx=\"{}\" cy=\"{sy}\" r=\"3\"/>",
                N(cx + 8.0)
            ),
            Swatch::Outlier => {
                out.push_str("<path class=\"o\" d=\"");
                cross(out, cx + 8.0, cy);
                out.push_str("\"/>");
                Ok(())
            }
            Swatch::Whisker => write!(
                out,
                "<path class=\"eb\" d=\"M{} {}v12M{} {}h8M{} {}h8\"/>",
                N(cx + 8.0),
                N(cy - 6.0),
                N(cx + 4.0),
                N(cy - 6.0),
                N(cx + 4.0),
                N(cy + 6.0)
            ),
        };
        text(out, cx + 22.0, cy + 4.0, "", "start", label);
        cx += w;
    }
    out.push_str("</g>");
}

/// Path data of a small × centred on (`x`, `y`), the outlier mark.
pub(crate) fn cross(out: &mut String, x: f64, y: f64) {
    let _ = write!(out, "M{} {}l8 8m0 -8l-8 8", N(x - 4.0), N(y - 4.0));
}

/// Builds one `<path>` polyline whose pen lifts over missing values. After each move the
/// points are written relative to the previous one (`l` deltas, in tenths of a pixel taken
/// from the rounded absolute positions, so rounding never accumulates): a dense series costs
/// about 8 bytes a point instead of 12.
pub(crate) struct Line<'a> {
    out: &'a mut String,
    last: Option<(i64, i64)>,
    /// An `l` command is open, so further pairs need only a separator.
    rel: bool,
    any: bool,
}

/// `x` in tenths of a pixel, clamped as [`N`] does.
fn tenths(x: f64) -> i64 {
    (x.clamp(-1e6, 1e6) * 10.0).round() as i64
}

/// Appends a number given in tenths; `sep` puts a space first unless a minus sign already
/// separates it from the previous number.
fn push_tenths(out: &mut String, t: i64, sep: bool) {
    if t < 0 {
        out.push('-');
    } else if sep {
        out.push(' ');
    }
    let a = t.unsigned_abs();
    let _ = match a % 10 {
        0 => write!(out, "{}", a / 10),
        d => write!(out, "{}.{d}", a / 10),
    };
}

impl<'a> Line<'a> {
    /// Starts a path with the given extra attributes (e.g. `class="l1"`).
    pub(crate) fn start(out: &'a mut String, attrs: &str) -> Line<'a> {
        let _ = write!(out, "<path {attrs} d=\"");
        Line {
            out,
            last: None,
            rel: false,
            any: false,
        }
    }

    /// Adds a point, or lifts the pen when either coordinate is not finite.
    pub(crate) fn point(&mut self, x: f64, y: f64) {
        if !(x.is_finite() && y.is_finite()) {
            self.gap();
            return;
        }
        let (tx, ty) = (tenths(x), tenths(y));
        match self.last {
            None => {
                self.out.push('M');
                push_tenths(self.out, tx, false);
                push_tenths(self.out, ty, true);
                self.rel = false;
            }
            Some((lx, ly)) if (lx, ly) == (tx, ty) => return,
            Some((lx, ly)) => {
                if !self.rel {
                    self.out.push('l');
                }
                push_tenths(self.out, tx - lx, self.rel);
                push_tenths(self.out, ty - ly, true);
                self.rel = true;
            }
        }
        self.last = Some((tx, ty));
        self.any = true;
    }

    /// Lifts the pen: the next point starts a new segment.
    pub(crate) fn gap(&mut self) {
        self.last = None;
    }

    /// Closes the element; `close` ends the outline with `Z` (an area). A path without
    /// points still gets valid data.
    pub(crate) fn finish(self, close: bool) {
        if !self.any {
            self.out.push_str("M0 0");
        } else if close {
            self.out.push('Z');
        }
        self.out.push_str("\"/>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_lifts_its_pen_over_gaps() {
        let mut s = String::new();
        let mut l = Line::start(&mut s, "class=\"a\"");
        l.point(1.0, 2.0);
        l.point(3.0, f64::NAN);
        l.point(5.0, 6.0);
        l.point(7.0, 8.0);
        l.point(7.0, 8.0);
        l.point(8.25, 7.5);
        l.point(9.0, 7.5);
        l.finish(false);
        assert_eq!(s, "<path class=\"a\" d=\"M1 2M5 6l2 2 1.3-0.5 0.7 0\"/>");
    }
}
