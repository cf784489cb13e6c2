//! What can go wrong in a sample, apart from the samplers and parsers that all return it.

use std::io;
use std::path::PathBuf;

/// A failure to read or understand one of the sampled files. Nothing is skipped silently: a
/// line the parser does not understand fails the sample, with the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{file}: cannot parse {line:?}: {reason}")]
    Parse {
        file: &'static str,
        line: String,
        reason: String,
    },
}
