//! Latency against percentile on the nines scale, one line per result or case: the curve
//! both reports draw from merged histograms.

use super::draw::{
    legend, legend_rows, no_data, open, x_axis, y_axis, Frame, Line, Side, Swatch, LEFT, W,
};
use super::scale::{Fmt, Scale};
use iogauge_campaign::LatCurve;

/// x of percentile `p` on the nines scale, −log10(1 − p/100); `None` at or past 100.
fn nines(p: f64) -> Option<f64> {
    (0.0..100.0)
        .contains(&p)
        .then(|| -(1.0 - p / 100.0).log10())
        .filter(|x| x.is_finite())
}

/// Latency against percentile, one line per (name, colour, curve); x on the nines scale, y
/// logarithmic; `key` names the chart (`latcurve:KEY`) and titles its y axis.
pub(crate) fn latency_curves(
    out: &mut String,
    key: &str,
    aria: &str,
    lines: &[(String, &str, &LatCurve)],
) {
    let pts = || {
        lines.iter().flat_map(|(_, _, l)| {
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
    let items: Vec<(Swatch, &str)> = lines
        .iter()
        .map(|(n, c, _)| (Swatch::Line(c), n.as_str()))
        .collect();
    let rows = legend_rows(LEFT, W - 8.0, lines.iter().map(|(n, _, _)| n.as_str()));
    let top = 24.0 + 16.0 * rows as f64;
    let h = 300.0 + top;
    let f = Frame::new(W, h, LEFT, 30.0, top, 46.0);
    open(out, "latcurve", key, W, h, aria);
    legend(out, f.x0, 14.0, W - 8.0, &items);
    if ymax <= 0.0 {
        no_data(out, &f, "no latency recorded");
        out.push_str("</svg>");
        return;
    }
    let xs = Scale::linear(0.0, xmax, f.x0, f.x1);
    let ys = Scale::log(ymin, ymax, f.y1, f.y0);
    let y_title = format!("{key} latency");
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
    for (_, c, l) in lines {
        let attrs = format!("class=\"ln\" stroke=\"{c}\"");
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
