//! `[stand_in]`: the raw device as a case of a `db run` campaign. A database cannot run on a
//! raw device, so the cases it names run `iogauge run --like` of another case's db run (the
//! same repetition), replaying that run's device I/O and log stream on the raw device: the
//! filesystem study's RAW = 1.
//!
//! ```toml
//! baseline = { fs = "raw" }
//! [stand_in]
//! cases = { fs = "raw" }        # the cases that are stand-ins
//! like = { fs = "ext4" }        # each replays the case with these values in place of its own
//! [stand_in.options]            # the flags of `iogauge run` (not `db run`), ${var} as usual
//! target = "${root}/raw/data"
//! allow_overwrite = true
//! ```

use super::expand::{apply_smoke, args_of, scalar};
use super::types::{bad, Case, Command, SpecError};
use serde::Deserialize;
use toml::{Table, Value};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStandIn {
    cases: Option<Table>,
    like: Option<Table>,
    #[serde(default)]
    options: Table,
}

/// Flags the campaign gives a stand-in itself.
const SET_HERE: &[&str] = &["like"];

/// Marks the cases `[stand_in]` names as stand-ins of their sources, with their `run`
/// command lines from `[stand_in.options]` (at smoke scale, `run`'s tiny scale over them).
pub(super) fn apply(
    raw: Value,
    command: Command,
    cases: &mut [Case],
    smoke: bool,
) -> Result<(), SpecError> {
    let Value::Table(t) = raw else {
        return bad("stand_in must be a table: [stand_in] with cases, like and [stand_in.options]");
    };
    let raw: RawStandIn = Value::Table(t)
        .try_into()
        .map_err(|e: toml::de::Error| SpecError(format!("stand_in: {}", e.message().trim())))?;
    if command != Command::DbRun {
        return bad(format!(
            "stand_in: only a \"db run\" campaign has a raw stand-in (it replays a db run's I/O); this one runs {command:?}",
            command = command.to_string()
        ));
    }
    let which = pairs(raw.cases, "stand_in.cases", "{ fs = \"raw\" }")?;
    let like = pairs(raw.like, "stand_in.like", "{ fs = \"ext4\" }")?;
    let mut options = raw.options;
    for k in options.keys() {
        if SET_HERE.contains(&k.replace('_', "-").as_str()) {
            return bad(format!(
                "stand_in.options.{k}: the campaign sets --{k} itself (the source case's run of the same repetition); remove it"
            ));
        }
    }
    if smoke {
        apply_smoke(Command::Run, &mut options, &mut Table::new(), Table::new())?;
    }
    for (k, _) in which.iter().chain(&like) {
        if !cases.iter().any(|c| c.vars.iter().any(|(ck, _)| ck == k)) {
            return bad(format!(
                "stand_in: {k} is not a variable of the cases; name one under [vars] or in [[case]]"
            ));
        }
    }
    let is_stand_in = |c: &Case| which.iter().all(|w| c.vars.contains(w));
    let stand_ins: Vec<usize> = (0..cases.len())
        .filter(|&i| is_stand_in(&cases[i]))
        .collect();
    if stand_ins.is_empty() {
        return bad(format!(
            "stand_in.cases = {{ {} }} matches no case; use values the cases take",
            shown(&which)
        ));
    }
    for &i in &stand_ins {
        let want: Vec<(String, String)> = cases[i]
            .vars
            .iter()
            .map(|(k, v)| match like.iter().find(|(lk, _)| lk == k) {
                Some((_, lv)) => (k.clone(), lv.clone()),
                None => (k.clone(), v.clone()),
            })
            .collect();
        let source = cases
            .iter()
            .find(|c| same_vars(&c.vars, &want) && !is_stand_in(c))
            .map(|c| c.name.clone());
        let Some(source) = source else {
            return bad(format!(
                "stand_in.like = {{ {} }}: case {:?} has no db-run case with those values to replay; add that case or choose other values",
                shown(&like),
                cases[i].name
            ));
        };
        let args = args_of(&options, &cases[i].vars)
            .map_err(|e| SpecError(format!("stand_in.{}", e.0)))?;
        cases[i].args = args;
        cases[i].like = Some(source);
    }
    Ok(())
}

/// `{ var = value, … }` as (var, value) pairs; required and not empty.
fn pairs(t: Option<Table>, what: &str, example: &str) -> Result<Vec<(String, String)>, SpecError> {
    let t = t.unwrap_or_default();
    if t.is_empty() {
        return bad(format!(
            "{what} is missing: give the variables' values, such as {example}"
        ));
    }
    t.iter()
        .map(|(k, v)| Ok((k.clone(), scalar(v, &format!("{what}.{k}"))?)))
        .collect()
}

fn same_vars(a: &[(String, String)], b: &[(String, String)]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

fn shown(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k} = {}", iogauge_stats::echo::quoted(v)))
        .collect::<Vec<_>>()
        .join(", ")
}
