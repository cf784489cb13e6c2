//! What `watch` shows at each refresh: the system since the previous sample, and the run in
//! progress it follows (the newest one running beside the results store, its live file
//! tailed; for a database run, its server looked at too).

use super::args::CpuView;
use super::options::WatchOptions;
use anyhow::Context;
use iogauge_model::derive::{derive, per_cpu, Derived, PerCpuRates};
use iogauge_model::live::DbNow;
use iogauge_model::live::{LiveHeader, LiveInterval};
use iogauge_model::system::Snapshot;
use iogauge_pg::watch::DbWatch;
use iogauge_probe::Sampler;
use iogauge_store::live::{running, LiveTail};
use std::time::{Duration, Instant};

/// What one refresh shows.
pub struct Frame<'a> {
    pub timestamp: String,
    pub every: Duration,
    pub system: &'a Derived,
    /// `--cpu each`: each CPU's figures (`None` with `--cpu total`).
    pub cpus: Option<&'a [PerCpuRates]>,
    pub devices: &'a [String],
    pub live: Option<&'a Follow>,
}

/// The run being followed and the intervals seen of it so far; for a database run, its
/// server as of the last look.
pub struct Follow {
    tail: LiveTail,
    pub history: Vec<LiveInterval>,
    db: Option<DbWatch>,
    pub db_now: Option<DbNow>,
    pub db_error: Option<String>,
}

impl Follow {
    pub fn header(&self) -> &LiveHeader {
        &self.tail.header
    }
}

/// The devices to show: those asked for; with `--devices all` every device of the latest
/// sample; by default those that have done I/O since watch started (kept once seen, so a
/// device going idle stays in its place and one that disappears shows as gone).
#[derive(Default)]
pub(super) struct Shown {
    seen: std::collections::BTreeSet<String>,
}

impl Shown {
    pub fn names(&mut self, w: &WatchOptions, s: &Derived) -> Vec<String> {
        match &w.devices {
            Some(d) => d.clone(),
            None if w.all => s.disks.keys().cloned().collect(),
            None => {
                for (name, r) in &s.disks {
                    let busy = r.r_s + r.w_s + r.d_s.unwrap_or(0.0) + r.f_s.unwrap_or(0.0) > 0.0;
                    if busy {
                        self.seen.insert(name.clone());
                    }
                }
                self.seen.iter().cloned().collect()
            }
        }
    }
}

/// Keeps following the newest running job; picks up a new one when it ends.
fn refresh_follow(w: &WatchOptions, follow: &mut Option<Follow>) {
    if follow.as_ref().is_some_and(|f| !f.tail.alive()) {
        *follow = None;
    }
    if follow.is_none() {
        let Some(store) = &w.store else { return };
        if let Some(path) = running(store).first() {
            if let Ok(tail) = LiveTail::open(path) {
                let (db, db_error) = match &tail.header.db {
                    Some(addr) => match DbWatch::connect(addr) {
                        Ok(d) => (Some(d), None),
                        Err(e) => (None, Some(e.to_string())),
                    },
                    None => (None, None),
                };
                *follow = Some(Follow {
                    tail,
                    history: Vec::new(),
                    db,
                    db_now: None,
                    db_error,
                });
            }
        }
    }
    if let Some(f) = follow {
        if let Some(d) = &mut f.db {
            match d.look() {
                Ok(now) => f.db_now = Some(now),
                Err(e) => {
                    // The run is ending (server stopping) or gone: stop asking.
                    f.db_error = Some(e.to_string());
                    f.db = None;
                    f.db_now = None;
                }
            }
        }
        match f.tail.poll() {
            Ok(new) => f.history.extend(new),
            Err(_) => *follow = None,
        }
    }
}

/// What one refresh saw of the system since the previous sample.
pub(super) struct Look {
    pub system: Derived,
    /// Each CPU's figures with `--cpu each`, else `None`.
    pub cpus: Option<Vec<PerCpuRates>>,
}

/// One refresh: the system since the previous sample, and the followed run brought up to date.
pub(super) fn look(
    w: &WatchOptions,
    sampler: &Sampler,
    t0: Instant,
    prev: &mut Snapshot,
    follow: &mut Option<Follow>,
) -> anyhow::Result<Look> {
    let cur = sampler
        .sample(t0.elapsed().as_nanos() as u64)
        .context("sampling /proc")?;
    let look = Look {
        system: derive(prev, &cur),
        cpus: (w.cpu == CpuView::Each).then(|| per_cpu(prev, &cur)),
    };
    *prev = cur;
    refresh_follow(w, follow);
    Ok(look)
}

pub(super) fn timestamp() -> String {
    let t = jiff::Timestamp::now();
    t.round(jiff::Unit::Second).unwrap_or(t).to_string()
}
