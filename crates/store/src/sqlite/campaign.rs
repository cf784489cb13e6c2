//! Campaigns in the store: one row per campaign (its file and expanded definition, and a
//! generation that `--fresh` advances), and one link per run saying which case and repetition
//! of which generation it was. A run and its link go in the same transaction
//! ([`super::Store::insert`]), so an interrupted campaign leaves only whole, labelled runs, and
//! a resume knows exactly which repetitions are done.

use super::error::StoreError;
use super::schema::StatusColumn;
use super::store::Store;
use super::vet::write_failed;
use iogauge_model::history::RunStatus;
use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

/// Which campaign run a run is. The campaign runner hands it to each run it starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignTag {
    pub campaign: String,
    pub generation: i64,
    pub case: String,
    /// 1-based repetition (a warm-up run carries the repetition it warms up for).
    pub rep: u32,
    /// Run and discarded: never part of the statistics.
    pub warmup: bool,
}

/// A campaign as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignRow {
    pub name: String,
    pub generation: i64,
    /// The campaign file's text.
    pub file: String,
    /// The expanded definition (JSON), what reports read.
    pub definition: String,
    /// Identifies the plan: a resume with another plan is refused.
    pub plan_hash: String,
    pub created_at: String,
}

/// A run of a campaign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignRunRow {
    pub run_id: i64,
    pub case: String,
    pub rep: u32,
    pub warmup: bool,
    pub status: RunStatus,
}

/// Links run `id` to its campaign run inside the run's transaction.
pub(super) fn link(
    tx: &Transaction<'_>,
    id: i64,
    tag: &CampaignTag,
    status: RunStatus,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO campaign_runs (run_id, campaign, generation, case_name, rep, warmup, status) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id,
            tag.campaign,
            tag.generation,
            tag.case,
            tag.rep,
            tag.warmup,
            status.as_str()
        ],
    )?;
    Ok(())
}

impl Store {
    fn sqlite_err(&self, op: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sqlite {
            path: self.path.clone(),
            op,
            source,
        }
    }

    /// The campaign `name`, if stored.
    pub fn campaign(&self, name: &str) -> Result<Option<CampaignRow>, StoreError> {
        self.conn
            .query_row(
                "SELECT name, generation, file, definition, plan_hash, created_at \
                 FROM campaigns WHERE name = ?1",
                [name],
                |r| {
                    Ok(CampaignRow {
                        name: r.get(0)?,
                        generation: r.get(1)?,
                        file: r.get(2)?,
                        definition: r.get(3)?,
                        plan_hash: r.get(4)?,
                        created_at: r.get(5)?,
                    })
                },
            )
            .optional()
            .map_err(self.sqlite_err("reading a campaign"))
    }

    /// Every stored campaign's name, oldest first.
    pub fn campaign_names(&self) -> Result<Vec<String>, StoreError> {
        let err = self.sqlite_err("listing campaigns");
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM campaigns ORDER BY created_at, name")
            .map_err(&err)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(&err)?;
        rows.collect::<Result<_, _>>().map_err(&err)
    }

