//! The text of `iogauge calibrate` (and `iogauge show` of a calibration): preflight first,
//! then the curves, the CALIBRATE_IO block and the verdicts. The head is printed before any
//! I/O, the body at the end; `show` prints both, so a stored run reads as it did live.

use super::findings::findings_text;
use super::label::label_line;
use super::preflight::preflight_text;
use iogauge_model::calib::CalibrationReport;
use iogauge_model::calib::{iops_per_disk, Cell, LargeType, MatrixMode, Step};
use iogauge_model::units::fmt_size;
use std::fmt::Write as _;

/// Header and preflight.
pub fn calibration_head(r: &CalibrationReport) -> String {
    let o = &r.options;
    let crit = o.criterion.name();
    let mut s = String::new();
    // ORION's -type: sequential large I/Os are one stream per outstanding I/O.
    let sizes = match o.large_type {
        LargeType::Rand => format!(
            "{} and {} random reads",
            fmt_size(o.small_bs),
            fmt_size(o.large_bs)
        ),
        LargeType::Seq => format!(
            "{} random and {} sequential reads",
            fmt_size(o.small_bs),
            fmt_size(o.large_bs)
        ),
    };
    let _ = writeln!(
        s,
        "iogauge calibrate: {sizes}{}, cap {crit} <= {:.2} ms, {:.1} s per point, {}, {}",
        if o.write_pct > 0 {
            format!(" with {}% writes", o.write_pct)
        } else {
            String::new()
        },
        o.max_latency_us / 1e3,
        o.point_time.as_secs_f64(),
        o.setup.engine,
        if o.setup.direct {
            "O_DIRECT"
        } else {
            "buffered"
        },
    );
    let _ = writeln!(s, "preflight:");
    s.push_str(&preflight_text(&r.preflight));
    let direct = if r.targets.iter().all(|t| t.direct) {
        "O_DIRECT on every target"
    } else {
        "buffered (page cache)"
    };
    let _ = writeln!(s, "  io_uring {}; {direct}", r.io_uring);
    s
}

/// The curves, the CALIBRATE_IO block and the verdicts.
pub fn calibration_body(r: &CalibrationReport) -> String {
    let mut s = String::new();
    // The head went out before the label was stored with the result: the body says it.
    label_line(&mut s, &r.meta);
    setup_lines(&mut s, r);
    let _ = writeln!(s);
    points_table(&mut s, r);
    s.push_str(&split_line(r));
    if !r.matrix.is_empty() {
        matrix_section(&mut s, r);
    }
    let _ = writeln!(s);
    calibrate_io(&mut s, r);
    verdicts_and_warnings(&mut s, r);
    s
}

/// The I/O path and, across ranks, how many on which hosts.
fn setup_lines(s: &mut String, r: &CalibrationReport) {
    if let Some(p) = &r.options.io_path {
        let _ = writeln!(s, "  I/O path: {}", p.line());
    }
    if !r.ranks.is_empty() {
        let mut hosts: Vec<&str> = r.ranks.iter().map(|k| k.host.as_str()).collect();
        hosts.dedup();
        let _ = writeln!(
            s,
            "  ranks: {} on {} ({}); each point's outstanding I/Os shared between them, step single on rank 0 alone",
            r.ranks.len(),
            if hosts.len() == 1 { "1 host".to_string() } else { format!("{} hosts", hosts.len()) },
            hosts.join(", ")
        );
    }
}

/// One row per point: its depth, figures and latencies, marked when over the cap or
/// measured again.
fn points_table(s: &mut String, r: &CalibrationReport) {
    let crit = r.options.criterion;
    let cap = r.options.max_latency_us;
    let _ = writeln!(
        s,
        "{:<8}{:>12}{:>8}{:>11}{:>10} | latency us {:>9}{:>9}{:>9}{:>9}",
        "step", "outstanding", "workers", "IOPS", "MiB/s", "mean", "p50", "p95", "p99"
    );
    for p in &r.points {
        let p = &p.point;
        let step = p.step.name();
        let l = &p.lat_us;
        let mark = if p.superseded {
            "  measured again (below the curve)"
        } else if p.step == Step::Small && crit.of(l) > cap {
            "  over cap"
        } else {
            ""
        };
        let by_rank = ios_by_rank(&p.rank_ios);
        let _ = writeln!(
            s,
            "{step:<8}{:>12}{:>8}{:>11.0}{:>10.1} |            {:>9.0}{:>9.0}{:>9.0}{:>9.0}{mark}{by_rank}",
            p.outstanding, p.workers, p.iops, p.mbps, l.mean, l.p50, l.p95, l.p99
        );
    }
}

