//! The `.iogt` trace file: `IOGTRACE`, `u32 version` (1), a header record (`u32 length` +
//! JSON of [`Header`]), chunk records (`u8 1`, `u32 length`, chunk bytes: [`crate::chunk`]),
//! and an end record (`u8 2`, `u32 length`, JSON of [`Trailer`]). Integers little-endian.
//!
//! Written as it is captured (one chunk of memory), read one chunk at a time. A capture that
//! was killed has no end record and may end inside a chunk: it stays readable up to its last
//! whole chunk, and the reader says it was [`TraceReader::truncated`].

use crate::chunk::{ChunkDecoder, ChunkEncoder};
use crate::error::show_start;
use crate::{Header, IologError, Issuer, Request, Trailer};
use std::io::{self, Read, Write};
use std::path::Path;

pub(crate) const MAGIC: &[u8; 8] = b"IOGTRACE";
const VERSION: u32 = 1;
const TAG_CHUNK: u8 = 1;
const TAG_END: u8 = 2;
/// Largest header or trailer accepted: far beyond any real one, small enough that a
/// garbage length is refused before it is allocated.
const MAX_JSON: u32 = 16 << 20;
/// Largest chunk accepted (the encoder closes chunks near 1 MiB).
const MAX_CHUNK: u32 = 256 << 20;

/// Writes a trace as it is captured.
pub struct TraceWriter<W: Write> {
    w: W,
    enc: ChunkEncoder,
    requests: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Writes the magic, version and header.
    pub fn new(mut w: W, header: &Header) -> io::Result<Self> {
        w.write_all(MAGIC)?;
        w.write_all(&VERSION.to_le_bytes())?;
        let json = serde_json::to_vec(header).map_err(io::Error::other)?;
        w.write_all(&len32(json.len())?.to_le_bytes())?;
        w.write_all(&json)?;
        Ok(TraceWriter {
            w,
            enc: ChunkEncoder::new(),
            requests: 0,
        })
    }

    /// Numbers an issuer (in order over the whole trace).
    pub fn add_issuer(&mut self, i: Issuer) -> u32 {
        self.enc.add_issuer(i)
    }

    /// The writer underneath (what has been written out so far).
    pub fn get_ref(&self) -> &W {
        &self.w
    }

    /// Requests pushed so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Adds a request, writing the chunk out once it is full.
    pub fn push(&mut self, r: &Request) -> io::Result<()> {
        self.enc.push(r);
        self.requests += 1;
        if self.enc.should_flush() {
            self.write_chunk()?;
        }
        Ok(())
    }

    fn write_chunk(&mut self) -> io::Result<()> {
        let chunk = self.enc.finish_chunk();
        self.w.write_all(&[TAG_CHUNK])?;
        self.w.write_all(&len32(chunk.len())?.to_le_bytes())?;
        self.w.write_all(&chunk)
    }

    /// Writes what is buffered and the end record; hands the writer back, flushed.
    pub fn finish(mut self, trailer: &Trailer) -> io::Result<W> {
        if self.enc.has_pending() {
            self.write_chunk()?;
        }
        let json = serde_json::to_vec(trailer).map_err(io::Error::other)?;
        self.w.write_all(&[TAG_END])?;
        self.w.write_all(&len32(json.len())?.to_le_bytes())?;
        self.w.write_all(&json)?;
        self.w.flush()?;
        Ok(self.w)
    }
}

fn len32(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| io::Error::other(format!("a record of {n} bytes is over 4 GiB")))
}

/// Reads a trace one chunk at a time; iterates over its requests.
pub struct TraceReader<R: Read> {
    r: R,
    /// Bytes consumed so far (for error messages).
    offset: u64,
    header: Header,
    dec: ChunkDecoder,
    buf: Vec<Request>,
    next: usize,
    trailer: Option<Trailer>,
    truncated: bool,
    done: bool,
}

