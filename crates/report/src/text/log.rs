//! The log writer's line under a run's summary (`run --log-bs`): writes/s, MiB/s and what a
//! write and its `fdatasync` took, as a database's WAL figures read.

use iogauge_model::run::RunReport;
use iogauge_model::units::fmt_size;

/// `log writer: 1234 writes/s of 8k (9.6 MiB/s), write 0.31 ms, fdatasync 0.52 ms (mean;
/// p99 0.90 / 1.70 ms)`, and where it wrote when that was a target of its own; empty
/// without a log writer.
pub(crate) fn log_line(r: &RunReport) -> String {
    let Some(l) = &r.log else {
        return String::new();
    };
    let own = r.options.log.as_ref().and_then(|o| o.target.as_ref());
    let on = own.map_or(String::new(), |p| format!(" on {}", p.display()));
    if l.writes == 0 {
        return format!(
            "log writer{on}: no write of {} completed in the measured window\n",
            fmt_size(l.bs)
        );
    }
    let ms = |us: f64| us / 1e3;
    format!(
        "log writer{on}: {:.0} writes/s of {} ({:.1} MiB/s), write {:.2} ms, fdatasync {:.2} ms (mean; p99 {:.2} / {:.2} ms)\n",
        l.writes_s,
        fmt_size(l.bs),
        l.mbps,
        ms(l.write_lat_us.mean),
        ms(l.sync_lat_us.mean),
        ms(l.write_lat_us.p99),
        ms(l.sync_lat_us.p99)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::run::LogSummary;
    use iogauge_model::spec::{JobSpec, LogStream, RwMode};
    use iogauge_stats::LatSummary;

    fn report(log: Option<LogSummary>, target: Option<&str>) -> RunReport {
        let mut r = RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            Vec::new(),
            std::time::SystemTime::UNIX_EPOCH,
            &[],
            false,
        );
        r.options.log = Some(LogStream {
            bs: 8192,
            target: target.map(Into::into),
            size: 1 << 26,
            rate: None,
        });
        r.log = log;
        r
    }

    #[test]
    fn one_line_of_rates_and_times() {
        let lat = |mean, p99| LatSummary {
            mean,
            p99,
            ..LatSummary::default()
        };
        let l = LogSummary {
            bs: 8192,
            writes: 1234,
            writes_s: 1234.4,
            mbps: 9.64,
            write_lat_us: lat(310.0, 900.0),
            sync_lat_us: lat(520.0, 1700.0),
            ..LogSummary::default()
        };
        assert_eq!(
            log_line(&report(Some(l.clone()), None)),
            "log writer: 1234 writes/s of 8k (9.6 MiB/s), write 0.31 ms, fdatasync 0.52 ms (mean; p99 0.90 / 1.70 ms)\n"
        );
        assert!(log_line(&report(Some(l), Some("/wal/x"))).starts_with("log writer on /wal/x: "));
        let idle = LogSummary {
            bs: 8192,
            ..LogSummary::default()
        };
        assert!(log_line(&report(Some(idle), None)).contains("no write of 8k"));
        assert_eq!(log_line(&report(None, None)), "");
    }
}
