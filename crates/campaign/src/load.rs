//! Reading a campaign file into the two campaigns a runner needs: the real one, whose command
//! lines the runs are started with, and the one with its secrets masked, which is the only one
//! ever printed, stored or compared with the store. Every problem with the file is a usage
//! error in one line that names it (`LoadError::is_usage`), but one the system made reading it.

use crate::{Campaign, Case};
use iogauge_trust::{read_bounded, resolve, Kind, Trust, TrustError};
use std::path::{Path, PathBuf};

/// Checks one command line (`iogauge` first) as `iogauge` parses it, with the checks between
/// flags made before anything is touched; why it cannot work, in one line. Given by the
/// binary, which knows the whole command tree.
pub type CheckLine = fn(&[&str]) -> Result<(), String>;

/// A campaign file, read and checked.
pub struct Loaded {
    /// What the runs are started with (real DSNs); case names as in `shown`.
    pub real: Campaign,
    /// Secrets masked: printed, stored, hashed for resumes, named in tags.
    pub shown: Campaign,
    /// The file's text, secrets masked, for the store.
    pub file: String,
}

/// The one masking function for everything a campaign shows or stores.
pub fn mask(text: &str) -> String {
    iogauge_model::secret::redact_secrets(text)
}

/// Why a campaign file cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file (or one of its cases) cannot work as written.
    #[error("campaign file {}: {why}", path.display())]
    File { path: PathBuf, why: String },
    /// `--name` breaks the rule of campaign names.
    #[error("--name {name:?}: {why}")]
    Name { name: String, why: String },
    /// The system failed reading it.
    #[error("campaign file {name}: reading")]
    Read {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

impl LoadError {
    /// Whether the file or the flags are at fault (exit code 2), not the system.
    pub fn is_usage(&self) -> bool {
        !matches!(self, LoadError::Read { .. })
    }
}

fn usage(path: &Path, what: impl std::fmt::Display) -> LoadError {
    LoadError::File {
        path: path.to_path_buf(),
        why: what.to_string(),
    }
}

/// Reads and expands the campaign file at `path` (`--smoke` scale when `smoke`, stored under
/// `rename` when given), every case's command line checked with `check`; errors name the file.
pub fn load(
    path: &Path,
    smoke: bool,
    rename: Option<&str>,
    check: CheckLine,
) -> Result<Loaded, LoadError> {
    // The file's name names the campaign and is shown in every message: it must be text.
    let Some(name) = path.to_str() else {
        return Err(usage(
            path,
            "the path is not valid UTF-8; rename the file (or a directory above it)",
        ));
    };
    if path.is_dir() {
        return Err(usage(
            path,
            "is a directory; give the path of a .toml file (see examples/)",
        ));
    }
    let (text, dir) = read_trusted(path, name)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("campaign");
    let mut c = Campaign::parse(&text, stem, smoke).map_err(|e| usage(path, mask(&e.0)))?;
    // The hooks run with the file's directory as IOGAUGE_CAMPAIGN_DIR, where they may call
    // scripts beside the file: that directory too must be one nobody else can change, not
    // even a sticky one.
    if c.commands.any_shell() {
        Trust::new(None)
            .check(&dir, Kind::Dir, false)
            .map_err(|e| match e {
                TrustError::Refused { why, .. } => usage(
                    path,
                    format!(
                        "its commands run as this user with IOGAUGE_CAMPAIGN_DIR={}, which is {why}",
                        dir.display()
                    ),
                ),
                TrustError::Io { source, .. } => LoadError::Read {
                    name: name.to_string(),
                    source,
                },
            })?;
    }
    if let Some(n) = rename {
        if let Err(why) = crate::spec::name_rule(n) {
            return Err(LoadError::Name {
                name: n.to_string(),
                why,
            });
        }
        c.name = n.to_string();
    }
    let shown = c
        .masked(mask, iogauge_model::secret::redact_dsn)
        .map_err(|e| usage(path, e))?;
    check_cases(&c, &shown, path, check)?;
    // Case names are labels: the real campaign carries the masked ones, so a run's tag, its
    // hooks' IOGAUGE_CASE and the store all name a case the same way.
    for (real, shown) in c.cases.iter_mut().zip(&shown.cases) {
        real.name.clone_from(&shown.name);
    }
    Ok(Loaded {
        real: c,
        shown,
        file: mask(&text),
    })
}

/// The most a campaign file may hold: ten thousand cases fit in a tenth of it.
const FILE_LIMIT: u64 = 16 << 20;

/// The campaign file's text, once it and the directories above it pass the trust rule (see
/// `iogauge-trust`: iogauge runs its hooks and command lines, as root when it is root, so a
/// file another user owns or may write would choose what root runs), read without following
/// a link at it and with a bound; and its real directory.
fn read_trusted(path: &Path, name: &str) -> Result<(String, PathBuf), LoadError> {
    let read = |source| LoadError::Read {
        name: name.to_string(),
        source,
    };
    let real = resolve(path).map_err(read)?;
    let trust = Trust::new(None);
    let judged = trust
        .check_above(&real)
        .and_then(|()| trust.check(&real, Kind::File, false))
        .and_then(|()| read_bounded(&real, FILE_LIMIT));
    let bytes = match judged {
        Ok(b) => b,
        Err(e) if e.is_not_found() => {
            return Err(usage(
                path,
                "not found; give the path of a .toml file (see examples/)",
            ))
        }
        Err(TrustError::Refused { why, .. }) => {
            // The message names the resolved path when it differs from the one given.
            let at = if real == path {
                why
            } else {
                format!("{}: {why}", real.display())
            };
            return Err(usage(path, at));
        }
        Err(TrustError::Io { source, .. }) => return Err(read(source)),
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        usage(
            path,
            "not UTF-8 text; a campaign file is TOML, which is UTF-8",
        )
    })?;
    let dir = real
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    Ok((text, dir))
}

