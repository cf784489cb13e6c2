//! `iogauge clean`: removes the scratch files iogauge created, found by the mark it leaves
//! on each (`iogauge_engine::marker`), and nothing else: a file without the mark, a link, a
//! device or anything on another filesystem is left where it is. Database servers are
//! removed by `iogauge db drop`, which knows what else they hold.

pub mod args;

use anyhow::Context;
use args::CleanArgs;
use iogauge_model::spec::fmt_size;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A file iogauge made: where, its inode (checked again just before removal) and size.
struct Ours {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
}

/// What a walk found: iogauge's files, and how many others it passed over.
#[derive(Default)]
struct Found {
    ours: Vec<Ours>,
    others: usize,
}

pub fn clean(a: CleanArgs) -> anyhow::Result<ExitCode> {
    let (paths, default) = args::paths(a.paths)?;
    if paths.is_empty() {
        println!("nothing to clean: ./{} does not exist", args::SCRATCH_DIR);
        return Ok(ExitCode::SUCCESS);
    }
    let mut found = Found::default();
    for p in &paths {
        look(p, &mut found, !default)?;
    }
    let verb = if a.dry_run { "would remove" } else { "removed" };
    let mut freed = 0;
    for f in &found.ours {
        if !a.dry_run {
            remove(f)?;
        }
        freed += f.size;
        println!("{verb} {} ({})", f.path.display(), fmt_size(f.size));
    }
    if !a.dry_run {
        for p in &paths {
            // The scratch directory `run` made, once empty (a non-empty one keeps what is
            // not iogauge's).
            if p.file_name().is_some_and(|n| n == args::SCRATCH_DIR) {
                let _ = std::fs::remove_dir(p);
            }
        }
    }
    let left = match found.others {
        0 => String::new(),
        n => format!("; {n} file(s) without iogauge's mark left as they are"),
    };
    println!(
        "{verb} {} file(s) of iogauge's, {}{left}",
        found.ours.len(),
        fmt_size(freed)
    );
    Ok(ExitCode::SUCCESS)
}

/// Collects iogauge's files at `path`: the file itself, or every file under a directory
/// (on its filesystem, links not followed). `said`: a path the user named, so a file of
/// someone else's there is said by name.
fn look(path: &Path, found: &mut Found, said: bool) -> anyhow::Result<()> {
    let m = std::fs::symlink_metadata(path).with_context(|| format!("{}", path.display()))?;
    if m.is_file() {
        if iogauge_engine::marker::is_marked(path) {
            found.ours.push(Ours {
                path: path.to_path_buf(),
                dev: m.dev(),
                ino: m.ino(),
                size: m.len(),
            });
        } else {
            if said {
                println!("left {}: not iogauge's (no mark)", path.display());
            }
            found.others += 1;
        }
        return Ok(());
    }
    if !m.is_dir() {
        if said {
            println!("left {}: not a regular file", path.display());
        }
        return Ok(());
    }
    walk(path, m.dev(), found)
}

fn walk(dir: &Path, dev: u64, found: &mut Found) -> anyhow::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.dev() != dev {
            continue;
        }
        if m.is_dir() {
            walk(&p, dev, found)?;
        } else if m.is_file() && !is_sidecar(&p) {
            look(&p, found, false)?;
        }
    }
    Ok(())
}

/// `.NAME.iogauge`: the mark of `NAME` on a filesystem without user xattrs, removed with it.
fn is_sidecar(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n.ends_with(".iogauge"))
}

/// Removes `f` if the path still names the inode found marked (never a file put there since).
fn remove(f: &Ours) -> anyhow::Result<()> {
    let now = std::fs::symlink_metadata(&f.path)
        .with_context(|| format!("{}: gone before it was removed", f.path.display()))?;
    if now.dev() != f.dev || now.ino() != f.ino || !now.is_file() {
        anyhow::bail!(
            "{}: replaced by another file since it was checked; left as it is",
            f.path.display()
        );
    }
    std::fs::remove_file(&f.path).with_context(|| format!("removing {}", f.path.display()))?;
    iogauge_engine::marker::remove_sidecar(&f.path);
    Ok(())
}
