//! Running a campaign's plan: the store opened and locked, the plan checked against what it
//! holds, the definition saved (a new generation with `--fresh`), then each planned run
//! started as a child between its hooks, and at the end the campaign gathered back. Ctrl-C
//! (or a child interrupted) keeps every finished run; a rerun resumes from them.

use crate::child::{run_child, INTERRUPTED_EXIT};
use crate::error::RunnerError;
use crate::hooks::Hooks;
use crate::machine::this_machine;
use crate::pending::done_runs;
use iogauge_campaign::view::Definition;
use iogauge_campaign::{Campaign, CampaignView, Loaded, PlannedRun};
use iogauge_model::history::RunStatus;
use iogauge_report::gather;
use iogauge_session::now;
use iogauge_store::{CampaignLock, CampaignRow, CampaignTag, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What a runner tells its caller as it goes; the caller decides what to print. Every
/// campaign passed is the masked one.
pub trait Progress {
    /// The caller's error: the runner's own errors become one, and [`Progress::measured`]
    /// may fail with one (the campaign then stops with it).
    type Error: From<RunnerError>;
    /// The plan is made: `done` measured repetitions are already stored, `plan` is left.
    fn planned(&mut self, c: &Campaign, done: usize, plan: &[PlannedRun]);
    /// `plan[i]` is about to start (its hooks first).
    fn starting(&mut self, c: &Campaign, plan: &[PlannedRun], i: usize);
    /// The measured run `plan[i]` (never a warm-up) is stored in `store`, tagged `tag`.
    fn measured(&mut self, store: &Store, tag: &CampaignTag) -> Result<(), Self::Error>;
}

/// One campaign to run.
pub struct Runner<'a> {
    pub loaded: &'a Loaded,
    /// The campaign file: its hooks run with its directory in `IOGAUGE_CAMPAIGN_DIR`.
    pub file: &'a Path,
    /// `--store` (`None`: `$IOGAUGE_STORE` or the default).
    pub store: Option<&'a Path>,
    /// Start over (`--fresh`): earlier runs stay in the history but no longer count.
    pub fresh: bool,
    /// Raised by Ctrl-C: no run starts after it.
    pub stop: &'a AtomicBool,
}

/// How a campaign ended, and where it is stored. Holds the campaign's lock until dropped,
/// so the caller reports the end while no second runner can start.
pub struct Outcome {
    pub end: End,
    pub store: PathBuf,
    _lock: CampaignLock,
}

pub enum End {
    /// Every planned run is stored: the campaign, gathered back.
    Finished(Box<CampaignView>),
    /// Stopped before the end; every finished run is stored.
    Interrupted,
}

/// The store locked and saved to, and the runs left.
struct Prepared {
    store: PathBuf,
    lock: CampaignLock,
    generation: i64,
    plan: Vec<PlannedRun>,
}

impl Runner<'_> {
    /// Runs what is left of the plan, with the hooks around it, and gathers the campaign.
    pub fn run<P: Progress>(&self, progress: &mut P) -> Result<Outcome, P::Error> {
        let Prepared {
            store,
            lock,
            generation,
            plan,
        } = self.prepare(progress)?;
        let hooks = Hooks::new(&self.loaded.real, self.file, &store)?;
        if !plan.is_empty() {
            hooks.start()?;
        }
        let runs = Runs {
            loaded: self.loaded,
            hooks: &hooks,
            store: &store,
            stop: self.stop,
            generation,
        };
        let end = if runs.run_all(&plan, progress)? {
            if !plan.is_empty() {
                hooks.end()?;
            }
            End::Finished(Box::new(self.gather(&store)?))
        } else {
            End::Interrupted
        };
        Ok(Outcome {
            end,
            store,
            _lock: lock,
        })
    }

    /// The campaign as the store holds it now.
    fn gather(&self, store: &Path) -> Result<CampaignView, RunnerError> {
        Ok(gather(&Store::open(store)?, &self.loaded.shown.name)?)
    }

    /// Opens and locks the store, checks the plan against it, saves the definition and makes
    /// the plan of what is left.
    fn prepare(&self, progress: &mut impl Progress) -> Result<Prepared, RunnerError> {
        let c = &self.loaded.shown;
        let mut store = Store::open_resolved(self.store)?;
        // Before the store is touched: a second runner changes nothing, not even with --fresh.
        let lock = CampaignLock::acquire(store.path(), &c.name)?;
        if let Some(old) = store.campaign(&c.name)? {
            let has_runs = !store.campaign_runs(&c.name, old.generation)?.is_empty();
            if old.plan_hash != c.plan_hash() && has_runs && !self.fresh {
                return Err(RunnerError::OtherPlan {
                    name: c.name.clone(),
                    store: store.path().to_path_buf(),
                });
            }
            // The hooks are part of how the runs were made, though not of the plan (older
            // stores hash the plan without them): compared with the stored definition.
            let before = serde_json::from_str::<Definition>(&old.definition).ok();
            let changed = before.map_or(Vec::new(), |d| c.commands.changed(&d.campaign.commands));
            if !changed.is_empty() && has_runs && !self.fresh {
                let hooks: Vec<String> = changed.iter().map(|h| format!("commands.{h}")).collect();
                return Err(RunnerError::OtherHooks {
                    name: c.name.clone(),
                    store: store.path().to_path_buf(),
                    hooks: hooks.join(", "),
                });
            }
        }
        let definition = Definition {
            campaign: c.clone(),
            environment: this_machine(),
        };
        let generation = store.save_campaign(
            &CampaignRow {
                name: c.name.clone(),
                generation: 0,
                file: self.loaded.file.clone(),
                definition: serde_json::to_string(&definition)?,
                plan_hash: c.plan_hash(),
                created_at: now(),
            },
            self.fresh,
        )?;
        let done = done_runs(&store, &c.name, generation)?;
        let plan = c.plan(&done);
        progress.planned(c, done.len(), &plan);
        Ok(Prepared {
            store: store.path().to_path_buf(),
            lock,
            generation,
            plan,
        })
    }
}

