//! `iogauge campaign FILE.toml`: runs a campaign's plan, one `iogauge` child process per run
//! (the same command line a user would type, so every flag is checked as usual), each stored
//! by the child together with its case and repetition in one transaction. A rerun resumes
//! where the last one stopped; Ctrl-C keeps every finished run.

mod hooks;
pub mod results;

use crate::args::StoreArgs;
use crate::exit::INTERRUPTED;
use crate::options::UsageError;
use crate::session::{now, stop_flag, CAMPAIGN_ENV};
use anyhow::Context;
use hooks::Hooks;
use iogauge_campaign::gather::{self, Definition};
use iogauge_campaign::Campaign;
use iogauge_store::{CampaignRow, CampaignTag, RunStatus, Store};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct CampaignArgs {
    /// The campaign file (TOML): variables, cases, the workload and its options, repetitions.
    pub file: PathBuf,
    /// List the runs still to make and their estimated duration; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Tiny scale to try a campaign in a minute: seconds-long runs, 2 repetitions, no
    /// warm-up, small data sets; stored as NAME-smoke.
    #[arg(long)]
    pub smoke: bool,
    /// Start over: earlier runs of this campaign stay in the history but no longer count.
    #[arg(long)]
    pub fresh: bool,
    /// Store the campaign under this name instead of the file's.
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Reads and expands the campaign file; errors name the file.
fn load(a: &CampaignArgs) -> anyhow::Result<(Campaign, String)> {
    let path = &a.file;
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(UsageError(format!(
                "campaign file {}: not found; give the path of a .toml file (see examples/)",
                path.display()
            ))
            .into())
        }
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("campaign file {}", path.display())))
        }
    };
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("campaign");
    let mut c = Campaign::parse(&text, stem, a.smoke)
        .map_err(|e| UsageError(format!("campaign file {}: {e}", path.display())))?;
    if let Some(n) = &a.name {
        if n.is_empty()
            || !n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(UsageError(format!(
                "--name {n:?}: use letters, digits, '-', '_' and '.' only"
            ))
            .into());
        }
        c.name = n.clone();
    }
    check_cases(&c, path)?;
    Ok((c, text))
}

/// Every case's command line goes through the same parser as a typed one, so a misspelt
/// flag or a bad value fails now, not hours into the campaign.
fn check_cases(c: &Campaign, path: &Path) -> Result<(), UsageError> {
    use clap::Parser;
    for case in &c.cases {
        let argv = std::iter::once("iogauge")
            .chain(c.command.words().iter().copied())
            .chain(case.args.iter().map(String::as_str));
        let msg = match crate::args::Cli::try_parse_from(argv) {
            Err(e) => crate::exit::one_line(&e.to_string()),
            // The checks between flags that `run` and `calibrate` make before touching
            // anything (`db run` checks its own when it starts).
            Ok(cli) => match cli.command {
                crate::args::Command::Run(a) => match crate::options::RunOptions::from_args(a) {
                    Ok(_) => continue,
                    Err(e) => e.0,
                },
                crate::args::Command::Calibrate(a) => {
                    match crate::options::CalibrateOptions::from_args(a) {
                        Ok(_) => continue,
                        Err(e) => e.0,
                    }
                }
                _ => continue,
            },
        };
        return Err(UsageError(format!(
            "campaign file {}: case {:?}: {} (from its [options])",
            path.display(),
            case.name,
            msg.trim_start_matches("error: ")
        )));
    }
    Ok(())
}

