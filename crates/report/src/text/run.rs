//! The run's text: the human summary printed at the end of `iogauge run` ([`run_text`]), and
//! the one-line progress and job descriptions the live display and other renderers use.

use super::findings::findings_text;
use super::label::label_line;
use super::log::log_line;
use super::ranks::ranks_text;
use super::replay::{replay_header, replay_line};
use iogauge_model::preflight::Preflight;
use iogauge_model::run::{DirSummary, RunReport};
use iogauge_model::target::TargetInfo;
use iogauge_model::units::fmt_size;
use std::fmt::Write as _;

/// The human summary printed at the end of `iogauge run`.
pub fn run_text(r: &RunReport) -> String {
    let o = &r.options;
    let mut s = String::new();
    let bound = match (o.time, o.ios) {
        (Some(t), Some(n)) => format!("{:.0} s or {n} I/Os", t.as_secs_f64()),
        (Some(t), None) => format!("{:.0} s", t.as_secs_f64()),
        (None, Some(n)) => format!("{n} I/Os"),
        (None, None) => "until stopped".into(),
    };
    if let Some(h) = replay_header(o) {
        let _ = writeln!(s, "{h}");
    } else {
        let _ = writeln!(
            s,
            "iogauge run: {}, {bound}{}",
            job_line(o),
            match (&o.steady, &r.steady_wait) {
                (Some(w), Some(sw)) => format!(
                    " after ramp-up to steady state ({}, {:.0} s window): {:.0} s",
                    criterion_text(&w.criterion),
                    w.window.as_secs_f64(),
                    sw.measured_from_s
                ),
                _ if o.ramp.is_zero() => String::new(),
                _ => format!(" after {:.0} s ramp", o.ramp.as_secs_f64()),
            }
        );
    }
    label_line(&mut s, &r.meta);
    like_and_targets(&mut s, r);
    if let Some(p) = &o.io_path {
        let _ = writeln!(s, "  I/O path: {}", p.line());
    }
    if r.meta.interrupted {
        let _ = writeln!(
            s,
            "  INTERRUPTED: figures cover the {:.1} s that ran",
            r.summary.elapsed_s
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<6}{:>12}{:>11}{:>9} | latency us {:>8}{:>8}{:>8}{:>8}{:>9}{:>9}",
        "", "ios", "IOPS", "MiB/s", "mean", "p50", "p90", "p99", "p99.9", "max"
    );
    for (name, d) in [("read", &r.summary.read), ("write", &r.summary.write)] {
        if d.ios > 0 {
            let _ = writeln!(s, "{}", dir_line(name, d));
        }
    }
    if r.summary.read.ios + r.summary.write.ios == 0 {
        let _ = writeln!(s, "(no I/O completed in the measured window)");
    }
    s.push_str(&time_split_line(r));
    s.push_str(&log_line(r));
    s.push_str(&replay_line(r));
    if let Some(l) = &r.layout {
        s.push_str(&layout_text(l));
    }
    if !r.ranks.is_empty() {
        s.push_str(&ranks_text(r));
    }
    if let Some(h) = &r.hardware {
        // The findings say what the cache and write-multiplication notes said, ranked.
        s.push_str(&hardware_text(h, r.findings.is_empty()));
    }
    if let Some(sw) = &r.steady_wait {
        let _ = match sw.window_s {
            Some((a, b)) => writeln!(
                s,
                "steady state reached in the ramp-up ({a:.1}–{b:.1} s); measured from {:.1} s, everything before excluded",
                sw.measured_from_s
            ),
            None => writeln!(
                s,
                "steady state NOT reached within --steady-timeout; measured from {:.1} s anyway",
                sw.measured_from_s
            ),
        };
    }
    if let Some(st) = &r.steady {
        s.push_str(&steady_text(st, "IOPS"));
    }
    let _ = writeln!(
        s,
        "measured {:.2} s over {} intervals",
        r.summary.elapsed_s,
        r.intervals.len()
    );
    s.push_str(&findings_text(&r.findings, "I/O time"));
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}

/// Where the measured intervals' mean I/O time went, from iogauge down to the device, when
/// the tracer ran: one line; nothing without its figures.
fn time_split_line(r: &RunReport) -> String {
    use iogauge_stats::Phase;
    let (entry, disks) = crate::split::run_devs(r);
    let measured = r.intervals.iter().filter(|iv| iv.phase == Phase::Measure);
    let Some(sp) = crate::split::run_split(measured, (&entry, &disks), r.options.direct) else {
        return String::new();
    };
    let throttle = throttle_words(r.preflight.as_ref(), &[&entry, &disks]);
    format!(
        "where an I/O's time went (mean µs): {}\n",
        split_words(&sp, throttle)
    )
}

/// A cgroup limit on the job's devices (any of `devs`) holds its bios before
/// block_bio_queue, where no tracepoint sees them: that wait is inside the kernel's part,
/// and said so with it; "" without a limit.
pub(super) fn throttle_words(p: Option<&Preflight>, devs: &[&[String]]) -> &'static str {
    let limited = p.and_then(|p| p.io_limits.as_ref()).is_some_and(|l| {
        l.limits
            .iter()
            .any(|x| devs.iter().any(|d| d.contains(&x.device)))
    });
    if limited {
        " + the cgroup limit's wait (no tracepoint tells it apart)"
    } else {
        ""
    }
}

