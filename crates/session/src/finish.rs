//! The one ending of every command that produces a result: store the document, then print
//! it, then say where it is stored. Stored first, so a stdout that fails (a full disk, a
//! reader that went away, a campaign runner killed mid-run) never costs the result; a store
//! that fails still prints it, so neither failure loses it.

use crate::{now, Session, SessionError};
use iogauge_model::Document;
use iogauge_store::NewRun;
use std::io::Write;
use std::path::PathBuf;

/// How a measured session ended, for its exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Complete,
    /// Stopped by Ctrl-C or SIGTERM: what ran is kept (exit 130).
    Interrupted,
    /// Ended early by a failure; the part that ran is kept, then this is reported (exit 1).
    Failed(String),
}

impl Ending {
    /// Complete, or interrupted when the document says so.
    pub fn of(doc: &Document) -> Ending {
        if doc.meta().interrupted {
            Ending::Interrupted
        } else {
            Ending::Complete
        }
    }
}

/// Where a result went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub id: i64,
    pub path: PathBuf,
}

impl Session {
    /// Finishes the document (the live feed's warning, the end time), stores it with its
    /// histograms, then writes `render(document)` to `out`.
    pub fn finish(
        mut self,
        mut doc: Document,
        histograms: &[(String, Vec<u8>)],
        render: impl FnOnce(&Document) -> String,
        out: &mut dyn Write,
    ) -> Result<Stored, SessionError> {
        doc.warnings_mut().extend(self.end_live());
        let meta = doc.meta_mut();
        meta.ended_at.get_or_insert_with(now);
        let text = render(&doc);
        let run = NewRun {
            document: &doc,
            histograms,
            campaign: self.tag.as_ref(),
        };
        let id = match self.store.insert(&run) {
            Ok(id) => id,
            Err(source) => {
                let printed = write_all(out, &text).is_ok();
                return Err(SessionError::NotStored { printed, source });
            }
        };
        let path = self.store.path().to_path_buf();
        if let Err(source) = write_all(out, &text) {
            return Err(SessionError::Output { id, path, source });
        }
        Ok(Stored { id, path })
    }
}

/// Writes `text` and flushes: the error of either is the error.
fn write_all(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    out.flush()
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
        let back = iogauge_store::Store::open(&stored.path)
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
        let store = iogauge_store::Store::open(path).unwrap();
        assert!(store.get(id).unwrap().is_some());
    }

    #[test]
    fn a_store_that_fails_still_prints() {
        let dir = tempfile::tempdir().unwrap();
        let s = session(&dir);
        // The same repetition of a campaign stored twice: the second insert fails.
        let tag = iogauge_store::CampaignTag {
            campaign: "c".into(),
            generation: 0,
            case: "a".into(),
            rep: 1,
            warmup: false,
        };
        let mut store = iogauge_store::Store::open(s.store_path()).unwrap();
        let row = iogauge_store::CampaignRow {
            name: "c".into(),
            generation: 0,
            file: String::new(),
            definition: "{}".into(),
            plan_hash: "h".into(),
            created_at: "2026-11-24T00:00:00Z".into(),
        };
        let generation = store.save_campaign(&row, false).unwrap();
        let tag = iogauge_store::CampaignTag { generation, ..tag };
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
