//! Expanding a campaign file: `[[case]]` × `[vars]` into named cases, `[options]` into each
//! case's command line with `${var}` substituted, and the `--smoke` scale.

use super::types::{bad, Case, Command, SpecError};
use std::collections::HashSet;
use toml::{Table, Value};

/// Flags the campaign runner sets itself.
const RESERVED: &[&str] = &["store", "json"];

/// Flags that make runs long or wait for things; dropped at smoke scale.
const SMOKE_DROPS: &[&str] = &["steady", "steady-window", "steady-timeout", "ios"];

/// The built-in tiny scale per command, then the file's `[smoke]` table over it.
pub(super) fn apply_smoke(
    command: Command,
    options: &mut Table,
    vars: &mut Table,
    mut smoke: Table,
) -> Result<(), SpecError> {
    options.retain(|k, _| !SMOKE_DROPS.contains(&flag_name(k).as_str()));
    let defaults: &[(&str, &str)] = match command {
        Command::Run => &[("time", "1s"), ("ramp", "0s"), ("size", "64m")],
        Command::Calibrate => &[("point-time", "500ms"), ("size", "64m")],
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

pub(super) fn check_smoke_table(smoke: &Table) -> Result<(), SpecError> {
    match smoke.get("vars") {
        Some(Value::Table(_)) | None => Ok(()),
        Some(_) => bad("smoke.vars must be a table of value lists, as [vars] is"),
    }
}

fn flag_name(key: &str) -> String {
    key.replace('_', "-")
}

/// A variable's value as text.
pub(super) fn scalar(v: &Value, what: &str) -> Result<String, SpecError> {
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

/// Variable → value pairs, in declaration order.
type Vars = Vec<(String, String)>;

/// Cases: every explicit `[[case]]` (or one empty one) crossed with every combination of
/// `[vars]`, first variable varying slowest. A case is named by its `name` (or its own
/// variables) and the `[vars]` that take more than one value: `ext4 sessions=8`.
pub(super) fn expand(
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
    let mut bases: Vec<(Option<String>, Vars)> = Vec::new();
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
    check_size(bases.len(), &lists)?;
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
    let mut cases = Vec::with_capacity(bases.len() * combos.len());
    // Names seen so far: a set, so naming n cases is linear, not n² comparisons.
    let mut names = HashSet::with_capacity(cases.capacity());
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
            if !names.insert(name.clone()) {
                return bad(format!(
                    "two cases are named {name:?}: give each [[case]] its own name"
                ));
            }
            cases.push(Case {
                name,
                vars,
                args,
                like: None,
            });
        }
    }
    Ok(cases)
}

/// Most cases a campaign may expand to. Each case is a command line checked, planned and
/// stored; past ten thousand a file is almost surely a mistake (three lists of a thousand
/// values make a billion cases), and the cross product would exhaust memory before the
/// first run.
pub const MAX_CASES: u64 = 10_000;

/// Refuses a cross product of more than [`MAX_CASES`], counted before it is built.
fn check_size(bases: usize, lists: &[(String, Vec<String>)]) -> Result<(), SpecError> {
    let n = lists
        .iter()
        .try_fold(bases as u64, |n, (_, v)| n.checked_mul(v.len() as u64));
    match n {
        Some(n) if n <= MAX_CASES => Ok(()),
        _ => {
            let sizes: Vec<String> = std::iter::once(bases.to_string())
                .filter(|_| bases > 1)
                .chain(lists.iter().map(|(k, v)| format!("{} ({k})", v.len())))
                .collect();
            bad(format!(
                "[vars] make {} cases ({}); a campaign may have at most {MAX_CASES}: use fewer values, or split it into several campaigns",
                n.map_or("more than 2^64".to_string(), |n| n.to_string()),
                sizes.join(" × ")
            ))
        }
    }
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
pub(super) fn args_of(
    options: &Table,
    vars: &[(String, String)],
) -> Result<Vec<String>, SpecError> {
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
                    // `--label --allow-overwrite` is a flag, not a label: never pass one on.
                    if text.starts_with('-') {
                        return bad(format!(
                            "{what} = {text:?}: a value may not start with '-' (it would be read as a flag); use true for a flag, or reword the value"
                        ));
                    }
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