/// The layers of `sp`, from iogauge down to the device, and what they add up to:
/// `iogauge 4.2, kernel submit + completion 23.0, before the queue 3.8, OS queue 3.2, device
/// 145.5 (of 179.6)`; `throttle` is said with the kernel's part.
pub(super) fn split_words(sp: &crate::split::AppSplit, throttle: &str) -> String {
    let p = sp.parts();
    let top = match sp.kernel_us {
        Some(_) => format!(
            "iogauge {:.1}, kernel submit + completion{throttle} {:.1}",
            p[0], p[1]
        ),
        None => format!("iogauge + kernel submit{throttle} {:.1}", p[0]),
    };
    let n = p.len();
    format!(
        "{top}, before the queue {:.1}, OS queue {:.1}, device {:.1} (of {:.1})",
        p[n - 3],
        p[n - 2],
        p[n - 1],
        sp.app_us
    )
}

/// The job in one line: `randrw (70% reads) 8k, QD 32 x 2 workers, io_uring, O_DIRECT`.
pub fn job_line(o: &iogauge_model::spec::JobSpec) -> String {
    let mix = if o.rw == iogauge_model::spec::RwMode::RandRw {
        format!(" ({}% reads)", o.read_pct)
    } else {
        String::new()
    };
    format!(
        "{}{mix} {}, QD {} x {} worker{}, {}, {}",
        o.rw,
        o.bs,
        o.qd,
        o.workers,
        if o.workers == 1 { "" } else { "s" },
        o.engine,
        if o.direct { "O_DIRECT" } else { "buffered" },
    )
}

/// Per-member rates under a layout, amplification, and a degraded member said plainly.
fn layout_text(l: &iogauge_model::run::LayoutReport) -> String {
    let mut s = format!(
        "\nlayout {} over {} targets\n{:<48}{:>11}{:>11}\n",
        l.layout,
        l.members.len(),
        "member",
        "reads/s",
        "writes/s"
    );
    for m in &l.members {
        let _ = writeln!(
            s,
            "{:<48}{:>11.1}{:>11.1}{}",
            m.path,
            m.reads_s,
            m.writes_s,
            if m.degraded { "  DEGRADED" } else { "" }
        );
    }
    let amp = |a: Option<f64>| a.map_or("-".to_string(), |a| format!("{a:.2}"));
    let _ = writeln!(
        s,
        "member I/Os per workload I/O: reads {}, writes {}",
        amp(l.read_amplification),
        amp(l.write_amplification)
    );
    for m in l.members.iter().filter(|m| m.degraded) {
        let _ = writeln!(
            s,
            "DEGRADED: {} is treated as failed: its reads went to its partners and its writes were dropped, so these figures are a degraded array's, not a healthy one's",
            m.path
        );
    }
    s
}

/// Whether the measured window's `what` (IOPS, operations/s) settled, and whether it left.
pub(crate) fn steady_text(st: &iogauge_model::run::Steady, what: &str) -> String {
    match (st.reached_at_s, st.left_at_s) {
        (Some(a), None) => format!(
            "steady state from {a:.1} s into the measured window ({what} within 20% over {} intervals)\n",
            st.config.window
        ),
        (Some(a), Some(l)) => format!(
            "steady state from {a:.1} s, LEFT at {l:.1} s: {what} fell {:.0}% below the steady mean\n",
            st.report.drop_pct_observed.unwrap_or(0.0)
        ),
        _ => format!(
            "no steady state: {what} never stayed within 20% over {} intervals; treat the figures with care\n",
            st.config.window
        ),
    }
}

/// fio's spelling of a steady-state criterion.
fn criterion_text(c: &iogauge_stats::SteadyCriterion) -> String {
    match c {
        iogauge_stats::SteadyCriterion::Deviation { pct } => format!("iops:{pct}%"),
        iogauge_stats::SteadyCriterion::Slope { pct_per_s } => format!("iops_slope:{pct_per_s}%"),
    }
}