/// Makes the planned runs, one child each, with the hooks around them.
struct Runs<'a> {
    loaded: &'a Loaded,
    hooks: &'a Hooks<'a>,
    store: &'a Path,
    stop: &'a AtomicBool,
    generation: i64,
}

impl Runs<'_> {
    /// Every planned run in order; false when the campaign stops before the end.
    fn run_all<P: Progress>(
        &self,
        plan: &[PlannedRun],
        progress: &mut P,
    ) -> Result<bool, P::Error> {
        let (c, real) = (&self.loaded.shown, &self.loaded.real);
        let stopped = || self.stop.load(Ordering::Relaxed);
        // Ctrl-C reaches a running hook too: that is an interruption, not its failure.
        let hook_failed = |e: RunnerError| if stopped() { Ok(false) } else { Err(e.into()) };
        // Each case's first and last run in the plan: where `case` and `case_end` go.
        let (mut first, mut last) = (BTreeMap::new(), BTreeMap::new());
        for (i, r) in plan.iter().enumerate() {
            first.entry(r.case).or_insert(i);
            last.insert(r.case, i);
        }
        for (i, run) in plan.iter().enumerate() {
            if stopped() {
                return Ok(false);
            }
            let case = &c.cases[run.case];
            progress.starting(c, plan, i);
            if first.get(&run.case) == Some(&i) {
                if let Err(e) = self.hooks.case_start(&real.cases[run.case]) {
                    return hook_failed(e);
                }
            }
            if let Err(e) = self.hooks.before_run(&real.cases[run.case], run) {
                return hook_failed(e);
            }
            let tag = CampaignTag {
                campaign: c.name.clone(),
                generation: self.generation,
                case: case.name.clone(),
                rep: run.rep,
                warmup: run.warmup,
            };
            if stopped() {
                return Ok(false);
            }
            let source = self.source_of(run)?;
            let case = &real.cases[run.case];
            let code = run_child(real, case, source, &tag, self.store, self.stop)?;
            match code {
                0 => {}
                INTERRUPTED_EXIT => return Ok(false),
                code => {
                    return Err(RunnerError::RunFailed {
                        name: c.name.clone(),
                        case: c.cases[run.case].name.clone(),
                        rep: run.rep,
                        code,
                    }
                    .into())
                }
            }
            if let Err(e) = self.hooks.after_run(&real.cases[run.case], run) {
                return hook_failed(e);
            }
            if last.get(&run.case) == Some(&i) {
                if let Err(e) = self.hooks.case_end(&real.cases[run.case]) {
                    return hook_failed(e);
                }
            }
            if !run.warmup {
                let store = Store::open(self.store).map_err(RunnerError::from)?;
                progress.measured(&store, &tag)?;
            }
        }
        Ok(!stopped())
    }

    /// A raw stand-in's source: the stored id of its source case's measured run of the same
    /// repetition (the plan puts that run first); `None` for any other case.
    fn source_of(&self, run: &PlannedRun) -> Result<Option<i64>, RunnerError> {
        let c = &self.loaded.shown;
        let Some(like) = &c.cases[run.case].like else {
            return Ok(None);
        };
        let store = Store::open(self.store)?;
        let id = store
            .campaign_runs(&c.name, self.generation)?
            .into_iter()
            .filter(|r| &r.case == like && r.rep == run.rep && !r.warmup)
            .filter(|r| r.status == RunStatus::Complete)
            .map(|r| r.run_id)
            .max();
        match id {
            Some(id) => Ok(Some(id)),
            None => Err(RunnerError::NoSource {
                name: c.name.clone(),
                case: c.cases[run.case].name.clone(),
                like: like.clone(),
                rep: run.rep,
            }),
        }
    }
}
