//! What is left of a campaign: the measured repetitions already stored in its current
//! generation, and the plan of runs still to make. A dry run reads it without creating
//! anything; a real run reads it under the lock.

use crate::error::RunnerError;
use iogauge_campaign::{Campaign, PlannedRun};
use iogauge_model::history::RunStatus;
use iogauge_store::Store;
use std::collections::BTreeSet;
use std::path::Path;

/// The runs still to make, for a dry run.
pub struct Pending {
    /// Measured repetitions stored complete, by case name and repetition.
    pub done: BTreeSet<(String, u32)>,
    /// The runs to make, in order.
    pub plan: Vec<PlannedRun>,
    /// The store holds runs of this name made with another plan: running needs `--fresh`.
    pub fresh_needed: bool,
}

/// The runs campaign `c` still has to make in the store `--store` names (the default store
/// when `None`), starting over when `fresh`. Reads the store only if it exists: a dry run
/// creates nothing.
pub fn pending(c: &Campaign, store: Option<&Path>, fresh: bool) -> Result<Pending, RunnerError> {
    let mut done = BTreeSet::new();
    let mut fresh_needed = false;
    if let Some(path) = Store::locate(store) {
        if let Some(store) = Store::open_reader(&path)? {
            if let Some(row) = store.campaign(&c.name)? {
                if row.plan_hash != c.plan_hash() && !fresh {
                    fresh_needed = true;
                } else if !fresh {
                    done = done_runs(&store, &c.name, row.generation)?;
                }
            }
        }
    }
    let plan = c.plan(&done);
    Ok(Pending {
        done,
        plan,
        fresh_needed,
    })
}

/// Measured repetitions stored complete in this generation.
pub(crate) fn done_runs(
    store: &Store,
    name: &str,
    generation: i64,
) -> Result<BTreeSet<(String, u32)>, RunnerError> {
    Ok(store
        .campaign_runs(name, generation)?
        .into_iter()
        .filter(|r| !r.warmup && r.status == RunStatus::Complete)
        .map(|r| (r.case, r.rep))
        .collect())
}
