//! The checked campaign: its cases, command, order, warm-up and baseline, and the error
//! every check returns. Parsing (`spec`) and expansion (`spec::expand`) both build these, so
//! they live apart from both.

use iogauge_stats::compare::Statistic;
use iogauge_stats::echo::quoted;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What is wrong with a campaign file, in one sentence that names the key.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct SpecError(pub String);

pub(super) fn bad<T>(msg: impl Into<String>) -> Result<T, SpecError> {
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
    /// Once before each case's first run of the plan (its warm-up included): a per-case setup
    /// (a filesystem made, a cluster loaded), with the case's variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    pub pre: Option<String>,
    pub post: Option<String>,
    /// Once after each case's last run of the plan: the per-case setup undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_end: Option<String>,
    pub end: Option<String>,
    /// `reset = "db"`: `iogauge db reset` of the case's cluster before every run.
    pub reset_db: bool,
}

impl Commands {
    /// The hooks (`commands.NAME`) that differ from `old`'s: a resume with changed hooks
    /// would mix runs made around different commands (a cache dropped or not, another
    /// scheduler) under one case.
    pub fn changed(&self, old: &Commands) -> Vec<&'static str> {
        let pairs = [
            ("start", &self.start, &old.start),
            ("case", &self.case, &old.case),
            ("pre", &self.pre, &old.pre),
            ("post", &self.post, &old.post),
            ("case_end", &self.case_end, &old.case_end),
            ("end", &self.end, &old.end),
        ];
        let mut out: Vec<&'static str> = pairs
            .into_iter()
            .filter(|(_, a, b)| a != b)
            .map(|(n, _, _)| n)
            .collect();
        if self.reset_db != old.reset_db {
            out.push("reset");
        }
        out
    }

    /// Whether the campaign runs any shell command of the file's.
    pub fn any_shell(&self) -> bool {
        [
            &self.start,
            &self.case,
            &self.pre,
            &self.post,
            &self.case_end,
            &self.end,
        ]
        .iter()
        .any(|c| c.is_some())
    }
}

/// One configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    pub name: String,
    /// Variable → value, in declaration order.
    pub vars: Vec<(String, String)>,
    /// The flags after the command words (`--qd 4 --time 10s`).
    pub args: Vec<String>,
    /// A raw stand-in (`[stand_in]` of a `db run` campaign): this case runs `iogauge run
    /// --like` of the named case's run of the same repetition, with `args` from
    /// `[stand_in.options]`. Stored definitions from before it have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub like: Option<String>,
}

impl Case {
    /// The command this case's runs use: `run` for a raw stand-in, else the campaign's.
    pub fn command(&self, campaign: Command) -> Command {
        if self.like.is_some() {
            Command::Run
        } else {
            campaign
        }
    }

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
    /// `statistic = "trimmed" | "mean"`: the figure each side's ratio is of, which makes the
    /// headline and the verdict. Definitions stored before it existed used the mean.
    #[serde(default)]
    pub statistic: Statistic,
    /// `launcher = "mpirun -np 4 …"`: the words put before every run's command, so each run
    /// is one job over MPI ranks (the launcher must pass `IOGAUGE_CAMPAIGN` to rank 0:
    /// Open MPI's ranks on the launching host inherit it, `-x IOGAUGE_CAMPAIGN` sends it to
    /// others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<Vec<String>>,
    pub smoke: bool,
    pub cases: Vec<Case>,
    pub commands: Commands,
}

/// Most measured runs (cases × repeat) a campaign may plan: ten thousand cases at the
/// default ten repetitions. Even at one second a run that is more than a day of measuring.
pub const MAX_RUNS: u64 = 100_000;

/// Repetitions at `--smoke` scale.
pub const SMOKE_REPEAT: u32 = 2;

impl Campaign {
    /// Identifies what the runs measure (launcher, command and each case's name and command
    /// line): a
    /// resume is refused when it changed. Repetitions, order, warm-up, baseline and statistic
    /// may change.
    /// FNV-1a over a canonical text: stable across builds, unlike `std`'s hasher.
    pub fn plan_hash(&self) -> String {
        let mut text = self.command.to_string();
        // Over ranks, the launcher is part of what is measured (how many ranks, where).
        for w in self.launcher.iter().flatten() {
            text.push('\0');
            text.push_str(w);
        }
        for c in &self.cases {
            text.push('\n');
            text.push_str(&c.name);
            // A stand-in replays another case: which one is part of what it measures.
            if let Some(like) = &c.like {
                text.push_str("\0like\0");
                text.push_str(like);
            }
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
                        "baseline = {{ {} }}: case {} has no counterpart with those values; add that case or choose another baseline",
                        self.baseline_vars
                            .iter()
                            .map(|(k, v)| format!("{k} = {}", quoted(v)))
                            .collect::<Vec<_>>()
                            .join(", "),
                        quoted(&c.name)
                    )),
                }
            })
            .collect()
    }

    pub fn case(&self, name: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.name == name)
    }
}
