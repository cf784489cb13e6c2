//! What every connection to the store shares, a writer's or a reader's: how long it waits for
//! a writer, and SQLite's own view of what the file holds (the header's judgement, `locate`,
//! again, now with a WAL's newer pages).

use super::locate::Identity;
use super::schema::APPLICATION_ID;
use rusqlite::Connection;
use std::time::Duration;

/// How long a writer waits for another one before giving up with "database is locked".
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// [`super::locate::identity_of_header`]'s judgement from SQLite's view, which includes a
/// WAL's newer pages.
pub(super) fn identity(conn: &Connection) -> rusqlite::Result<Identity> {
    let app: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let version: i32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let objects: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    Ok(match app {
        APPLICATION_ID => Identity::Ours { version },
        0 if objects == 0 => Identity::Empty,
        other => Identity::foreign_app(other),
    })
}
