//! `run` over ranks, on rank 0: the job's one document from the job's part (every rank's
//! series merged up the tree, every rank's row), rank 0's own outcome and what the end cost.

use super::bundle::{Part, Row};
use crate::ranks::thread_cpu_ms;
use anyhow::anyhow;
use iogauge_engine::document::{document_of, Recorded};
use iogauge_engine::JobOutcome;
use iogauge_model::run::{GatherReport, RankReport};
use iogauge_model::spec::JobSpec;
use iogauge_model::{Document, Histograms};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Rank 0's own outcome, kept whole for the job's document.
pub(super) struct Own {
    pub started: SystemTime,
    /// Its samples (the job's devices when every rank ran on its host).
    pub recorded: Recorded,
    pub ran: bool,
}

/// Each rank's failure, and its warnings that are not the job's own already, named by rank.
fn rank_warnings(warnings: &mut Vec<String>, rows: &[Row]) {
    for p in rows {
        if let Some(e) = &p.error {
            warnings.push(match p.host.as_str() {
                "" => format!("rank {} failed: {e}", p.rank),
                h => format!("rank {} on {h} failed: {e}", p.rank),
            });
        }
        for w in &p.warnings {
            // Said once for the job when it is the job's too (an interruption).
            let ranked = format!("rank {}: {w}", p.rank);
            if !warnings.contains(w) && !warnings.contains(&ranked) {
                warnings.push(ranked);
            }
        }
    }
}

/// The job's one document from the job's part (every rank's series merged, every rank's
/// row), rank 0's own outcome and what the end cost.
pub(super) fn document(
    spec: &JobSpec,
    mut part: Part,
    own: Own,
    mut gather: GatherReport,
) -> anyhow::Result<(Document, Histograms)> {
    let made = thread_cpu_ms();
    let rows = std::mem::take(&mut part.rows);
    let interrupted = rows.iter().any(|r| r.interrupted);
    let infos = rows.iter().flat_map(|r| r.infos.iter().cloned()).collect();
    let mut hosts = rows.iter().map(|r| &r.host).filter(|h| !h.is_empty());
    let first = hosts.next();
    let one_host = hosts.all(|h| Some(h) == first);
    // Rank 0's start, or (when its own job failed) the first rank's that ran: what the
    // others measured is stored either way.
    let started = match own.ran {
        true => own.started,
        false => rows
            .iter()
            .find(|r| r.summary.is_some())
            .map_or(own.started, |r| {
                UNIX_EPOCH + Duration::from_nanos(r.started_ns)
            }),
    };
    let outcome = JobOutcome {
        started,
        intervals: part.intervals()?,
        interrupted,
        steady_wait: None,
        io_path: part.io_path().ok_or_else(|| {
            let why: Vec<String> = rows
                .iter()
                .filter_map(|r| Some(format!("rank {}: {}", r.rank, r.error.as_deref()?)))
                .collect();
            anyhow!("no rank ran, nothing to store: {}", why.join("; "))
        })?,
        // `--log-bs` is refused over more than one rank (see the cli's `run`).
        log: None,
        replay: None,
    };
    // The job's devices: the host's own, when every rank ran on rank 0's host.
    let recorded = match one_host {
        true => own.recorded,
        false => Recorded::default(),
    };
    let (mut report, histograms) = document_of(spec.clone(), infos, outcome, recorded)?;
    // A rank that sent no part has no start.
    let starts: Vec<u64> = rows
        .iter()
        .map(|r| r.started_ns)
        .filter(|t| *t > 0)
        .collect();
    let skew = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
    report.start_skew_ms = Some(skew as f64 / 1e6);
    if !one_host {
        report.warnings.push(
            "the ranks ran on several hosts: the job's device figures are per rank (ranks[].hardware)"
                .into(),
        );
    }
    rank_warnings(&mut report.warnings, &rows);
    report.ranks = rows
        .into_iter()
        .map(|r| RankReport {
            rank: r.rank,
            host: r.host,
            targets: r.targets,
            region: r.region,
            summary: r.summary.unwrap_or_default(),
            hardware: r.hardware,
            error: r.error,
            sent_bytes: r.sent_bytes,
            intervals: r.intervals,
        })
        .collect();
    gather.merge_ms = thread_cpu_ms() - made;
    report.gather_ms = Some(gather.gather_ms);
    report.gather = Some(gather);
    Ok((Document::from(report), histograms))
}
