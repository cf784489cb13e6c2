//! The one error type of the crate: each variant says what is wrong and where (a path, a
//! byte offset, a line number, the magic found), in one line.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IologError {
    /// A file could not be opened or read.
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A stream could not be read.
    #[error("reading the trace at byte {offset}: {source}")]
    Read { offset: u64, source: std::io::Error },
    /// Not an iogauge trace.
    #[error("not an iogauge trace: it starts with {found:?}, not \"IOGTRACE\"; import other tools' traces with their own parser")]
    Magic { found: String },
    /// A trace written by a newer iogauge.
    #[error("trace version {found}, this iogauge reads version {supported}; read it with a newer iogauge")]
    Version { found: u32, supported: u32 },
    /// A record of an `.iogt` file that does not hold together.
    #[error("trace record at byte {offset}: {what}")]
    Record { offset: u64, what: String },
    /// Malformed chunk bytes (offset within the chunk).
    #[error("chunk byte {offset}: {what}")]
    Chunk { offset: usize, what: String },
    /// A line of a fio iolog that fio's grammar does not allow.
    #[error("fio iolog line {line}: {what}")]
    FioLine { line: usize, what: String },
    /// A blktrace record that does not hold together.
    #[error("blktrace record at byte {offset}: {what}")]
    Blktrace { offset: u64, what: String },
    /// A file none of the known formats recognises.
    #[error("{path}: neither an iogauge trace, a blktrace binary nor a fio iolog v2/v3 (it starts with {start:?})")]
    UnknownFormat { path: PathBuf, start: String },
}

/// Up to 16 leading bytes, printable, for a message about what a file starts with.
pub(crate) fn show_start(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(16)])
        .chars()
        .map(|c| if c.is_control() { '.' } else { c })
        .collect()
}
