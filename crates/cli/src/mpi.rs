//! Started by an MPI launcher (`mpirun -np N iogauge run …`): one job over the ranks. The
//! launcher is recognised by the environment it gives every rank (Open MPI's
//! `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE`, PMIx's `PMIX_RANK`); a binary built without the
//! `mpi` feature says how to build one and exits 2 rather than run N unrelated jobs.

#[cfg(feature = "mpi")]
pub mod calibrate;
#[cfg(feature = "mpi")]
pub mod ranks;
#[cfg(feature = "mpi")]
pub mod world;

use crate::cli::Command;
use crate::usage::UsageError;

/// The variables an MPI launcher sets for each rank, in the order checked.
pub const LAUNCHER_VARS: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

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
            Command::Run(a) => ranks::run(crate::run::options::RunOptions::from_args(a)?),
            Command::Calibrate(a) => calibrate::calibrate(
                crate::calibrate::options::CalibrateOptions::from_args(a)?,
            ),
            _ => Err(UsageError(
                "under an MPI launcher only `iogauge run` and `iogauge calibrate` run across ranks \
                 (db run across ranks is not built yet); run other commands without mpirun"
                    .into(),
            )
            .into()),
        }
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = command;
        Err(UsageError(format!(
            "started by an MPI launcher ({var} is set), but this iogauge was built without MPI: \
             build it with `cargo build --release --features mpi` (needs libopenmpi-dev and \
             libclang-dev), or run it without mpirun"
        ))
        .into())
    }
}