/// How much of a wanted read arrived.
enum Got {
    All,
    /// The stream ended first, after this many bytes.
    Short(usize),
}

impl<R: Read> TraceReader<R> {
    /// Reads the magic, version and header.
    pub fn open(r: R) -> Result<Self, IologError> {
        let mut me = TraceReader {
            r,
            offset: 0,
            header: Header {
                origin: crate::Origin::Iogauge,
                started_at: None,
                devices: Vec::new(),
                filter: None,
            },
            dec: ChunkDecoder::new(),
            buf: Vec::new(),
            next: 0,
            trailer: None,
            truncated: false,
            done: false,
        };
        let mut magic = [0u8; 12];
        let got = me.fill(&mut magic)?;
        if !magic.starts_with(MAGIC) || matches!(got, Got::Short(n) if n < 8) {
            return Err(IologError::Magic {
                found: show_start(&magic[..magic.len().min(8)]),
            });
        }
        if let Got::Short(_) = got {
            return Err(me.record_error(0, "the file ends inside its version"));
        }
        let version = u32::from_le_bytes([magic[8], magic[9], magic[10], magic[11]]);
        if version != VERSION {
            return Err(IologError::Version {
                found: version,
                supported: VERSION,
            });
        }
        let at = me.offset;
        let json = me
            .json_record()?
            .ok_or_else(|| me.record_error(at, "the file ends inside its header"))?;
        me.header = serde_json::from_slice(&json)
            .map_err(|e| me.record_error(at, format!("the header is not valid JSON: {e}")))?;
        Ok(me)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Every issuer of the chunks read so far, by index.
    pub fn issuers(&self) -> &[Issuer] {
        self.dec.issuers()
    }

    /// The end record, once the iteration has reached it.
    pub fn trailer(&self) -> Option<&Trailer> {
        self.trailer.as_ref()
    }

    /// Whether the stream ended without an end record or inside a chunk.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    fn record_error(&self, offset: u64, what: impl Into<String>) -> IologError {
        IologError::Record {
            offset,
            what: what.into(),
        }
    }

    /// Reads `buf.len()` bytes unless the stream ends first.
    fn fill(&mut self, buf: &mut [u8]) -> Result<Got, IologError> {
        let mut n = 0;
        while n < buf.len() {
            match self.r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(IologError::Read {
                        offset: self.offset + n as u64,
                        source,
                    })
                }
            }
        }
        self.offset += n as u64;
        Ok(if n == buf.len() {
            Got::All
        } else {
            Got::Short(n)
        })
    }

    /// A `u32 length` and that many bytes (at most `max`); `None` when the stream ends first.
    fn sized(&mut self, max: u32) -> Result<Option<Vec<u8>>, IologError> {
        let at = self.offset;
        let mut len = [0u8; 4];
        if let Got::Short(_) = self.fill(&mut len)? {
            return Ok(None);
        }
        let len = u32::from_le_bytes(len);
        if len > max {
            return Err(self.record_error(at, format!("a record of {len} bytes, over {max}")));
        }
        let mut bytes = vec![0; len as usize];
        Ok(match self.fill(&mut bytes)? {
            Got::All => Some(bytes),
            Got::Short(_) => None,
        })
    }

    fn json_record(&mut self) -> Result<Option<Vec<u8>>, IologError> {
        self.sized(MAX_JSON)
    }

    /// Decodes the next chunk into `buf`; false at the end (clean or truncated).
    fn next_chunk(&mut self) -> Result<bool, IologError> {
        loop {
            let at = self.offset;
            let mut tag = [0u8; 1];
            if let Got::Short(_) = self.fill(&mut tag)? {
                self.truncated = true;
                return Ok(false);
            }
            match tag[0] {
                TAG_CHUNK => {
                    let Some(chunk) = self.sized(MAX_CHUNK)? else {
                        self.truncated = true;
                        return Ok(false);
                    };
                    self.buf.clear();
                    self.next = 0;
                    self.dec
                        .decode(&chunk, &mut self.buf)
                        .map_err(|e| match e {
                            IologError::Chunk { offset, what } => {
                                self.record_error(at + 5 + offset as u64, what)
                            }
                            other => other,
                        })?;
                    if !self.buf.is_empty() {
                        return Ok(true);
                    }
                }
                TAG_END => {
                    let Some(json) = self.json_record()? else {
                        self.truncated = true;
                        return Ok(false);
                    };
                    let trailer = serde_json::from_slice(&json).map_err(|e| {
                        self.record_error(at, format!("the end record is not valid JSON: {e}"))
                    })?;
                    self.trailer = Some(trailer);
                    return Ok(false);
                }
                other => {
                    return Err(self.record_error(
                        at,
                        format!("record tag {other}: neither a chunk (1) nor the end (2)"),
                    ))
                }
            }
        }
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<Request, IologError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.next >= self.buf.len() {
            if self.done {
                return None;
            }
            match self.next_chunk() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        let r = self.buf[self.next];
        self.next += 1;
        Some(Ok(r))
    }
}

