//! A database run's average active sessions, stacked by wait event (CPU first, then by
//! total): one `aas` chart, as a DBA reads ASH.

use super::draw::{
    legend, legend_rows, no_data, open, x_axis, y_axis, Frame, Line, Side, Swatch, WIDE as W,
};
use super::line::MAX_POINTS;
use super::scale::{headroom, Fmt, Scale};
use super::timeline::run_end;
use iogauge_campaign::RunDigest;
use std::fmt::Write as _;

/// Most wait-event layers drawn; the rest are summed as "other".
const MAX_LAYERS: usize = 8;

/// Layer colours: CPU is always green, waits take the rest in order of their total.
const EVENT_COLOURS: [&str; 7] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
];

/// Wait events in drawing order (CPU first, then by total, descending), at most
/// [`MAX_LAYERS`] with "other" last when some are folded.
fn layers(run: &RunDigest) -> Vec<&str> {
    let mut totals: std::collections::BTreeMap<&str, f64> = Default::default();
    for p in &run.aas {
        for (e, v) in &p.events {
            if v.is_finite() && *v > 0.0 {
                *totals.entry(e.as_str()).or_default() += v;
            }
        }
    }
    let mut order: Vec<(&str, f64)> = totals.into_iter().collect();
    order.sort_by(|a, b| {
        (b.0 == "CPU")
            .cmp(&(a.0 == "CPU"))
            .then(b.1.total_cmp(&a.1))
    });
    let mut names: Vec<&str> = order.into_iter().map(|(e, _)| e).collect();
    if names.len() > MAX_LAYERS {
        names.truncate(MAX_LAYERS - 1);
        names.push("other");
    }
    names
}

fn layer_colour(names: &[&str], i: usize) -> &'static str {
    match names[i] {
        "CPU" => "#59a14f",
        "other" if i + 1 == names.len() => "#bab0ac",
        _ => {
            let k = i - usize::from(names.first() == Some(&"CPU"));
            EVENT_COLOURS[k % EVENT_COLOURS.len()]
        }
    }
}

/// Interval length: the sampling step, or with a single sample the series' interval (1 s
/// when that is unknown too), so even one interval draws as an area.
fn step_of(run: &RunDigest) -> f64 {
    let pts = &run.aas;
    let step = if pts.len() >= 2 {
        (pts[pts.len() - 1].t_s - pts[0].t_s) / (pts.len() - 1) as f64
    } else {
        run.series.first().map_or(1.0, |p| p.dur_s)
    };
    if step.is_finite() && step > 0.0 {
        step
    } else {
        1.0
    }
}

/// The samples in at most [`MAX_POINTS`] buckets, stacked: each bucket's time, and
/// `cum[l * m + j]` the top of layer `l` at bucket `j`.
struct Stack {
    x: Vec<f64>,
    cum: Vec<f64>,
    m: usize,
}

impl Stack {
    /// Bucket the intervals, then stack the layers `names` (the last takes unnamed events).
    fn of(run: &RunDigest, names: &[&str], step: f64) -> Stack {
        let (pts, n_layers) = (&run.aas, names.len());
        let k = pts.len().div_ceil(MAX_POINTS).max(1);
        let m = pts.len().div_ceil(k);
        let mut x = Vec::with_capacity(m);
        let mut cum = vec![0.0; n_layers * m];
        for (j, c) in pts.chunks(k).enumerate() {
            x.push(c.iter().map(|p| p.t_s).sum::<f64>() / c.len() as f64 + step / 2.0);
            for p in c {
                for (e, v) in p.events.iter().filter(|(_, v)| v.is_finite() && **v > 0.0) {
                    let l = names
                        .iter()
                        .position(|n| *n == e.as_str())
                        .unwrap_or(n_layers - 1);
                    cum[l * m + j] += v / c.len() as f64;
                }
            }
        }
        for l in 1..n_layers {
            for j in 0..m {
                cum[l * m + j] += cum[(l - 1) * m + j];
            }
        }
        Stack { x, cum, m }
    }

    /// The top of the stack at its highest.
    fn total(&self) -> f64 {
        let top = self.cum.len() - self.m;
        self.cum[top..].iter().copied().fold(0.0, f64::max)
    }
}

/// Average active sessions by wait event, stacked, one `aas` chart.
pub(crate) fn aas(out: &mut String, run: &RunDigest) {
    let names = layers(run);
    let n_layers = names.len();
    let rows = legend_rows(68.0, W - 8.0, names.iter().copied());
    let top = 20.0 + 16.0 * rows as f64;
    let h = top + 150.0 + 42.0;
    let f = Frame::new(W, h, 68.0, 66.0, top, 42.0);
    let aria = format!("run {}: average active sessions by wait event", run.id);
    open(out, "aas", &run.id.to_string(), W, h, &aria);
    let items: Vec<(Swatch, &str)> = (0..n_layers)
        .map(|i| (Swatch::Area(layer_colour(&names, i)), names[i]))
        .collect();
    legend(out, f.x0, 14.0, W - 8.0, &items);
    let step = step_of(run);
    let end = run_end(run).max(run.aas.last().map_or(0.0, |p| p.t_s + step));
    let xs = Scale::linear(0.0, if end > 0.0 { end } else { 1.0 }, f.x0, f.x1);
    x_axis(out, &f, &xs, Fmt::Secs, "time since start", None);
    if n_layers == 0 {
        no_data(out, &f, "no active sessions sampled");
        out.push_str("</svg>");
        return;
    }
    let stack = Stack::of(run, &names, step);
    let ys = Scale::linear(0.0, headroom(stack.total()), f.y1, f.y0);
    y_axis(
        out,
        &f,
        (&ys, 4),
        Side::Left,
        Fmt::Si,
        "avg active sessions",
    );
    areas(out, &stack, &names, (&xs, &ys), step);
    out.push_str("</svg>");
}

/// Tallest first, each layer an area from zero to its cumulative top: the next one paints
/// over the lower part, so every boundary is written once.
fn areas(out: &mut String, s: &Stack, names: &[&str], (xs, ys): (&Scale, &Scale), step: f64) {
    let (x, cum, m) = (&s.x, &s.cum, s.m);
    let base = ys.at(0.0);
    let mut attrs = String::new();
    for l in (0..names.len()).rev() {
        attrs.clear();
        let _ = write!(attrs, "fill=\"{}\"", layer_colour(names, l));
        let mut a = Line::start(out, &attrs);
        let (x0, x1) = if m == 1 {
            (xs.at(x[0] - step / 2.0), xs.at(x[0] + step / 2.0))
        } else {
            (xs.at(x[0]), xs.at(x[m - 1]))
        };
        a.point(x0, base);
        if m == 1 {
            a.point(x0, ys.at(cum[l * m]));
        }
        for j in 0..m {
            let xj = if m == 1 { x1 } else { xs.at(x[j]) };
            a.point(xj, ys.at(cum[l * m + j]));
        }
        a.point(x1, base);
        a.finish(true);
    }
}
