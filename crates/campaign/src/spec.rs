//! The campaign file: what it may say, its checks (each error names the key and the fix), and
//! its expansion into cases, each with the command line its runs use.
//!
//! ```toml
//! name = "queue-depth"        # default: the file's name without .toml
//! command = "run"             # run | calibrate | "db run"
//! repeat = 10                 # measured repetitions per case
//! warmup = "case"             # "case" (one discarded run before a case's first), "run", "none"
//! order = "interleaved"       # "as-written" | "interleaved" | "random" (seeded by `seed`)
//! baseline = "qd=1"           # the case ratios are taken against; default the first; or
//!                             # { fs = "raw" }: each case against the case that differs
//!                             # from it only in those variables (per-workload baselines)
//! statistic = "mean"          # the ratio's figure: "mean", or "trimmed" (highest and lowest
//!                             # repetition dropped); it decides the headline and the verdict
//! launcher = "mpirun -np 4"   # every run one job over MPI ranks
//!
//! [vars]                      # the cross product, first variable varying slowest
//! qd = [1, 4, 16]
//!
//! [[case]]                    # explicit cases (optional), each crossed with [vars]
//! name = "outer"
//! region = "0%..25%"
//!
//! [options]                   # the command's flags; ${var} takes a case's value
//! qd = "${qd}"
//! region = "${region}"
//!
//! [stand_in]                  # "db run" only: cases run as `run --like` of another case's
//! cases = { fs = "raw" }      # run (same repetition), the raw device's stand-in; its flags
//! like = { fs = "ext4" }      # in [stand_in.options] (see `spec::stand_in`)
//!
//! [smoke]                     # flags (and [smoke.vars] value lists) under --smoke
//! time = "1s"
//!
//! [commands]                  # shell commands, ${var} substituted, IOGAUGE_* in the environment
//! start = "…"                 # once, before the first run
//! case = "…"                  # once before each case's first run (its warm-up too)
//! pre = "…"                   # before every run (warm-ups too)
//! post = "…"                  # after every run
//! case_end = "…"              # once after each case's last run
//! end = "…"                   # once, after the last run
//! reset = "db"                # `iogauge db reset` of the case's cluster before every run
//! ```

use iogauge_stats::compare::Statistic;
use iogauge_stats::echo::{bound_quoted, quoted};
use serde::Deserialize;
use toml::{Table, Value};

mod expand;
mod stand_in;
mod types;
use expand::{apply_smoke, check_smoke_table, expand, scalar as scalar_text};
pub use expand::{substitute, MAX_CASES};
use types::bad;
pub use types::{
    Campaign, Case, Command, Commands, Order, SpecError, Warmup, MAX_RUNS, SMOKE_REPEAT,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Option<String>,
    description: Option<String>,
    command: Option<String>,
    repeat: Option<i64>,
    warmup: Option<Value>,
    order: Option<String>,
    seed: Option<u64>,
    baseline: Option<Value>,
    statistic: Option<Value>,
    launcher: Option<String>,
    stand_in: Option<Value>,
    #[serde(default)]
    vars: Table,
    #[serde(default)]
    case: Vec<Table>,
    #[serde(default)]
    options: Table,
    #[serde(default)]
    smoke: Table,
    #[serde(default)]
    commands: RawCommands,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCommands {
    start: Option<String>,
    case: Option<String>,
    pre: Option<String>,
    post: Option<String>,
    case_end: Option<String>,
    end: Option<String>,
    reset: Option<String>,
}

impl Campaign {
    /// Parses and expands a campaign file. `stem` names the campaign when the file does not;
    /// `smoke` applies the tiny scale (seconds-long runs, [`SMOKE_REPEAT`] repetitions, no
    /// warm-up, small data sets) and names the campaign `NAME-smoke`, so smoke runs never mix
    /// with real ones.
    pub fn parse(text: &str, stem: &str, smoke: bool) -> Result<Campaign, SpecError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        let command = command(raw.command.as_deref())?;
        let mut repeat = repeat(raw.repeat)?;
        let mut warmup = warmup(raw.warmup.as_ref())?;
        let order = order(raw.order.as_deref())?;
        let statistic = statistic(raw.statistic.as_ref())?;
        let reset_db = reset_db(raw.commands.reset.as_deref(), command)?;
        let launcher = launcher(raw.launcher.as_deref(), reset_db)?;
        let mut name = raw.name.unwrap_or_else(|| stem.to_string());
        check_name(&name)?;
        let mut options = raw.options;
        let mut vars = raw.vars;
        // Names come from the file's own lists, so smoke cases are named as the real ones.
        let naming: Vec<String> = vars
            .iter()
            .filter(|(_, v)| matches!(v, Value::Array(a) if a.len() > 1))
            .map(|(k, _)| k.clone())
            .collect();
        if smoke {
            apply_smoke(command, &mut options, &mut vars, raw.smoke)?;
            repeat = SMOKE_REPEAT;
            warmup = Warmup::None;
            name.push_str("-smoke");
        } else {
            check_smoke_table(&raw.smoke)?;
        }
        let mut cases = expand(&raw.case, &vars, &options, &naming)?;
        if let Some(s) = raw.stand_in {
            stand_in::apply(s, command, &mut cases, smoke)?;
        }
        check_runs(cases.len(), repeat)?;
        let (baseline, baseline_vars) = baseline(raw.baseline, &cases)?;
        let c = Campaign {
            name,
            description: raw.description,
            command,
            repeat,
            warmup,
            order,
            seed: raw.seed.unwrap_or(1),
            baseline,
            baseline_vars,
            statistic,
            launcher,
            smoke,
            cases,
            commands: Commands {
                start: raw.commands.start,
                case: raw.commands.case,
                pre: raw.commands.pre,
                post: raw.commands.post,
                case_end: raw.commands.case_end,
                end: raw.commands.end,
                reset_db,
            },
        };
        c.baselines()?;
        Ok(c)
    }
}

