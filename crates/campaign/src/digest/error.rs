//! Why a stored run cannot be digested: its own module, so the digest and the curves both
//! name it and neither imports the other for it.

use iogauge_stats::HistError;

/// A stored run that cannot be digested.
#[derive(Debug, thiserror::Error)]
pub enum DigestError {
    #[error("run {id}: stored histogram {label} does not decode ({source}); the store may be damaged, re-run that repetition")]
    Histogram {
        id: i64,
        label: String,
        source: HistError,
    },
    #[error("run {index} of the case (counting from 1 in the order given): stored histogram {label} does not decode ({source}); the store may be damaged, re-run that repetition")]
    CurveHistogram {
        index: usize,
        label: String,
        source: HistError,
    },
}
