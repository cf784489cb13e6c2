//! MariaDB's average active sessions by wait event, ASH style, from `performance_schema`:
//! every 100 ms each test session's thread and InnoDB's page cleaner, with the wait each is
//! in (`events_waits_current`, an unfinished event), into the same [`AasAcc`] PostgreSQL's
//! sampler fills. A session running a statement but in no wait named below is on CPU; one
//! between statements (`Sleep`) is idle. The diagnosis classes the names (its `waits`
//! module: data-file reads, locks, the log at commit, data-file writes).
//!
//! What 10.11 shows, sampled under SLOB's load with its default instruments (file and
//! table I/O, table locks, `idle`; `wait/synch/…` and metadata locks are off, and there is
//! no instrument on the redo log since 10.8), and how a thread's wait is named, the first
//! that applies:
//!
//! - a file wait: the instrument's last part and its operation, `innodb_data_file read`
//!   (InnoDB's `db file sequential read`), even inside a table wait or a lock;
//! - the session's transaction in `LOCK WAIT` (`information_schema.INNODB_TRX`, which needs
//!   the PROCESS privilege): `innodb_row_lock wait`. InnoDB waits for a row lock on no
//!   instrumented condition, inside the table I/O wait `handler fetch`;
//! - another wait, locks before latches before conditions before table I/O (a metadata
//!   lock's wait holds a condition's): `mdl metadata lock`, `handler fetch`, …;
//! - no wait, in a lock's stage: the stage, `Waiting for table metadata lock`;
//! - no wait, in the Commit stage, on a server whose commits write and sync the redo log
//!   (`innodb_flush_log_at_trx_commit` 1 or 3): `Commit` — the redo's write and fsync and
//!   InnoDB's group commit are not instrumented, so this is where commits wait for the log.
//!   With 0 or 2 a commit syncs nothing and the stage is the commit's CPU.
//!
//! It needs `performance_schema` on with the `events_waits_current` consumer (a private
//! server has both, see `server::DEFAULTS`); a server without them gets no wait events, and
//! the run says so, rather than every session counted on CPU.

use crate::common::aas::{ActivityRow, SESSION_APP};
use mysql::prelude::Queryable;
use mysql::Conn;

/// What the sampler can see on a server with wait events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sight {
    /// InnoDB's transactions (`INNODB_TRX`): which sessions wait for a row lock.
    pub row_locks: bool,
    /// Whether a commit writes and syncs the redo log (`innodb_flush_log_at_trx_commit` 1
    /// or 3), so that a session in the Commit stage waits for it.
    pub commit_syncs: bool,
}

/// What the sampler can see: `None` without performance_schema or its waits consumer.
pub fn available(c: &mut Conn) -> Result<Option<Sight>, mysql::Error> {
    let on: Option<u32> = c.query_first("SELECT @@performance_schema")?;
    if on != Some(1) {
        return Ok(None);
    }
    let consumer: Option<String> = c.query_first(
        "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_current'",
    )?;
    if consumer.as_deref() != Some("YES") {
        return Ok(None);
    }
    // Without PROCESS the table cannot be read: row lock waits stay in their table wait.
    let row_locks = c
        .query_drop("SELECT trx_state FROM information_schema.INNODB_TRX LIMIT 0")
        .is_ok();
    // A server without InnoDB has no such variable: nothing to wait for at commit.
    let flush: Option<u32> = c
        .query_first("SELECT @@innodb_flush_log_at_trx_commit")
        .unwrap_or(None);
    Ok(Some(Sight {
        row_locks,
        commit_syncs: matches!(flush, Some(1 | 3)),
    }))
}

/// The sample's statement for sessions `ids` (their connection ids).
pub fn sample_sql(ids: &[u32], sight: Sight) -> String {
    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
    let sessions = if ids.is_empty() {
        "FALSE".to_string()
    } else {
        format!(
            "(t.PROCESSLIST_ID IN ({}) AND t.PROCESSLIST_COMMAND <> 'Sleep')",
            ids.join(", ")
        )
    };
    let (lock, join) = if sight.row_locks {
        (
            "x.trx_state",
            " LEFT JOIN information_schema.INNODB_TRX x \
             ON x.trx_mysql_thread_id = t.PROCESSLIST_ID AND x.trx_state = 'LOCK WAIT'",
        )
    } else {
        ("NULL", "")
    };
    format!(
        "SELECT t.THREAD_ID, t.NAME, w.EVENT_NAME, w.OPERATION, t.PROCESSLIST_STATE, {lock} \
         FROM performance_schema.threads t \
         LEFT JOIN performance_schema.events_waits_current w \
         ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL{join} \
         WHERE {sessions} OR t.NAME = 'thread/innodb/page_cleaner_thread'"
    )
}

