//! A measured session from its first step to its stored result (see the crate's doc).

use crate::error::SessionError;
use crate::finish::{write_all, Stored};
use crate::live::Feed;
use crate::ranks::Team;
use crate::signal::{campaign_tag, stop_flag};
use iogauge_model::live::{LiveHeader, SocketAddr};
use iogauge_model::run::IntervalReport;
use iogauge_model::{Document, Kind};
use iogauge_store::NewRun;
use iogauge_store::{CampaignTag, Store};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One measured session, from its first step to its stored result.
pub struct Session {
    pub(crate) team: Team,
    stop: Arc<AtomicBool>,
    tag: Option<CampaignTag>,
    /// The results store, on the process that stores (alone, or rank 0 of a job over ranks).
    store: Option<Store>,
    pub(crate) feed: Feed,
    started_at: String,
    label: Option<String>,
    /// Whether the block-layer tracer runs beside the sampler (on unless `--no-trace`).
    trace: bool,
    /// `db run --capture`: record the job's own block requests into a stored trace.
    capture: bool,
}

impl Session {
    /// Installs the Ctrl-C handler, reads the campaign tag and opens the store (`store`, else
    /// `$IOGAUGE_STORE` or the platform data directory).
    pub fn begin(store: Option<&Path>) -> Result<Session, SessionError> {
        let stop = stop_flag()?;
        let tag = campaign_tag()?;
        let store = Store::open_resolved(store)?;
        Ok(Session {
            team: Team::Solo,
            stop,
            tag,
            store: Some(store),
            feed: Feed::Off,
            started_at: now(),
            label: None,
            trace: true,
            capture: false,
        })
    }

    /// [`Session::begin`] for a command that may run over ranks: joins the [`Team`] (this
    /// process alone unless an MPI launcher started it), and over ranks opens the store on
    /// rank 0 only (agreed: a bad `--store` ends every rank) and lets the launcher's teardown
    /// stop the job too. `say` prints an error as the binary does (see [`Team::join`]).
    pub fn join(
        store: Option<&Path>,
        label: Option<String>,
        say: fn(&anyhow::Error),
    ) -> anyhow::Result<Session> {
        let team = Team::join(say)?;
        let opened = match team.leads() {
            true => Session::begin(store).map(Some).map_err(Into::into),
            false => Ok(None),
        };
        let mut session = match team.agreed(opened)? {
            Some(s) => s,
            None => Session {
                team: Team::Solo,
                stop: stop_flag()?,
                tag: None,
                store: None,
                feed: Feed::Off,
                started_at: now(),
                label: None,
                trace: true,
                capture: false,
            },
        };
        team.watch_teardown(&session.stop)?;
        session.team = team;
        session.label = label;
        Ok(session)
    }

    /// Turns the per-layer tracer on (the default) or off (`--no-trace`).
    pub fn set_tracing(&mut self, on: bool) {
        self.trace = on;
    }

    /// Whether the per-layer tracer runs beside the sampler.
    pub fn tracing(&self) -> bool {
        self.trace
    }

    /// Records the job's own block requests into a stored trace (`db run --capture`).
    pub fn set_capture(&mut self, on: bool) {
        self.capture = on;
    }

    pub fn capturing(&self) -> bool {
        self.capture
    }

    /// The processes this session's job runs on.
    pub fn team(&self) -> &Team {
        &self.team
    }

