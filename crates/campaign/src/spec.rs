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
//! [smoke]                     # flags (and [smoke.vars] value lists) under --smoke
//! time = "1s"
//!
//! [commands]                  # shell commands, ${var} substituted, IOGAUGE_* in the environment
//! start = "…"                 # once, before the first run
//! pre = "…"                   # before every run (warm-ups too)
//! post = "…"                  # after every run
//! end = "…"                   # once, after the last run
//! reset = "db"                # `iogauge db reset` of the case's cluster before every run
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use toml::{Table, Value};

mod expand;
use expand::{apply_smoke, check_smoke_table, expand, scalar as scalar_text};
pub use expand::{substitute, MAX_CASES};

/// What is wrong with a campaign file, in one sentence that names the key.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct SpecError(pub String);

fn bad<T>(msg: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(msg.into()))
}

/// The iogauge command every run of a campaign uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    #[serde(rename = "run")]
    Run,
    #[serde(rename = "calibrate")]
    Calibrate,
    #[serde(rename = "db run")]
    DbRun,
}

impl Command {
    /// The words after `iogauge`.
    pub fn words(self) -> &'static [&'static str] {
        match self {
            Command::Run => &["run"],
            Command::Calibrate => &["calibrate"],
            Command::DbRun => &["db", "run"],
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words().join(" "))
    }
}

/// When discarded warm-up runs happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Warmup {
    /// One before the first repetition of each case this invocation runs.
    Case,
    /// One before every measured run (for workloads that restart a database every run).
    Run,
    None,
}

/// The order runs are made in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Every repetition of the first case, then the second …
    AsWritten,
    /// Repetition 1 of every case, then repetition 2 … (spreads machine drift over cases).
    Interleaved,
    /// Shuffled, the same way for the same `seed`.
    Random,
}

/// Shell commands around the runs (templates: `${var}` is replaced per case).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commands {
    pub start: Option<String>,
    pub pre: Option<String>,
    pub post: Option<String>,
    pub end: Option<String>,
    /// `reset = "db"`: `iogauge db reset` of the case's cluster before every run.
    pub reset_db: bool,
}

/// One configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    pub name: String,
    /// Variable → value, in declaration order.
    pub vars: Vec<(String, String)>,
    /// The flags after the command words (`--qd 4 --time 10s`).
    pub args: Vec<String>,
}

impl Case {
    pub fn vars_map(&self) -> BTreeMap<String, String> {
        self.vars.iter().cloned().collect()
    }

    /// The value of option `flag` (without dashes) on this case's command line, the last one
    /// if repeated; `Some("")` for a bare flag.
    pub fn option(&self, flag: &str) -> Option<&str> {
        let want = format!("--{flag}");
        let mut found = None;
        for (i, a) in self.args.iter().enumerate() {
            if *a == want {
                found = Some(match self.args.get(i + 1) {
                    Some(v) if !v.starts_with("--") => v.as_str(),
                    _ => "",
                });
            }
        }
        found
    }
}

/// A campaign file, expanded and checked: what `iogauge campaign` runs and the store keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    pub name: String,
    pub description: Option<String>,
    pub command: Command,
    pub repeat: u32,
    pub warmup: Warmup,
    pub order: Order,
    pub seed: u64,
    /// The baseline case's name, or with [`Campaign::baseline_vars`] their description
    /// (`fs=raw`).
    pub baseline: String,
    /// `baseline = { fs = "raw" }`: each case is compared with the case whose variables are
    /// its own with these values; empty for one baseline case.
    #[serde(default)]
    pub baseline_vars: Vec<(String, String)>,
    pub smoke: bool,
    pub cases: Vec<Case>,
    pub commands: Commands,
}

/// Most measured runs (cases × repeat) a campaign may plan: ten thousand cases at the
/// default ten repetitions. Even at one second a run that is more than a day of measuring.
pub const MAX_RUNS: u64 = 100_000;

/// Repetitions at `--smoke` scale.
pub const SMOKE_REPEAT: u32 = 2;

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
    pre: Option<String>,
    post: Option<String>,
    end: Option<String>,
    reset: Option<String>,
}

