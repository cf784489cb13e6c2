//! fio's text iologs, versions 2 and 3 (fio's `iolog.c`, `read_iolog`; HOWTO "Trace file
//! format"): import, and export as version 3 for `fio --read_iolog` to replay.
//!
//! ```text
//! fio version 2 iolog              fio version 3 iolog
//! /dev/sdb add                     0 /dev/sdb add
//! /dev/sdb open                    12 /dev/sdb open
//! /dev/sdb read 8192 4096          218 /dev/sdb read 8192 4096
//! /dev/sdb wait 1500 0             10194 /dev/sdb write 0 4096
//! /dev/sdb write 0 4096            10300 /dev/sdb close
//! ```
//!
//! A line is `[timestamp] filename action [offset length]`: file actions `add`/`open`/`close`
//! take no offset; I/O actions `read`, `write`, `sync`, `datasync`, `trim` (and, in version 2
//! only, `wait`) do. Each file is a [`Device`] (size unknown); read → Read, write → Write,
//! sync and datasync → Flush, trim → Discard.
//!
//! Times, as fio 3.33 acts on them (checked against the real fio: the HOWTO says otherwise):
//! - version 3 timestamps are **microseconds** from the job's start (fio writes
//!   `utime_since_now`; a log written at `--rate_iops=100` steps by 10,000; replaying a log
//!   stamped 0, 1,000,000, 2,000,000 runs 2 s);
//! - a version 2 `wait N` holds the next I/O until **N milliseconds after the job's start**
//!   (`read_iolog_get`: `usec_sleep((delay − mtime_since_genesis()) * 1000)`; `wait 2000`
//!   then `wait 3000` runs 3 s), not N µs after the previous wait as the HOWTO says. Requests
//!   between waits carry the last wait's time (fio issues them back to back).

use crate::{Device, Flags, Header, IologError, Op, Origin, Request};
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

/// The devices of a log, one per file name, in order of first mention.
#[derive(Default)]
struct Files {
    devices: Vec<Device>,
    index: HashMap<String, u16>,
}

impl Files {
    fn get(&mut self, name: &str, line: usize) -> Result<u16, IologError> {
        if let Some(&i) = self.index.get(name) {
            return Ok(i);
        }
        let i = u16::try_from(self.devices.len()).map_err(|_| IologError::FioLine {
            line,
            what: "more than 65536 files".into(),
        })?;
        self.devices.push(Device {
            name: name.to_owned(),
            major: 0,
            minor: 0,
            size: None,
            logical_block: None,
        });
        self.index.insert(name.to_owned(), i);
        Ok(i)
    }
}

fn bad(line: usize, what: impl Into<String>) -> IologError {
    IologError::FioLine {
        line,
        what: what.into(),
    }
}

/// A whole fio iolog (version 2 or 3). Errors name the line.
pub fn parse_fio_iolog(r: impl BufRead) -> Result<(Header, Vec<Request>), IologError> {
    let mut lines = r.lines();
    let first = match lines.next() {
        Some(l) => l.map_err(|e| bad(1, e.to_string()))?,
        None => return Err(bad(1, "the file is empty")),
    };
    let version = match first.trim_end() {
        "fio version 2 iolog" => 2,
        "fio version 3 iolog" => 3,
        other => {
            return Err(bad(
                1,
                format!("{other:?} is not \"fio version 2 iolog\" or \"fio version 3 iolog\" (version 1 logs are not read by fio since 1.20 either)"),
            ))
        }
    };
    let mut p = Parser {
        version,
        files: Files::default(),
        requests: Vec::new(),
        clock_ns: 0,
    };
    for (i, text) in lines.enumerate() {
        let line = i + 2;
        let text = text.map_err(|e| bad(line, e.to_string()))?;
        p.line(line, &text)?;
    }
    let header = Header {
        origin: Origin::FioIolog,
        started_at: None,
        devices: p.files.devices,
        filter: Some(format!("fio iolog version {version}")),
    };
    Ok((header, p.requests))
}

/// The state of a log read line by line.
struct Parser {
    version: u8,
    files: Files,
    requests: Vec<Request>,
    /// When the next request is issued.
    clock_ns: u64,
}

