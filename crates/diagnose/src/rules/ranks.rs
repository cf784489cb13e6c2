//! **Stragglers** — a job over MPI ranks runs at the pace its slowest ranks allow: IOR and
//! elbencho print per-rank and per-host tables because one slow host (a busy disk, a
//! throttle, a noisy neighbour) hides in an aggregate. With many ranks the question is
//! "which hosts were slow".
//!
//! Fires for a run over at least [`MIN_RANKS`] ranks that ran to the end (a failed rank is
//! the run's failure, said apart) when some rank's IOPS (reads + writes over its own
//! measured window) are below [`BELOW_MEDIAN`] × the median rank's. Impact = the throughput
//! the job lost to them, Σ (median − rank) over the stragglers, ÷ what the job would have
//! done with them at the median (its total + that loss): one rank of eight at 0.3× the
//! median explains 0.7 ÷ 8 ≈ 9%. The evidence names each straggler (up to
//! [`NAMED`]) with its host, its share of the median and, when its host's devices were
//! sampled, their busiest %util.
//!
//! Ground truth: `mpi::scale::a_throttled_rank_is_named_a_straggler` (8 ranks on this host,
//! one rank's target on a loop device held to a few hundred IOPS by a cgroup v1 blkio
//! throttle).

use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Evidence, Finding, Layer};
use iogauge_model::run::RankReport;
use iogauge_model::Document;

/// Fewest ranks that ran for a median to say what a rank's pace is.
pub const MIN_RANKS: usize = 3;
/// A rank below this share of the median rank's IOPS is a straggler.
pub const BELOW_MEDIAN: f64 = 0.8;
/// Most stragglers named in the evidence (the JSON's `ranks` has them all).
pub const NAMED: usize = 5;

const SOURCE: &str =
    "IOR's and elbencho's per-rank and per-host tables: a job is as fast as its slowest ranks";
const NEXT: &str = "look at the slow ranks' hosts and targets (ranks[] in the JSON: their devices' IOPS and %util, a throttle or other load there); rerun with --keep-rank-series to see when they fell behind";

fn iops(r: &RankReport) -> f64 {
    r.summary.read.iops + r.summary.write.iops
}

/// The busiest %util among a rank's sampled devices.
fn busiest_util(r: &RankReport) -> Option<f64> {
    let h = r.hardware.as_ref()?;
    h.devices.iter().map(|d| d.rates.util).reduce(f64::max)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n % 2 {
        1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

pub fn check(doc: &Document, _w: &Whole) -> Vec<Finding> {
    let Document::Run(r) = doc else {
        return Vec::new();
    };
    let ran: Vec<&RankReport> = r.ranks.iter().filter(|k| k.error.is_none()).collect();
    if ran.len() < MIN_RANKS {
        return Vec::new();
    }
    let med = median(ran.iter().map(|k| iops(k)).collect());
    if med <= 0.0 {
        return Vec::new();
    }
    let mut slow: Vec<&RankReport> = ran
        .iter()
        .copied()
        .filter(|k| iops(k) < BELOW_MEDIAN * med)
        .collect();
    if slow.is_empty() {
        return Vec::new();
    }
    slow.sort_by(|a, b| iops(a).total_cmp(&iops(b)));
    let total: f64 = ran.iter().map(|k| iops(k)).sum();
    let lost: f64 = slow.iter().map(|k| med - iops(k)).sum();
    let who = |k: &RankReport| match k.host.as_str() {
        "" => format!("rank {}", k.rank),
        h => format!("rank {} on {h}", k.rank),
    };
    let first = slow[0];
    let title = match slow.len() {
        1 => format!(
            "{} ran at {:.2}× the median rank's IOPS: the job waits on a straggler",
            who(first),
            iops(first) / med
        ),
        n => format!(
            "{n} of {} ranks ran below {BELOW_MEDIAN}× the median rank's IOPS (slowest: {}, {:.2}×): stragglers",
            ran.len(),
            who(first),
            iops(first) / med
        ),
    };
    let mut evidence: Vec<Evidence> = vec![
        ev("median rank", med, "IOPS"),
        ev("ranks below the median's share", slow.len() as f64, ""),
    ];
    for k in slow.iter().take(NAMED) {
        evidence.push(ev(format!("{} ÷ median", who(k)), iops(k) / med, "×"));
        if let Some(u) = busiest_util(k) {
            evidence.push(ev(
                format!("rank {}'s busiest device %util", k.rank),
                u,
                "%",
            ));
        }
    }
    vec![Made {
        rule: "stragglers",
        layer: Layer::Ranks,
        title,
        impact: ratio(lost, total + lost),
        evidence,
        next: NEXT,
        source: SOURCE,
    }
    .into()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(iops: &[f64]) -> Document {
        use crate::fixture::{dir, disk, run};
        let mut r = run(
            dir(0.0, 8.0, 100.0),
            dir(0.0, 8.0, 0.0),
            disk(0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        );
        r.ranks = iops
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let mut k = RankReport {
                    rank: i as u32,
                    host: format!("host-{}", (b'a' + (i / 2) as u8) as char),
                    targets: Vec::new(),
                    region: None,
                    summary: Default::default(),
                    hardware: None,
                    error: None,
                    sent_bytes: 0,
                    intervals: Vec::new(),
                };
                k.summary.read.iops = *x;
                k
            })
            .collect();
        Document::Run(Box::new(r))
    }

    fn findings(doc: &Document) -> Vec<Finding> {
        check(doc, &Whole::of(doc))
    }

    /// One rank of eight at 0.3× the median: named with its host, impact 0.7/8.
    #[test]
    fn a_slow_rank_is_named_with_its_host() {
        let f = findings(&job(&[
            1000.0, 1010.0, 990.0, 300.0, 1000.0, 1005.0, 995.0, 1000.0,
        ]));
        assert_eq!(f.len(), 1);
        assert!(f[0].title.contains("rank 3 on host-b"), "{}", f[0].title);
        assert!((f[0].impact - 0.7 / 8.0).abs() < 0.01, "{}", f[0].impact);
    }

    /// Ranks within the spread, too few ranks, or a failed rank: no finding.
    #[test]
    fn an_even_job_has_no_straggler() {
        assert!(findings(&job(&[1000.0, 850.0, 1100.0, 950.0])).is_empty());
        assert!(findings(&job(&[1000.0, 100.0])).is_empty());
        let mut failed = job(&[1000.0, 1000.0, 0.0]);
        if let Document::Run(r) = &mut failed {
            r.ranks[2].error = Some("I/O error".into());
        }
        assert!(findings(&failed).is_empty());
    }
}
