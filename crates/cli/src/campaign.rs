//! `iogauge campaign FILE.toml`: runs a campaign's plan, one `iogauge` child process per run
//! (the same command line a user would type, so every flag is checked as usual), each stored
//! by the child together with its case and repetition in one transaction. A rerun resumes
//! where the last one stopped; Ctrl-C keeps every finished run. One runner per campaign and
//! store at a time (a lock beside the store); a password in the file is masked in everything
//! printed or stored, and only the runs it starts see it.

pub mod args;
mod child;
mod hooks;
mod load;
mod machine;
pub mod results;

use crate::exit_code::INTERRUPTED;
use crate::session::print_stdout;
use crate::usage::UsageError;
use anyhow::Context;
use args::CampaignArgs;
use child::{run_child, INTERRUPTED_CODE};
use hooks::Hooks;
use iogauge_campaign::view::Definition;
use iogauge_campaign::{Campaign, PlannedRun};
use iogauge_model::history::RunStatus;
use iogauge_session::{now, stop_flag};
use iogauge_store::{CampaignLock, CampaignRow, CampaignTag, Store};
use load::{CheckLine, Loaded};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Runs the campaign of `a`; `check` parses a case's command line as `iogauge` would, so a
/// bad case fails before anything runs.
pub fn campaign(a: CampaignArgs, check: CheckLine) -> anyhow::Result<ExitCode> {
    let loaded = load::load(&a, check)?;
    let c = &loaded.shown;
    if a.dry_run {
        return dry_run(c, &a);
    }
    let stop = stop_flag()?;
    let mut store = Store::open_resolved(a.store.store.as_deref())?;
    // Before the store is touched: a second runner changes nothing, not even with --fresh.
    let _lock = CampaignLock::acquire(store.path(), &c.name)?;
    if let Some(old) = store.campaign(&c.name)? {
        let has_runs = !store.campaign_runs(&c.name, old.generation)?.is_empty();
        if old.plan_hash != c.plan_hash() && has_runs && !a.fresh {
            return Err(UsageError(format!(
                "campaign {}: {} holds runs of it made with other cases or options; pass --fresh to start over (earlier runs stay in the history) or --name to store this one apart",
                c.name,
                store.path().display()
            ))
            .into());
        }
    }
    let definition = Definition {
        campaign: c.clone(),
        environment: machine::this_machine(),
    };
    let generation = store.save_campaign(
        &CampaignRow {
            name: c.name.clone(),
            generation: 0,
            file: loaded.file.clone(),
            definition: serde_json::to_string(&definition)?,
            plan_hash: c.plan_hash(),
            created_at: now(),
        },
        a.fresh,
    )?;
    let done = done_runs(&store, &c.name, generation)?;
    let plan = c.plan(&done);
    let measured = plan.iter().filter(|p| !p.warmup).count();
    let est: Duration = plan.iter().map(|p| c.estimate(p.case)).sum();
    eprintln!(
        "campaign {}: {} cases × {} repetitions, {} stored, {} runs to go{} (about {})",
        c.name,
        c.cases.len(),
        c.repeat,
        done.len(),
        measured,
        match plan.len() - measured {
            0 => String::new(),
            w => format!(" and {w} warm-up"),
        },
        fmt_duration(est)
    );
    let store_path = store.path().to_path_buf();
    drop(store);
    let hooks = Hooks::new(&loaded.real, &a.file, &store_path)?;
    if !plan.is_empty() {
        hooks.start()?;
    }
    let runner = Runner {
        loaded: &loaded,
        hooks: &hooks,
        store: &store_path,
        stop: &stop,
        generation,
    };
    if let Some(code) = runner.run_all(&plan)? {
        return Ok(code);
    }
    if !plan.is_empty() {
        hooks.end()?;
    }
    let store = Store::open(&store_path)?;
    let view = iogauge_report::gather(&store, &c.name)?;
    print_stdout(&iogauge_report::verdicts_text(&view)).with_context(|| {
        format!(
            "writing the verdicts to stdout (every run is stored in {}: `iogauge report --campaign {}`)",
            store_path.display(),
            c.name
        )
    })?;
    eprintln!(
        "stored in {}; `iogauge report --campaign {}` writes the HTML report",
        store_path.display(),
        c.name
    );
    Ok(ExitCode::SUCCESS)
}

/// Makes the planned runs, one child each, with the hooks around them.
struct Runner<'a> {
    loaded: &'a Loaded,
    hooks: &'a Hooks<'a>,
    store: &'a Path,
    stop: &'a AtomicBool,
    generation: i64,
}

