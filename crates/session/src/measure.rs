//! The measuring pipelines, one per kind of result, each the same on one process or over
//! the ranks of a [`Team`](crate::ranks::Team): the producer runs as it would alone (it does
//! not know whether it is one rank of many), and over ranks the session shares the work,
//! carries the live counts and stops, gathers every rank's part and merges them into the one
//! document rank 0 stores.

pub mod calibrate;
pub mod capture;
pub mod db;
pub mod replay;
pub mod run;

use crate::finish::Ending;
use iogauge_model::{Document, Histograms};

/// What a measuring pipeline hands back.
pub enum Finished {
    /// On the process that stores: the job's document, its histograms and how it ended.
    Lead {
        doc: Box<Document>,
        histograms: Histograms,
        ending: Ending,
    },
    /// On a rank other than 0, once its part went to rank 0: its own failure, if any, and
    /// what it has to say after its part went (its own server's shutdown).
    Member {
        rank: u32,
        error: Option<String>,
        warnings: Vec<String>,
    },
}

impl Finished {
    /// The document rank 0 (or the one process) stores, with its findings: the diagnosis
    /// reads the whole merged result, never one rank's or one interval's part.
    pub(crate) fn lead(mut doc: Document, histograms: Histograms, ending: Ending) -> Finished {
        *doc.findings_mut() = iogauge_diagnose::diagnose(&doc);
        Finished::Lead {
            doc: Box::new(doc),
            histograms,
            ending,
        }
    }

    /// The document to store, on the process that stores it.
    pub fn document(&self) -> Option<&Document> {
        match self {
            Finished::Lead { doc, .. } => Some(doc),
            Finished::Member { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::finding::Layer;
    use iogauge_model::run::RunReport;
    use iogauge_model::spec::{JobSpec, RwMode};

    /// The document handed to the store carries its diagnosis, whatever it had before.
    #[test]
    fn the_lead_document_is_diagnosed() {
        let mut r = RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            Vec::new(),
            std::time::SystemTime::UNIX_EPOCH,
            &[],
            false,
        );
        r.findings = vec![iogauge_model::finding::Finding {
            rule: "stale".into(),
            layer: Layer::Device,
            title: String::new(),
            impact: 1.0,
            evidence: Vec::new(),
            next: String::new(),
            source: String::new(),
            ..Default::default()
        }];
        let f = Finished::lead(Document::from(r), Vec::new(), Ending::Complete);
        let doc = f.document().expect("the lead's document");
        let rules: Vec<&str> = doc.findings().iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, ["no-limit"]);
    }
}
