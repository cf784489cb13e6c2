//! One runner per campaign and store: `iogauge campaign` holds an exclusive `flock(2)` on a
//! file beside the store, `STORE.campaign-NAME.lock`, holding its PID, for as long as it runs.
//! A second runner of the same campaign on the same store is refused at once, naming the PID
//! (two runners would measure at the same time, spoiling each other's repetitions, and then
//! collide storing the same one).
//!
//! `flock` rather than a row in the store: the kernel drops the lock when its holder dies, even
//! by SIGKILL, so a stale lock is simply taken over, with no PID guessing (a PID can be reused).
//! The descriptor is close-on-exec, so the runs a runner starts never keep its lock. The
//! holder removes the file when it ends; a file left by a killed runner is locked afresh by
//! the next one.
//!
//! The store may sit in a directory anyone may write to (/tmp), where another user can put a
//! link or a file of theirs at the lock's name before root runs a campaign: the file is opened
//! under the trust rule ([`iogauge_trust::open_beside`]: never through a link, judged by its
//! descriptor), and the campaign refused in one line naming it otherwise (issue #44 H2).

use crate::names::{fit, NAME_MAX};
use crate::StoreError;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Held while a campaign runs; dropping it releases the lock and removes the file.
#[derive(Debug)]
pub struct CampaignLock {
    path: PathBuf,
    // Kept open: closing it releases the lock.
    _file: File,
}

/// How long a campaign's name may stay in a lock's name before it is cut (to 40 bytes and a
/// digest).
const NAME_KEPT: usize = 57;

/// The lock file of campaign `name` in the store at `store`: beside the store, under the
/// store's canonical path so that two spellings of one store share it.
///
/// `STORE.campaign-NAME.lock` while that fits in a file name; a long store name and a long
/// campaign name together do not (issue #44 L6), and then each is cut to its start and a
/// digest (`names::fit`), the store's to what the campaign's leaves.
pub fn lock_path(store: &Path, name: &str) -> PathBuf {
    let store = std::fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf());
    let file = store.file_name().unwrap_or_default().as_bytes();
    let whole = [file, b".campaign-", name.as_bytes(), b".lock"].concat();
    if whole.len() <= NAME_MAX {
        return store.with_file_name(OsStr::from_bytes(&whole));
    }
    let name = fit(name.as_bytes(), NAME_KEPT);
    let room = NAME_MAX - (".campaign-".len() + name.len() + ".lock".len());
    let short = [&fit(file, room), b".campaign-".as_slice(), &name, b".lock"].concat();
    store.with_file_name(OsStr::from_bytes(&short))
}

impl CampaignLock {
    /// Takes the lock of campaign `name` in the store at `store`, or says who holds it.
    pub fn acquire(store: &Path, name: &str) -> Result<CampaignLock, StoreError> {
        let path = lock_path(store, name);
        let io = |source| StoreError::Lock {
            path: path.clone(),
            source,
        };
        let refused = |source| StoreError::LockFile {
            campaign: name.to_string(),
            source,
        };
        // A holder that ends removes the file between our open and our lock: we then hold
        // a lock on a removed file while the next runner creates a new one. Locking again
        // until the locked file is the one at the path closes that gap.
        for _ in 0..100 {
            let mut file = iogauge_trust::open_beside(&path, 0o644).map_err(refused)?;
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                    return Err(StoreError::CampaignBusy {
                        path: store.to_path_buf(),
                        campaign: name.to_string(),
                        holder: holder(&mut file),
                    })
                }
                Err(e) => return Err(io(e.into())),
            }
            let same = match (file.metadata(), std::fs::symlink_metadata(&path)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            };
            if !same {
                continue;
            }
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            writeln!(file, "{}", std::process::id()).map_err(io)?;
            file.flush().map_err(io)?;
            return Ok(CampaignLock { path, _file: file });
        }
        Err(io(std::io::Error::other(
            "the lock file keeps being replaced; is another runner starting and stopping?",
        )))
    }
}

impl Drop for CampaignLock {
    fn drop(&mut self) {
        // Removed while still locked, so no runner can lock this file and then find it gone.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The holder's PID as written in its lock file, "PID 1234"; a holder that has just taken
/// the lock may not have written it yet, so this waits for it briefly.
fn holder(file: &mut File) -> String {
    for _ in 0..20 {
        let mut text = String::new();
        if file.rewind().is_ok() && file.read_to_string(&mut text).is_ok() {
            if let Ok(pid) = text.trim().parse::<u32>() {
                return format!("PID {pid}");
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    "a PID not yet written".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_the_first_release_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        std::fs::write(&store, b"").unwrap();
        let first = CampaignLock::acquire(&store, "c").unwrap();
        let text = std::fs::read_to_string(lock_path(&store, "c")).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
        // flock locks belong to the open file, so a second open in this process conflicts.
        let err = CampaignLock::acquire(&store, "c").unwrap_err().to_string();
        assert!(
            err.contains(&format!("PID {}", std::process::id())),
            "{err}"
        );
        // Another campaign of the same store is independent.
        let other = CampaignLock::acquire(&store, "d").unwrap();
        drop(first);
        assert!(!lock_path(&store, "c").exists());
        let _again = CampaignLock::acquire(&store, "c").unwrap();
        drop(other);
    }

    /// Issue #44 L6: a long store name and a long campaign name made a lock name longer than
    /// a file name may be ("File name too long").
    #[test]
    fn long_names_make_a_short_readable_lock_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join(format!("{}.sqlite", "s".repeat(240)));
        std::fs::write(&store, b"").unwrap();
        let a = "a".repeat(100);
        let b = format!("{}b", "a".repeat(99));
        let (la, lb) = (lock_path(&store, &a), lock_path(&store, &b));
        assert_ne!(la, lb, "two campaigns, two locks");
        for l in [&la, &lb] {
            let n = l.file_name().unwrap().to_str().unwrap();
            assert!(n.len() <= NAME_MAX, "{} bytes", n.len());
            assert!(
                n.starts_with("sssss") && n.contains(".campaign-aaaaa"),
                "{n}"
            );
            assert!(n.ends_with(".lock"), "{n}");
        }
        let _a = CampaignLock::acquire(&store, &a).unwrap();
        let _b = CampaignLock::acquire(&store, &b).unwrap();
        assert!(
            CampaignLock::acquire(&store, &a).is_err(),
            "still one runner"
        );
        let short = lock_path(&dir.path().join("s.sqlite"), "c");
        assert_eq!(short.file_name().unwrap(), "s.sqlite.campaign-c.lock");
    }

    /// Issue #44 H2: a link at the lock's name was followed, and the file it led to truncated.
    #[test]
    fn a_link_at_the_lock_name_is_refused_and_its_target_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        std::fs::write(&store, b"").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, lock_path(&store, "c")).unwrap();
        let e = CampaignLock::acquire(&store, "c").unwrap_err();
        assert!(e.is_usage(), "{e:?}");
        let e = e.to_string();
        assert!(e.starts_with("campaign c: its lock file "), "{e}");
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }

    #[test]
    fn a_stale_file_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        std::fs::write(&store, b"").unwrap();
        std::fs::write(lock_path(&store, "c"), "999999999\n").unwrap();
        let _l = CampaignLock::acquire(&store, "c").unwrap();
        let text = std::fs::read_to_string(lock_path(&store, "c")).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
    }
}
