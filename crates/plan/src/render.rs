//! Plain-text rendering of a plan: one `String` per result, nothing printed here. `source`
//! says where the per-disk figures came from (a flag, a profile, a calibration).

use crate::{Basis, Binding, Capacity, HistoryPlan, Plan, Redundancy, Sizing};
use std::fmt::Write;

/// The text of any plan.
pub fn text(plan: &Plan, source: &str) -> String {
    match plan {
        Plan::Size(s) => sizing(s, source),
        Plan::History(h) => history(h, source),
        Plan::Capacity(c) => capacity(c, source),
    }
}

/// A figure with as many decimals as it deserves: 15000, 83.3, 0.75.
pub fn num(x: f64) -> String {
    if x.abs() >= 100.0 || x == x.trunc() {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn basis(out: &mut String, b: &Basis, source: &str) {
    let level = match b.redundancy.parse::<Redundancy>() {
        Ok(r) => r.describe(),
        Err(_) => b.redundancy.as_str(),
    };
    let _ = writeln!(
        out,
        "  redundancy   {level}: write penalty {}",
        num(b.write_penalty)
    );
    let mbps = b
        .disk_mbps
        .map_or(String::new(), |m| format!(", {} MB/s", num(m.0)));
    let _ = writeln!(
        out,
        "  per disk     {} IOPS{mbps} ({source})",
        num(b.disk_iops.0)
    );
    if b.read_cache_hit > 0.0 {
        let _ = writeln!(
            out,
            "  read cache   {} of reads served by cache (writes still go to disk)",
            pct(b.read_cache_hit)
        );
    }
    if b.target_util < 1.0 {
        let _ = writeln!(
            out,
            "  headroom     sized for {} utilization",
            pct(b.target_util)
        );
    }
}

fn count(n: Option<u64>, exact: Option<f64>) -> String {
    match (n, exact) {
        (Some(n), Some(e)) => format!("{n} ({e:.1})"),
        _ => "-".into(),
    }
}

fn row(out: &mut String, label: &str, iops: String, mbps: Option<String>) {
    let _ = match mbps {
        Some(m) => writeln!(out, "  {label:<12} {iops:>14} {m:>14}"),
        None => writeln!(out, "  {label:<12} {iops:>14}"),
    };
}

/// The sizing table and its verdict.
fn sizing_table(out: &mut String, s: &Sizing) {
    let has_mbps = s.hardware_mbps.is_some();
    let m = |f: Option<String>| has_mbps.then(|| f.unwrap_or_else(|| "-".into()));
    row(out, "", "IOPS".into(), has_mbps.then(|| "MB/s".into()));
    row(
        out,
        "workload",
        num(s.workload_iops.0),
        m(s.workload_mbps.map(|v| num(v.0))),
    );
    row(
        out,
        "hardware",
        num(s.hardware_iops.0),
        m(s.hardware_mbps.map(|v| num(v.0))),
    );
    row(
        out,
        "disks",
        count(Some(s.disks), Some(s.disks_exact)),
        m(Some(count(s.disks_mbps, s.disks_mbps_exact))),
    );
    if let Some(per) = s.basis.per_enclosure {
        row(
            out,
            &format!("enclosures/{per}"),
            count(s.enclosures, s.enclosures_exact),
            m(Some(count(s.enclosures_mbps, s.enclosures_mbps_exact))),
        );
    }
    row(
        out,
        "utilization",
        pct(s.utilization),
        m(s.utilization_mbps.map(pct)),
    );
    let needed = s.disks.max(s.disks_mbps.unwrap_or(0));
    let by = match s.binding {
        Binding::Iops => "IOPS",
        Binding::MiBps => "MB/s",
    };
    let encl = s
        .configured_enclosures
        .map_or(String::new(), |e| format!(" in {e} enclosures"));
    let util = match s.binding {
        Binding::Iops => s.utilization,
        Binding::MiBps => s.utilization_mbps.unwrap_or(s.utilization),
    };
    if s.configured_disks == needed {
        let _ = writeln!(
            out,
            "\nneeds {needed} disks{encl}, bound by {by} ({} busy)",
            pct(util)
        );
    } else {
        let verdict = if s.configured_disks >= needed {
            "enough"
        } else {
            "too few"
        };
        let _ = writeln!(
            out,
            "\nneeds {needed} disks, bound by {by}; the {} disks given{encl} run at {} busy: {verdict}",
            s.configured_disks,
            pct(util)
        );
    }
}

fn workload_line(out: &mut String, s: &Sizing) {
    let _ = writeln!(
        out,
        "  workload     {} IOPS: {} reads, {} writes",
        num(s.workload_iops.0),
        num(s.read_iops.0),
        num(s.write_iops.0)
    );
    let reads = if s.basis.read_cache_hit > 0.0 {
        format!(
            "{} reads × {}",
            num(s.read_iops.0),
            num(1.0 - s.basis.read_cache_hit)
        )
    } else {
        format!("{} reads", num(s.read_iops.0))
    };
    let _ = writeln!(
        out,
        "  hardware     {} IOPS = {reads} + {} writes × {}",
        num(s.hardware_iops.0),
        num(s.write_iops.0),
        num(s.basis.write_penalty)
    );
}

/// Forward sizing.
pub fn sizing(s: &Sizing, source: &str) -> String {
    let mut out = String::from("iogauge plan: workload to disks\n");
    workload_line(&mut out, s);
    basis(&mut out, &s.basis, source);
    out.push('\n');
    sizing_table(&mut out, s);
    out
}

/// A history: percentiles, histogram, top periods, and the sizing at the percentile.
pub fn history(h: &HistoryPlan, source: &str) -> String {
    let mut out = format!(
        "iogauge plan: history of {} periods, sized at p{} (line {}, {})\n",
        h.periods,
        num(h.percentile),
        h.sized_line,
        h.sized_timestamp
    );
    workload_line(&mut out, &h.sizing);
    basis(&mut out, &h.sizing.basis, source);
    let _ = writeln!(
        out,
        "\n  {:<14} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "p50", "p90", "p95", "p99", "max"
    );
    let sp = &h.percentiles;
    let rows = [
        ("workload IOPS", Some(sp.workload_iops)),
        ("hardware IOPS", Some(sp.hardware_iops)),
        ("disks", Some(sp.disks)),
        ("workload MB/s", sp.workload_mbps),
        ("hardware MB/s", sp.hardware_mbps),
        ("disks (MB/s)", sp.disks_mbps),
    ];
    for (label, p) in rows {
        if let Some(p) = p {
            let _ = writeln!(
                out,
                "  {label:<14} {:>9} {:>9} {:>9} {:>9} {:>9}",
                num(p.p50),
                num(p.p90),
                num(p.p95),
                num(p.p99),
                num(p.max)
            );
        }
    }
    if sp.hardware_mbps.is_some() && h.sizing.basis.disk_mbps.is_none() {
        out.push_str("  (MB/s not sized: no per-disk MB/s; give --disk-mbps)\n");
    }

    out.push_str("\nhardware IOPS per period (disks needed at the top of each bar)\n");
    let most = h
        .histogram
        .iter()
        .map(|b| b.periods)
        .max()
        .unwrap_or(0)
        .max(1);
    for b in &h.histogram {
        let bar = "#".repeat((b.periods * 40).div_ceil(most));
        let _ = writeln!(
            out,
            "  {:>9} - {:>9} {:>6} {:>5} disks  {bar}",
            num(b.from.0),
            num(b.to.0),
            b.periods,
            b.disks
        );
    }

    let _ = writeln!(
        out,
        "\ntop {} periods by hardware IOPS\n  {:>6}  {:<20} {:>9} {:>9} {:>9} {:>6}",
        h.top.len(),
        "line",
        "timestamp",
        "read",
        "write",
        "hardware",
        "disks"
    );
    for t in &h.top {
        let _ = writeln!(
            out,
            "  {:>6}  {:<20} {:>9} {:>9} {:>9} {:>6}",
            t.line,
            t.timestamp,
            num(t.read_iops.0),
            num(t.write_iops.0),
            num(t.hardware_iops.0),
            t.disks
        );
    }
    let _ = writeln!(out, "\nsized at p{}:", num(h.percentile));
    sizing_table(&mut out, &h.sizing);
    out
}

/// Reverse mode.
pub fn capacity(c: &Capacity, source: &str) -> String {
    let mut out = format!("iogauge plan: capacity of {} disks\n", c.disks);
    basis(&mut out, &c.basis, source);
    let has_mbps = c.hardware_mbps.is_some();
    let m = |v: Option<crate::MiBps>| has_mbps.then(|| v.map_or("-".into(), |v| num(v.0)));
    out.push('\n');
    row(&mut out, "", "IOPS".into(), has_mbps.then(|| "MB/s".into()));
    row(
        &mut out,
        "hardware",
        num(c.hardware_iops.0),
        m(c.hardware_mbps),
    );
    row(
        &mut out,
        &format!("at {:.0}% reads", c.read_share * 100.0),
        num(c.workload_iops.0),
        m(c.workload_mbps),
    );
    row(
        &mut out,
        "write-only",
        num(c.write_only_iops.0),
        m(c.write_only_mbps),
    );
    row(
        &mut out,
        "read-only",
        num(c.read_only_iops.0),
        m(c.read_only_mbps),
    );
    if let (Some(per), Some(e)) = (c.basis.per_enclosure, c.enclosures) {
        let _ = writeln!(
            out,
            "  in {e} enclosures of {per} ({:.1})",
            c.enclosures_exact.unwrap_or(0.0)
        );
    }
    let _ = writeln!(
        out,
        "\nserves {} workload IOPS ({} reads + {} writes) at {} utilization",
        num(c.workload_iops.0),
        num(c.read_iops.0),
        num(c.write_iops.0),
        pct(c.utilization)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{capacity as cap, size, Disk, Iops, Layout, Model, Redundancy, Workload};

    #[test]
    fn numbers() {
        let table = [
            (15000.0, "15000"),
            (83.333, "83.3"),
            (0.756, "0.76"),
            (7.0, "7"),
        ];
        for (x, want) in table {
            assert_eq!(num(x), want);
        }
    }

    #[test]
    fn sizing_text_names_the_figures() {
        let s = size(
            &Workload::mix(10_000.0, 0.5, None),
            &Model::new(Redundancy::Mirror),
            &Disk {
                iops: Iops(180.0),
                mbps: None,
            },
            &Layout {
                per_enclosure: Some(12),
                disks: None,
            },
        );
        let t = sizing(&s, "--disk-iops");
        for want in [
            "15000",
            "84 (83.3)",
            "7 (6.9)",
            "99.2%",
            "needs 84 disks in 7 enclosures",
        ] {
            assert!(t.contains(want), "{want} missing in\n{t}");
        }
        let c = cap(
            168,
            0.0,
            &Model::new(Redundancy::Mirror),
            &Disk {
                iops: Iops(180.0),
                mbps: None,
            },
            None,
        );
        let t = capacity(&c, "--disk-iops");
        assert!(t.contains("serves 15120 workload IOPS"), "{t}");
    }
}
