//! Started by an MPI launcher (`mpirun -np N iogauge run …`): one job over the ranks. The
//! launcher is recognised by the environment it gives every rank (Open MPI's
//! `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE`, PMIx's `PMIX_RANK`); a binary built without the
//! `mpi` feature says how to build one and exits 2 rather than run N unrelated jobs.

#[cfg(feature = "mpi")]
pub mod db;
#[cfg(feature = "mpi")]
pub mod world;

use crate::cli::Command;
use crate::usage::UsageError;

pub use iogauge_session::ranks::{launched, other_rank, said_once, Quiet};

/// The command under a launcher: `run` over the ranks; anything else is refused (exit 2).
pub fn dispatch(var: &str, command: Command) -> anyhow::Result<std::process::ExitCode> {
    #[cfg(feature = "mpi")]
    {
        let _ = var;
        match command {
            Command::Run(a) => crate::run::run(
                crate::run::options::RunOptions::from_args(a).map_err(said_once)?,
            ),
            Command::Calibrate(a) => crate::calibrate::calibrate(
                crate::calibrate::options::CalibrateOptions::from_args(a).map_err(said_once)?,
            ),
            Command::Db(crate::db::args::DbArgs {
                cmd: crate::db::args::DbCommand::Run(r),
            }) => db::db_run(crate::db::options::DbRunOptions::from_args(r).map_err(said_once)?),
            _ => Err(said_once(UsageError(
                "under an MPI launcher only `iogauge run`, `iogauge calibrate` and `iogauge db run` \
                 run across ranks; run other commands (db setup too: once per cluster) without mpirun"
                    .into(),
            ))),
        }
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = command;
        Err(said_once(UsageError(format!(
            "started by an MPI launcher ({var} is set), but this iogauge was built without MPI: \
             build it with `cargo build --release --features mpi` (needs libopenmpi-dev and \
             libclang-dev), or run it without mpirun"
        ))))
    }
}
