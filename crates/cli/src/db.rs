//! `iogauge db`: the SLOB method on a real database (PostgreSQL or MariaDB, each behind
//! `iogauge_db::engine`'s seam) — `setup`, `run`, `reset`, `drop`.

pub mod args;
pub mod options;
pub mod run;
mod setup;

use crate::exit_code::INTERRUPTED;
use args::{pg_set_error, DbArgs, DbCommand};
use iogauge_db::DbError;
use options::DbRunOptions;
use std::process::ExitCode;

pub fn db(a: DbArgs) -> anyhow::Result<ExitCode> {
    let result = match a.cmd {
        DbCommand::Setup(s) => setup::setup(s),
        DbCommand::Run(r) => DbRunOptions::from_args(r)
            .map_err(iogauge_session::ranks::said_once)
            .and_then(|o| {
                // Before the private server starts: it is then born in the job's cgroup.
                iogauge_session::enter_job(&data_devices(&o.place));
                run::run(o)
            }),
        DbCommand::Reset(w) => setup::reset(w),
        DbCommand::Drop(w) => setup::drop_all(w),
    };
    match result {
        Err(e) if is_interrupted(&e) => {
            eprintln!("error: {}", crate::exit::chain_line(&e));
            Ok(ExitCode::from(INTERRUPTED))
        }
        Err(e) => Err(match e.downcast_ref::<DbError>() {
            // A setting the server refused, named as the user gave it.
            Some(p @ DbError::BadSetting { .. }) => pg_set_error(p).into(),
            _ => e,
        }),
        ok => ok,
    }
}

/// Whether Ctrl-C ended the work (anywhere in the error's chain).
/// The block devices under a private server's directory (the nearest existing one: `db
/// run` may create it), the whole chain; none for a server at a DSN.
fn data_devices(place: &iogauge_db::Place) -> Vec<String> {
    let iogauge_db::Place::Private(dir) = place else {
        return Vec::new();
    };
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
    dir.ancestors()
        .find_map(iogauge_probe::device_of_path)
        .map_or_else(Vec::new, |d| iogauge_probe::devices_under(&d))
}

fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<DbError>()
            .is_some_and(DbError::is_interrupted)
    })
}
