//! Traces in and out of the store: an import (a file read through and stored as a trace),
//! an export (a stored trace written for fio, blktrace's tools or as iogauge's own file).

use super::{Trace, TraceSink, TraceSource};
use anyhow::Context;
use iogauge_iolog::Trailer;
use iogauge_store::Store;
use std::io::Write;
use std::path::Path;

/// What an export writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// fio's iolog, version 3 (`fio --read_iolog`).
    Fio,
    /// blktrace's binary records (`blkparse -i`).
    Blktrace,
    /// iogauge's `.iogt`.
    Iogauge,
}

/// The trailer a stored trace ended with (`None`: cut short), read from its row.
pub fn stored_trailer(store: &Store, id: i64) -> anyhow::Result<Option<Trailer>> {
    let Some(row) = store.trace(id)? else {
        return Ok(None);
    };
    row.trailer
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .with_context(|| format!("trace {id}: its stored trailer"))
}

/// Writes `t` to `w` in `format`; the trailer of an `.iogt` is `trailer` (or one made from
/// the summary for a trace cut short).
pub fn export(
    t: &Trace,
    trailer: Option<&Trailer>,
    format: ExportFormat,
    w: &mut impl Write,
) -> anyhow::Result<()> {
    let requests = t.requests();
    let broken = requests.error();
    match format {
        ExportFormat::Fio => {
            // fio opens each file the log names: a traced disk by its node under /dev.
            let mut header = t.header.clone();
            for d in &mut header.devices {
                if !d.name.contains('/') {
                    d.name = format!("/dev/{}", d.name);
                }
            }
            iogauge_iolog::write_fio_iolog_v3(&mut *w, &header, requests)?;
        }
        ExportFormat::Blktrace => iogauge_iolog::write_blktrace(&mut *w, &t.header, requests)?,
        ExportFormat::Iogauge => {
            let mut tw = iogauge_iolog::TraceWriter::new(&mut *w, &t.header)?;
            for i in &t.issuers {
                tw.add_issuer(i.clone());
            }
            for r in requests {
                tw.push(&r)?;
            }
            tw.finish(&trailer.cloned().unwrap_or_else(|| made_trailer(t)))?;
        }
    }
    w.flush()?;
    if let Some(why) = broken.lock().ok().and_then(|mut e| e.take()) {
        anyhow::bail!("{why}");
    }
    Ok(())
}

/// A trailer from what the trace's summary says (its duration and count; nothing about
/// losses, which only a capture knows).
fn made_trailer(t: &Trace) -> Trailer {
    Trailer {
        duration_ns: (t.summary.duration_s * 1e9) as u64,
        requests: t.summary.requests,
        dropped: None,
        others: None,
    }
}

/// Reads `file` (any format [`Trace::open`] reads) and stores it in `store` as a new trace;
/// returns its id and how many requests it holds.
pub fn import(file: &Path, store: Store) -> anyhow::Result<(i64, u64)> {
    let t = Trace::open(TraceSource::File(file.to_path_buf()))?;
    let source = format!("{} imported from {}", t.format, file.display());
    let mut sink = TraceSink::create(Some(store), None, &t.header, &source)?;
    for i in &t.issuers {
        sink.add_issuer(i.clone());
    }
    let requests = t.requests();
    let broken = requests.error();
    for r in requests {
        sink.push(&r)?;
    }
    if let Some(why) = broken.lock().ok().and_then(|mut e| e.take()) {
        anyhow::bail!("{why}");
    }
    let (id, _) = sink.finish(&made_trailer(&t), None)?;
    Ok((id.expect("a stored trace has an id"), t.summary.requests))
}

/// The figures `iogauge traces list` shows of a stored summary (JSON): seconds, requests,
/// IOPS and read share; `None` for a trace cut short or a summary this iogauge cannot read.
pub fn listed(summary: Option<&str>) -> Option<(f64, u64, Option<f64>, Option<f64>)> {
    let s: iogauge_iolog::Summary = serde_json::from_str(summary?).ok()?;
    Some((s.duration_s, s.requests, s.iops.map(|i| i.0), s.read_share))
}
