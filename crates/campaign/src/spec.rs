//! The campaign file: what it may say, its checks (each error names the key and the fix), and
//! its expansion into cases, each with the command line its runs use.
//!
//! ```toml
//! name = "queue-depth"        # default: the file's name without .toml
//! command = "run"             # run | calibrate | "db run"
//! repeat = 10                 # measured repetitions per case
//! warmup = "case"             # "case" (one discarded run before a case's first), "run", "none"
//! order = "interleaved"       # "as-written" | "interleaved" | "random" (seeded by `seed`)
//! baseline = "qd=1"           # the case ratios are taken against; default the first
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
    pub baseline: String,
    pub smoke: bool,
    pub cases: Vec<Case>,
    pub commands: Commands,
}

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
    baseline: Option<String>,
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

/// Flags the campaign runner sets itself.
const RESERVED: &[&str] = &["store", "json"];

impl Campaign {
    /// Parses and expands a campaign file. `stem` names the campaign when the file does not;
    /// `smoke` applies the tiny scale (seconds-long runs, [`SMOKE_REPEAT`] repetitions, no
    /// warm-up, small data sets) and names the campaign `NAME-smoke`, so smoke runs never mix
    /// with real ones.
    pub fn parse(text: &str, stem: &str, smoke: bool) -> Result<Campaign, SpecError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let msg: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
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
            None => return bad("command is missing: add command = \"run\" (or \"calibrate\", \"db run\")"),
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
        let baseline = match raw.baseline {
            None => cases[0].name.clone(),
            Some(b) if cases.iter().any(|c| c.name == b) => b,
            Some(b) => {
                let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
                return bad(format!(
                    "baseline = {b:?} is not a case; the cases are: {}",
                    names.join(", ")
                ));
            }
        };
        Ok(Campaign {
            name,
            description: raw.description,
            command,
            repeat,
            warmup,
            order,
            seed: raw.seed.unwrap_or(1),
            baseline,
            smoke,
            cases,
            commands: Commands {
                start: raw.commands.start,
                pre: raw.commands.pre,
                post: raw.commands.post,
                end: raw.commands.end,
                reset_db,
            },
        })
    }

    /// Identifies what the runs measure (command and each case's name and command line): a
    /// resume is refused when it changed. Repetitions, order, warm-up and baseline may change.
    /// FNV-1a 64 over a canonical text: stable across builds, unlike `std`'s hasher.
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
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
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

/// Flags that make runs long or wait for things; dropped at smoke scale.
const SMOKE_DROPS: &[&str] = &["steady", "steady-window", "steady-timeout", "ios"];

/// The built-in tiny scale per command, then the file's `[smoke]` table over it.
fn apply_smoke(
    command: Command,
    options: &mut Table,
    vars: &mut Table,
    mut smoke: Table,
) -> Result<(), SpecError> {
    options.retain(|k, _| !SMOKE_DROPS.contains(&flag_name(k).as_str()));
    let defaults: &[(&str, &str)] = match command {
        Command::Run => &[("time", "1s"), ("ramp", "0s"), ("size", "64m")],
        Command::Calibrate => &[("point-time", "250ms"), ("size", "64m")],
        Command::DbRun => &[("time", "2s"), ("ramp", "0s"), ("interval", "500ms")],
    };
    for (k, v) in defaults {
        options.retain(|key, _| flag_name(key) != *k);
        options.insert((*k).to_string(), Value::String((*v).to_string()));
    }
    if let Some(v) = smoke.remove("vars") {
        let Value::Table(t) = v else {
            return bad("smoke.vars must be a table of value lists, as [vars] is");
        };
        for (k, v) in t {
            if !vars.contains_key(&k) {
                return bad(format!(
                    "smoke.vars.{k}: there is no variable {k} under [vars] to override"
                ));
            }
            vars.insert(k, v);
        }
    }
    for (k, v) in smoke {
        let name = flag_name(&k);
        options.retain(|key, _| flag_name(key) != name);
        options.insert(k, v);
    }
    Ok(())
}

fn check_smoke_table(smoke: &Table) -> Result<(), SpecError> {
    match smoke.get("vars") {
        Some(Value::Table(_)) | None => Ok(()),
        Some(_) => bad("smoke.vars must be a table of value lists, as [vars] is"),
    }
}

fn flag_name(key: &str) -> String {
    key.replace('_', "-")
}

/// A variable's value as text.
fn scalar(v: &Value, what: &str) -> Result<String, SpecError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Integer(i) => Ok(i.to_string()),
        Value::Float(f) => Ok(f.to_string()),
        Value::Boolean(b) => Ok(b.to_string()),
        _ => bad(format!(
            "{what}: use a string, number or boolean (got {})",
            v.type_str()
        )),
    }
}

