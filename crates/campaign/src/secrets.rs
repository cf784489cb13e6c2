//! A campaign as it may be shown and stored: every text a user wrote (variable values, command
//! lines, hook templates, the description) passed through a masking function, so a password
//! in `[options] dsn = "postgres://u:pw@…"` is never printed, stored or reported. The runner
//! keeps the unmasked campaign in memory for the runs it starts (they need the real DSN) and
//! uses this one for everything else. The masking function comes from the caller
//! (`iogauge_pg::redact_secrets`): this crate stays free of any DSN syntax.

use crate::spec::{Campaign, SpecError};
use std::collections::HashSet;

impl Campaign {
    /// This campaign with `mask` applied to every user-written text. Cases keep their order,
    /// so an index means the same case in both. An error when masking makes two case names
    /// equal (they differed only in a secret).
    pub fn masked(&self, mask: impl Fn(&str) -> String) -> Result<Campaign, SpecError> {
        let mut c = self.clone();
        c.description = c.description.as_deref().map(&mask);
        c.baseline = mask(&c.baseline);
        for (_, v) in &mut c.baseline_vars {
            *v = mask(v);
        }
        let mut names = HashSet::with_capacity(c.cases.len());
        for case in &mut c.cases {
            case.name = mask(&case.name);
            if !names.insert(case.name.clone()) {
                return Err(SpecError(format!(
                    "two cases are named {:?} once their passwords are masked: name cases by something other than a secret",
                    case.name
                )));
            }
            for (_, v) in &mut case.vars {
                *v = mask(v);
            }
            for a in &mut case.args {
                *a = mask(a);
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

#[cfg(test)]
mod tests {
    use crate::Campaign;

    fn mask(s: &str) -> String {
        s.replace("pw", "***")
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
        let m = c.masked(mask).unwrap();
        let json = serde_json::to_string(&m).unwrap();
        assert!(!json.contains("pw"), "{json}");
        assert_eq!(m.cases.len(), c.cases.len());
        assert_eq!(m.cases[1].args, ["--dsn", "b:***@y"]);
        assert_eq!(c.cases[1].args, ["--dsn", "b:pw@y"]);
    }

    #[test]
    fn names_that_differ_only_in_a_secret_are_refused() {
        let text = "command = \"db run\"\n[vars]\ndsn = [\"a:pw1@x\", \"a:pw2@x\"]\n[options]\ndsn = \"${dsn}\"\n";
        let c = Campaign::parse(text, "c", false).unwrap();
        let e = c
            .masked(|s: &str| s.replace("pw1", "***").replace("pw2", "***"))
            .unwrap_err();
        assert!(e.0.contains("masked"), "{e}");
    }
}
