//! MariaDB's average active sessions by wait event, ASH style, from `performance_schema`:
//! every 100 ms each test session's thread and InnoDB's page cleaner, with the wait each is
//! in (`events_waits_current`, an unfinished event), into the same [`AasAcc`] PostgreSQL's
//! sampler fills. A session running a statement but in no instrumented wait is on CPU; one
//! between statements (`Sleep`) is idle. A wait is named by its instrument's last part and
//! its operation: `innodb_data_file read` is InnoDB's `db file sequential read`.
//!
//! It needs `performance_schema` on with the `events_waits_current` consumer (a private
//! server has both, see `server::DEFAULTS`); a server without them gets no wait events, and
//! the run says so, rather than every session counted on CPU.

use crate::sample::aas::{ActivityRow, SESSION_APP};
use mysql::prelude::Queryable;
use mysql::Conn;

/// Whether the server can be sampled: performance_schema on, its waits consumer enabled.
pub fn available(c: &mut Conn) -> Result<bool, mysql::Error> {
    let on: Option<u32> = c.query_first("SELECT @@performance_schema")?;
    if on != Some(1) {
        return Ok(false);
    }
    let consumer: Option<String> = c.query_first(
        "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_current'",
    )?;
    Ok(consumer.as_deref() == Some("YES"))
}

/// The sample's statement for sessions `ids` (their connection ids).
pub fn sample_sql(ids: &[u32]) -> String {
    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
    let sessions = if ids.is_empty() {
        "FALSE".to_string()
    } else {
        format!(
            "(t.PROCESSLIST_ID IN ({}) AND t.PROCESSLIST_COMMAND <> 'Sleep')",
            ids.join(", ")
        )
    };
    format!(
        "SELECT t.THREAD_ID, t.NAME, w.EVENT_NAME, w.OPERATION FROM performance_schema.threads t \
         LEFT JOIN performance_schema.events_waits_current w \
         ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL \
         WHERE {sessions} OR t.NAME = 'thread/innodb/page_cleaner_thread'"
    )
}

/// A row of [`sample_sql`]: thread id, thread name, the unfinished wait's event and operation.
pub type WaitRow = (u64, String, Option<String>, Option<String>);

/// A thread's wait as sampled: its id, its name, and (event, operation) if it is waiting.
type ThreadWait<'a> = (u64, &'a str, Option<(&'a str, &'a str)>);

/// One sample: the rows of [`sample_sql`] as `pg_stat_activity`-like rows, one per thread,
/// its innermost file wait preferred (a table wait encloses the file read it is in).
pub fn rows(raw: &[WaitRow]) -> Vec<ActivityRow> {
    let mut by_thread: Vec<ThreadWait<'_>> = Vec::new();
    for (id, name, event, op) in raw {
        let ev = event.as_deref().map(|e| (e, op.as_deref().unwrap_or("")));
        match by_thread.iter_mut().find(|(t, ..)| t == id) {
            Some(slot) => {
                let file = ev.is_some_and(|(e, _)| e.starts_with("wait/io/file/"));
                if slot.2.is_none() || file {
                    slot.2 = ev;
                }
            }
            None => by_thread.push((*id, name, ev)),
        }
    }
    by_thread
        .into_iter()
        // performance_schema's `idle` is a session waiting for its client's next statement.
        .filter(|(_, _, ev)| !ev.is_some_and(|(e, _)| e == "idle"))
        .map(|(_, name, ev)| {
            let cleaner = name == "thread/innodb/page_cleaner_thread";
            let event = ev.map(|(e, op)| {
                let last = e.rsplit('/').next().unwrap_or(e);
                if op.is_empty() {
                    last.to_string()
                } else {
                    format!("{last} {op}")
                }
            });
            ActivityRow {
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
                // The page cleaner sleeping between batches is idle: no CPU sample.
                state: Some(
                    if cleaner && event.is_none() {
                        "idle"
                    } else {
                        "active"
                    }
                    .into(),
                ),
                wait_event_type: event.as_ref().map(|_| "IO".to_string()),
                wait_event: event,
            }
        })
        .filter(|r| !(r.backend_type == "background writer" && r.wait_event.is_none()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::aas::AasAcc;

    fn raw(
        id: u64,
        name: &str,
        ev: Option<(&str, &str)>,
    ) -> (u64, String, Option<String>, Option<String>) {
        (
            id,
            name.into(),
            ev.map(|e| e.0.to_string()),
            ev.map(|e| e.1.to_string()),
        )
    }

    #[test]
    fn a_file_read_inside_a_table_wait_is_the_event_and_no_wait_is_cpu() {
        let s = "thread/sql/one_connection";
        let sample = rows(&[
            raw(10, s, Some(("wait/io/table/sql/handler", "fetch"))),
            raw(
                10,
                s,
                Some(("wait/io/file/innodb/innodb_data_file", "read")),
            ),
            raw(11, s, None),
            raw(14, s, Some(("idle", "idle"))),
            raw(12, "thread/innodb/page_cleaner_thread", None),
            raw(
                13,
                "thread/innodb/page_cleaner_thread",
                Some(("wait/io/file/innodb/innodb_data_file", "write")),
            ),
        ]);
        let mut acc = AasAcc::default();
        acc.add(&sample);
        let a = acc.finish();
        assert_eq!(a.sessions.get("innodb_data_file read"), Some(&1.0));
        assert_eq!(a.sessions.get("CPU"), Some(&1.0));
        assert_eq!(a.bgwriter.get("innodb_data_file write"), Some(&1.0));
        assert_eq!(a.bgwriter.len(), 1, "an idle page cleaner is not sampled");
        assert!(sample_sql(&[3, 4]).contains("PROCESSLIST_ID IN (3, 4)"));
    }
}