/// A row of [`sample_sql`]: thread id, thread name, the unfinished wait's event and
/// operation, the thread's stage, and `LOCK WAIT` when its transaction waits for a row lock.
pub type WaitRow = (
    u64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The page cleaner, counted as PostgreSQL's background writer.
const CLEANER: &str = "thread/innodb/page_cleaner_thread";

/// Which of a thread's unfinished waits names it: the lowest rank.
fn rank(event: &str) -> u8 {
    match event.split('/').nth(1) {
        Some("io") if event.starts_with("wait/io/file/") => 0,
        Some("lock") => 1,
        Some("synch") if !event.starts_with("wait/synch/cond/") => 2,
        Some("synch") => 3,
        _ => 4,
    }
}

/// A thread as sampled: its name, its best-ranked wait (event, operation), its stage, and
/// whether its transaction waits for a row lock.
#[derive(Default)]
struct Thread<'a> {
    name: &'a str,
    wait: Option<(&'a str, &'a str)>,
    stage: Option<&'a str>,
    row_lock: bool,
}

impl Thread<'_> {
    /// The event the thread counts as; `None` for no wait (CPU, or idle for the cleaner).
    fn event(&self, sight: Sight) -> Option<String> {
        let named = |(e, op): (&str, &str)| {
            let last = e.rsplit('/').next().unwrap_or(e);
            if op.is_empty() {
                last.to_string()
            } else {
                format!("{last} {op}")
            }
        };
        match (self.wait, self.stage) {
            (Some(w), _) if rank(w.0) == 0 => Some(named(w)),
            _ if self.row_lock => Some("innodb_row_lock wait".into()),
            (Some(w), _) => Some(named(w)),
            (None, Some(s)) if s.starts_with("Waiting for ") && s.ends_with(" lock") => {
                Some(s.to_string())
            }
            (None, Some("Commit")) if sight.commit_syncs => Some("Commit".into()),
            _ => None,
        }
    }
}

