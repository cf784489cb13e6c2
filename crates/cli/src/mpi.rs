//! Started by an MPI launcher (`mpirun -np N iogauge run …`): one job over the ranks. The
//! launcher is recognised by the environment it gives every rank (Open MPI's
//! `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE`, PMIx's `PMIX_RANK`); a binary built without the
//! `mpi` feature says how to build one and exits 2 rather than run N unrelated jobs.

#[cfg(feature = "mpi")]
pub mod calibrate;
#[cfg(feature = "mpi")]
pub mod db;
#[cfg(feature = "mpi")]
pub mod ranks;
#[cfg(feature = "mpi")]
pub mod world;

use crate::cli::Command;
use crate::usage::UsageError;

/// The variables an MPI launcher sets for each rank, in the order checked.
pub const LAUNCHER_VARS: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

/// Under a launcher every rank reads the same command line: a mistake in it is said once, by
/// rank 0, and the other ranks end with the same code saying nothing (as they do when another
/// rank failed and said why). `main` prints no line for this error.
#[derive(Debug, thiserror::Error)]
#[error("said by another rank")]
pub struct Quiet(pub u8);

/// Whether this process is a rank other than 0 of a launched job (Open MPI's
/// `OMPI_COMM_WORLD_RANK`, PMI's `PMI_RANK`, PMIx's `PMIX_RANK`).
pub fn other_rank() -> bool {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .into_iter()
        .find_map(|v| std::env::var(v).ok())
        .is_some_and(|r| r.trim() != "0")
}

/// A mistake every rank makes alike (the command line's): rank 0's to say.
pub fn said_once(e: impl Into<anyhow::Error>) -> anyhow::Error {
    if other_rank() {
        Quiet(crate::exit_code::USAGE).into()
    } else {
        e.into()
    }
}

/// The launcher variable this process was started with, if any.
pub fn launched() -> Option<&'static str> {
    LAUNCHER_VARS
        .into_iter()
        .find(|v| std::env::var_os(v).is_some())
}

/// The command under a launcher: `run` over the ranks; anything else is refused (exit 2).
pub fn dispatch(var: &str, command: Command) -> anyhow::Result<std::process::ExitCode> {
    #[cfg(feature = "mpi")]
    {
        let _ = var;
        match command {
            Command::Run(a) => ranks::run(
                crate::run::options::RunOptions::from_args(a).map_err(said_once)?,
            ),
            Command::Calibrate(a) => calibrate::calibrate(
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
