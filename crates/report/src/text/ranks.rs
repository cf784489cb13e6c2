//! A job over MPI ranks in the run's text: its hosts (ranks, IOPS and MiB/s per host, as
//! IOR's and elbencho's per-host tables), its ranks (all of a few; of many, the slowest,
//! the fastest and any that failed), the spread between them and what the job's end cost
//! rank 0.

use iogauge_model::run::{RankReport, RunReport};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Up to this many ranks, every rank has its row.
pub(crate) const ALL_ROWS: usize = 16;
/// Of more: the slowest and the fastest this many each.
const ENDS: usize = 4;

/// How many of `n` targets a text lists: every one up to [`ALL_ROWS`]; over many ranks one
/// line a rank would bury the summary, so the first [`ENDS`] stand for all.
pub(crate) fn targets_listed(n: usize) -> usize {
    if n > ALL_ROWS {
        ENDS
    } else {
        n
    }
}

/// The line after a list of `listed` of `n` targets, when it left some out: where the rest
/// are (`json`, the document's array that holds every one).
pub(crate) fn more_targets(s: &mut String, listed: usize, n: usize, json: &str) {
    if listed < n {
        let _ = writeln!(
            s,
            "  … and {} more targets (every one is in the JSON's {json})",
            n - listed
        );
    }
}

fn iops(x: &RankReport) -> f64 {
    x.summary.read.iops + x.summary.write.iops
}

fn mbps(x: &RankReport) -> f64 {
    x.summary.read.mbps + x.summary.write.mbps
}

/// The job's ranks: hosts, rows, spread, the end's cost.
pub(crate) fn ranks_text(r: &RunReport) -> String {
    let mut s = format!(
        "\n{} ranks{}:\n",
        r.ranks.len(),
        r.start_skew_ms
            .map_or(String::new(), |k| format!(", started within {k:.3} ms")),
    );
    hosts_text(&mut s, &r.ranks);
    rows_text(&mut s, &r.ranks);
    // The spread of the ranks that ran to the end (a failed rank's is its failure).
    let all: Vec<f64> = r
        .ranks
        .iter()
        .filter(|x| x.error.is_none())
        .map(iops)
        .collect();
    let (lo, hi) = all
        .iter()
        .fold((f64::INFINITY, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let mean = all.iter().sum::<f64>() / all.len().max(1) as f64;
    if all.len() > 1 && mean > 0.0 {
        let _ = writeln!(
            s,
            "spread between ranks: IOPS {lo:.0}–{hi:.0} ({:.1}% of the mean)",
            (hi - lo) / mean * 100.0
        );
    }
    if let Some(g) = &r.gather {
        let _ = writeln!(
            s,
            "end of the job: rank 0 received {} part{} ({:.0} KiB, merged up a {}) in {:.1} ms, made the result in {:.1} ms; {:.0} KiB of live counts during it",
            g.messages,
            if g.messages == 1 { "" } else { "s" },
            g.received_bytes as f64 / 1024.0,
            g.shape,
            g.gather_ms,
            g.merge_ms,
            g.live_bytes as f64 / 1024.0
        );
    }
    s
}

/// One row per host, when the ranks ran on several or are many: its ranks, their IOPS and
/// MiB/s summed, and its slowest rank.
fn hosts_text(s: &mut String, ranks: &[RankReport]) {
    let mut hosts: BTreeMap<&str, Vec<&RankReport>> = BTreeMap::new();
    for x in ranks.iter().filter(|x| !x.host.is_empty()) {
        hosts.entry(x.host.as_str()).or_default().push(x);
    }
    if hosts.len() < 2 && ranks.len() <= ALL_ROWS {
        return;
    }
    let _ = writeln!(
        s,
        "{:<16}{:>7}{:>11}{:>9}{:>16}",
        "host", "ranks", "IOPS", "MiB/s", "slowest rank"
    );
    for (h, xs) in &hosts {
        let slowest = xs
            .iter()
            .filter(|x| x.error.is_none())
            .min_by(|a, b| iops(a).total_cmp(&iops(b)))
            .map_or("-".into(), |x| format!("{} ({:.0})", x.rank, iops(x)));
        let _ = writeln!(
            s,
            "{:<16}{:>7}{:>11.0}{:>9.1}{:>16}",
            h,
            xs.len(),
            xs.iter().map(|x| iops(x)).sum::<f64>(),
            xs.iter().map(|x| mbps(x)).sum::<f64>(),
            slowest
        );
    }
}

/// One row per rank (host, IOPS, MiB/s, p99 of its reads or else writes, its host's device
/// IOPS): every rank of a few; of many, the slowest and fastest and every failed one.
fn rows_text(s: &mut String, ranks: &[RankReport]) {
    let _ = writeln!(
        s,
        "{:>6}  {:<16}{:>11}{:>9}{:>11}{:>12}",
        "rank", "host", "IOPS", "MiB/s", "p99 us", "device IOPS"
    );
    let mut shown: Vec<&RankReport> = ranks.iter().collect();
    if ranks.len() > ALL_ROWS {
        let mut ran: Vec<&RankReport> = ranks.iter().filter(|x| x.error.is_none()).collect();
        ran.sort_by(|a, b| iops(a).total_cmp(&iops(b)));
        let mut keep: Vec<u32> = ran.iter().take(ENDS).map(|x| x.rank).collect();
        keep.extend(ran.iter().rev().take(ENDS).map(|x| x.rank));
        keep.extend(ranks.iter().filter(|x| x.error.is_some()).map(|x| x.rank));
        shown.retain(|x| keep.contains(&x.rank));
    }
    for x in &shown {
        let main = if x.summary.read.ios > 0 {
            &x.summary.read
        } else {
            &x.summary.write
        };
        let dev = x.hardware.as_ref().map_or("-".into(), |h| {
            format!("{:.0}", h.read.device_iops + h.write.device_iops)
        });
        let _ = writeln!(
            s,
            "{:>6}  {:<16}{:>11.0}{:>9.1}{:>11.0}{:>12}{}",
            x.rank,
            x.host,
            iops(x),
            mbps(x),
            main.lat_us.p99,
            dev,
            x.error
                .as_ref()
                .map_or(String::new(), |e| format!("  FAILED: {e}"))
        );
    }
    if shown.len() < ranks.len() {
        let _ = writeln!(
            s,
            "({} more ranks between these: every rank is in the JSON's ranks[])",
            ranks.len() - shown.len()
        );
    }
}