pub fn campaign(a: CampaignArgs) -> anyhow::Result<ExitCode> {
    let (c, text) = load(&a)?;
    if a.dry_run {
        return dry_run(&c, &a);
    }
    let stop = stop_flag()?;
    let mut store = Store::open_resolved(a.store.store.as_deref())?;
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
        environment: gather::this_machine(),
    };
    let generation = store.save_campaign(
        &CampaignRow {
            name: c.name.clone(),
            generation: 0,
            file: text,
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
    let hooks = Hooks::new(&c, &a.file, &store_path)?;
    if !plan.is_empty() {
        hooks.start()?;
    }
    for (i, run) in plan.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return interrupted(&c);
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
        if let Err(e) = hooks.before_run(case, run) {
            // Ctrl-C reaches a running hook too: that is an interruption, not its failure.
            return if stop.load(Ordering::Relaxed) {
                interrupted(&c)
            } else {
                Err(e)
            };
        }
        let tag = CampaignTag {
            campaign: c.name.clone(),
            generation,
            case: case.name.clone(),
            rep: run.rep,
            warmup: run.warmup,
        };
        if stop.load(Ordering::Relaxed) {
            return interrupted(&c);
        }
        let code = run_child(&c, case, &tag, &store_path, &stop)?;
        match code {
            0 => {}
            INTERRUPTED_CODE => return interrupted(&c),
            n => {
                return Err(anyhow::anyhow!(
                    "campaign {}: case {:?} repetition {} failed (exit code {n}, its error is above); finished runs are stored, fix the cause and run the campaign again to resume",
                    c.name,
                    case.name,
                    run.rep
                ))
            }
        }
        if let Err(e) = hooks.after_run(case, run) {
            return if stop.load(Ordering::Relaxed) {
                interrupted(&c)
            } else {
                Err(e)
            };
        }
        if !run.warmup {
            let store = Store::open(&store_path)?;
            eprintln!("{label}: {}", results::run_line(&store, &tag)?);
        }
    }
    if stop.load(Ordering::Relaxed) {
        return interrupted(&c);
    }
    if !plan.is_empty() {
        hooks.end()?;
    }
    let store = Store::open(&store_path)?;
    let view = gather::gather(&store, &c.name)?;
    print!("{}", results::verdicts_text(&view));
    eprintln!(
        "stored in {}; `iogauge report --campaign {}` writes the HTML report",
        store_path.display(),
        c.name
    );
    Ok(ExitCode::SUCCESS)
}

const INTERRUPTED_CODE: i32 = INTERRUPTED as i32;

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
        if path.is_file() {
            let store = Store::open(&path)?;
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
    println!(
        "{:>4}  {:<30} {:>5}  {:>8}  command",
        "#", "case", "rep", "about"
    );
    for (i, p) in plan.iter().enumerate() {
        let case = &c.cases[p.case];
        let est = c.estimate(p.case);
        total += est;
        println!(
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
    println!(
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
        println!("note: the store holds runs of {} made with other cases or options; running it needs --fresh or --name", c.name);
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs one child `iogauge` and returns its exit code. Its stdout (the JSON document, which
/// the child also stores) is drained and dropped; its stderr (progress, warnings, errors)
/// passes through. Ctrl-C reaches the child too (same process group on a terminal, and
/// forwarded here otherwise); if this process dies, the kernel interrupts the child.
fn run_child(
    c: &Campaign,
    case: &iogauge_campaign::Case,
    tag: &CampaignTag,
    store: &Path,
    stop: &AtomicBool,
) -> anyhow::Result<i32> {
    let exe = std::env::current_exe().context("finding the iogauge binary")?;
    let mut cmd = Command::new(exe);
    cmd.args(c.command.words())
        .args(&case.args)
        .arg("--json")
        .arg("--store")
        .arg(store)
        .env(CAMPAIGN_ENV, serde_json::to_string(tag)?)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl(2), getppid(2) and _exit(2) are async-signal-safe and touch no memory of
    // the parent. PR_SET_PDEATHSIG only covers a parent that dies after it is set; one that
    // died before shows as a changed parent pid, and the run then never starts.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(INTERRUPTED_CODE);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().context("starting an iogauge run")?;
    let mut out = child.stdout.take().expect("stdout is piped");
    let drain = std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = out.read_to_end(&mut sink);
    });
    let mut forwarded = false;
    let status = loop {
        if let Some(s) = child.try_wait().context("waiting for an iogauge run")? {
            break s;
        }
        if stop.load(Ordering::Relaxed) && !forwarded {
            // SAFETY: kill(2) on our own child's pid, which has not been reaped yet.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = drain.join();
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=99 => format!("{s} s"),
        100..=5999 => format!("{} min", s.div_ceil(60)),
        _ => format!("{:.1} h", s as f64 / 3600.0),
    }
}
