//! Recorded block requests to read back: a trace in the store (by id) or a file — iogauge's
//! own `.iogt`, a blktrace binary or a fio iolog (v2/v3), told apart by their content. Opening
//! one reads it through once (its summary, its largest request, that every chunk decodes);
//! [`Trace::requests`] then streams it again, one chunk at a time, from a thread of its own
//! (a stored trace's chunks come from its own read-only connection), so that a replay of a
//! long trace holds one chunk in memory, not the trace. Imports (blktrace, fio) are parsed
//! whole and held.

mod io;
mod sink;
pub use io::{export, import, listed, stored_trailer, ExportFormat};
pub use iogauge_iolog::Trailer;
pub use sink::TraceSink;

use anyhow::{anyhow, Context};
use iogauge_iolog::{
    ChunkDecoder, Format, Header, Issuer, Request, Summary, SummaryBuilder, TraceReader,
};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex, PoisonError};

/// Where a trace is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceSource {
    /// Trace `id` of the store at `store`.
    Stored { store: PathBuf, id: i64 },
    /// A file.
    File(PathBuf),
}

/// A trace, read through once.
pub struct Trace {
    pub source: TraceSource,
    /// The format it came in: `iogauge`, `blktrace`, `fio_iolog`.
    pub format: &'static str,
    pub header: Header,
    pub issuers: Vec<Issuer>,
    pub summary: Summary,
    /// The longest request, bytes.
    pub max_len: u32,
    /// A capture cut short (no end record): what it holds is read.
    pub truncated: bool,
    /// From its first request to its last, ns (its duration may hold idle time around).
    pub span_ns: u64,
    /// An import's requests, parsed whole.
    held: Option<Arc<Vec<Request>>>,
}

impl Trace {
    /// How the trace is named to the user: `trace 3` or its path.
    pub fn name(&self) -> String {
        match &self.source {
            TraceSource::Stored { id, .. } => format!("trace {id}"),
            TraceSource::File(p) => p.display().to_string(),
        }
    }

    /// Opens the trace at `source` and reads it through.
    pub fn open(source: TraceSource) -> anyhow::Result<Trace> {
        match &source {
            TraceSource::Stored { store, id } => open_stored(store, *id, source.clone()),
            TraceSource::File(path) => open_file(path, source.clone()),
        }
    }

    /// Its requests again, in order, streamed. A chunk that fails to decode now (the store
    /// or file changed since it was opened) ends the stream, and [`Requests::error`] says why.
    pub fn requests(&self) -> Requests {
        let error = Arc::new(Mutex::new(None));
        if let Some(held) = &self.held {
            let held = Arc::clone(held);
            let (tx, rx) = sync_channel(2);
            std::thread::spawn(move || {
                for part in held.chunks(65536) {
                    if tx.send(part.to_vec()).is_err() {
                        return;
                    }
                }
            });
            return Requests::new(rx, error);
        }
        let (tx, rx) = sync_channel::<Vec<Request>>(2);
        let slot = Arc::clone(&error);
        let fail = move |e: String| *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
        match self.source.clone() {
            TraceSource::Stored { store, id } => {
                std::thread::spawn(move || {
                    let read = || -> anyhow::Result<()> {
                        let s = reader(&store)?;
                        let mut dec = ChunkDecoder::new();
                        let mut err = None;
                        s.trace_chunks(id, &mut |chunk| {
                            let mut out = Vec::new();
                            if let Err(e) = dec.decode(chunk, &mut out) {
                                err = Some(e);
                                return false;
                            }
                            tx.send(out).is_ok()
                        })?;
                        err.map_or(Ok(()), |e| Err(e.into()))
                    };
                    if let Err(e) = read() {
                        fail(format!("trace {id}: {e:#}"));
                    }
                });
            }
            TraceSource::File(path) => {
                std::thread::spawn(move || {
                    let read = || -> anyhow::Result<()> {
                        let f = std::fs::File::open(&path)?;
                        let mut r = TraceReader::open(std::io::BufReader::new(f))?;
                        let mut part = Vec::with_capacity(65536);
                        for q in &mut r {
                            part.push(q?);
                            if part.len() == 65536 && tx.send(std::mem::take(&mut part)).is_err() {
                                return Ok(());
                            }
                        }
                        let _ = tx.send(part);
                        Ok(())
                    };
                    if let Err(e) = read() {
                        fail(format!("{}: {e:#}", path.display()));
                    }
                });
            }
        }
        Requests::new(rx, error)
    }
}

/// A trace's requests as they stream in.
pub struct Requests {
    rx: Receiver<Vec<Request>>,
    part: std::vec::IntoIter<Request>,
    error: Arc<Mutex<Option<String>>>,
}

impl Requests {
    fn new(rx: Receiver<Vec<Request>>, error: Arc<Mutex<Option<String>>>) -> Requests {
        Requests {
            rx,
            part: Vec::new().into_iter(),
            error,
        }
    }