/// A TOML syntax or shape error as one line, prefixed with the line it is on.
fn toml_error(text: &str, e: &toml::de::Error) -> SpecError {
    let msg: Vec<&str> = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    // A type error quotes the whole value it found (`invalid type: string "…"`).
    let msg = bound_quoted(&msg.join(": ")).into_owned();
    let at = e
        .span()
        .map(|s| format!("line {}: ", text[..s.start].lines().count().max(1)))
        .unwrap_or_default();
    SpecError(format!("{at}{msg}"))
}

/// `command = …`, which is required.
fn command(raw: Option<&str>) -> Result<Command, SpecError> {
    match raw {
        Some("run") => Ok(Command::Run),
        Some("calibrate") => Ok(Command::Calibrate),
        Some("db run") => Ok(Command::DbRun),
        Some(other) => bad(format!(
            "command = {} is not a workload: use \"run\", \"calibrate\" or \"db run\"",
            quoted(other)
        )),
        None => bad("command is missing: add command = \"run\" (or \"calibrate\", \"db run\")"),
    }
}

/// `repeat = …`: 1 to 1000, default 10.
fn repeat(raw: Option<i64>) -> Result<u32, SpecError> {
    match raw {
        None => Ok(10),
        Some(n) if (1..=1000).contains(&n) => Ok(n as u32),
        Some(n) => bad(format!("repeat = {n}: use a number from 1 to 1000")),
    }
}

/// `warmup = …`: a word, or `true`/`false` for `"case"`/`"none"`; default `"case"`.
fn warmup(raw: Option<&Value>) -> Result<Warmup, SpecError> {
    match raw {
        None | Some(Value::Boolean(true)) => Ok(Warmup::Case),
        Some(Value::Boolean(false)) => Ok(Warmup::None),
        Some(Value::String(s)) => match s.as_str() {
            "case" => Ok(Warmup::Case),
            "run" => Ok(Warmup::Run),
            "none" => Ok(Warmup::None),
            _ => bad(format!(
                "warmup = {}: use \"case\", \"run\" or \"none\"",
                quoted(s)
            )),
        },
        Some(v) => bad(format!("warmup = {v}: use \"case\", \"run\" or \"none\"")),
    }
}

/// `order = …`, default `"interleaved"`.
fn order(raw: Option<&str>) -> Result<Order, SpecError> {
    match raw {
        None | Some("interleaved") => Ok(Order::Interleaved),
        Some("as-written") => Ok(Order::AsWritten),
        Some("random") => Ok(Order::Random),
        Some(o) => bad(format!(
            "order = {}: use \"as-written\", \"interleaved\" or \"random\"",
            quoted(o)
        )),
    }
}

