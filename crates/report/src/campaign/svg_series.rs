//! Charts of one run over time: the workload's IOPS and p99 latency above what the disks did
//! (IOPS and the busiest disk's %util), with the ramp-up shaded grey and the steady-state
//! window green; and, for database runs, average active sessions stacked by wait event.
//! Series longer than [`MAX_POINTS`] are averaged into buckets so a long run stays small.

use super::svg::{headroom, Fmt, Scale, N};
use super::svg_draw::{
    legend, legend_rows, no_data, open, x_axis, y_axis, Frame, Line, Side, Swatch,
};
use iogauge_campaign::{RunDigest, SeriesPoint};
use std::fmt::Write as _;

/// Most points drawn per line; longer series are bucketed.
pub(crate) const MAX_POINTS: usize = 600;

/// Width of the per-run charts.
const W: f64 = 1100.0;

const IOPS: &str = "#4e79a7";
const P99: &str = "#e15759";
const DEV: &str = "#59a14f";
const UTIL: &str = "#b07aa1";

/// Consecutive intervals merged into one drawn point.
struct Bucket {
    /// Middle of the bucket's time span, seconds.
    x: f64,
    iops: Option<f64>,
    /// Largest p99 of the bucket: averaging would hide a spike.
    p99: Option<f64>,
    dev: Option<f64>,
    util: Option<f64>,
}

fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum) = it
        .filter(|x| x.is_finite())
        .fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| sum / n as f64)
}

fn buckets(series: &[SeriesPoint]) -> Vec<Bucket> {
    let k = series.len().div_ceil(MAX_POINTS).max(1);
    series
        .chunks(k)
        .map(|c| {
            let (first, last) = (&c[0], &c[c.len() - 1]);
            Bucket {
                x: (first.t_s + last.t_s + last.dur_s.max(0.0)) / 2.0,
                iops: mean(c.iter().map(|p| p.read_iops + p.write_iops)),
                p99: c
                    .iter()
                    .filter_map(|p| p.lat_p99_us)
                    .filter(|x| x.is_finite())
                    .reduce(f64::max),
                dev: mean(c.iter().filter_map(|p| p.dev_iops)),
                util: mean(c.iter().filter_map(|p| p.util_pct)),
            }
        })
        .collect()
}

/// Seconds from the start to the end of the last interval (0 when there is none).
pub(crate) fn run_end(run: &RunDigest) -> f64 {
    run.series
        .iter()
        .map(|p| p.t_s + p.dur_s.max(0.0))
        .chain(run.aas.iter().map(|a| a.t_s))
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max)
}

/// Largest finite value of a bucket field, if any.
fn max_of(b: &[Bucket], f: impl Fn(&Bucket) -> Option<f64>) -> Option<f64> {
    b.iter()
        .filter_map(f)
        .filter(|x| x.is_finite())
        .reduce(f64::max)
}

