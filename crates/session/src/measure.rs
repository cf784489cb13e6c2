//! The measuring pipelines, one per kind of result, each the same on one process or over
//! the ranks of a [`Team`](crate::ranks::Team): the producer runs as it would alone (it does
//! not know whether it is one rank of many), and over ranks the session shares the work,
//! carries the live counts and stops, gathers every rank's part and merges them into the one
//! document rank 0 stores.

pub mod calibrate;
pub mod db;
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