/// `statistic = …`, default `"mean"`.
fn statistic(raw: Option<&Value>) -> Result<Statistic, SpecError> {
    let got = match raw {
        None => return Ok(Statistic::Mean),
        Some(Value::String(s)) => match Statistic::parse(s) {
            Some(st) => return Ok(st),
            None => quoted(s),
        },
        Some(v) => v.to_string(),
    };
    bad(format!(
        "statistic = {got}: use \"trimmed\" (each case's highest and lowest repetition dropped, the filesystem study's method) or \"mean\" (every repetition)"
    ))
}

/// `launcher = "mpirun -np 4 --hostfile hosts"`: the words put before every run's command
/// (shell quoting); run, calibrate and db run all run across MPI ranks. Not with
/// `commands.reset = "db"`, which resets one cluster, not one per rank.
fn launcher(raw: Option<&str>, reset_db: bool) -> Result<Option<Vec<String>>, SpecError> {
    let Some(text) = raw else {
        return Ok(None);
    };
    let words = match shlex::split(text) {
        Some(w) if !w.is_empty() => w,
        _ => {
            return bad(format!(
                "launcher = {text:?}: give a command such as \"mpirun -np 4 --hostfile hosts\" (quotes balanced)"
            ))
        }
    };
    if reset_db {
        return bad(format!(
            "launcher = {text:?} with commands.reset = \"db\": the reset restores one cluster, not one per rank; reset each rank's cluster in commands.pre instead (a shell command), or leave out the launcher"
        ));
    }
    Ok(Some(words))
}

/// `commands.reset = "db"`, which only a `db run` campaign may ask for.
fn reset_db(raw: Option<&str>, command: Command) -> Result<bool, SpecError> {
    match raw {
        None => Ok(false),
        Some("db") if command == Command::DbRun => Ok(true),
        Some("db") => bad("commands.reset = \"db\" needs command = \"db run\""),
        Some(r) => bad(format!(
            "commands.reset = {r:?}: only \"db\" is built in; put your own reset in commands.pre"
        )),
    }
}

/// At most [`MAX_RUNS`] measured runs.
fn check_runs(cases: usize, repeat: u32) -> Result<(), SpecError> {
    let runs = cases as u64 * u64::from(repeat);
    if runs > MAX_RUNS {
        return bad(format!(
            "{cases} cases × repeat = {repeat} make {runs} measured runs; a campaign may have at most {MAX_RUNS}: use fewer values or repetitions"
        ));
    }
    Ok(())
}

/// `baseline = …` → the baseline's name (or description) and, for a table, its variables.
/// Default: the first case.
fn baseline(
    raw: Option<Value>,
    cases: &[Case],
) -> Result<(String, Vec<(String, String)>), SpecError> {
    match raw {
        None => Ok((cases[0].name.clone(), Vec::new())),
        Some(Value::String(b)) if cases.iter().any(|c| c.name == b) => Ok((b, Vec::new())),
        Some(Value::String(b)) => {
            let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
            bad(format!(
                "baseline = {b:?} is not a case; the cases are: {}",
                names.join(", ")
            ))
        }
        Some(Value::Table(t)) if !t.is_empty() => {
            let mut vars = Vec::new();
            for (k, v) in &t {
                if !cases[0].vars.iter().any(|(n, _)| n == k) {
                    return bad(format!(
                        "baseline.{k}: not a variable of the cases; name one under [vars] or in [[case]]"
                    ));
                }
                vars.push((k.clone(), scalar_text(v, &format!("baseline.{k}"))?));
            }
            let text: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Ok((text.join(" "), vars))
        }
        Some(other) => bad(format!(
            "baseline = {other}: give a case name, or a table of variables such as {{ fs = \"raw\" }}"
        )),
    }
}

fn check_name(name: &str) -> Result<(), SpecError> {
    name_rule(name).or_else(|why| bad(format!("name = {name:?}: {why}")))
}

/// The longest campaign name: it is part of file names (the campaign's lock beside the
/// store, `.STORE.campaign-NAME.lock`, with "-smoke" for a smoke run), which Linux limits to
/// 255 bytes, and a store's own name needs room too.
pub const MAX_NAME: usize = 100;

/// Why `name` cannot name a campaign (the file's `name`, its file name or `--name`).
pub fn name_rule(name: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err("use letters, digits, '-', '_' and '.' only".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!(
            "{} characters; a name has at most {MAX_NAME} characters",
            name.len()
        ));
    }
    Ok(())
}
