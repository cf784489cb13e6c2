//! A run's log-writer figures (`run --log-bs`) as digest metrics: `log_writes_s`,
//! `log_mbps`, and the mean write and `fdatasync` times in ms: the names a db run's log
//! (WAL, redo) has, so a run standing in for one compares with it ([`super::stand_in`]).
//! A leaf: the digest puts what it returns.

use iogauge_model::run::RunReport;

/// The log writer's metrics of `r`, keys from the catalogue; none without a log writer or
/// a measured window.
pub(super) fn log_metrics(r: &RunReport) -> Vec<(&'static str, f64)> {
    let Some(l) = r.log.as_ref().filter(|l| l.elapsed_s > 0.0) else {
        return Vec::new();
    };
    let (write_ms, sync_ms) = (l.write_lat_us.mean / 1e3, l.sync_lat_us.mean / 1e3);
    vec![
        ("log_writes_s", l.writes_s),
        ("log_mbps", l.mbps),
        ("log_write_ms", write_ms),
        ("log_sync_ms", sync_ms),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::run::LogSummary;
    use iogauge_model::spec::{JobSpec, RwMode};

    fn run(log: Option<LogSummary>) -> RunReport {
        let mut r = RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            Vec::new(),
            std::time::SystemTime::UNIX_EPOCH,
            &[],
            false,
        );
        r.log = log;
        r
    }

    #[test]
    fn log_figures_in_ms() {
        let mut l = LogSummary {
            writes: 100,
            elapsed_s: 1.0,
            writes_s: 100.0,
            mbps: 0.78,
            ..LogSummary::default()
        };
        l.write_lat_us.mean = 250.0;
        l.sync_lat_us.mean = 1500.0;
        let got = log_metrics(&run(Some(l.clone())));
        assert_eq!(
            got,
            [
                ("log_writes_s", 100.0),
                ("log_mbps", 0.78),
                ("log_write_ms", 0.25),
                ("log_sync_ms", 1.5)
            ]
        );
        for (k, _) in &got {
            assert!(crate::metric::metric(k).is_some(), "{k} in the catalogue");
        }
        assert!(log_metrics(&run(None)).is_empty());
    }
}
