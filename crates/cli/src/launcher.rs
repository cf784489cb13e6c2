//! Started by an MPI launcher (`mpirun -np N iogauge run …`): the measuring commands run as
//! one job over the ranks (the session joins them: `iogauge_session::ranks`); any other
//! command, or a binary built without the `mpi` feature, is refused once (exit 2) rather than
//! run N unrelated jobs.

use crate::cli::Command;
use crate::db::args::{DbArgs, DbCommand};
use crate::usage::UsageError;

use iogauge_session::ranks::{launched, said_once};

/// Whether `command` may run under the launcher this process was started by, if any.
pub fn check(command: &Command) -> anyhow::Result<()> {
    let Some(var) = launched() else {
        return Ok(());
    };
    if !cfg!(feature = "mpi") {
        return Err(said_once(UsageError(format!(
            "started by an MPI launcher ({var} is set), but this iogauge was built without MPI: \
             build it with `cargo build --release --features mpi` (needs libopenmpi-dev and \
             libclang-dev), or run it without mpirun"
        ))));
    }
    match command {
        Command::Run(_)
        | Command::Calibrate(_)
        | Command::Db(DbArgs {
            cmd: DbCommand::Run(_),
        }) => Ok(()),
        _ => Err(said_once(UsageError(
            "under an MPI launcher only `iogauge run`, `iogauge calibrate` and `iogauge db run` \
             run across ranks; run other commands (db setup too: once per cluster) without mpirun"
                .into(),
        ))),
    }
}