/// A point's I/Os on each rank: every rank's count up to [`super::ranks::ALL_ROWS`] ranks;
/// over more, the fewest and the most of the ranks that did I/O (a point's outstanding I/Os
/// may leave some idle), with the ranks that did them.
fn ios_by_rank(ios: &[u64]) -> String {
    if ios.is_empty() {
        return String::new();
    }
    if ios.len() <= super::ranks::ALL_ROWS {
        let each: Vec<String> = ios.iter().map(u64::to_string).collect();
        return format!("  I/Os by rank {}", each.join(" / "));
    }
    let busy: Vec<(usize, u64)> = ios
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, n)| n > 0)
        .collect();
    let idle = ios.len() - busy.len();
    let (Some(lo), Some(hi)) = (
        busy.iter().min_by_key(|&&(_, n)| n),
        busy.iter().max_by_key(|&&(_, n)| n),
    ) else {
        return format!("  I/Os by rank: none on {idle} ranks");
    };
    if busy.len() == 1 {
        return format!(
            "  I/Os by rank: {} on rank {} alone, {idle} idle",
            hi.1, hi.0
        );
    }
    format!(
        "  I/Os by rank: {} (rank {}) to {} (rank {}) on {} ranks, {idle} idle",
        lo.1,
        lo.0,
        hi.1,
        hi.0,
        busy.len()
    )
}

/// Where an I/O's time went at the point CALIBRATE_IO reports (max_iops's depth), from
/// iogauge down to the device, as a run's summary says it: one line when the tracer timed
/// that point's measured intervals, nothing without its figures.
fn split_line(r: &CalibrationReport) -> String {
    let Some(p) = r.points.iter().rev().find(|p| {
        p.point.step == Step::Small
            && !p.point.superseded
            && Some(p.point.outstanding) == r.outstanding
    }) else {
        return String::new();
    };
    let entry: Vec<String> = r.targets.iter().filter_map(|t| t.device.clone()).collect();
    let measured = p
        .intervals
        .iter()
        .filter(|iv| iv.phase == iogauge_stats::Phase::Measure);
    let direct = r.targets.iter().all(|t| t.direct);
    let Some(sp) = crate::split::run_split(measured, (&entry, &[]), direct) else {
        return String::new();
    };
    format!(
        "where an I/O's time went at max_iops ({} outstanding, mean µs): {}\n",
        p.point.outstanding,
        super::run::split_words(
            &sp,
            super::run::throttle_words(Some(&r.preflight), &[&entry])
        )
    )
}

/// The mixed matrix, under a line naming its mode.
fn matrix_section(s: &mut String, r: &CalibrationReport) {
    let o = &r.options;
    let mode = match (o.matrix, o.num_small, o.num_large) {
        (MatrixMode::Row, _, Some(l)) => format!("row at {l} outstanding large"),
        (MatrixMode::Col, Some(n), _) => format!("col at {n} outstanding small"),
        (MatrixMode::Point, Some(n), Some(l)) => {
            format!("point at {n} outstanding small, {l} large")
        }
        (m, ..) => m.name().to_string(),
    };
    let _ = writeln!(s, "\nmatrix ({mode}): small-I/O IOPS / large-I/O MiB/s, rows = outstanding large, columns = outstanding small");
    s.push_str(&matrix_table(&r.matrix));
}

/// The figures as DBA_RSRC_IO_CALIBRATE lists them, with ORION's IOPS per disk.
fn calibrate_io(s: &mut String, r: &CalibrationReport) {
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |x| format!("{x:.prec$}"));
    let _ = writeln!(s, "max_iops   = {}", opt(r.max_iops, 0));
    let _ = writeln!(
        s,
        "latency    = {}{}",
        r.latency.map_or("-".to_string(), |l| format!("{l:.2} ms")),
        r.outstanding
            .map(|n| format!(" (at {n} outstanding)"))
            .unwrap_or_default()
    );
    let _ = writeln!(s, "max_mbps   = {}", opt(r.max_mbps, 1));
    let _ = writeln!(s, "max_pmbps  = {}", opt(r.max_pmbps, 1));
    let _ = writeln!(s, "disks      = {}", r.num_disks);
    // ORION's IOPS per disk; computed, so a document stored before the field shows it too.
    let _ = writeln!(
        s,
        "iops/disk  = {}",
        opt(iops_per_disk(r.max_iops, r.num_disks), 0)
    );
    let _ = writeln!(s, "started_at = {}", r.meta.started_at);
    let _ = writeln!(
        s,
        "ended_at   = {}",
        r.meta.ended_at.as_deref().unwrap_or("-")
    );
}

/// The findings, else (a calibration stored before them) the verdicts; then the warnings.
fn verdicts_and_warnings(s: &mut String, r: &CalibrationReport) {
    s.push_str(&findings_text(&r.findings, "I/O time"));
    if r.findings.is_empty() && !r.verdicts.is_empty() {
        let _ = writeln!(s, "verdicts:");
        for v in &r.verdicts {
            let _ = writeln!(s, "  - {v}");
        }
    }
    // Warnings beyond the preflight's (printed above with the targets).
    for w in r
        .warnings
        .iter()
        .filter(|w| !r.preflight.warnings.contains(w))
    {
        let _ = writeln!(s, "warning: {w}");
    }
}

