//! Average active sessions by wait event, ASH style, for every engine: each engine's sampler
//! reads its sessions' wait events every 100 ms into [`ActivityRow`]s (PostgreSQL's
//! `pg_stat_activity`; MariaDB's `performance_schema` in the same terms, see
//! `mariadb::activity`), and [`AasAcc`] counts them;
//! per interval, AAS of an event = (process-samples in that event) / (samples taken). The test
//! sessions are counted apart from the checkpointer, background writer and WAL writer.
//!
//! An active process with no wait event is on CPU (or in a wait PostgreSQL does not
//! instrument) and counts as "CPU", as in Oracle's ASH. Waits of type Activity (a background
//! process's idle loop) and Client (a session waiting for its next statement) are idle and
//! not counted. LWLock `WALWrite` is reported as `WALWriteLock` (its name before
//! PostgreSQL 13) so it stays apart from the I/O event `WALWrite`.
//!
//! With the server driver a session stays active for a whole batch, so its waits and CPU
//! are sampled inside the procedure and it counts nearly 1 even on CPU; with the client
//! driver it is idle (Client `ClientRead`) for part of every round trip.

use iogauge_model::db::aas::Aas;
use std::collections::BTreeMap;

/// `application_name` of the test sessions, how the sampler tells them apart.
pub const SESSION_APP: &str = "iogauge-session";
/// How often `pg_stat_activity` is sampled.
pub const SAMPLE_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// One row of `pg_stat_activity`, as sampled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActivityRow {
    pub backend_type: String,
    pub application_name: String,
    pub state: Option<String>,
    pub wait_event_type: Option<String>,
    pub wait_event: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Sessions,
    Checkpointer,
    BgWriter,
    WalWriter,
}

/// Which group a row belongs to and the event it counts as; `None` for idle or other
/// processes.
fn classify(r: &ActivityRow) -> Option<(Who, String)> {
    let who = if r.application_name == SESSION_APP && r.backend_type == "client backend" {
        Who::Sessions
    } else {
        match r.backend_type.as_str() {
            "checkpointer" => Who::Checkpointer,
            "background writer" => Who::BgWriter,
            "walwriter" => Who::WalWriter,
            _ => return None,
        }
    };
    match (r.wait_event_type.as_deref(), r.wait_event.as_deref()) {
        (Some("Activity" | "Client"), _) => None,
        (Some("LWLock"), Some("WALWrite")) => Some((who, "WALWriteLock".into())),
        (Some(_), Some(e)) => Some((who, e.to_string())),
        _ if who == Who::Sessions && r.state.as_deref() != Some("active") => None,
        _ => Some((who, "CPU".into())),
    }
}

/// Counts samples for one interval; [`AasAcc::finish`] turns them into averages.
#[derive(Clone, Debug, Default)]
pub struct AasAcc {
    samples: u32,
    counts: [BTreeMap<String, u32>; 4],
}

impl AasAcc {
    /// Adds one sample: every row of one `pg_stat_activity` read.
    pub fn add(&mut self, rows: &[ActivityRow]) {
        self.samples += 1;
        for r in rows {
            if let Some((who, ev)) = classify(r) {
                *self.counts[who as usize].entry(ev).or_default() += 1;
            }
        }
    }

    pub fn finish(&self) -> Aas {
        let avg = |m: &BTreeMap<String, u32>| {
            m.iter()
                .map(|(k, &n)| (k.clone(), n as f64 / self.samples.max(1) as f64))
                .collect()
        };
        Aas {
            samples: self.samples,
            sessions: avg(&self.counts[Who::Sessions as usize]),
            checkpointer: avg(&self.counts[Who::Checkpointer as usize]),
            bgwriter: avg(&self.counts[Who::BgWriter as usize]),
            log_writer: avg(&self.counts[Who::WalWriter as usize]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(bt: &str, app: &str, state: Option<&str>, ev: Option<(&str, &str)>) -> ActivityRow {
        ActivityRow {
            backend_type: bt.into(),
            application_name: app.into(),
            state: state.map(Into::into),
            wait_event_type: ev.map(|e| e.0.into()),
            wait_event: ev.map(|e| e.1.into()),
        }
    }

    #[test]
    fn classification_table() {
        let s = |state, ev| row("client backend", SESSION_APP, state, ev);
        for (r, want) in [
            (
                s(Some("active"), Some(("IO", "DataFileRead"))),
                Some((Who::Sessions, "DataFileRead")),
            ),
            (s(Some("active"), None), Some((Who::Sessions, "CPU"))),
            (s(Some("idle"), Some(("Client", "ClientRead"))), None),
            (s(Some("idle"), None), None),
            (
                s(Some("active"), Some(("LWLock", "WALWrite"))),
                Some((Who::Sessions, "WALWriteLock")),
            ),
            (
                s(Some("active"), Some(("LWLock", "BufferIO"))),
                Some((Who::Sessions, "BufferIO")),
            ),
            (row("client backend", "psql", Some("active"), None), None),
            (
                row(
                    "checkpointer",
                    "",
                    None,
                    Some(("Activity", "CheckpointerMain")),
                ),
                None,
            ),
            (
                row("checkpointer", "", None, Some(("IO", "DataFileSync"))),
                Some((Who::Checkpointer, "DataFileSync")),
            ),
            (
                row("background writer", "", None, None),
                Some((Who::BgWriter, "CPU")),
            ),
            (
                row("walwriter", "", None, Some(("IO", "WALWrite"))),
                Some((Who::WalWriter, "WALWrite")),
            ),
            (row("autovacuum launcher", "", None, None), None),
        ] {
            let got = classify(&r);
            assert_eq!(got.as_ref().map(|(w, e)| (*w, e.as_str())), want, "{r:?}");
        }
    }

    #[test]
    fn aas_is_process_samples_over_samples_taken() {
        let read = row(
            "client backend",
            SESSION_APP,
            Some("active"),
            Some(("IO", "DataFileRead")),
        );
        let cpu = row("client backend", SESSION_APP, Some("active"), None);
        let wal = row("walwriter", "", None, Some(("IO", "WALWrite")));
        let mut acc = AasAcc::default();
        acc.add(&[read.clone(), read.clone(), cpu.clone()]);
        acc.add(&[read.clone(), wal]);
        acc.add(&[]);
        acc.add(&[cpu]);
        let a = acc.finish();
        assert_eq!(a.samples, 4);
        assert_eq!(a.sessions["DataFileRead"], 0.75);
        assert_eq!(a.sessions["CPU"], 0.5);
        assert_eq!(a.sessions_total(), 1.25);
        assert_eq!(a.log_writer["WALWrite"], 0.25);
        assert!(a.checkpointer.is_empty() && a.bgwriter.is_empty());
        assert_eq!(AasAcc::default().finish(), Aas::default());

        // Combining equals having sampled everything into one accumulator.
        let mut b = AasAcc::default();
        b.add(std::slice::from_ref(&read));
        let both = Aas::combine([&a, &b.finish()]);
        assert_eq!(both.samples, 5);
        assert_eq!(both.sessions["DataFileRead"], 4.0 / 5.0);
        assert_eq!(both.log_writer["WALWrite"], 1.0 / 5.0);
    }
}