impl Campaign {
    /// Parses and expands a campaign file. `stem` names the campaign when the file does not;
    /// `smoke` applies the tiny scale (seconds-long runs, [`SMOKE_REPEAT`] repetitions, no
    /// warm-up, small data sets) and names the campaign `NAME-smoke`, so smoke runs never mix
    /// with real ones.
    pub fn parse(text: &str, stem: &str, smoke: bool) -> Result<Campaign, SpecError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let msg: Vec<&str> = e
                .message()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let msg = msg.join(": ");
            let at = e
                .span()
                .map(|s| format!("line {}: ", text[..s.start].lines().count().max(1)))
                .unwrap_or_default();
            SpecError(format!("{at}{msg}"))
        })?;
        let command = match raw.command.as_deref() {
            Some("run") => Command::Run,
            Some("calibrate") => Command::Calibrate,
            Some("db run") => Command::DbRun,
            Some(other) => {
                return bad(format!(
                "command = {other:?} is not a workload: use \"run\", \"calibrate\" or \"db run\""
            ))
            }
            None => {
                return bad(
                    "command is missing: add command = \"run\" (or \"calibrate\", \"db run\")",
                )
            }
        };
        let repeat = match raw.repeat {
            None => 10,
            Some(n) if (1..=1000).contains(&n) => n as u32,
            Some(n) => return bad(format!("repeat = {n}: use a number from 1 to 1000")),
        };
        let warmup = match &raw.warmup {
            None | Some(Value::Boolean(true)) => Warmup::Case,
            Some(Value::Boolean(false)) => Warmup::None,
            Some(Value::String(s)) => match s.as_str() {
                "case" => Warmup::Case,
                "run" => Warmup::Run,
                "none" => Warmup::None,
                _ => return bad(format!("warmup = {s:?}: use \"case\", \"run\" or \"none\"")),
            },
            Some(v) => return bad(format!("warmup = {v}: use \"case\", \"run\" or \"none\"")),
        };
        let order = match raw.order.as_deref() {
            None | Some("interleaved") => Order::Interleaved,
            Some("as-written") => Order::AsWritten,
            Some("random") => Order::Random,
            Some(o) => {
                return bad(format!(
                    "order = {o:?}: use \"as-written\", \"interleaved\" or \"random\""
                ))
            }
        };
        let reset_db = match raw.commands.reset.as_deref() {
            None => false,
            Some("db") if command == Command::DbRun => true,
            Some("db") => return bad("commands.reset = \"db\" needs command = \"db run\""),
            Some(r) => {
                return bad(format!(
                    "commands.reset = {r:?}: only \"db\" is built in; put your own reset in commands.pre"
                ))
            }
        };
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
        let mut repeat = repeat;
        let mut warmup = warmup;
        if smoke {
            apply_smoke(command, &mut options, &mut vars, raw.smoke)?;
            repeat = SMOKE_REPEAT;
            warmup = Warmup::None;
            name.push_str("-smoke");
        } else {
            check_smoke_table(&raw.smoke)?;
        }
        let cases = expand(&raw.case, &vars, &options, &naming)?;
        let runs = cases.len() as u64 * u64::from(repeat);
        if runs > MAX_RUNS {
            return bad(format!(
                "{} cases × repeat = {repeat} make {runs} measured runs; a campaign may have at most {MAX_RUNS}: use fewer values or repetitions",
                cases.len()
            ));
        }
        let (baseline, baseline_vars) = match raw.baseline {
            None => (cases[0].name.clone(), Vec::new()),
            Some(Value::String(b)) if cases.iter().any(|c| c.name == b) => (b, Vec::new()),
            Some(Value::String(b)) => {
                let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
                return bad(format!(
                    "baseline = {b:?} is not a case; the cases are: {}",
                    names.join(", ")
                ));
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
                (text.join(" "), vars)
            }
            Some(other) => {
                return bad(format!(
                    "baseline = {other}: give a case name, or a table of variables such as {{ fs = \"raw\" }}"
                ))
            }
        };
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
            smoke,
            cases,
            commands: Commands {
                start: raw.commands.start,
                pre: raw.commands.pre,
                post: raw.commands.post,
                end: raw.commands.end,
                reset_db,
            },
        };
        c.baselines()?;
        Ok(c)
    }

    /// Identifies what the runs measure (command and each case's name and command line): a
    /// resume is refused when it changed. Repetitions, order, warm-up and baseline may change.
    /// FNV-1a over a canonical text: stable across builds, unlike `std`'s hasher.
    pub fn plan_hash(&self) -> String {
        let mut text = self.command.to_string();
        for c in &self.cases {
            text.push('\n');
            text.push_str(&c.name);
            for a in &c.args {
                text.push('\0');
                text.push_str(a);
            }
        }
        format!("{:016x}", iogauge_stats::fnv1a(text.bytes()))
    }

    /// For every case, the index of the case it is compared with; `None` for a baseline
    /// itself. An error names a case that has no baseline partner.
    pub fn baselines(&self) -> Result<Vec<Option<usize>>, SpecError> {
        if self.baseline_vars.is_empty() {
            let b = self.cases.iter().position(|c| c.name == self.baseline);
            return Ok((0..self.cases.len())
                .map(|i| b.filter(|&b| b != i))
                .collect());
        }
        let sorted = |v: &[(String, String)]| {
            let mut v = v.to_vec();
            v.sort();
            v
        };
        // Each case's variables → its index: one look-up per case, not a scan (linear).
        // The first case with those values wins, as a scan would find it.
        let mut by_vars = std::collections::HashMap::with_capacity(self.cases.len());
        for (i, c) in self.cases.iter().enumerate() {
            by_vars.entry(sorted(&c.vars)).or_insert(i);
        }
        self.cases
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let want: Vec<(String, String)> = sorted(
                    &c.vars
                        .iter()
                        .map(|(k, v)| {
                            let v = self
                                .baseline_vars
                                .iter()
                                .find(|(bk, _)| bk == k)
                                .map_or(v, |(_, bv)| bv);
                            (k.clone(), v.clone())
                        })
                        .collect::<Vec<_>>(),
                );
                match by_vars.get(&want).copied() {
                    Some(j) if j == i => Ok(None),
                    Some(j) => Ok(Some(j)),
                    None => bad(format!(
                        "baseline = {{ {} }}: case {:?} has no counterpart with those values; add that case or choose another baseline",
                        self.baseline_vars
                            .iter()
                            .map(|(k, v)| format!("{k} = {v:?}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        c.name
                    )),
                }
            })
            .collect()
    }

    pub fn case(&self, name: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.name == name)
    }
}

fn check_name(name: &str) -> Result<(), SpecError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return bad(format!(
            "name = {name:?}: use letters, digits, '-', '_' and '.' only"
        ));
    }
    Ok(())
}