/// Cases: every explicit `[[case]]` (or one empty one) crossed with every combination of
/// `[vars]`, first variable varying slowest. A case is named by its `name` (or its own
/// variables) and the `[vars]` that take more than one value: `ext4 sessions=8`.
fn expand(
    explicit: &[Table],
    vars: &Table,
    options: &Table,
    naming: &[String],
) -> Result<Vec<Case>, SpecError> {
    let mut lists: Vec<(String, Vec<String>)> = Vec::new();
    for (k, v) in vars {
        check_var_name(k, "vars")?;
        let values = match v {
            Value::Array(a) if a.is_empty() => {
                return bad(format!("vars.{k} is empty: give it at least one value"))
            }
            Value::Array(a) => a
                .iter()
                .map(|x| scalar(x, &format!("vars.{k}")))
                .collect::<Result<Vec<_>, _>>()?,
            other => vec![scalar(other, &format!("vars.{k}"))?],
        };
        lists.push((k.clone(), values));
    }
    let mut bases: Vec<(Option<String>, Vec<(String, String)>)> = Vec::new();
    for (i, t) in explicit.iter().enumerate() {
        let mut name = None;
        let mut cv = Vec::new();
        for (k, v) in t {
            if k == "name" {
                name = Some(scalar(v, &format!("case {} name", i + 1))?);
                continue;
            }
            check_var_name(k, &format!("case {}", i + 1))?;
            if vars.contains_key(k) {
                return bad(format!(
                    "case {}: {k} is also under [vars]; give it in one place",
                    i + 1
                ));
            }
            cv.push((k.clone(), scalar(v, &format!("case {} {k}", i + 1))?));
        }
        bases.push((name, cv));
    }
    if bases.is_empty() {
        bases.push((None, Vec::new()));
    }
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (k, values) in &lists {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((k.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    let mut cases = Vec::new();
    for (name, base) in &bases {
        for combo in &combos {
            let mut parts: Vec<String> = Vec::new();
            match name {
                Some(n) => parts.push(n.clone()),
                None => parts.extend(base.iter().map(|(k, v)| format!("{k}={v}"))),
            }
            // A variable with a single value names no case apart.
            parts.extend(
                combo
                    .iter()
                    .filter(|(k, _)| naming.contains(k))
                    .map(|(k, v)| format!("{k}={v}")),
            );
            let name = if parts.is_empty() {
                "default".to_string()
            } else {
                parts.join(" ")
            };
            let vars: Vec<(String, String)> = base.iter().chain(combo).cloned().collect();
            let args = args_of(options, &vars)?;
            if cases.iter().any(|c: &Case| c.name == name) {
                return bad(format!(
                    "two cases are named {name:?}: give each [[case]] its own name"
                ));
            }
            cases.push(Case { name, vars, args });
        }
    }
    Ok(cases)
}

fn check_var_name(k: &str, what: &str) -> Result<(), SpecError> {
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return bad(format!(
            "{what}: variable {k:?} must be letters, digits and '_'"
        ));
    }
    Ok(())
}

/// The command line of one case: `--key value` per option, `${var}` replaced.
fn args_of(options: &Table, vars: &[(String, String)]) -> Result<Vec<String>, SpecError> {
    let mut args = Vec::new();
    for (k, v) in options {
        let flag = flag_name(k);
        if flag.is_empty()
            || !flag
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return bad(format!(
                "options.{k}: not a flag name (lowercase letters, digits, '-')"
            ));
        }
        if RESERVED.contains(&flag.as_str()) {
            return bad(format!(
                "options.{k}: the campaign sets --{flag} itself; remove it (use `iogauge campaign --store`)"
            ));
        }
        let what = format!("options.{k}");
        let values: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            other => vec![other],
        };
        for v in values {
            match v {
                Value::Boolean(true) => args.push(format!("--{flag}")),
                Value::Boolean(false) => {}
                other => {
                    let text = substitute(&scalar(other, &what)?, vars, &what)?;
                    args.push(format!("--{flag}"));
                    args.push(text);
                }
            }
        }
    }
    Ok(args)
}

/// Replaces every `${name}` with the case's value; `$$` is a literal `$`.
pub fn substitute(text: &str, vars: &[(String, String)], what: &str) -> Result<String, SpecError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            rest = r;
        } else if let Some(r) = after.strip_prefix('{') {
            let Some(end) = r.find('}') else {
                return bad(format!("{what}: '${{' without a closing '}}'"));
            };
            let name = &r[..end];
            match vars.iter().find(|(k, _)| k == name) {
                Some((_, v)) => out.push_str(v),
                None => {
                    return bad(format!(
                        "{what}: ${{{name}}} is not a variable of every case; declare it under [vars] or in each [[case]]"
                    ))
                }
            }
            rest = &r[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}
