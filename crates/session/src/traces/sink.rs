//! Where a trace goes as it is made (a capture, an import): the store (its header first,
//! then each chunk as it fills, in a short transaction of its own, so a capture that is
//! killed keeps what it had written) and/or an `.iogt` file, with its summary built on the
//! way. Memory stays one chunk and the summary's bounded counters, however long the trace.

use anyhow::Context;
use iogauge_iolog::{
    ChunkEncoder, Header, Issuer, Request, Summary, SummaryBuilder, TraceWriter, Trailer,
};
use iogauge_store::Store;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A chunk not yet full goes to the store after this long, so a slow trace cut short loses
/// at most this much.
const FLUSH_EVERY: Duration = Duration::from_secs(5);

/// A trace being written.
pub struct TraceSink {
    store: Option<Stored>,
    file: Option<(PathBuf, TraceWriter<BufWriter<File>>)>,
    summary: SummaryBuilder,
    issuers: Vec<Issuer>,
    requests: u64,
}

struct Stored {
    store: Store,
    id: i64,
    seq: u64,
    enc: ChunkEncoder,
    flushed: Instant,
}

impl TraceSink {
    /// A trace of `header` into `store` (described there as `source`), into the file
    /// `output`, or both. A file that exists is refused, never replaced.
    pub fn create(
        store: Option<Store>,
        output: Option<&Path>,
        header: &Header,
        source: &str,
    ) -> anyhow::Result<TraceSink> {
        let file = match output {
            None => None,
            Some(p) => {
                let f = File::options()
                    .write(true)
                    .create_new(true)
                    .open(p)
                    .with_context(|| format!("--output {}", p.display()))?;
                let w = TraceWriter::new(BufWriter::new(f), header)
                    .with_context(|| format!("--output {}", p.display()))?;
                Some((p.to_path_buf(), w))
            }
        };
        let store = match store {
            None => None,
            Some(mut s) => {
                let json = serde_json::to_string(header).expect("a header serialises");
                let started = header.started_at.clone().unwrap_or_else(crate::now);
                let id = s.begin_trace(&started, source, &json)?;
                Some(Stored {
                    store: s,
                    id,
                    seq: 0,
                    enc: ChunkEncoder::new(),
                    flushed: Instant::now(),
                })
            }
        };
        Ok(TraceSink {
            store,
            file,
            summary: SummaryBuilder::new(header.devices.len()),
            issuers: Vec::new(),
            requests: 0,
        })
    }

    /// The stored trace's id, if it goes to the store.
    pub fn id(&self) -> Option<i64> {
        self.store.as_ref().map(|s| s.id)
    }

    /// Requests written so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Numbers a new issuer (in order: the index requests give).
    pub fn add_issuer(&mut self, i: Issuer) -> u32 {
        if let Some(s) = &mut self.store {
            s.enc.add_issuer(i.clone());
        }
        if let Some((_, w)) = &mut self.file {
            w.add_issuer(i.clone());
        }
        self.issuers.push(i);
        (self.issuers.len() - 1) as u32
    }

    pub fn push(&mut self, r: &Request) -> anyhow::Result<()> {
        self.summary.push(r);
        self.requests += 1;
        if let Some((p, w)) = &mut self.file {
            w.push(r)
                .with_context(|| format!("writing {}", p.display()))?;
        }
        if let Some(s) = &mut self.store {
            s.enc.push(r);
            if s.enc.should_flush() {
                s.flush()?;
            }
        }
        Ok(())
    }

    /// Writes a chunk not yet full to the store once it has waited 5 s (`FLUSH_EVERY`).
    pub fn tick(&mut self) -> anyhow::Result<()> {
        match &mut self.store {
            Some(s) if s.enc.has_pending() && s.flushed.elapsed() >= FLUSH_EVERY => s.flush(),
            _ => Ok(()),
        }
    }

    /// Ends the trace: what is buffered, the trailer, the summary (and the run it recorded);
    /// returns the stored id and the summary.
    pub fn finish(
        mut self,
        trailer: &Trailer,
        run_id: Option<i64>,
    ) -> anyhow::Result<(Option<i64>, Summary)> {
        let summary = self
            .summary
            .finish_with_issuers(trailer.duration_ns, &self.issuers);
        if let Some((p, w)) = self.file.take() {
            w.finish(trailer)
                .with_context(|| format!("writing {}", p.display()))?;
        }
        let id = match self.store.take() {
            None => None,
            Some(mut s) => {
                if s.enc.has_pending() {
                    s.flush()?;
                }
                let trailer = serde_json::to_string(trailer).expect("a trailer serialises");
                let json = serde_json::to_string(&summary).expect("a summary serialises");
                s.store
                    .finish_trace(s.id, &crate::now(), &trailer, &json, run_id)?;
                Some(s.id)
            }
        };
        Ok((id, summary))
    }
}

impl Stored {
    fn flush(&mut self) -> anyhow::Result<()> {
        let chunk = self.enc.finish_chunk();
        self.store.add_trace_chunk(self.id, self.seq, &chunk)?;
        self.seq += 1;
        self.flushed = Instant::now();
        Ok(())
    }
}