impl Runner<'_> {
    /// Every planned run in order; `Some(exit code)` when the campaign stops before the end.
    fn run_all(&self, plan: &[PlannedRun]) -> anyhow::Result<Option<ExitCode>> {
        let (c, real) = (&self.loaded.shown, &self.loaded.real);
        let stopped = || self.stop.load(Ordering::Relaxed);
        // Ctrl-C reaches a running hook too: that is an interruption, not its failure.
        let hook_failed = |e| {
            if stopped() {
                interrupted(c).map(Some)
            } else {
                Err(e)
            }
        };
        for (i, run) in plan.iter().enumerate() {
            if stopped() {
                return interrupted(c).map(Some);
            }
            let case = &c.cases[run.case];
            let left: Duration = plan[i..].iter().map(|p| c.estimate(p.case)).sum();
            let label = format!(
                "[{}/{}, ~{} left] {} rep {}/{}{}",
                i + 1,
                plan.len(),
                fmt_duration(left),
                case.name,
                run.rep,
                c.repeat,
                if run.warmup { " (warm-up)" } else { "" }
            );
            eprintln!("{label}: iogauge {} {}", c.command, case.args.join(" "));
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
                return interrupted(c).map(Some);
            }
            let code = run_child(real, &real.cases[run.case], &tag, self.store, self.stop)?;
            match code {
                0 => {}
                INTERRUPTED_CODE => return interrupted(c).map(Some),
                n => {
                    return Err(anyhow::anyhow!(
                        "campaign {}: case {:?} repetition {} failed (exit code {n}, its error is above); finished runs are stored, fix the cause and run the campaign again to resume",
                        c.name,
                        case.name,
                        run.rep
                    ))
                }
            }
            if let Err(e) = self.hooks.after_run(&real.cases[run.case], run) {
                return hook_failed(e);
            }
            if !run.warmup {
                let store = Store::open(self.store)?;
                eprintln!("{label}: {}", iogauge_report::run_line(&store, &tag)?);
            }
        }
        if stopped() {
            return interrupted(c).map(Some);
        }
        Ok(None)
    }
}

fn interrupted(c: &Campaign) -> anyhow::Result<ExitCode> {
    eprintln!(
        "campaign {}: interrupted; every finished run is stored, run the same command again to resume",
        c.name
    );
    Ok(ExitCode::from(INTERRUPTED))
}

/// Measured repetitions stored complete in this generation.
fn done_runs(
    store: &Store,
    name: &str,
    generation: i64,
) -> anyhow::Result<BTreeSet<(String, u32)>> {
    Ok(store
        .campaign_runs(name, generation)?
        .into_iter()
        .filter(|r| !r.warmup && r.status == RunStatus::Complete)
        .map(|r| (r.case, r.rep))
        .collect())
}

fn dry_run(c: &Campaign, a: &CampaignArgs) -> anyhow::Result<ExitCode> {
    // Read the store only if it exists: a dry run creates nothing.
    let mut done = BTreeSet::new();
    let mut fresh_needed = false;
    if let Some(path) = Store::locate(a.store.store.as_deref()) {
        if let Some(store) = Store::open_reader(&path)? {
            if let Some(row) = store.campaign(&c.name)? {
                if row.plan_hash != c.plan_hash() && !a.fresh {
                    fresh_needed = true;
                } else if !a.fresh {
                    done = done_runs(&store, &c.name, row.generation)?;
                }
            }
        }
    }
    let plan = c.plan(&done);
    let mut total = Duration::ZERO;
    // Built whole, then written once: one clear error (never a panic) if stdout fails.
    let mut out = format!(
        "{:>4}  {:<30} {:>5}  {:>8}  command\n",
        "#", "case", "rep", "about"
    );
    for (i, p) in plan.iter().enumerate() {
        let case = &c.cases[p.case];
        let est = c.estimate(p.case);
        total += est;
        let _ = writeln!(
            out,
            "{:>4}  {:<30} {:>5}  {:>8}  iogauge {} {}{}",
            i + 1,
            case.name,
            if p.warmup {
                "warm".to_string()
            } else {
                p.rep.to_string()
            },
            fmt_duration(est),
            c.command,
            case.args.join(" "),
            if p.warmup {
                "   (warm-up, discarded)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        out,
        "campaign {}: {} cases × {} repetitions, {} already stored, {} runs to make, about {} (baseline {:?}, order {:?})",
        c.name,
        c.cases.len(),
        c.repeat,
        done.len(),
        plan.len(),
        fmt_duration(total),
        c.baseline,
        c.order
    );
    if fresh_needed {
        let _ = writeln!(out, "note: the store holds runs of {} made with other cases or options; running it needs --fresh or --name", c.name);
    }
    print_stdout(&out).context("writing the plan to stdout")?;
    Ok(ExitCode::SUCCESS)
}

pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=99 => format!("{s} s"),
        100..=5999 => format!("{} min", s.div_ceil(60)),
        _ => format!("{:.1} h", s as f64 / 3600.0),
    }
}
