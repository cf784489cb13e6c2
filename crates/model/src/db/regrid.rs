//! A database run re-rendered at a coarser interval (`iogauge show ID --interval 5s`): the
//! sessions' percentiles from the per-interval histograms stored with the run (exact), the
//! load profile's rates and average times weighted by what they are averages of, average
//! active sessions weighted by their samples, device figures from the raw snapshots.

use crate::db::aas::Aas;
use crate::db::outcome::SessionTotals;
use crate::db::profile::{BuffersWritten, ByProcess, InnoDbRates, IoRates, LoadRates};
use crate::db::report::{write_compare, DbIntervalReport, DbReport, SessionSummary};
use crate::derive::weighted_mean;
use crate::hardware::system_between;
use crate::regrid::{groups, merging, named_interval_label, Hists, RegridError};
use iogauge_stats::units::{BytesPerSec, Iops, Millis};
use iogauge_stats::{Nanos, Phase};
use std::time::Duration;

/// The labels of a database interval's histograms: `read` and `update` operations.
pub const OPS: [&str; 2] = ["read", "update"];

/// Rates weighted by duration; an average time by the events it averages (rate × seconds),
/// over the parts that have one (`None` when none has, or none had events).
fn combine_rates(parts: &[(f64, &LoadRates)]) -> LoadRates {
    let rate = |f: &dyn Fn(&LoadRates) -> f64| {
        weighted_mean(parts.iter().map(|(t, r)| (*t, f(r)))).unwrap_or(0.0)
    };
    let per = |n: &dyn Fn(&LoadRates) -> f64, x: &dyn Fn(&LoadRates) -> Option<f64>| {
        weighted_mean(parts.iter().filter_map(|(t, r)| Some((t * n(r), x(r)?))))
    };
    let io = |f: fn(&ByProcess<IoRates>) -> &IoRates| IoRates {
        reads_s: rate(&|r| f(&r.by_process).reads_s),
        writes_s: rate(&|r| f(&r.by_process).writes_s),
        avg_read_ms: per(&|r| f(&r.by_process).reads_s, &|r| {
            f(&r.by_process).avg_read_ms
        }),
        avg_write_ms: per(&|r| f(&r.by_process).writes_s, &|r| {
            f(&r.by_process).avg_write_ms
        }),
    };
    LoadRates {
        logical_reads_s: rate(&|r| r.logical_reads_s),
        physical_reads_s: rate(&|r| r.physical_reads_s),
        avg_read_ms: per(&|r| r.physical_reads_s, &|r| r.avg_read_ms),
        commits_s: rate(&|r| r.commits_s),
        rows_updated_s: rate(&|r| r.rows_updated_s),
        log_bytes_s: BytesPerSec(rate(&|r| r.log_bytes_s.0)),
        log_writes_s: Iops(rate(&|r| r.log_writes_s.0)),
        log_syncs_s: Iops(rate(&|r| r.log_syncs_s.0)),
        avg_log_write_ms: per(&|r| r.log_writes_s.0, &|r| r.avg_log_write_ms.map(|m| m.0))
            .map(Millis),
        avg_log_sync_ms: per(&|r| r.log_syncs_s.0, &|r| r.avg_log_sync_ms.map(|m| m.0)).map(Millis),
        buffers_written_s: BuffersWritten {
            checkpointer: rate(&|r| r.buffers_written_s.checkpointer),
            bgwriter: rate(&|r| r.buffers_written_s.bgwriter),
            backend: rate(&|r| r.buffers_written_s.backend),
        },
        by_process: ByProcess {
            client_backends: io(|b| &b.client_backends),
            checkpointer: io(|b| &b.checkpointer),
            bgwriter: io(|b| &b.bgwriter),
            log_writer: io(|b| &b.log_writer),
        },
        innodb: parts.iter().any(|(_, r)| r.innodb.is_some()).then(|| {
            let i = |f: fn(&InnoDbRates) -> f64| rate(&|r| r.innodb.as_ref().map_or(0.0, f));
            InnoDbRates {
                data_reads_s: i(|x| x.data_reads_s),
                data_writes_s: i(|x| x.data_writes_s),
                data_fsyncs_s: i(|x| x.data_fsyncs_s),
                pages_written_s: i(|x| x.pages_written_s),
                dblwr_pages_s: i(|x| x.dblwr_pages_s),
                dblwr_writes_s: i(|x| x.dblwr_writes_s),
            }
        }),
    }
}

impl DbReport {
    /// This run's intervals at `every` (a whole multiple of the run's grid), each phase cut
    /// separately from its own start; the summary and everything else unchanged.
    pub fn regrid(
        &self,
        every: Duration,
        hists: &[(String, Vec<u8>)],
    ) -> Result<DbReport, RegridError> {
        let mut out = self.clone();
        let Some((ratio, hists)) = merging(every, self.grid.interval, hists)? else {
            return Ok(out);
        };
        out.intervals = Vec::new();
        for (phase, members) in groups(self.intervals.iter().map(|i| i.phase), ratio) {
            out.intervals.push(self.merged(phase, &members, &hists)?);
        }
        Ok(out)
    }

