//! Renderers: every output of a run is made from the same `RunReport`. The terminal summary
//! and the JSON export implement one trait; the caller decides where the text goes.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod calib;
mod campaign;
mod db;
mod history;
mod result;
mod run;
mod series;
#[cfg(test)]
mod snap;
mod watch;

pub use calib::{calibration_body, calibration_head, matrix_csv, point_line, preflight_text};
pub use campaign::{
    campaign_command, campaign_csv, campaign_dry_run, campaign_html, campaign_json,
    campaign_markdown, campaign_plan_line, campaign_run_label,
};
pub use db::{db_run_text, db_setup_text};
pub use history::history_table;
pub use result::{fmt_num, result_html, Stored};
pub use run::{job_line, progress_line, run_text};
pub use series::{calibration_intervals, db_interval_table, interval_table};
pub use watch::{
    db_rates_line, load_text, watch_cpu_lines, watch_line, watch_screen, LiveRun, WatchScreen,
};

use iogauge_model::Document;

/// Turns a stored result of any kind into text: every output of a result is made from its
/// document.
pub trait Exporter {
    fn render(&self, doc: &Document) -> String;
}

/// The JSON document (the schema is the serde types of `iogauge-model`).
pub struct Json;

impl Exporter for Json {
    fn render(&self, doc: &Document) -> String {
        doc.to_json()
    }
}

/// The human summary: a run's, a calibration's (head and body) or a database run's.
pub struct Text;

impl Exporter for Text {
    fn render(&self, doc: &Document) -> String {
        match doc {
            Document::Run(r) => run_text(r),
            Document::Calibration(c) => calibration_head(c) + &calibration_body(c),
            Document::DbRun(d) => db_run_text(d),
        }
    }
}

/// `label: TEXT` when the result has a `--label`.
pub(crate) fn label_line(s: &mut String, m: &iogauge_model::Meta) {
    if let Some(l) = &m.label {
        let _ = std::fmt::Write::write_fmt(s, format_args!("label: {l}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::run::RunReport;
    use iogauge_model::spec::{JobSpec, RwMode};
    use iogauge_stats::{DirStats, Interval, Nanos, PerDir, Phase};

    fn report() -> RunReport {
        let mut io = PerDir::<DirStats>::default();
        for _ in 0..1000 {
            io.read.record(8192, 100_000);
        }
        let iv = Interval {
            phase: Phase::Measure,
            index: 0,
            start: Nanos(0),
            end: Nanos(1_000_000_000),
            io,
            members: Vec::new(),
        };
        RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            vec![],
            std::time::SystemTime::UNIX_EPOCH,
            &[iv],
            false,
        )
    }

    #[test]
    fn text_shows_the_read_row_and_hides_the_empty_write_row() {
        let t = Text.render(&Document::from(report()));
        assert!(t.contains("read "), "{t}");
        assert!(t.contains("1000.0"), "IOPS shown: {t}");
        assert!(!t.contains("\nwrite"), "{t}");
        assert!(t.contains("QD 32 x 1 worker,"), "{t}");
    }

    #[test]
    fn json_parses_back() {
        let j = Json.render(&Document::from(report()));
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["summary"]["read"]["ios"], 1000);
    }
}