/// A whole trace: header, issuers, requests and the trailer (`None` when it was cut short).
pub type TraceContents = (Header, Vec<Issuer>, Vec<Request>, Option<Trailer>);

/// A whole `.iogt` file in memory (for small traces and tests).
pub fn read_trace_file(path: impl AsRef<Path>) -> Result<TraceContents, IologError> {
    let path = path.as_ref();
    let f = std::fs::File::open(path).map_err(|source| IologError::File {
        path: path.to_owned(),
        source,
    })?;
    let mut reader = TraceReader::open(io::BufReader::new(f))?;
    let requests = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    let trailer = reader.trailer().cloned();
    Ok((
        reader.header().clone(),
        reader.issuers().to_vec(),
        requests,
        trailer,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{header, random_reads, scratch, sequential_reads};
    use crate::Origin;
    use crate::{detect, Format};
    use proptest::prelude::*;

    /// Two devices, three issuers, more requests than one chunk holds.
    fn sample() -> (Header, Vec<Issuer>, Vec<Request>, Trailer) {
        let mut reqs = sequential_reads(70_000, 1);
        reqs.extend(random_reads(30_000, 2).into_iter().map(|mut r| {
            r.device = 1;
            r.issuer = 2;
            r.at_ns += 10_000_000_000;
            r
        }));
        for r in reqs.iter_mut().step_by(7) {
            r.issuer = 1;
        }
        let issuers = (0..3)
            .map(|i| Issuer {
                pid: 100 + i,
                comm: format!("job{i}"),
                cgroup: 7,
            })
            .collect();
        let trailer = Trailer {
            duration_ns: reqs.last().unwrap().at_ns,
            requests: reqs.len() as u64,
            dropped: Some(0),
            others: None,
        };
        (header(Origin::Iogauge, 2), issuers, reqs, trailer)
    }

    fn write(h: &Header, issuers: &[Issuer], reqs: &[Request], t: &Trailer) -> Vec<u8> {
        let mut w = TraceWriter::new(Vec::new(), h).unwrap();
        for i in issuers {
            w.add_issuer(i.clone());
        }
        for r in reqs {
            w.push(r).unwrap();
        }
        w.finish(t).unwrap()
    }

    #[test]
    fn a_file_round_trips() {
        let (h, issuers, reqs, t) = sample();
        let dir = scratch();
        let path = dir.path().join("t.iogt");
        std::fs::write(&path, write(&h, &issuers, &reqs, &t)).unwrap();
        let (h2, i2, r2, t2) = read_trace_file(&path).unwrap();
        assert_eq!((h2, i2, t2), (h, issuers, Some(t)));
        assert!(r2 == reqs, "requests differ");
        assert_eq!(detect(&path).unwrap(), Format::Iogt);
    }

    #[test]
    fn full_chunks_are_written_as_they_fill() {
        let h = header(Origin::Iogauge, 1);
        let mut w = TraceWriter::new(Vec::new(), &h).unwrap();
        let after_header = w.get_ref().len();
        let reqs = sequential_reads(65536, 3);
        for r in &reqs[..65535] {
            w.push(r).unwrap();
        }
        assert_eq!(
            w.get_ref().len(),
            after_header,
            "nothing written before a chunk is full"
        );
        w.push(&reqs[65535]).unwrap();
        assert!(
            w.get_ref().len() > after_header + 65536 * 3,
            "the full chunk went out"
        );
        assert_eq!(w.requests(), 65536);
    }

    #[test]
    fn a_cut_trace_reads_to_its_last_whole_chunk() {
        let (h, issuers, reqs, t) = sample();
        let bytes = write(&h, &issuers, &reqs, &t);
        // Chunk records begin with tag 1 after the header; find their starts by walking them.
        let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let mut starts = vec![16 + header_len];
        while bytes[*starts.last().unwrap()] == TAG_CHUNK {
            let s = *starts.last().unwrap();
            let len = u32::from_le_bytes(bytes[s + 1..s + 5].try_into().unwrap()) as usize;
            starts.push(s + 5 + len);
        }
        assert!(starts.len() >= 3, "the sample spans several chunks");
        let end_record = *starts.last().unwrap();
        // Cut inside the second chunk, exactly after it, and inside the end record.
        for (cut, whole_chunks) in [
            (starts[1] + 100, 1),
            (starts[2], 2),
            (end_record + 3, starts.len() - 1),
        ] {
            let mut reader = TraceReader::open(&bytes[..cut]).unwrap();
            let got: Vec<Request> = reader.by_ref().map(Result::unwrap).collect();
            assert!(reader.truncated(), "cut at {cut}");
            assert!(reader.trailer().is_none());
            let mut expected = Vec::new();
            let mut dec = ChunkDecoder::new();
            for w in starts.windows(2).take(whole_chunks) {
                dec.decode(&bytes[w[0] + 5..w[1]], &mut expected).unwrap();
            }
            assert_eq!(got.len(), expected.len(), "cut at {cut}");
            assert!(got == reqs[..got.len()], "cut at {cut}");
        }
        let mut whole = TraceReader::open(&bytes[..]).unwrap();
        assert_eq!(whole.by_ref().count(), reqs.len());
        assert!(!whole.truncated());
        assert_eq!(whole.trailer(), Some(&t));
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let (h, issuers, reqs, t) = sample();
        let good = write(&h, &issuers, &reqs[..10], &t);
        let mut newer = good.clone();
        newer[8] = 2;
        let mut bad_tag = good.clone();
        let header_len = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
        bad_tag[16 + header_len] = 9;
        let open = |b: &[u8]| TraceReader::open(b).map(|r| r.collect::<Result<Vec<_>, _>>());
        assert!(matches!(
            open(b"NOTATRACE..."),
            Err(IologError::Magic { .. })
        ));
        assert!(matches!(
            open(&newer),
            Err(IologError::Version { found: 2, .. })
        ));
        let msg = open(&bad_tag).unwrap().unwrap_err().to_string();
        assert!(
            msg.contains(&format!("byte {}", 16 + header_len)) && msg.contains("tag 9"),
            "{msg}"
        );
        assert!(open(&good[..20]).is_err(), "a header cut short is an error");
    }

    proptest! {
        #[test]
        fn garbage_after_the_header_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..400)) {
            let mut bytes = write(&header(Origin::Iogauge, 1), &[], &[], &Trailer::default());
            let header_end = 16 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
            bytes.truncate(header_end);
            bytes.extend_from_slice(&tail);
            if let Ok(r) = TraceReader::open(&bytes[..]) {
                for item in r.take(10_000) {
                    if item.is_err() { break; }
                }
            }
        }
    }
}