/// Every case's command line goes through the same parser as a typed one, so a misspelt
/// flag or a bad value fails now, not hours into the campaign. Messages are masked: a bad
/// value may be the DSN. Cases are checked on every core (a parse costs tens of µs, and a
/// campaign may have ten thousand cases); the first bad case in file order is reported.
fn check_cases(
    c: &Campaign,
    shown: &Campaign,
    path: &Path,
    check: CheckLine,
) -> Result<(), LoadError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = c.cases.len().div_ceil(threads).max(1);
    let first_bad = std::thread::scope(|s| {
        let workers: Vec<_> = c
            .cases
            .chunks(chunk)
            .enumerate()
            .map(|(k, cases)| {
                s.spawn(move || first_bad(c, cases, check).map(|(i, m)| (k * chunk + i, m)))
            })
            .collect();
        // In chunk order, so the earliest bad case wins.
        workers
            .into_iter()
            .find_map(|w| w.join().expect("case check thread"))
    });
    match first_bad {
        None => Ok(()),
        Some((i, msg)) => Err(usage(
            path,
            format!(
                "case {:?}: {} (from its [options])",
                shown.cases[i].name,
                mask(msg.trim_start_matches("error: "))
            ),
        )),
    }
}

/// The index within `cases` of the first case whose command line does not parse, and why.
fn first_bad(c: &Campaign, cases: &[Case], check: CheckLine) -> Option<(usize, String)> {
    cases.iter().enumerate().find_map(|(i, case)| {
        // A stand-in's `--like` is the id of a run made later, which the check cannot look up:
        // its line is checked as a run with a log writer, which the same flags shape.
        let like = case.like.as_ref().map(|_| ["--log-bs", "8k"]);
        let argv: Vec<&str> = std::iter::once("iogauge")
            .chain(case.command(c.command).words().iter().copied())
            .chain(case.args.iter().map(String::as_str))
            .chain(like.into_iter().flatten())
            .collect();
        check(&argv).err().map(|msg| (i, msg))
    })
}
