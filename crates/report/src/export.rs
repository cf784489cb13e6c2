//! The exporters: every output of a stored result is made from its document, by one trait
//! (hyperfine's `Exporter`): the JSON document and the human summary.

use crate::text::calib::{calibration_body, calibration_head};
use crate::text::db::db_run_text;
use crate::text::run::run_text;
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

    /// `findings` is in the JSON when a result has some, and left out (as stored before they
    /// existed) when it has none; the text says the same finding.
    #[test]
    fn findings_in_json_only_when_there_are_some() {
        use iogauge_model::finding::{Evidence, Finding, Layer};
        let plain = Json.render(&Document::from(report()));
        assert!(!plain.contains("\"findings\""), "{plain}");
        let mut r = report();
        r.findings = vec![Finding {
            rule: "device-saturated".into(),
            layer: Layer::Device,
            title: "vda is saturated".into(),
            impact: 0.7,
            evidence: vec![Evidence::new("vda %util", 99.0, "%")],
            next: "a faster device".into(),
            source: "the USE method".into(),
            ..Default::default()
        }];
        let doc = Document::from(r);
        let v: serde_json::Value = serde_json::from_str(&Json.render(&doc)).unwrap();
        assert_eq!(v["findings"][0]["layer"], "device");
        assert_eq!(v["findings"][0]["evidence"][0]["value"], 99.0);
        let back = Document::from_json(&Json.render(&doc)).unwrap();
        assert_eq!(back.findings(), doc.findings());
        assert!(Text
            .render(&doc)
            .contains("limit: vda is saturated (70% of the I/O time; vda %util 99%)"));
    }

    #[test]
    fn json_parses_back() {
        let j = Json.render(&Document::from(report()));
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["summary"]["read"]["ios"], 1000);
    }
}
