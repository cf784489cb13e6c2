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

#[cfg(test)]
mod tests {
    use super::pending;
    use iogauge_campaign::Campaign;
    use iogauge_store::{CampaignRow, Store};

    const QD: &str = r#"
command = "run"
repeat = 2

[vars]
qd = [1, 4]

[options]
target = "./data"
qd = "${qd}"
time = "1s"
"#;

    #[test]
    fn a_missing_store_leaves_every_run_to_make_and_is_not_created() {
        let c = Campaign::parse(QD, "qd", false).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        let p = pending(&c, Some(&store), false).unwrap();
        assert!(p.done.is_empty() && !p.fresh_needed);
        assert_eq!(p.plan.iter().filter(|r| !r.warmup).count(), 4);
        assert!(!store.exists(), "a dry run creates nothing");
    }

    #[test]
    fn a_store_holding_another_plan_needs_fresh() {
        let c = Campaign::parse(QD, "qd", false).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let row = |plan_hash: String| CampaignRow {
            name: c.name.clone(),
            generation: 0,
            file: String::new(),
            definition: "{}".into(),
            plan_hash,
            created_at: "2025-06-01T10:00:00Z".into(),
        };
        let mut store = Store::open(&path).unwrap();
        store.save_campaign(&row("another".into()), false).unwrap();
        drop(store);
        assert!(pending(&c, Some(&path), false).unwrap().fresh_needed);
        let fresh = pending(&c, Some(&path), true).unwrap();
        assert!(!fresh.fresh_needed && fresh.done.is_empty());
        let mut store = Store::open(&path).unwrap();
        store.save_campaign(&row(c.plan_hash()), true).unwrap();
        drop(store);
        let same = pending(&c, Some(&path), false).unwrap();
        assert!(!same.fresh_needed && same.done.is_empty());
        assert_eq!(same.plan.len(), c.plan(&same.done).len());
    }
}