impl Parser {
    fn line(&mut self, line: usize, text: &str) -> Result<(), IologError> {
        let mut fields: Vec<&str> = text.split_whitespace().collect();
        if fields.is_empty() {
            return Ok(());
        }
        if self.version == 3 {
            let us: u64 = fields[0].parse().map_err(|_| {
                let t = fields[0];
                bad(
                    line,
                    format!("timestamp {t:?} is not a whole number of microseconds"),
                )
            })?;
            self.clock_ns = us
                .checked_mul(1000)
                .ok_or_else(|| bad(line, format!("timestamp {us} µs overflows")))?;
            fields.remove(0);
        }
        match fields[..] {
            [file, "add" | "open" | "close"] => {
                self.files.get(file, line)?;
            }
            [_, action] => {
                return Err(bad(
                    line,
                    format!("file action {action:?} is not add, open or close"),
                ))
            }
            [file, action, offset, length] => self.io(line, file, action, offset, length)?,
            _ => {
                let want = match self.version {
                    3 => "timestamp filename action [offset length]",
                    _ => "filename action [offset length]",
                };
                let n = fields.len() + usize::from(self.version == 3);
                return Err(bad(line, format!("{n} fields, expected {want}")));
            }
        }
        Ok(())
    }

    /// `filename action offset length`.
    fn io(
        &mut self,
        line: usize,
        file: &str,
        action: &str,
        offset: &str,
        length: &str,
    ) -> Result<(), IologError> {
        let offset: u64 = offset
            .parse()
            .map_err(|_| bad(line, format!("offset {offset:?} is not a byte count")))?;
        let len: u32 = length.parse().map_err(|_| {
            bad(
                line,
                format!("length {length:?} is not a byte count under 4 GiB"),
            )
        })?;
        let op = match action {
            "read" => Op::Read,
            "write" => Op::Write,
            "sync" | "datasync" => Op::Flush,
            "trim" => Op::Discard,
            "wait" if self.version == 2 => {
                // Milliseconds since the start (see the module doc): the clock never goes back.
                self.clock_ns = self.clock_ns.max(offset.saturating_mul(1_000_000));
                return Ok(());
            }
            "wait" => {
                return Err(bad(
                    line,
                    "wait is not allowed in version 3 (timestamps say when)",
                ))
            }
            other => {
                return Err(bad(
                    line,
                    format!(
                        "I/O action {other:?} is not read, write, sync, datasync, trim or wait"
                    ),
                ))
            }
        };
        let device = self.files.get(file, line)?;
        self.requests.push(Request {
            at_ns: self.clock_ns,
            device,
            offset,
            len: if op == Op::Flush { 0 } else { len },
            op,
            flags: Flags::NONE,
            issuer: Request::UNKNOWN_ISSUER,
            in_flight: 0,
        });
        Ok(())
    }
}

