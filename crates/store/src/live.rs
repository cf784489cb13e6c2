//! The live channel of a run in progress, for `iogauge watch`: next to the results store, a
//! directory `live/` holds one file per running job, `<pid>.jsonl` — a header line, then one
//! line per finished interval. The writer removes its file when the job ends; a reader skips
//! files whose process is gone (a job killed with SIGKILL leaves its file behind, and the
//! next reader tidies it away).
//!
//! The store may sit in a directory anyone may write to (/tmp), where another user can make
//! `live/` first and put links in it at the names of the next PIDs (issue #44 H2). So the
//! writer keeps to the trust rule (`iogauge_trust`): `live/` must be root's or this user's and
//! closed to others, and its file is made relative to it, never through a link; otherwise
//! there is no live view, and the run says why. A reader opens files without following a
//! link or blocking on a FIFO, reads bounded lines, and removes nothing from a `live/` that
//! fails the rule.

use iogauge_model::live::{LiveHeader, LiveInterval};
use iogauge_trust::{Kind, Trust, TrustError};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The longest line a reader takes (a header or an interval is a few KiB): a file that is
/// not a writer's, or not yet a whole one, is not read into memory whole.
const MAX_LINE: u64 = 1 << 20;

/// The live directory that belongs to a results store.
pub fn live_dir(store: &Path) -> PathBuf {
    store
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("live")
}

/// Why a live file could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// `live/` or the file fails the trust rule, or could not be made: its path and the way out.
    #[error(transparent)]
    Trust(#[from] TrustError),
    #[error("{}: {source}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Writes one job's live file; removes it when dropped.
pub struct LiveWriter {
    /// `live/`, checked and held open: the file is removed relative to it.
    dir: File,
    name: String,
    path: PathBuf,
    file: File,
}

impl LiveWriter {
    pub fn create(store: &Path, header: &LiveHeader) -> Result<LiveWriter, LiveError> {
        let dir_path = live_dir(store);
        let dir = iogauge_trust::trusted_dir(&dir_path)?;
        let name = format!("{}.jsonl", header.pid);
        let path = dir_path.join(&name);
        let file = iogauge_trust::create_in(&dir, &dir_path, &name, 0o644)?;
        let mut w = LiveWriter {
            dir,
            name,
            path,
            file,
        };
        let line = serde_json::to_string(header).map_err(io::Error::from);
        line.and_then(|l| writeln!(w.file, "{l}"))
            .map_err(|source| LiveError::Write {
                path: w.path.clone(),
                source,
            })?;
        Ok(w)
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
        let _ = rustix::fs::unlinkat(&self.dir, self.name.as_str(), rustix::fs::AtFlags::empty());
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
    /// Opens the live file at `path`: a regular file, not followed if it is a link, never
    /// waited on (a FIFO).
    pub fn open(path: &Path) -> io::Result<LiveTail> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)?;
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a regular file", path.display()),
            ));
        }
        let mut reader = BufReader::new(file);
        let first = read_line(&mut reader)?;
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
            let line = read_line(&mut self.reader)?;
            if line.is_empty() {
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
        std::fs::symlink_metadata(&self.path).is_ok() && pid_alive(self.header.pid)
    }
}

/// One line of at most [`MAX_LINE`] bytes (its end included); a longer one is an error.
fn read_line(reader: &mut BufReader<File>) -> io::Result<String> {
    let mut line = String::new();
    let n = reader.by_ref().take(MAX_LINE).read_line(&mut line)?;
    if n as u64 == MAX_LINE && !line.ends_with('\n') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a line longer than {MAX_LINE} bytes: not a live file"),
        ));
    }
    Ok(line)
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The live files of jobs still running, newest first: regular files only, links not
/// followed. Files of dead processes are removed where `live/` passes the trust rule (in
/// another user's, a name there could be anything, and removing is theirs to do).
pub fn running(store: &Path) -> Vec<PathBuf> {
    let dir = live_dir(store);
    // A link where `live/` should be is not read through.
    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    let trusted = iogauge_trust::resolve(&dir)
        .is_ok_and(|d| Trust::new(None).check_tree(&d, Kind::Dir, false).is_ok());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        // The entry itself (DirEntry::metadata does not follow a link).
        let Ok(meta) = e.metadata() else {
            continue;
        };
        let path = e.path();
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        if !pid_alive(pid) {
            if trusted {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        found.push((meta.modified().unwrap_or(std::time::UNIX_EPOCH), path));
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

    /// Issue #44 H2: a `live/` others may write to (another user's, in /tmp) is not written
    /// in, nor tidied; links and FIFOs in it are neither followed nor waited on.
    #[test]
    fn a_live_dir_others_may_write_is_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("results.sqlite");
        let live = live_dir(&store);
        std::fs::create_dir(&live).unwrap();
        std::fs::set_permissions(&live, std::fs::Permissions::from_mode(0o777)).unwrap();
        let header = LiveHeader {
            pid: std::process::id(),
            kind: "run".into(),
            what: "randread 8k".into(),
            started_at: "2026-11-22T00:00:00Z".into(),
            db: None,
        };
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let mine = live.join(format!("{}.jsonl", header.pid));
        std::os::unix::fs::symlink(&victim, &mine).unwrap();
        let e = LiveWriter::create(&store, &header)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("mode 0777"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let stale = live.join("4194999.jsonl");
        std::fs::write(&stale, "{}\n").unwrap();
        assert!(running(&store).is_empty(), "a link is no live file");
        assert!(
            stale.exists(),
            "not tidied in a directory that fails the rule"
        );
        assert!(LiveTail::open(&mine).is_err(), "not followed");
        // A FIFO at a running PID's name: skipped, and never waited on when opened.
        std::fs::remove_file(&mine).unwrap();
        let c = std::ffi::CString::new(mine.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(running(&store).is_empty());
        assert!(LiveTail::open(&mine).is_err());
        // Closed to others, the same directory is written in.
        std::fs::remove_file(&mine).unwrap();
        std::fs::set_permissions(&live, std::fs::Permissions::from_mode(0o755)).unwrap();
        let w = LiveWriter::create(&store, &header).unwrap();
        assert_eq!(running(&store), vec![mine.clone()]);
        drop(w);
        assert!(!mine.exists());
    }
}
