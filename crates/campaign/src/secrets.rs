//! A campaign as it may be shown and stored: every text a user wrote (variable values, command
//! lines, hook templates, the description) passed through a masking function, so a password
//! in `[options] dsn = "postgres://u:pw@…"` is never printed, stored or reported. The runner
//! keeps the unmasked campaign in memory for the runs it starts (they need the real DSN) and
//! uses this one for everything else. The masking functions come from the caller
//! (`iogauge_model::secret`'s): this crate stays free of any DSN syntax. It knows only the
//! `--dsn` flag, whose value is one DSN however many blanks it holds, and so is any variable
//! value that makes up part of one.

use crate::spec::{Campaign, SpecError};
use std::collections::HashSet;

impl Campaign {
    /// This campaign with `mask` applied to every user-written text, and `mask_dsn` (which
    /// takes its whole text as one DSN) to the value of `--dsn` and to each variable value
    /// found in it. Cases keep their order, so an index means the same case in both. An
    /// error when masking makes two case names equal (they differed only in a secret).
    pub fn masked(
        &self,
        mask: impl Fn(&str) -> String,
        mask_dsn: impl Fn(&str) -> String,
    ) -> Result<Campaign, SpecError> {
        let mut c = self.clone();
        // The variable values a case's DSN holds that hold a password, each with its masked
        // form: masked as DSNs wherever they appear (case names and the baseline are made of
        // them).
        let mut secrets: Vec<(String, String)> = Vec::new();
        for case in &self.cases {
            let dsns: Vec<&str> = dsn_values(&case.args).collect();
            for (_, v) in &case.vars {
                let held = !v.is_empty() && dsns.iter().any(|d| d.contains(v.as_str()));
                if held && !secrets.iter().any(|(s, _)| s == v) {
                    let m = mask_dsn(v);
                    if m != *v {
                        secrets.push((v.clone(), m));
                    }
                }
            }
        }
        // Longest first, so a value inside another is not replaced first.
        secrets.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        let text = |t: &str| {
            let mut t = t.to_string();
            for (v, m) in &secrets {
                t = t.replace(v.as_str(), m);
            }
            mask(&t)
        };
        let value = |v: &str| match secrets.iter().find(|(s, _)| s == v) {
            Some((_, m)) => m.clone(),
            None => mask(v),
        };
        c.description = c.description.as_deref().map(&mask);
        c.baseline = text(&c.baseline);
        for (_, v) in &mut c.baseline_vars {
            *v = value(v);
        }
        let mut names = HashSet::with_capacity(c.cases.len());
        for case in &mut c.cases {
            case.name = text(&case.name);
            for (_, v) in &mut case.vars {
                *v = value(v);
            }
            case.args = mask_args(&case.args, &mask, &mask_dsn);
            if !names.insert(case.name.clone()) {
                return Err(SpecError(format!(
                    "two cases are named {:?} once their passwords are masked: name cases by something other than a secret",
                    case.name
                )));
            }
        }
        let cmds = &mut c.commands;
        for t in [
            &mut cmds.start,
            &mut cmds.case,
            &mut cmds.pre,
            &mut cmds.post,
            &mut cmds.case_end,
            &mut cmds.end,
        ] {
            *t = t.as_deref().map(&mask);
        }
        Ok(c)
    }
}

/// The values of `--dsn` (and `--dsn=`) in a command line.
fn dsn_values(args: &[String]) -> impl Iterator<Item = &str> {
    args.iter()
        .enumerate()
        .filter_map(|(i, a)| match a.strip_prefix("--dsn") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(v) => v.strip_prefix('='),
            None => None,
        })
}

/// A command line masked: `--dsn`'s value by `mask_dsn`, every other word by `mask`.
fn mask_args(
    args: &[String],
    mask: impl Fn(&str) -> String,
    mask_dsn: impl Fn(&str) -> String,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(args.len());
    for a in args {
        let m = match a.strip_prefix("--dsn=") {
            Some(v) => format!("--dsn={}", mask_dsn(v)),
            None if out.last().is_some_and(|p| p == "--dsn") => mask_dsn(a),
            None => mask(a),
        };
        out.push(m);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Campaign;

    fn mask(s: &str) -> String {
        s.replace("pw", "***")
    }

    /// A DSN's password, whatever it holds, is the word after `:`.
    fn mask_dsn(s: &str) -> String {
        match (s.find(':'), s.rfind('@')) {
            (Some(c), Some(a)) if c < a => format!("{}***{}", &s[..=c], &s[a..]),
            _ => s.to_string(),
        }
    }

    #[test]
    fn every_text_is_masked_and_indices_kept() {
        let text = r#"
command = "db run"
description = "pw here"
[vars]
dsn = ["a:pw@x", "b:pw@y"]
[options]
dsn = "${dsn}"
[commands]
pre = "echo ${dsn}"
"#;
        let c = Campaign::parse(text, "c", false).unwrap();
        let m = c.masked(mask, mask_dsn).unwrap();
        let json = serde_json::to_string(&m).unwrap();
        assert!(!json.contains("pw"), "{json}");
        assert_eq!(m.cases.len(), c.cases.len());
        assert_eq!(m.cases[1].args, ["--dsn", "b:***@y"]);
        assert_eq!(c.cases[1].args, ["--dsn", "b:pw@y"]);
    }

    /// Issue #44, M3: a `--dsn` value and the variable it is made of are masked as one DSN,
    /// a password with blanks too (word by word, its pieces were left).
    #[test]
    fn a_dsn_is_masked_whole_in_arguments_variables_and_names() {
        let text = "command = \"db run\"\n[vars]\nsrv = [\"u:p w1@h\", \"u:p w2@h\", \"x@y\"]\n\
                    dist = [\"a:b@c\"]\n[options]\ndsn = \"mysql://${srv}/db\"\ndist = \"${dist}\"\n";
        let c = Campaign::parse(text, "c", false).unwrap();
        let m = c.masked(|s: &str| s.to_string(), mask_dsn);
        // The first two differ only in their password.
        let e = m.unwrap_err();
        assert!(e.0.contains("masked"), "{e}");
        let text = text.replace("\"u:p w2@h\", ", "");
        let c = Campaign::parse(&text, "c", false).unwrap();
        let m = c.masked(|s: &str| s.to_string(), mask_dsn).unwrap();
        let json = serde_json::to_string(&m).unwrap();
        assert!(!json.contains("p w1"), "{json}");
        assert_eq!(m.cases[0].option("dsn"), Some("mysql:***@h/db"));
        assert!(m.cases[0].vars.contains(&("srv".into(), "u:***@h".into())));
        // A value no DSN holds is left to `mask`.
        assert!(m.cases[0].vars.contains(&("dist".into(), "a:b@c".into())));
        assert!(!m.cases[0].name.contains("p w1"), "{}", m.cases[0].name);
        assert_eq!(c.cases[0].option("dsn"), Some("mysql://u:p w1@h/db"));
    }

    #[test]
    fn names_that_differ_only_in_a_secret_are_refused() {
        let text = "command = \"db run\"\n[vars]\ndsn = [\"a:pw1@x\", \"a:pw2@x\"]\n[options]\ndsn = \"${dsn}\"\n";
        let c = Campaign::parse(text, "c", false).unwrap();
        let e = c
            .masked(
                |s: &str| s.replace("pw1", "***").replace("pw2", "***"),
                mask_dsn,
            )
            .unwrap_err();
        assert!(e.0.contains("masked"), "{e}");
    }
}