/// One sample: the rows of [`sample_sql`] as `pg_stat_activity`-like rows, one per thread,
/// named as the module says.
pub fn rows(raw: &[WaitRow], sight: Sight) -> Vec<ActivityRow> {
    let mut by_thread: Vec<(u64, Thread<'_>)> = Vec::new();
    for (id, name, event, op, stage, lock) in raw {
        let slot = match by_thread.iter().position(|(t, _)| t == id) {
            Some(i) => &mut by_thread[i].1,
            None => {
                by_thread.push((*id, Thread::default()));
                &mut by_thread.last_mut().expect("just pushed").1
            }
        };
        slot.name = name;
        slot.stage = slot.stage.or(stage.as_deref());
        slot.row_lock |= lock.as_deref() == Some("LOCK WAIT");
        if let Some(e) = event.as_deref() {
            let better = slot.wait.is_none_or(|(w, _)| rank(e) < rank(w));
            if better {
                slot.wait = Some((e, op.as_deref().unwrap_or("")));
            }
        }
    }
    by_thread
        .into_iter()
        // performance_schema's `idle` is a session waiting for its client's next statement.
        .filter(|(_, t)| t.wait.is_none_or(|(e, _)| e != "idle"))
        .filter_map(|(_, t)| {
            let cleaner = t.name == CLEANER;
            let event = t.event(sight);
            // The page cleaner sleeping between batches is idle: no CPU sample.
            if cleaner && event.is_none() {
                return None;
            }
            Some(ActivityRow {
                backend_type: if cleaner {
                    "background writer".into()
                } else {
                    "client backend".into()
                },
                application_name: if cleaner {
                    String::new()
                } else {
                    SESSION_APP.into()
                },
                state: Some("active".into()),
                wait_event_type: event.as_ref().map(|_| "Wait".to_string()),
                wait_event: event,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::aas::AasAcc;

    const S: &str = "thread/sql/one_connection";
    const SEES: Sight = Sight {
        row_locks: true,
        commit_syncs: true,
    };

    /// A row as 10.11 returned it: (thread, name, (event, operation), stage, trx_state).
    fn raw(
        id: u64,
        name: &str,
        ev: Option<(&str, &str)>,
        stage: Option<&str>,
        trx: Option<&str>,
    ) -> WaitRow {
        (
            id,
            name.into(),
            ev.map(|e| e.0.to_string()),
            ev.map(|e| e.1.to_string()),
            stage.map(Into::into),
            trx.map(Into::into),
        )
    }

    fn aas(rows_: &[WaitRow], sight: Sight) -> iogauge_model::db::aas::Aas {
        let mut acc = AasAcc::default();
        acc.add(&rows(rows_, sight));
        acc.finish()
    }

    #[test]
    fn a_file_read_inside_a_table_wait_is_the_event_and_no_wait_is_cpu() {
        let table = Some(("wait/io/table/sql/handler", "fetch"));
        let read = Some(("wait/io/file/innodb/innodb_data_file", "read"));
        let a = aas(
            &[
                raw(10, S, table, Some("Updating"), None),
                raw(10, S, read, Some("Updating"), None),
                raw(11, S, None, None, None),
                raw(14, S, Some(("idle", "idle")), None, None),
                raw(12, CLEANER, None, None, None),
                raw(
                    13,
                    CLEANER,
                    Some(("wait/io/file/innodb/innodb_data_file", "write")),
                    None,
                    None,
                ),
                raw(15, S, table, Some("Statistics"), None),
            ],
            SEES,
        );
        assert_eq!(a.sessions.get("innodb_data_file read"), Some(&1.0));
        assert_eq!(a.sessions.get("CPU"), Some(&1.0));
        assert_eq!(a.sessions.get("handler fetch"), Some(&1.0));
        assert_eq!(a.bgwriter.get("innodb_data_file write"), Some(&1.0));
        assert_eq!(a.bgwriter.len(), 1, "an idle page cleaner is not sampled");
        assert!(sample_sql(&[3, 4], SEES).contains("PROCESSLIST_ID IN (3, 4)"));
    }

    #[test]
    fn a_row_lock_wait_is_named_inside_its_table_wait_but_not_over_a_file_read() {
        let table = Some(("wait/io/table/sql/handler", "fetch"));
        let rows_ = [
            raw(20, S, table, Some("Updating"), Some("LOCK WAIT")),
            raw(21, S, table, Some("Updating"), Some("LOCK WAIT")),
            raw(
                21,
                S,
                Some(("wait/io/file/innodb/innodb_data_file", "read")),
                Some("Updating"),
                Some("LOCK WAIT"),
            ),
        ];
        let a = aas(&rows_, SEES);
        assert_eq!(a.sessions.get("innodb_row_lock wait"), Some(&1.0));
        assert_eq!(a.sessions.get("innodb_data_file read"), Some(&1.0));
        // Without INNODB_TRX the sample carries no trx_state: the table wait stays.
        let blind = Sight {
            row_locks: false,
            ..SEES
        };
        assert!(sample_sql(&[1], blind).contains("NULL FROM"));
        assert!(sample_sql(&[1], SEES).contains("INNODB_TRX"));
    }

    #[test]
    fn a_metadata_lock_wins_over_its_condition_and_its_stage_names_it_when_off() {
        let stage = Some("Waiting for table metadata lock");
        let a = aas(
            &[
                raw(
                    30,
                    S,
                    Some((
                        "wait/synch/cond/sql/MDL_context::COND_wait_status",
                        "timed_wait",
                    )),
                    stage,
                    None,
                ),
                raw(
                    30,
                    S,
                    Some(("wait/lock/metadata/sql/mdl", "metadata lock")),
                    stage,
                    None,
                ),
                // The default instruments: no wait event, only the stage.
                raw(31, S, None, stage, None),
                raw(
                    32,
                    S,
                    Some(("wait/synch/rwlock/innodb/fil_space_latch", "write_lock")),
                    Some("Updating"),
                    None,
                ),
            ],
            SEES,
        );
        assert_eq!(a.sessions.get("mdl metadata lock"), Some(&1.0));
        assert_eq!(
            a.sessions.get("Waiting for table metadata lock"),
            Some(&1.0)
        );
        assert_eq!(a.sessions.get("fil_space_latch write_lock"), Some(&1.0));
    }

    #[test]
    fn the_commit_stage_is_the_redo_only_where_commits_sync_it() {
        let rows_ = [
            raw(40, S, None, Some("Commit"), None),
            raw(41, S, None, None, None),
        ];
        let a = aas(&rows_, SEES);
        assert_eq!(a.sessions.get("Commit"), Some(&1.0));
        assert_eq!(a.sessions.get("CPU"), Some(&1.0));
        let lazy = Sight {
            commit_syncs: false,
            ..SEES
        };
        assert_eq!(aas(&rows_, lazy).sessions.get("CPU"), Some(&2.0));
    }
}