    /// The stop flag: raised by Ctrl-C, SIGTERM or SIGHUP; producers stop at their next boundary.
    pub fn stop(&self) -> &Arc<AtomicBool> {
        &self.stop
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// When the session began, RFC 3339 UTC.
    pub fn started_at(&self) -> &str {
        &self.started_at
    }

    /// Where results are stored; `None` on a rank that does not store (not rank 0).
    pub fn store_path(&self) -> Option<&Path> {
        self.store.as_ref().map(Store::path)
    }

    /// Starts the live feed: what runs (`kind`, a one-line description) and, for a database
    /// run on a private server, its socket (never a DSN).
    pub fn go_live(&mut self, kind: Kind, what: String, db: Option<SocketAddr>) {
        let Some(store) = &self.store else {
            return;
        };
        let header = LiveHeader {
            pid: std::process::id(),
            kind: kind.command().into(),
            what,
            started_at: self.started_at.clone(),
            db,
        };
        self.feed = Feed::start(store.path(), &header);
    }

    /// Publishes one finished interval, `elapsed_s` from the job's start to its end.
    pub fn publish(&mut self, interval: &IntervalReport, elapsed_s: f64) {
        self.feed.publish(interval, elapsed_s, None);
    }

    /// Finishes the document (the live feed's warning, the end time), stores it with its
    /// histograms, then writes `render(document)` to `out`.
    /// What the user called this result (`--label`): stored in the document's head.
    pub fn set_label(&mut self, label: Option<String>) {
        self.label = label;
    }

    pub fn finish(
        mut self,
        mut doc: Document,
        histograms: &[(String, Vec<u8>)],
        render: impl FnOnce(&Document) -> String,
        out: &mut dyn Write,
    ) -> Result<Stored, SessionError> {
        doc.warnings_mut().extend(self.feed.end());
        let meta = doc.meta_mut();
        meta.ended_at.get_or_insert_with(now);
        if self.label.is_some() {
            meta.label = self.label.take();
        }
        let text = render(&doc);
        let run = NewRun {
            document: &doc,
            histograms,
            campaign: self.tag.as_ref(),
        };
        let Some(store) = self.store.as_mut() else {
            return Err(SessionError::NotLead);
        };
        let id = match store.insert(&run) {
            Ok(id) => id,
            Err(source) => {
                let printed = write_all(out, &text).is_ok();
                return Err(SessionError::NotStored { printed, source });
            }
        };
        let path = store.path().to_path_buf();
        if let Err(source) = write_all(out, &text) {
            return Err(SessionError::Output { id, path, source });
        }
        Ok(Stored { id, path })
    }
}

/// Now, RFC 3339 UTC to the millisecond.
pub fn now() -> String {
    let t = jiff::Timestamp::now();
    t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::run::RunReport;
    use iogauge_model::spec::{JobSpec, RwMode};
    use std::time::SystemTime;

    fn doc() -> Document {
        RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            vec![],
            SystemTime::UNIX_EPOCH,
            &[],
            false,
        )
        .into()
    }

    /// A stdout that takes nothing (a full disk).
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(28))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn session(dir: &tempfile::TempDir) -> Session {
        Session::begin(Some(&dir.path().join("results.sqlite"))).unwrap()
    }

    #[test]
    fn stored_first_then_printed_and_the_end_time_set() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        let s = session(&dir);
        let stored = s
            .finish(doc(), &[], |d| format!("{} done\n", d.kind()), &mut out)
            .unwrap();
        assert_eq!(out, b"run done\n");
        let back = Store::open(&stored.path)
            .unwrap()
            .get(stored.id)
            .unwrap()
            .unwrap();
        assert!(back.document.meta().ended_at.is_some());
    }

    #[test]
    fn a_stdout_that_fails_costs_nothing_stored_and_names_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let e = session(&dir)
            .finish(doc(), &[], |_| "text".into(), &mut Full)
            .unwrap_err();
        let SessionError::Output { id, ref path, .. } = e else {
            panic!("{e:?}");
        };
        assert!(
            e.to_string().contains(&format!("stored as run {id}")),
            "{e}"
        );
        let store = Store::open(path).unwrap();
        assert!(store.get(id).unwrap().is_some());
    }

    #[test]
    fn a_store_that_fails_still_prints() {
        let dir = tempfile::tempdir().unwrap();
        let s = session(&dir);
        // The same repetition of a campaign stored twice: the second insert fails.
        let tag = CampaignTag {
            campaign: "c".into(),
            generation: 0,
            case: "a".into(),
            rep: 1,
            warmup: false,
        };
        let mut store = Store::open(s.store_path().unwrap()).unwrap();
        let row = iogauge_store::CampaignRow {
            name: "c".into(),
            generation: 0,
            file: String::new(),
            definition: "{}".into(),
            plan_hash: "h".into(),
            created_at: "2026-11-24T00:00:00Z".into(),
        };
        let generation = store.save_campaign(&row, false).unwrap();
        let tag = CampaignTag { generation, ..tag };
        let mut s = s;
        s.tag = Some(tag.clone());
        let mut out = Vec::new();
        s.finish(doc(), &[], |_| "first\n".into(), &mut out)
            .unwrap();
        let mut s2 = session(&dir);
        s2.tag = Some(tag);
        let e = s2
            .finish(doc(), &[], |_| "second\n".into(), &mut out)
            .unwrap_err();
        assert!(
            matches!(e, SessionError::NotStored { printed: true, .. }),
            "{e:?}"
        );
        assert_eq!(out, b"first\nsecond\n");
    }
}