/// Writes the requests as a fio version 3 iolog: every device's name is the file fio opens
/// (added and opened at time 0, closed after the last request). Times are rounded down to
/// microseconds; a flush is a `sync`.
pub fn write_fio_iolog_v3(
    mut w: impl Write,
    header: &Header,
    requests: impl IntoIterator<Item = Request>,
) -> io::Result<()> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    for d in &header.devices {
        if d.name.is_empty() || d.name.contains(char::is_whitespace) {
            return Err(invalid(format!(
                "device {:?}: fio reads a file name up to the first blank; rename it",
                d.name
            )));
        }
    }
    writeln!(w, "fio version 3 iolog")?;
    for action in ["add", "open"] {
        for d in &header.devices {
            writeln!(w, "0 {} {action}", d.name)?;
        }
    }
    let mut last_us = 0;
    for (i, r) in requests.into_iter().enumerate() {
        let d = header.devices.get(usize::from(r.device)).ok_or_else(|| {
            invalid(format!(
                "request {i}: device {} is not in the header",
                r.device
            ))
        })?;
        let action = match r.op {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "sync",
            Op::Discard => "trim",
        };
        last_us = last_us.max(r.at_ns / 1000);
        writeln!(
            w,
            "{} {} {action} {} {}",
            r.at_ns / 1000,
            d.name,
            r.offset,
            r.len
        )?;
    }
    for d in &header.devices {
        writeln!(w, "{last_us} {} close", d.name)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{random_reads, scratch};
    use std::path::Path;
    use std::process::Command;

    #[test]
    fn version_2_with_waits_and_version_3() {
        let v2 = "fio version 2 iolog\n/a add\n/b add\n/a open\n/a read 0 4096\n/a wait 5 0\n\
                  /b write 8192 512\n/a wait 2 0\n/a trim 0 1048576\n/b sync 0 0\n/a close\n";
        let (h, reqs) = parse_fio_iolog(v2.as_bytes()).unwrap();
        let names: Vec<&str> = h.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["/a", "/b"]);
        assert_eq!(h.origin, Origin::FioIolog);
        let got: Vec<(u64, u16, Op, u64, u32)> = reqs
            .iter()
            .map(|r| (r.at_ns, r.device, r.op, r.offset, r.len))
            .collect();
        // wait 2 after wait 5: the clock does not go back (waits are times since the start).
        assert_eq!(
            got,
            [
                (0, 0, Op::Read, 0, 4096),
                (5_000_000, 1, Op::Write, 8192, 512),
                (5_000_000, 0, Op::Discard, 0, 1 << 20),
                (5_000_000, 1, Op::Flush, 0, 0),
            ]
        );
        let v3 = "fio version 3 iolog\n0 /a add\n\n7 /a open\n1500 /a datasync 0 0\n2500 /a read 512 1024\n";
        let (_, reqs) = parse_fio_iolog(v3.as_bytes()).unwrap();
        assert_eq!(
            reqs.iter().map(|r| (r.at_ns, r.op)).collect::<Vec<_>>(),
            [(1_500_000, Op::Flush), (2_500_000, Op::Read)]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("fio version 1 iolog\n", 1, "version 2"),
            ("", 1, "empty"),
            (
                "fio version 3 iolog\n0 /a add\nx /a read 0 1\n",
                3,
                "timestamp",
            ),
            ("fio version 3 iolog\n0 /a add\n5 /a wait 0 1\n", 3, "wait"),
            ("fio version 2 iolog\n/a add\n/a read 0\n", 3, "3 fields"),
            ("fio version 2 iolog\n/a add\n/a remove\n", 3, "remove"),
            ("fio version 2 iolog\n/a add\n\n/a mmap 0 1\n", 4, "mmap"),
            ("fio version 2 iolog\n/a read -1 1\n", 2, "offset"),
            ("fio version 2 iolog\n/a read 0 5000000000\n", 2, "length"),
        ];
        for (text, line, says) in cases {
            let e = parse_fio_iolog(text.as_bytes()).unwrap_err();
            let msg = e.to_string();
            assert!(
                matches!(e, IologError::FioLine { line: l, .. } if l == line),
                "{text:?}: {msg}"
            );
            assert!(msg.contains(says), "{text:?}: {msg}");
        }
    }

    /// Requests as a v3 log holds them: whole microseconds, no flags, issuer or in-flight.
    fn fio_able(reqs: Vec<Request>, devices: u16) -> Vec<Request> {
        reqs.into_iter()
            .enumerate()
            .map(|(i, r)| {
                let op = [Op::Read, Op::Write, Op::Read, Op::Flush][i % 4];
                Request {
                    at_ns: r.at_ns / 1000 * 1000,
                    device: i as u16 % devices,
                    op,
                    len: if op == Op::Flush { 0 } else { r.len },
                    flags: Flags::NONE,
                    issuer: Request::UNKNOWN_ISSUER,
                    in_flight: 0,
                    ..r
                }
            })
            .collect()
    }

    #[test]
    fn export_parses_back() {
        let h = crate::testutil::header(Origin::Iogauge, 2);
        let reqs = fio_able(random_reads(1000, 3), 2);
        let mut text = Vec::new();
        write_fio_iolog_v3(&mut text, &h, reqs.iter().copied()).unwrap();
        let (h2, back) = parse_fio_iolog(&text[..]).unwrap();
        assert_eq!(
            h2.devices.iter().map(|d| &d.name).collect::<Vec<_>>(),
            h.devices.iter().map(|d| &d.name).collect::<Vec<_>>()
        );
        assert!(back == reqs, "requests differ");
        let mut spaced = h.clone();
        spaced.devices[0].name = "my disk".into();
        assert!(write_fio_iolog_v3(Vec::new(), &spaced, reqs).is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_text_never_panics(body in "[ -~\n]{0,300}", v in 2u8..4) {
            let text = format!("fio version {v} iolog\n{body}");
            let _ = parse_fio_iolog(text.as_bytes());
        }
    }

    fn fio_installed() -> bool {
        let ok = Command::new("fio")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("fio is not installed: cross-check skipped");
        }
        ok
    }

    /// Runs fio with `args` plus JSON output into `dir`; the first job's JSON.
    fn fio_json(dir: &Path, args: &[&str]) -> serde_json::Value {
        let out = dir.join("out.json");
        let status = Command::new("fio")
            .args(args)
            .arg("--output-format=json")
            .arg(format!("--output={}", out.display()))
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "fio {args:?}");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        json["jobs"][0].clone()
    }

    fn ios(job: &serde_json::Value, dir: &str) -> u64 {
        job[dir]["total_ios"].as_u64().unwrap()
    }

    #[test]
    fn real_fio_log_parses_and_real_fio_replays_our_export() {
        if !fio_installed() {
            return;
        }
        let dir = scratch();
        let file = dir.path().join("f");
        let log = dir.path().join("w.log");
        let job = fio_json(
            dir.path(),
            &[
                "--name=t",
                &format!("--filename={}", file.display()),
                "--size=8m",
                "--rw=randrw",
                "--bs=4k",
                "--io_size=2m",
                &format!("--write_iolog={}", log.display()),
                "--ioengine=psync",
            ],
        );
        let (h, reqs) =
            parse_fio_iolog(io::BufReader::new(std::fs::File::open(&log).unwrap())).unwrap();
        let count = |op| reqs.iter().filter(|r| r.op == op).count() as u64;
        assert_eq!(count(Op::Read), ios(&job, "read"));
        assert_eq!(count(Op::Write), ios(&job, "write"));
        assert_eq!(h.devices.len(), 1);
        assert!(reqs.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));

        // Ours, with flushes, onto the same file.
        let mut h = crate::testutil::header(Origin::Iogauge, 1);
        h.devices[0].name = file.display().to_string();
        let ours: Vec<Request> = fio_able(random_reads(400, 9), 1)
            .into_iter()
            .map(|r| Request {
                offset: r.offset % (8 << 20),
                ..r
            })
            .collect();
        let export = dir.path().join("ours.log");
        write_fio_iolog_v3(
            std::fs::File::create(&export).unwrap(),
            &h,
            ours.iter().copied(),
        )
        .unwrap();
        let job = fio_json(
            dir.path(),
            &[
                "--name=r",
                &format!("--read_iolog={}", export.display()),
                "--ioengine=psync",
                "--replay_no_stall=1",
            ],
        );
        let count = |op| ours.iter().filter(|r| r.op == op).count() as u64;
        assert_eq!(ios(&job, "read"), count(Op::Read));
        assert_eq!(ios(&job, "write"), count(Op::Write));
        // fio counts syncs as latency samples.
        assert_eq!(job["sync"]["lat_ns"]["N"].as_u64(), Some(count(Op::Flush)));
    }

    /// The v2 `wait` semantics this parser assumes (milliseconds since the job's start) are the
    /// ones the installed fio acts on: waits of 500 then 1000 run ~1 s (not 1.5 s, not 1.5 ms; fio's
    /// job runtime starts some 100 ms after the start the waits count from).
    #[test]
    fn real_fio_waits_are_milliseconds_since_the_start() {
        if !fio_installed() {
            return;
        }
        let dir = scratch();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![0u8; 16384]).unwrap();
        let f = f.display();
        let log = format!(
            "fio version 2 iolog\n{f} add\n{f} open\n{f} read 0 4096\n{f} wait 500 0\n\
             {f} read 4096 4096\n{f} wait 1000 0\n{f} read 8192 4096\n{f} close\n"
        );
        let (_, reqs) = parse_fio_iolog(log.as_bytes()).unwrap();
        let last_ms = reqs.last().unwrap().at_ns / 1_000_000;
        let path = dir.path().join("v2.log");
        std::fs::write(&path, &log).unwrap();
        let job = fio_json(
            dir.path(),
            &[
                "--name=r",
                &format!("--read_iolog={}", path.display()),
                "--ioengine=psync",
            ],
        );
        let runtime_ms = job["job_runtime"].as_u64().unwrap();
        assert_eq!(ios(&job, "read"), 3);
        assert!(
            runtime_ms + 300 >= last_ms && runtime_ms < last_ms + 200,
            "{runtime_ms} ms vs {last_ms}"
        );
    }
}
