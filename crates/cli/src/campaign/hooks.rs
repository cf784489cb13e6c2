//! The campaign file's shell commands (`start`, `pre`, `post`, `end`) and the built-in
//! `reset = "db"`, run with the case's variables substituted and in the environment, as
//! SLOB's EXTERNAL_SCRIPT receives its run's parameters.

use anyhow::Context;
use iogauge_campaign::spec::substitute;
use iogauge_campaign::{Campaign, Case, PlannedRun};
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Hooks<'a> {
    c: &'a Campaign,
    exe: PathBuf,
    dir: PathBuf,
    store: PathBuf,
}

impl<'a> Hooks<'a> {
    pub fn new(c: &'a Campaign, file: &Path, store: &Path) -> anyhow::Result<Hooks<'a>> {
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(Hooks {
            c,
            exe: std::env::current_exe().context("finding the iogauge binary")?,
            dir: std::fs::canonicalize(&dir).unwrap_or(dir),
            store: store.to_path_buf(),
        })
    }

    pub fn start(&self) -> anyhow::Result<()> {
        self.shell("start", self.c.commands.start.as_deref(), None, None)
    }

    pub fn end(&self) -> anyhow::Result<()> {
        self.shell("end", self.c.commands.end.as_deref(), None, None)
    }

    /// The database reset (when asked for), then `pre`.
    pub fn before_run(&self, case: &Case, run: &PlannedRun) -> anyhow::Result<()> {
        if self.c.commands.reset_db {
            self.reset_db(case)?;
        }
        self.shell("pre", self.c.commands.pre.as_deref(), Some(case), Some(run))
    }

    pub fn after_run(&self, case: &Case, run: &PlannedRun) -> anyhow::Result<()> {
        self.shell(
            "post",
            self.c.commands.post.as_deref(),
            Some(case),
            Some(run),
        )
    }

    fn reset_db(&self, case: &Case) -> anyhow::Result<()> {
        let mut cmd = Command::new(&self.exe);
        cmd.args(["db", "reset"]);
        for flag in ["dir", "dsn"] {
            if let Some(v) = case.option(flag) {
                cmd.arg(format!("--{flag}")).arg(v);
            }
        }
        let status = cmd
            .status()
            .context("starting `iogauge db reset` for commands.reset")?;
        if !status.success() {
            anyhow::bail!(
                "campaign {}: commands.reset: `iogauge db reset` failed for case {:?} ({status}); its error is above",
                self.c.name,
                case.name
            );
        }
        Ok(())
    }

    fn shell(
        &self,
        which: &str,
        template: Option<&str>,
        case: Option<&Case>,
        run: Option<&PlannedRun>,
    ) -> anyhow::Result<()> {
        let Some(template) = template else {
            return Ok(());
        };
        let vars: &[(String, String)] = case.map_or(&[], |c| &c.vars);
        // Start and end belong to no case: only variables every case shares are known.
        let shared;
        let vars = if case.is_none() {
            shared = self.shared_vars();
            &shared
        } else {
            vars
        };
        let script = substitute(template, vars, &format!("commands.{which}"))
            .map_err(|e| crate::usage::UsageError(format!("campaign {}: {e}", self.c.name)))?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&script)
            .env("IOGAUGE", &self.exe)
            .env("IOGAUGE_CAMPAIGN", &self.c.name)
            .env("IOGAUGE_CAMPAIGN_DIR", &self.dir)
            .env("IOGAUGE_STORE", &self.store)
            .env("IOGAUGE_SMOKE", if self.c.smoke { "1" } else { "0" });
        if let Some(case) = case {
            cmd.env("IOGAUGE_CASE", &case.name);
        }
        if let Some(run) = run {
            cmd.env("IOGAUGE_REP", run.rep.to_string())
                .env("IOGAUGE_WARMUP", if run.warmup { "1" } else { "0" });
        }
        for (k, v) in vars {
            cmd.env(format!("IOGAUGE_VAR_{}", k.to_ascii_uppercase()), v);
        }
        let status = cmd
            .status()
            .with_context(|| format!("starting sh for commands.{which}"))?;
        if !status.success() {
            anyhow::bail!(
                "campaign {}: commands.{which} failed ({status}){}: {}",
                self.c.name,
                case.map(|c| format!(" for case {:?}", c.name))
                    .unwrap_or_default(),
                // The script holds the case's real values; the message shows them masked.
                super::load::mask(&script)
            );
        }
        Ok(())
    }

    /// Variables with one value across every case.
    fn shared_vars(&self) -> Vec<(String, String)> {
        let Some(first) = self.c.cases.first() else {
            return Vec::new();
        };
        first
            .vars
            .iter()
            .filter(|(k, v)| {
                self.c
                    .cases
                    .iter()
                    .all(|c| c.vars.iter().any(|(k2, v2)| k2 == k && v2 == v))
            })
            .cloned()
            .collect()
    }
}