/// One live line per finished point.
pub fn point_line(p: &iogauge_model::calib::Point) -> String {
    format!(
        "{} {} outstanding: {:.0} IOPS, {:.1} MiB/s, mean {:.0} us",
        p.step.name(),
        p.outstanding,
        p.iops,
        p.mbps,
        p.lat_us.mean
    )
}

/// The matrix's levels (small, large) in order.
fn matrix_levels(cells: &[Cell]) -> (Vec<u32>, Vec<u32>) {
    let mut small: Vec<u32> = cells.iter().map(|c| c.small).collect();
    let mut large: Vec<u32> = cells.iter().map(|c| c.large).collect();
    small.sort_unstable();
    small.dedup();
    large.sort_unstable();
    large.dedup();
    (small, large)
}

fn matrix_table(cells: &[Cell]) -> String {
    let (small, large) = matrix_levels(cells);
    let mut s = format!("{:>6}", "");
    for x in &small {
        let _ = write!(s, "{x:>14}");
    }
    s.push('\n');
    for l in &large {
        let _ = write!(s, "{l:>6}");
        for x in &small {
            match cells.iter().find(|c| c.small == *x && c.large == *l) {
                Some(c) => {
                    let _ = write!(
                        s,
                        "{:>14}",
                        format!("{:.0}/{:.0}", c.small_iops, c.large_mbps)
                    );
                }
                None => {
                    let _ = write!(s, "{:>14}", "-");
                }
            }
        }
        s.push('\n');
    }
    s
}

/// ORION's three matrix files: `iops.csv` (small IOPS), `mbps.csv` (large MiB/s) and
/// `lat.csv` (small mean latency, µs); rows are outstanding large I/Os, columns outstanding
/// small I/Os, the cell without I/O left empty.
pub fn matrix_csv(cells: &[Cell]) -> [(&'static str, String); 3] {
    let (small, large) = matrix_levels(cells);
    let table = |corner: &str, f: &dyn Fn(&Cell) -> Option<f64>| {
        let mut s = corner.to_string();
        for x in &small {
            let _ = write!(s, ",{x}");
        }
        s.push('\n');
        for l in &large {
            let _ = write!(s, "{l}");
            for x in &small {
                let v = cells
                    .iter()
                    .find(|c| c.small == *x && c.large == *l)
                    .and_then(f);
                let _ = write!(s, ",{}", v.map_or(String::new(), |v| format!("{v:.1}")));
            }
            s.push('\n');
        }
        s
    };
    [
        (
            "iops.csv",
            table("large\\small iops", &|c| Some(c.small_iops)),
        ),
        (
            "mbps.csv",
            table("large\\small mbps", &|c| Some(c.large_mbps)),
        ),
        // No small I/O, no small latency: left empty rather than a misleading 0.
        (
            "lat.csv",
            table("large\\small lat_us", &|c| {
                (c.small > 0).then_some(c.small_lat_us.mean)
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_stats::LatSummary;

    /// Up to 16 ranks every count; over 16 the fewest and the most of the ranks doing I/O.
    #[test]
    fn ios_by_rank_lists_a_few_ranks_and_bounds_many() {
        assert_eq!(ios_by_rank(&[]), "");
        assert_eq!(ios_by_rank(&[5, 0, 7]), "  I/Os by rank 5 / 0 / 7");
        let mut many = vec![0; 18];
        many[..3].copy_from_slice(&[40, 25, 31]);
        assert_eq!(
            ios_by_rank(&many),
            "  I/Os by rank: 25 (rank 1) to 40 (rank 0) on 3 ranks, 15 idle"
        );
        assert_eq!(ios_by_rank(&[0; 17]), "  I/Os by rank: none on 17 ranks");
        many[..2].fill(0);
        assert_eq!(
            ios_by_rank(&many),
            "  I/Os by rank: 31 on rank 2 alone, 17 idle"
        );
    }

    #[test]
    fn csv_rows_are_large_levels_and_columns_small_levels() {
        let cell = |small, large| Cell {
            small,
            large,
            small_iops: f64::from(small * 100),
            small_lat_us: LatSummary {
                mean: 50.0,
                ..Default::default()
            },
            large_mbps: f64::from(large * 10),
        };
        let cells = vec![cell(1, 0), cell(2, 0), cell(0, 1), cell(1, 1), cell(2, 1)];
        let [iops, mbps, lat] = matrix_csv(&cells);
        assert_eq!(iops.0, "iops.csv");
        assert_eq!(
            iops.1,
            "large\\small iops,0,1,2\n0,,100.0,200.0\n1,0.0,100.0,200.0\n"
        );
        assert_eq!(mbps.1.lines().nth(2), Some("1,10.0,10.0,10.0"));
        assert_eq!(lat.1.lines().nth(1), Some("0,,50.0,50.0"));
        assert_eq!(lat.1.lines().nth(2), Some("1,,50.0,50.0"));
    }
}