/// The ramp-up intervals (merged when adjacent) and the steady-state window, as
/// (start, end, class) spans clamped to `0..end`.
pub(crate) fn spans(run: &RunDigest, end: f64) -> Vec<(f64, f64, &'static str)> {
    let mut v: Vec<(f64, f64, &'static str)> = Vec::new();
    for p in run.series.iter().filter(|p| p.ramp) {
        let (a, b) = (p.t_s, p.t_s + p.dur_s.max(0.0));
        match v.last_mut() {
            Some(last) if (last.1 - a).abs() < 1e-6 => last.1 = b,
            _ => v.push((a, b, "ramp")),
        }
    }
    if let Some(from) = run.steady_from_s {
        v.push((from, run.steady_left_s.unwrap_or(end), "steady"));
    }
    v.retain_mut(|s| {
        s.0 = s.0.clamp(0.0, end);
        s.1 = s.1.clamp(0.0, end);
        s.0.is_finite() && s.1.is_finite() && s.1 > s.0
    });
    v
}

/// One line of bucket values.
fn line(
    out: &mut String,
    b: &[Bucket],
    (xs, ys): (&Scale, &Scale),
    attrs: &str,
    f: fn(&Bucket) -> Option<f64>,
) {
    let mut l = Line::start(out, attrs);
    for p in b {
        match f(p) {
            Some(y) => l.point(xs.at(p.x), ys.at(y)),
            None => l.gap(),
        }
    }
    l.finish(false);
}

/// Workload IOPS and p99 latency (top), device IOPS and %util (bottom), one `series` chart.
pub(super) fn series(out: &mut String, run: &RunDigest) {
    let (top, pa, gap, pb, bottom) = (34.0, 170.0, 20.0, 84.0, 42.0);
    let h = top + pa + gap + pb + bottom;
    let fa = Frame::new(W, top + pa, 68.0, 66.0, top, 0.0);
    let fb = Frame::new(W, h, 68.0, 66.0, top + pa + gap, bottom);
    let aria = format!(
        "run {}: IOPS, p99 latency and device load over time",
        run.id
    );
    open(out, "series", &run.id.to_string(), W, h, &aria);
    legend(
        out,
        fa.x0,
        14.0,
        W - 8.0,
        &[
            (Swatch::Line(IOPS), "workload IOPS"),
            (Swatch::Line(P99), "p99 latency"),
            (Swatch::Line(DEV), "device IOPS"),
            (Swatch::Dashed(UTIL), "busiest disk %util"),
            (Swatch::Area("#ebebeb"), "ramp-up"),
            (Swatch::Area("#e9f5e3"), "steady state"),
        ],
    );
    let b = buckets(&run.series);
    let end = run_end(run);
    let xs = Scale::linear(0.0, if end > 0.0 { end } else { 1.0 }, fa.x0, fa.x1);
    for (a, z, class) in spans(run, end) {
        for f in [&fa, &fb] {
            let _ = write!(
                out,
                "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                N(xs.at(a)),
                N(f.y0),
                N(xs.at(z) - xs.at(a)),
                N(f.y1 - f.y0)
            );
        }
    }
    x_axis(out, &fb, &xs, Fmt::Secs, "time since start", None);
    if b.is_empty() {
        no_data(out, &fa, "no intervals recorded");
        out.push_str("</svg>");
        return;
    }
    let ya = Scale::linear(
        0.0,
        headroom(max_of(&b, |p| p.iops).unwrap_or(0.0)),
        fa.y1,
        fa.y0,
    );
    y_axis(out, &fa, (&ya, 5), Side::Left, Fmt::Si, "workload IOPS");
    if let Some(p99) = max_of(&b, |p| p.p99) {
        let yl = Scale::linear(0.0, headroom(p99), fa.y1, fa.y0);
        y_axis(out, &fa, (&yl, 5), Side::Right, Fmt::Micros, "p99 latency");
        line(out, &b, (&xs, &yl), "class=\"ln p99\"", |p| p.p99);
    }
    line(out, &b, (&xs, &ya), "class=\"ln iops\"", |p| p.iops);
    let dev = max_of(&b, |p| p.dev);
    let util = max_of(&b, |p| p.util);
    if dev.is_none() && util.is_none() {
        no_data(out, &fb, "no device samples");
    }
    if let Some(d) = dev {
        let yd = Scale::linear(0.0, headroom(d), fb.y1, fb.y0);
        y_axis(out, &fb, (&yd, 3), Side::Left, Fmt::Si, "device IOPS");
        line(out, &b, (&xs, &yd), "class=\"ln dev\"", |p| p.dev);
    }
    if util.is_some() {
        let yu = Scale::linear(0.0, 100.0, fb.y1, fb.y0);
        y_axis(out, &fb, (&yu, 2), Side::Right, Fmt::Pct, "%util");
        line(out, &b, (&xs, &yu), "class=\"ln util\"", |p| p.util);
    }
    out.push_str("</svg>");
}

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
    let pts = &run.aas;
    // Interval length: the sampling step, or with a single sample the series' interval
    // (1 s when that is unknown too), so even one interval draws as an area.
    let step = if pts.len() >= 2 {
        (pts[pts.len() - 1].t_s - pts[0].t_s) / (pts.len() - 1) as f64
    } else {
        run.series.first().map_or(1.0, |p| p.dur_s)
    };
    let step = if step.is_finite() && step > 0.0 {
        step
    } else {
        1.0
    };
    let end = run_end(run).max(pts.last().map_or(0.0, |p| p.t_s + step));
    let xs = Scale::linear(0.0, if end > 0.0 { end } else { 1.0 }, f.x0, f.x1);
    x_axis(out, &f, &xs, Fmt::Secs, "time since start", None);
    if n_layers == 0 {
        no_data(out, &f, "no active sessions sampled");
        out.push_str("</svg>");
        return;
    }
    // Bucket the intervals, then stack: cum[l * m + j] is the top of layer l at bucket j.
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
    let total = cum[(n_layers - 1) * m..]
        .iter()
        .copied()
        .fold(0.0, f64::max);
    let ys = Scale::linear(0.0, headroom(total), f.y1, f.y0);
    y_axis(
        out,
        &f,
        (&ys, 4),
        Side::Left,
        Fmt::Si,
        "avg active sessions",
    );
    // Tallest first, each layer an area from zero to its cumulative top: the next one paints
    // over the lower part, so every boundary is written once.
    let base = ys.at(0.0);
    let mut attrs = String::new();
    for l in (0..n_layers).rev() {
        attrs.clear();
        let _ = write!(attrs, "fill=\"{}\"", layer_colour(&names, l));
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
    out.push_str("</svg>");
}
