//! A campaign run over time: the workload's IOPS and p99 latency above what the disks did
//! (IOPS and the busiest disk's %util), with the ramp-up shaded grey and the steady-state
//! window green. Series longer than [`MAX_POINTS`] are averaged into buckets so a long run
//! stays small.

use crate::svg::draw::{
    legend, no_data, open, x_axis, y_axis, Frame, Line, Side, Swatch, WIDE as W,
};
use crate::svg::line::MAX_POINTS;
use crate::svg::scale::{headroom, Fmt, Scale, N};
use crate::svg::timeline::{run_end, spans};
use iogauge_campaign::{RunDigest, SeriesPoint};
use std::fmt::Write as _;

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

/// Largest finite value of a bucket field, if any.
fn max_of(b: &[Bucket], f: impl Fn(&Bucket) -> Option<f64>) -> Option<f64> {
    b.iter()
        .filter_map(f)
        .filter(|x| x.is_finite())
        .reduce(f64::max)
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
