//! Which of the formats this crate reads a file holds, told by its first bytes (a name's
//! extension says nothing: blktrace files are `sdb.blktrace.0`, fio logs anything).

use crate::error::show_start;
use crate::IologError;
use std::io::Read;
use std::path::Path;

/// The formats this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// iogauge's own `.iogt`.
    Iogt,
    /// blktrace's binary `struct blk_io_trace` records.
    Blktrace,
    /// fio's text iolog, version 2 or 3.
    FioIolog { version: u8 },
}

/// Tells the formats apart by their first bytes (not by the file's name).
pub fn detect(path: impl AsRef<Path>) -> Result<Format, IologError> {
    let path = path.as_ref();
    let file_error = |source| IologError::File {
        path: path.to_owned(),
        source,
    };
    let mut start = Vec::with_capacity(64);
    std::fs::File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut start))
        .map_err(file_error)?;
    if start.starts_with(crate::file::MAGIC) {
        return Ok(Format::Iogt);
    }
    if start.len() >= 4 && crate::blktrace::is_magic(&start[..4]) {
        return Ok(Format::Blktrace);
    }
    for version in [2u8, 3] {
        let line = format!("fio version {version} iolog");
        let rest = start.strip_prefix(line.as_bytes());
        if rest.is_some_and(|r| r.first().is_none_or(|&b| b == b'\n' || b == b'\r')) {
            return Ok(Format::FioIolog { version });
        }
    }
    Err(IologError::UnknownFormat {
        path: path.to_owned(),
        start: show_start(&start),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{header, random_reads, scratch};
    use crate::Origin;

    #[test]
    fn detect_tells_formats_apart_by_content() {
        let dir = scratch();
        let h = header(Origin::Iogauge, 1);
        let reqs = random_reads(5, 1);
        let mut blk = Vec::new();
        crate::write_blktrace(&mut blk, &h, reqs.iter().copied()).unwrap();
        let mut w = crate::TraceWriter::new(Vec::new(), &h).unwrap();
        reqs.iter().for_each(|r| w.push(r).unwrap());
        let iogt = w.finish(&crate::Trailer::default()).unwrap();
        let cases: [(&str, &[u8], Option<Format>); 6] = [
            ("a.log", &blk, Some(Format::Blktrace)),
            ("trace.blktrace.0", &iogt, Some(Format::Iogt)),
            (
                "b.iogt",
                b"fio version 2 iolog\n/f add\n",
                Some(Format::FioIolog { version: 2 }),
            ),
            (
                "c.txt",
                b"fio version 3 iolog\n",
                Some(Format::FioIolog { version: 3 }),
            ),
            ("d.iogt", b"fio version 33 iolog\n", None),
            ("e", b"", None),
        ];
        for (name, bytes, want) in cases {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            match want {
                Some(f) => assert_eq!(detect(&path).unwrap(), f, "{name}"),
                None => assert!(detect(&path).is_err(), "{name}"),
            }
        }
        let missing = detect(dir.path().join("none")).unwrap_err().to_string();
        assert!(missing.contains("none"), "{missing}");
    }
}
