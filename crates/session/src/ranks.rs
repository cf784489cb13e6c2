//! One job on this process alone or on the ranks of an MPI launcher (`mpirun -np N iogauge
//! run …`), as IOR runs one: the [`Team`] a measuring command joins first. On one process
//! every step below is the step itself; over ranks each step that can fail on one rank is
//! agreed on by all before the next collective one, so a failing rank never leaves the
//! others waiting, and only rank 0 opens the store, stores and prints.
//!
//! The launcher is recognised by the environment it gives every rank (Open MPI's
//! `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE`, PMIx's `PMIX_RANK`). A build without the `mpi`
//! feature is always one process; the binary refuses to run under a launcher then.

mod cpu;
#[cfg(feature = "mpi")]
mod gather;
#[cfg(any(feature = "mpi", test))]
mod live;
mod place;
mod quiet;
#[cfg(feature = "mpi")]
mod talk;
mod tree;
#[cfg(feature = "mpi")]
mod world;

pub use cpu::thread_cpu_ms;
#[cfg(feature = "mpi")]
pub use gather::Gathered;
#[cfg(any(feature = "mpi", test))]
pub use live::LiveAgg;
pub use place::{
    hostname, names_a_rank, per_rank, per_rank_text, rank_cores, rank_seed, slice_of, LOST,
};
pub use quiet::{Quiet, RUNTIME, USAGE};
#[cfg(feature = "mpi")]
pub use talk::Talk;
#[cfg(test)]
pub use tree::fold;
pub use tree::{join_rows, lost_rows, Bundle, RankRow, Shape};
#[cfg(feature = "mpi")]
pub use world::World;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The variables an MPI launcher sets for each rank, in the order checked.
pub const LAUNCHER_VARS: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

/// The launcher variable this process was started with, if any.
pub fn launched() -> Option<&'static str> {
    LAUNCHER_VARS
        .into_iter()
        .find(|v| std::env::var_os(v).is_some())
}

/// Whether this process is a rank other than 0 of a launched job (Open MPI's
/// `OMPI_COMM_WORLD_RANK`, PMI's `PMI_RANK`, PMIx's `PMIX_RANK`).
pub fn other_rank() -> bool {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .into_iter()
        .find_map(|v| std::env::var(v).ok())
        .is_some_and(|r| r.trim() != "0")
}

/// A mistake every rank makes alike (the command line's, found before MPI is up): rank 0's
/// to say. The other ranks [`wait_for_lead`] first.
pub fn said_once(e: impl Into<anyhow::Error>) -> anyhow::Error {
    if other_rank() {
        wait_for_lead();
        Quiet(USAGE).into()
    } else {
        e.into()
    }
}

/// How long a rank other than 0 waits before ending on a mistake found before MPI is up.
const LEAD_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A rank other than 0 that found the command line's mistake before MPI is up has no barrier
/// to wait at, and the launcher tears the whole job down as soon as the first rank ends
/// non-zero: ending at once could kill rank 0 before it printed the line (seen in CI with
/// `mpirun -np 3 iogauge watch`). So it waits: rank 0's own exit ends the job, and this rank
/// with it, well before the grace runs out; the grace only matters if rank 0 found no
/// mistake, and then this rank still ends the job.
pub fn wait_for_lead() {
    std::thread::sleep(LEAD_GRACE);
}

/// The processes one job runs on.
pub enum Team {
    /// This process alone.
    Solo,
    /// The ranks of an MPI launcher.
    #[cfg(feature = "mpi")]
    Ranks(Box<World>),
}

impl Team {
    /// The ranks of the launcher this process was started by, or this process alone. `say`
    /// prints an error the way the binary does: a mistake all ranks find alike once MPI is
    /// up is said by rank 0 before every rank ends.
    pub fn join(say: fn(&anyhow::Error)) -> anyhow::Result<Team> {
        #[cfg(feature = "mpi")]
        if launched().is_some() {
            return Ok(Team::Ranks(Box::new(World::init(say)?)));
        }
        let _ = say;
        Ok(Team::Solo)
    }

    pub fn rank(&self) -> u32 {
        match self {
            Team::Solo => 0,
            #[cfg(feature = "mpi")]
            Team::Ranks(w) => w.rank(),
        }
    }

    pub fn size(&self) -> u32 {
        match self {
            Team::Solo => 1,
            #[cfg(feature = "mpi")]
            Team::Ranks(w) => w.size(),
        }
    }

    /// Rank 0, or this process alone: the one that stores and prints.
    pub fn leads(&self) -> bool {
        self.rank() == 0
    }

    /// Over ranks (even one): the job's document records the ranks.
    pub fn ranked(&self) -> bool {
        !matches!(self, Team::Solo)
    }

    /// `r` on this process, once every rank has reached this point: an error here is this
    /// rank's (with its number); an error elsewhere ends this rank too, quietly.
    pub fn agreed<T>(&self, r: anyhow::Result<T>) -> anyhow::Result<T> {
        match self {
            Team::Solo => r,
            #[cfg(feature = "mpi")]
            Team::Ranks(w) => w.agreed(r),
        }
    }

    /// A mistake every rank finds alike: said once, by rank 0 (see [`Team::join`]).
    pub fn said_by_lead(&self, e: anyhow::Error) -> anyhow::Error {
        match self {
            Team::Solo => e,
            #[cfg(feature = "mpi")]
            Team::Ranks(w) => w.said_by_lead(e),
        }
    }

    /// `prepare` on every rank, rank 0 first (a target all ranks share is pre-filled once,
    /// then the others find it ready), agreed at each turn.
    pub fn in_turn<T>(&self, prepare: impl Fn() -> anyhow::Result<T>) -> anyhow::Result<T> {
        match self {
            Team::Solo => prepare(),
            #[cfg(feature = "mpi")]
            Team::Ranks(w) => w.in_turn(prepare),
        }
    }

    /// Raises `stop` on the launcher's teardown too (see `world::stop_on_teardown`, under the `mpi` feature).
    pub fn watch_teardown(&self, stop: &Arc<AtomicBool>) -> anyhow::Result<()> {
        match self {
            Team::Solo => {
                let _ = stop;
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Team::Ranks(_) => world::stop_on_teardown(stop),
        }
    }

    /// " x N ranks" after a job's one-line description over ranks; nothing alone.
    pub fn suffix(&self) -> String {
        if self.ranked() {
            format!(" x {} ranks", self.size())
        } else {
            String::new()
        }
    }
}
