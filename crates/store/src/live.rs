//! The live channel of a run in progress, for `iogauge watch`: next to the results store, a
//! directory `live/` holds one file per running job, `<pid>.jsonl` — a header line, then one
//! line per finished interval. The writer removes its file when the job ends; a reader skips
//! files whose process is gone (a job killed with SIGKILL leaves its file behind, and the
//! next writer or reader tidies it away).

use iogauge_model::live::{LiveHeader, LiveInterval};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The live directory that belongs to a results store.
pub fn live_dir(store: &Path) -> PathBuf {
    store
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("live")
}

/// Writes one job's live file; removes it when dropped.
pub struct LiveWriter {
    path: PathBuf,
    file: File,
}

impl LiveWriter {
    pub fn create(store: &Path, header: &LiveHeader) -> io::Result<LiveWriter> {
        let dir = live_dir(store);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{}.jsonl", header.pid));
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        writeln!(file, "{}", serde_json::to_string(header)?)?;
        Ok(LiveWriter { path, file })
    }

    /// Appends one interval (a whole line in one write, so a reader never sees half of it
    /// unless the disk is full; such a line is skipped until it is complete).
    pub fn push(&mut self, iv: &LiveInterval) -> io::Result<()> {
        let mut line = serde_json::to_string(iv)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())
    }
}

impl Drop for LiveWriter {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads a live file as it grows.
pub struct LiveTail {
    pub header: LiveHeader,
    path: PathBuf,
    reader: BufReader<File>,
    /// Bytes of a line whose end has not been written yet.
    partial: String,
}

impl LiveTail {
    pub fn open(path: &Path) -> io::Result<LiveTail> {
        let mut reader = BufReader::new(File::open(path)?);
        let mut first = String::new();
        reader.read_line(&mut first)?;
        let header = serde_json::from_str(first.trim_end())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(LiveTail {
            header,
            path: path.to_path_buf(),
            reader,
            partial: String::new(),
        })
    }

    /// The intervals written since the last call.
    pub fn poll(&mut self) -> io::Result<Vec<LiveInterval>> {
        let mut out = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.reader.read_line(&mut line)?;
            if n == 0 {
                break;
            }
            self.partial.push_str(&line);
            if !self.partial.ends_with('\n') {
                // Not complete yet: read it again next time from where it started.
                let back = self.partial.len() as i64;
                self.reader.seek(SeekFrom::Current(-back))?;
                self.partial.clear();
                break;
            }
            let text = std::mem::take(&mut self.partial);
            let iv = serde_json::from_str(text.trim_end())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            out.push(iv);
        }
        Ok(out)
    }

    /// The job is still running (its file exists and its process is alive).
    pub fn alive(&self) -> bool {
        self.path.exists() && pid_alive(self.header.pid)
    }
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The live files of jobs still running, newest first. Files of dead processes are removed.
pub fn running(store: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(live_dir(store)) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !pid_alive(pid) {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        let mtime = e
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        found.push((mtime, path));
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::run::IntervalReport;
    use iogauge_model::units::Nanos;
    use iogauge_stats::{DirStats, Interval, PerDir, Phase};

    fn iv(i: u32) -> LiveInterval {
        let mut io = PerDir::<DirStats>::default();
        io.read.record(4096, 1000 * u64::from(i + 1));
        LiveInterval {
            elapsed_s: f64::from(i + 1),
            interval: IntervalReport::of(&Interval {
                phase: Phase::Measure,
                index: i,
                start: Nanos(u64::from(i) * 1_000_000_000),
                end: Nanos(u64::from(i + 1) * 1_000_000_000),
                io,
                members: Vec::new(),
            }),
            ranks: None,
        }
    }

    #[test]
    fn a_reader_follows_the_writer_and_the_file_goes_with_it() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("results.sqlite");
        let header = LiveHeader {
            pid: std::process::id(),
            kind: "run".into(),
            what: "randread 8k".into(),
            started_at: "2026-11-22T00:00:00Z".into(),
            db: None,
        };
        let mut w = LiveWriter::create(&store, &header).unwrap();
        let files = running(&store);
        assert_eq!(files.len(), 1);
        let mut tail = LiveTail::open(&files[0]).unwrap();
        assert_eq!(tail.header, header);
        assert!(tail.poll().unwrap().is_empty());
        w.push(&iv(0)).unwrap();
        w.push(&iv(1)).unwrap();
        assert_eq!(tail.poll().unwrap(), vec![iv(0), iv(1)]);
        // Half a line is left for later.
        let mut raw = OpenOptions::new().append(true).open(&files[0]).unwrap();
        let line = serde_json::to_string(&iv(2)).unwrap();
        raw.write_all(&line.as_bytes()[..10]).unwrap();
        assert!(tail.poll().unwrap().is_empty());
        raw.write_all(&line.as_bytes()[10..]).unwrap();
        raw.write_all(b"\n").unwrap();
        assert_eq!(tail.poll().unwrap(), vec![iv(2)]);
        assert!(tail.alive());
        drop(w);
        assert!(!tail.alive());
        assert!(running(&store).is_empty());
    }

    #[test]
    fn files_of_dead_processes_are_tidied_away() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("results.sqlite");
        std::fs::create_dir_all(live_dir(&store)).unwrap();
        // PIDs above the kernel's pid_max (4194304 at most) never exist.
        let stale = live_dir(&store).join("4194999.jsonl");
        std::fs::write(&stale, "{}\n").unwrap();
        std::fs::write(live_dir(&store).join("notes.txt"), "x").unwrap();
        assert!(running(&store).is_empty());
        assert!(!stale.exists());
        assert!(live_dir(&store).join("notes.txt").exists());
    }
}