    /// Records the campaign `row.name` as `row` says. A new campaign starts at generation 1;
    /// `fresh` starts the next generation of an existing one (its earlier runs stay in the
    /// history but no longer count); otherwise the stored generation is kept and the file,
    /// definition and hash are updated. Returns the generation in force.
    pub fn save_campaign(&mut self, row: &CampaignRow, fresh: bool) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let err = move |source| write_failed(&path, "storing the campaign", source);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&err)?;
        let current: Option<i64> = tx
            .query_row(
                "SELECT generation FROM campaigns WHERE name = ?1",
                [&row.name],
                |r| r.get(0),
            )
            .optional()
            .map_err(&err)?;
        let generation = match current {
            None => 1,
            Some(g) if fresh => g + 1,
            Some(g) => g,
        };
        tx.execute(
            "INSERT INTO campaigns (name, generation, file, definition, plan_hash, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (name) DO UPDATE SET generation = ?2, file = ?3, definition = ?4, \
             plan_hash = ?5, created_at = CASE WHEN ?7 THEN ?6 ELSE created_at END",
            params![
                row.name,
                generation,
                row.file,
                row.definition,
                row.plan_hash,
                row.created_at,
                fresh
            ],
        )
        .map_err(&err)?;
        tx.commit().map_err(&err)?;
        Ok(generation)
    }

    /// The runs of a campaign's generation, in the order they were stored.
    pub fn campaign_runs(
        &self,
        name: &str,
        generation: i64,
    ) -> Result<Vec<CampaignRunRow>, StoreError> {
        let err = self.sqlite_err("listing a campaign's runs");
        let mut stmt = self
            .conn
            .prepare(
                "SELECT run_id, case_name, rep, warmup, status FROM campaign_runs \
                 WHERE campaign = ?1 AND generation = ?2 ORDER BY run_id",
            )
            .map_err(&err)?;
        let rows = stmt
            .query_map(params![name, generation], |r| {
                Ok(CampaignRunRow {
                    run_id: r.get(0)?,
                    case: r.get(1)?,
                    rep: r.get(2)?,
                    warmup: r.get(3)?,
                    status: r.get::<_, StatusColumn>(4)?.0,
                })
            })
            .map_err(&err)?;
        rows.collect::<Result<_, _>>().map_err(&err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewRun;

    fn row(name: &str, hash: &str) -> CampaignRow {
        CampaignRow {
            name: name.into(),
            generation: 0,
            file: "repeat = 3\n".into(),
            definition: "{}".into(),
            plan_hash: hash.into(),
            created_at: "2026-11-23T00:00:00Z".into(),
        }
    }

    fn insert(store: &mut Store, tag: &CampaignTag, status: RunStatus) -> Result<i64, StoreError> {
        insert_any(store, Some(tag), status)
    }

    fn insert_any(
        store: &mut Store,
        tag: Option<&CampaignTag>,
        status: RunStatus,
    ) -> Result<i64, StoreError> {
        let mut doc = crate::sqlite::tests::calibration("t");
        doc.meta_mut().interrupted = status == RunStatus::Interrupted;
        store.insert(&NewRun {
            document: &doc,
            histograms: &[],
            campaign: tag,
        })
    }

    fn tag(case: &str, rep: u32, warmup: bool, generation: i64) -> CampaignTag {
        CampaignTag {
            campaign: "c".into(),
            generation,
            case: case.into(),
            rep,
            warmup,
        }
    }

    #[test]
    fn generations_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        assert_eq!(store.campaign("c").unwrap(), None);
        assert_eq!(store.save_campaign(&row("c", "h1"), false).unwrap(), 1);
        assert_eq!(store.save_campaign(&row("c", "h1"), false).unwrap(), 1);
        insert(&mut store, &tag("a", 1, true, 1), RunStatus::Complete).unwrap();
        let a1 = insert(&mut store, &tag("a", 1, false, 1), RunStatus::Complete).unwrap();
        // An interrupted repetition may be stored again; a complete one only once.
        insert(&mut store, &tag("a", 2, false, 1), RunStatus::Interrupted).unwrap();
        insert(&mut store, &tag("a", 2, false, 1), RunStatus::Complete).unwrap();
        assert!(insert(&mut store, &tag("a", 1, false, 1), RunStatus::Complete).is_err());
        let runs = store.campaign_runs("c", 1).unwrap();
        assert_eq!(runs.len(), 4);
        assert_eq!(runs[1].run_id, a1);
        assert!(runs[0].warmup && !runs[1].warmup);
        assert_eq!(runs[2].status, RunStatus::Interrupted);

        assert_eq!(store.save_campaign(&row("c", "h2"), true).unwrap(), 2);
        assert_eq!(store.campaign_runs("c", 2).unwrap(), []);
        insert(&mut store, &tag("a", 1, false, 2), RunStatus::Complete).unwrap();
        let c = store.campaign("c").unwrap().unwrap();
        assert_eq!((c.generation, c.plan_hash.as_str()), (2, "h2"));
        assert_eq!(store.campaign_names().unwrap(), ["c"]);
        // Every run stays in the history.
        assert_eq!(store.list().unwrap().len(), 5);
    }

    #[test]
    fn a_version_1_store_is_upgraded_with_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = Store::open(&path).unwrap();
        store
            .conn
            .execute_batch(
                "DROP TABLE campaign_runs; DROP TABLE campaigns; PRAGMA user_version = 1;",
            )
            .unwrap();
        insert(&mut store, &tag("a", 1, false, 1), RunStatus::Complete).unwrap_err();
        insert_any(&mut store, None, RunStatus::Complete).unwrap();
        drop(store);
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
        store.save_campaign(&row("c", "h"), false).unwrap();
        insert(&mut store, &tag("a", 1, false, 1), RunStatus::Complete).unwrap();
        let v: i32 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, super::super::schema::SCHEMA_VERSION);
    }
}