/// The workload vs hardware table and, when `notes`, its sentences.
fn hardware_text(h: &iogauge_model::hardware::Hardware, notes: bool) -> String {
    let mut s = format!(
        "\n{:<6}{:>12}{:>9} | on {:<10}{:>10}{:>9} | {:>6}\n",
        "",
        "workload",
        "MiB/s",
        h.disks.join("+"),
        "IOPS",
        "MiB/s",
        "ratio"
    );
    for (name, d) in [("read", &h.read), ("write", &h.write)] {
        if d.workload_iops == 0.0 && d.device_iops == 0.0 {
            continue;
        }
        let _ = writeln!(
            s,
            "{name:<6}{:>12.1}{:>9.1} |    {:<10}{:>10.1}{:>9.1} | {:>6}",
            d.workload_iops,
            d.workload_mbps,
            "",
            d.device_iops,
            d.device_mbps,
            d.ratio.map_or("-".to_string(), |r| format!("{r:.2}"))
        );
    }
    if !h.devices.is_empty() {
        let _ = writeln!(
            s,
            "{:<14}{:>10}{:>10}{:>9}{:>9}{:>8}{:>8}{:>7}{:>7}{:>7}",
            "device", "r/s", "w/s", "rMB/s", "wMB/s", "rrqm/s", "wrqm/s", "%rrqm", "%wrqm", "%util"
        );
        for d in &h.devices {
            let member = if h.disks.contains(&d.name) { " " } else { "*" };
            let _ = writeln!(
                s,
                "{:<14}{:>10.1}{:>10.1}{:>9.1}{:>9.1}{:>8.0}{:>8.0}{:>7.1}{:>7.1}{:>7.1}",
                format!("{member}{}", d.name),
                d.rates.r_s,
                d.rates.w_s,
                d.rates.r_mb_s,
                d.rates.w_mb_s,
                d.rates.rrqm_s,
                d.rates.wrqm_s,
                d.rates.rrqm_pct,
                d.rates.wrqm_pct,
                d.rates.util
            );
        }
        let _ = writeln!(s, "(* a layer above the disks: loop, md, dm or partition)");
    }
    for n in h.notes.iter().filter(|_| notes) {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// The db run a `--like` job replays, then each target with its storage facts.
fn like_and_targets(s: &mut String, r: &RunReport) {
    if let Some(l) = &r.options.like {
        let sh = &l.shape;
        let _ = writeln!(
            s,
            "  like db run {}: its data disks did {:.0} reads/s of {:.1} KiB at {:.1} in flight, {} wrote {:.0} pages/s of {:.1} KiB; this job replays that shape, its figures standing in for the database's",
            l.run, sh.reads_s, sh.read_kib, sh.depth, l.engine.product(), sh.writes_s, sh.write_kib
        );
        if let Some(d) = &sh.doublewrite {
            let _ = writeln!(
                s,
                "  its doublewrite: {:.0} pages/s more, in {:.1} sequential writes/s, not replayed (the job writes one random size): the disks got more writes than this job makes",
                d.pages_s, d.writes_s
            );
        }
        if let Some(log) = &sh.log {
            let _ = writeln!(
                s,
                "  its {}: {:.0} writes/s of {:.1} KiB, {:.2} commits per sync; the log writer replays it {}",
                l.engine.log(),
                log.writes_s,
                log.write_kib,
                log.commits_per_sync,
                match sh.log_rate() {
                    Some(r) => format!("at its rate ({r}/s: the data I/O was the load)"),
                    None => "back to back (the log was the load)".into(),
                }
            );
        }
        if let Some(rate) = r
            .options
            .rate_iops
            .filter(|_| sh.minor_data_rate().is_some())
        {
            let _ = writeln!(
                s,
                "  its sessions waited on the WAL: the data I/O replayed at its rate ({rate}/s), the log back to back"
            );
        }
    }
    let shown = super::ranks::targets_listed(r.targets.len());
    for t in &r.targets[..shown] {
        let _ = writeln!(s, "  target {}", target_line(t));
        let facts = r.preflight.iter().flat_map(|p| &p.targets);
        for f in facts.filter(|f| f.path == t.path) {
            for l in super::preflight::storage_lines(f) {
                let _ = writeln!(s, "    {l}");
            }
        }
    }
    super::ranks::more_targets(s, shown, r.targets.len(), "targets[]");
}

fn target_line(t: &TargetInfo) -> String {
    let mut s = format!("{} ({}", t.path.display(), fmt_size(t.size));
    if let Some(fs) = &t.fs {
        let _ = write!(s, " on {fs}");
    }
    if let Some(d) = &t.device {
        let _ = write!(s, ", device {d}");
    }
    s.push(')');
    if t.created {
        s.push_str(", created and pre-filled");
    }
    s
}

fn dir_line(name: &str, d: &DirSummary) -> String {
    let l = &d.lat_us;
    format!(
        "{name:<6}{:>12}{:>11.1}{:>9.1} |            {:>8.1}{:>8.1}{:>8.1}{:>8.1}{:>9.1}{:>9.1}",
        d.ios, d.iops, d.mbps, l.mean, l.p50, l.p90, l.p99, l.p99_9, l.max
    )
}

/// One line for the live display: elapsed time, IOPS and p99 of the last interval.
pub fn progress_line(elapsed_s: f64, iv: &iogauge_model::run::IntervalReport) -> String {
    let mut s = format!(
        "[{elapsed_s:>6.1}s]{}",
        if iv.phase == iogauge_stats::Phase::Ramp {
            " ramp"
        } else {
            ""
        }
    );
    for (name, d) in [("read", &iv.read), ("write", &iv.write)] {
        if d.ios > 0 {
            let _ = write!(s, " {name} {:.0} IOPS p99 {:.0} us", d.iops, d.lat_us.p99);
        }
    }
    s
}