    /// Why the stream ended early, if it did; shared, so it can be read after the stream
    /// was handed away.
    pub fn error(&self) -> Arc<Mutex<Option<String>>> {
        Arc::clone(&self.error)
    }
}

impl Iterator for Requests {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        loop {
            if let Some(r) = self.part.next() {
                return Some(r);
            }
            self.part = self.rx.recv().ok()?.into_iter();
        }
    }
}

fn reader(store: &Path) -> anyhow::Result<iogauge_store::Store> {
    iogauge_store::Store::open_reader(store)?
        .ok_or_else(|| anyhow!("no results store at {}", store.display()))
}

/// What one pass over the requests finds.
struct Pass {
    summary: SummaryBuilder,
    max_len: u32,
    first_ns: Option<u64>,
    last_ns: u64,
}

impl Pass {
    fn new(devices: usize) -> Pass {
        Pass {
            summary: SummaryBuilder::new(devices),
            max_len: 0,
            first_ns: None,
            last_ns: 0,
        }
    }

    fn push(&mut self, r: &Request) {
        self.summary.push(r);
        self.max_len = self.max_len.max(r.len);
        self.last_ns = self.last_ns.max(r.at_ns);
        self.first_ns = Some(self.first_ns.map_or(r.at_ns, |f| f.min(r.at_ns)));
    }

    fn span(&self) -> u64 {
        self.first_ns.map_or(0, |f| self.last_ns - f)
    }
}

fn open_stored(store: &Path, id: i64, source: TraceSource) -> anyhow::Result<Trace> {
    let s = reader(store)?;
    let row = s.trace(id)?.ok_or_else(|| {
        anyhow!(
            "no trace {id} in {}; `iogauge traces` lists the stored traces",
            store.display()
        )
    })?;
    let header: Header = serde_json::from_str(&row.header)
        .with_context(|| format!("trace {id}: its stored header"))?;
    let trailer: Option<Trailer> = row
        .trailer
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .with_context(|| format!("trace {id}: its stored trailer"))?;
    let mut pass = Pass::new(header.devices.len());
    let mut dec = ChunkDecoder::new();
    let mut err = None;
    let mut out = Vec::new();
    s.trace_chunks(id, &mut |chunk| {
        out.clear();
        if let Err(e) = dec.decode(chunk, &mut out) {
            err = Some(e);
            return false;
        }
        out.iter().for_each(|r| pass.push(r));
        true
    })?;
    if let Some(e) = err {
        return Err(anyhow!("trace {id} in {}: {e}", store.display()));
    }
    let duration = trailer.as_ref().map_or(pass.last_ns, |t| t.duration_ns);
    let issuers = dec.issuers().to_vec();
    let span_ns = pass.span();
    Ok(Trace {
        source,
        format: "iogauge",
        summary: pass.summary.finish_with_issuers(duration, &issuers),
        header,
        issuers,
        max_len: pass.max_len,
        span_ns,
        truncated: row.ended_at.is_none(),
        held: None,
    })
}

fn open_file(path: &Path, source: TraceSource) -> anyhow::Result<Trace> {
    let show = path.display();
    let (format, header, issuers, requests) = match iogauge_iolog::detect(path)? {
        Format::Iogt => {
            let f = std::fs::File::open(path).with_context(|| format!("{show}"))?;
            let mut r =
                TraceReader::open(std::io::BufReader::new(f)).with_context(|| format!("{show}"))?;
            let mut pass = Pass::new(r.header().devices.len());
            for q in &mut r {
                pass.push(&q.with_context(|| format!("{show}"))?);
            }
            let duration = r.trailer().map_or(pass.last_ns, |t| t.duration_ns);
            let issuers = r.issuers().to_vec();
            let span_ns = pass.span();
            return Ok(Trace {
                source,
                format: "iogauge",
                summary: pass.summary.finish_with_issuers(duration, &issuers),
                header: r.header().clone(),
                issuers,
                max_len: pass.max_len,
                span_ns,
                truncated: r.truncated(),
                held: None,
            });
        }
        Format::Blktrace => {
            let f = std::fs::File::open(path).with_context(|| format!("{show}"))?;
            let (h, i, q) = iogauge_iolog::read_blktrace(std::io::BufReader::new(f))
                .with_context(|| format!("{show}"))?;
            ("blktrace", h, i, q)
        }
        Format::FioIolog { .. } => {
            let f = std::fs::File::open(path).with_context(|| format!("{show}"))?;
            let (h, q) = iogauge_iolog::parse_fio_iolog(std::io::BufReader::new(f))
                .with_context(|| format!("{show}"))?;
            ("fio_iolog", h, Vec::new(), q)
        }
    };
    let mut pass = Pass::new(header.devices.len());
    requests.iter().for_each(|r| pass.push(r));
    let duration = pass.last_ns;
    let span_ns = pass.span();
    Ok(Trace {
        source,
        format,
        summary: pass.summary.finish_with_issuers(duration, &issuers),
        header,
        issuers,
        max_len: pass.max_len,
        span_ns,
        truncated: false,
        held: Some(Arc::new(requests)),
    })
}