    /// One coarse interval from its recorded `members` (position, index within the phase).
    fn merged(
        &self,
        phase: Phase,
        members: &[(usize, u32)],
        hists: &Hists,
    ) -> Result<DbIntervalReport, RegridError> {
        let ivs: Vec<&DbIntervalReport> =
            members.iter().map(|(i, _)| &self.intervals[*i]).collect();
        let (first, last) = (ivs[0], ivs[ivs.len() - 1]);
        let (t_s, end) = (first.t_s, last.t_s + last.dur_s);
        let mut s = SessionTotals::default();
        for (&(_, index), iv) in members.iter().zip(&ivs) {
            // Counts are rates × seconds of one interval: whole numbers to within rounding.
            let n = |rate: f64| (rate * iv.dur_s).round() as u64;
            let (reads, updates) = (n(iv.sessions.reads_s), n(iv.sessions.updates_s));
            s.read_ops += reads;
            s.update_ops += updates;
            s.rows_read += n(iv.sessions.rows_s);
            for (ops, name, into) in [
                (reads, OPS[0], &mut s.read_lat),
                (updates, OPS[1], &mut s.update_lat),
            ] {
                if ops > 0 {
                    into.merge(&hists.get(&named_interval_label(phase, index, name))?);
                }
            }
        }
        let parts: Vec<(f64, &LoadRates)> = ivs.iter().map(|i| (i.dur_s, &i.db)).collect();
        let nanos = |s: f64| Nanos((s * 1e9).round() as u64);
        let db = combine_rates(&parts);
        let system = system_between(&self.samples, nanos(t_s), nanos(end));
        let per_write = match (&system, &self.writes) {
            (Some(d), Some(w)) => write_compare(&db, d, &w.disks).per_db_write,
            _ => None,
        };
        Ok(DbIntervalReport {
            phase,
            t_s,
            dur_s: end - t_s,
            sessions: SessionSummary::of(&s, end - t_s),
            db,
            aas: Aas::combine(ivs.iter().map(|i| &i.aas)),
            device_writes_per_db_write: per_write,
            system,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Document;
    use iogauge_stats::LatHist;

    const DB_RUN: &str = include_str!("../../../campaign/tests/fixtures/db_run.json");

    /// The captured run (0.25 s grid, 4 ramp and 16 measured intervals) and histograms for
    /// its intervals: interval k's reads take (k+1) ms, its updates 10 ms.
    fn run() -> (DbReport, Vec<(String, Vec<u8>)>) {
        let Ok(Document::DbRun(r)) = Document::from_json(DB_RUN) else {
            panic!("db_run.json is a db run")
        };
        let mut hists = Vec::new();
        for (phase, members) in groups(r.intervals.iter().map(|i| i.phase), 1) {
            for (i, index) in members {
                let iv = &r.intervals[i];
                for (name, rate, ms) in [
                    ("read", iv.sessions.reads_s, i as u64 + 1),
                    ("update", iv.sessions.updates_s, 10),
                ] {
                    let mut h = LatHist::default();
                    for _ in 0..(rate * iv.dur_s).round() as u64 {
                        h.record(ms * 1_000_000);
                    }
                    let label = named_interval_label(phase, index, name);
                    hists.push((label, h.encode().unwrap()));
                }
            }
        }
        (*r, hists)
    }

    #[test]
    fn coarse_intervals_keep_counts_rates_and_exact_percentiles() {
        let (r, h) = run();
        let g = r.regrid(Duration::from_secs(1), &h).unwrap();
        let shape: Vec<(Phase, f64)> = g.intervals.iter().map(|i| (i.phase, i.t_s)).collect();
        assert_eq!(
            shape,
            [
                (Phase::Ramp, 0.0),
                (Phase::Measure, 1.0),
                (Phase::Measure, 2.0),
                (Phase::Measure, 3.0),
                (Phase::Measure, 4.0)
            ]
        );
        let ops = |ivs: &[DbIntervalReport]| -> u64 {
            ivs.iter()
                .filter(|i| i.phase == Phase::Measure)
                .map(|i| i.sessions.ops)
                .sum()
        };
        assert_eq!(ops(&g.intervals), ops(&r.intervals));
        // Measured 1..2 holds recorded intervals 4..8: reads of 5..8 ms, the most at 8 ms.
        let m = &g.intervals[1];
        let p99 = m.sessions.read_lat_us.p99;
        assert!((7990.0..8010.0).contains(&p99), "p99 {p99}");
        let want: f64 = r.intervals[4..8]
            .iter()
            .map(|i| i.db.physical_reads_s)
            .sum::<f64>()
            / 4.0;
        assert!((m.db.physical_reads_s - want).abs() < 1e-9);
        assert_eq!(m.aas.samples, 10, "2 + 3 + 2 + 3 samples");
        assert_eq!(g.summary, r.summary);
        assert_eq!(r.regrid(Duration::from_millis(250), &h).unwrap(), r);
        assert!(matches!(
            r.regrid(Duration::from_millis(300), &h),
            Err(RegridError::NotMultiple { .. })
        ));
        assert!(matches!(
            r.regrid(Duration::from_secs(1), &h[..2]),
            Err(RegridError::NoHistograms { .. })
        ));
    }

    #[test]
    fn average_times_are_weighted_by_their_events() {
        let mut a = LoadRates {
            physical_reads_s: 100.0,
            avg_read_ms: Some(2.0),
            ..LoadRates::default()
        };
        a.log_syncs_s = Iops(10.0);
        a.avg_log_sync_ms = Some(Millis(1.0));
        let b = LoadRates {
            physical_reads_s: 300.0,
            avg_read_ms: Some(4.0),
            log_syncs_s: Iops(0.0),
            avg_log_sync_ms: None,
            ..LoadRates::default()
        };
        let c = combine_rates(&[(1.0, &a), (1.0, &b)]);
        assert_eq!(c.physical_reads_s, 200.0);
        assert_eq!(c.avg_read_ms, Some(3.5), "(100×2 + 300×4) / 400");
        assert_eq!(c.log_syncs_s.0, 5.0);
        assert_eq!(c.avg_log_sync_ms, Some(Millis(1.0)));
        assert_eq!(combine_rates(&[(1.0, &b)]).avg_log_sync_ms, None);
    }
}
