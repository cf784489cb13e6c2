//! The ranks of an MPI launcher as one team: MPI started once, each rank's number and host,
//! and the collective steps every command over ranks takes (agreement, a mistake said once,
//! turns, a part sent to rank 0).

use super::quiet::{Quiet, RUNTIME, USAGE};
use super::talk::{Talk, PART};
use super::tree::Shape;
use anyhow::anyhow;
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// MPI, started for this process; finalised when dropped (the communicator first).
pub struct World {
    comm: SimpleCommunicator,
    _universe: Universe,
    rank: u32,
    size: u32,
    say: fn(&anyhow::Error),
}

impl World {
    pub(super) fn init(say: fn(&anyhow::Error)) -> anyhow::Result<World> {
        let universe = mpi::initialize().ok_or_else(|| anyhow!("MPI was initialised already"))?;
        let comm = universe.world();
        Ok(World {
            rank: comm.rank() as u32,
            size: comm.size() as u32,
            comm,
            _universe: universe,
            say,
        })
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// The messages of a running job of `interval` over `shape` (see [`Talk`]).
    pub fn talk(
        &self,
        stop: Arc<AtomicBool>,
        shape: Shape,
        interval: std::time::Duration,
    ) -> Talk<'_> {
        Talk::new(&self.comm, stop, shape, interval)
    }

    /// Whether `ok` holds on every rank (a collective: every rank must call it at this point).
    pub fn all_ok(&self, ok: bool) -> bool {
        let mine = i32::from(ok);
        let mut all = 0i32;
        self.comm
            .all_reduce_into(&mine, &mut all, SystemOperation::min());
        all == 1
    }

    /// See [`super::Team::agreed`].
    pub fn agreed<T>(&self, r: anyhow::Result<T>) -> anyhow::Result<T> {
        let ok = self.all_ok(r.is_ok());
        match r {
            Err(e) => Err(e.context(format!("rank {}", self.rank))),
            Ok(_) if !ok => Err(anyhow!(Quiet(RUNTIME))),
            ok => ok,
        }
    }

    /// A mistake every rank finds alike once MPI is up: rank 0 says it, then all end together
    /// (a rank ending first would have the launcher tear the job down before rank 0 printed).
    pub fn said_by_lead(&self, e: anyhow::Error) -> anyhow::Error {
        if self.rank == 0 {
            (self.say)(&e);
        }
        self.comm.barrier();
        Quiet(USAGE).into()
    }

    /// See [`super::Team::in_turn`].
    pub fn in_turn<T>(&self, prepare: impl Fn() -> anyhow::Result<T>) -> anyhow::Result<T> {
        let mine = |turn: bool| turn.then(&prepare);
        let first = self.agreed(mine(self.rank == 0).transpose())?;
        match self.agreed(mine(self.rank != 0).transpose())? {
            Some(t) => Ok(t),
            None => first.ok_or_else(|| anyhow!("rank 0 prepared no targets")),
        }
    }

    /// Every rank at this point.
    pub fn barrier(&self) {
        self.comm.barrier();
    }

    /// A rank other than 0: its part, to rank 0.
    pub fn send_part(&self, bytes: &[u8]) {
        self.comm.process_at_rank(0).send_with_tag(bytes, PART);
    }

    /// Rank 0: rank `r`'s next part, waited for.
    pub fn receive_part(&self, r: u32) -> Vec<u8> {
        self.comm
            .process_at_rank(r as i32)
            .receive_vec_with_tag::<u8>(PART)
            .0
    }

    /// `order` as rank 0 has it, on every rank.
    pub fn broadcast(&self, order: &mut [u64]) {
        self.comm.process_at_rank(0).broadcast_into(order);
    }
}

/// Under a launcher, SIGCONT stops the job too: Open MPI's mpirun, when a rank dies, sends
/// the others SIGCONT, then SIGTERM a second later, then SIGKILL a second after that; taking
/// the first as the stop leaves rank 0 the time to store what the ranks alive measured. (A
/// job resumed after Ctrl-Z ends too: its figures were paused anyway.)
pub fn stop_on_teardown(stop: &Arc<AtomicBool>) -> anyhow::Result<()> {
    signal_hook::flag::register(signal_hook::consts::SIGCONT, Arc::clone(stop))?;
    Ok(())
}
