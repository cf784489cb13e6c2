//! The campaign file's shell commands (`start`, `case`, `pre`, `post`, `case_end`, `end`) and the built-in
//! `reset = "db"`, run with the case's variables substituted and in the environment, as
//! SLOB's EXTERNAL_SCRIPT receives its run's parameters.

use crate::error::RunnerError;
use iogauge_campaign::spec::substitute;
use iogauge_campaign::{Campaign, Case, PlannedRun};
use iogauge_model::secret::redact_secrets;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct Hooks<'a> {
    c: &'a Campaign,
    exe: PathBuf,
    dir: PathBuf,
    store: PathBuf,
}

impl<'a> Hooks<'a> {
    pub fn new(c: &'a Campaign, file: &Path, store: &Path) -> Result<Hooks<'a>, RunnerError> {
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(Hooks {
            c,
            exe: std::env::current_exe().map_err(RunnerError::Exe)?,
            dir: std::fs::canonicalize(&dir).unwrap_or(dir),
            store: store.to_path_buf(),
        })
    }

    pub fn start(&self) -> Result<(), RunnerError> {
        self.shell("start", self.c.commands.start.as_deref(), None, None)
    }

    pub fn end(&self) -> Result<(), RunnerError> {
        self.shell("end", self.c.commands.end.as_deref(), None, None)
    }

    /// `case`: before the case's first run of the plan.
    pub fn case_start(&self, case: &Case) -> Result<(), RunnerError> {
        self.shell("case", self.c.commands.case.as_deref(), Some(case), None)
    }

    /// `case_end`: after the case's last run of the plan.
    pub fn case_end(&self, case: &Case) -> Result<(), RunnerError> {
        self.shell(
            "case_end",
            self.c.commands.case_end.as_deref(),
            Some(case),
            None,
        )
    }

    /// The database reset (when asked for), then `pre`.
    pub fn before_run(&self, case: &Case, run: &PlannedRun) -> Result<(), RunnerError> {
        // A raw stand-in has no database to reset.
        if self.c.commands.reset_db && case.like.is_none() {
            self.reset_db(case)?;
        }
        self.shell("pre", self.c.commands.pre.as_deref(), Some(case), Some(run))
    }

    pub fn after_run(&self, case: &Case, run: &PlannedRun) -> Result<(), RunnerError> {
        self.shell(
            "post",
            self.c.commands.post.as_deref(),
            Some(case),
            Some(run),
        )
    }

    fn reset_db(&self, case: &Case) -> Result<(), RunnerError> {
        let mut cmd = Command::new(&self.exe);
        cmd.args(["db", "reset"]);
        // The case's server, of its engine (a campaign may vary `engine` like any variable);
        // its DSN in the environment, off the command line, as the runs get it.
        for flag in ["dir", "engine", "mysql-bin"] {
            if let Some(v) = case.option(flag) {
                cmd.arg(format!("--{flag}")).arg(v);
            }
        }
        match case.option("dsn") {
            Some("") => {
                cmd.args(["--dsn", ""]);
            }
            Some(dsn) => {
                cmd.env(iogauge_model::secret::DSN_ENV, dsn);
            }
            None => {}
        }
        let status = cmd.status().map_err(RunnerError::StartReset)?;
        if !status.success() {
            return Err(RunnerError::ResetFailed {
                name: self.c.name.clone(),
                case: case.name.clone(),
                status,
            });
        }
        Ok(())
    }

    fn shell(
        &self,
        which: &str,
        template: Option<&str>,
        case: Option<&Case>,
        run: Option<&PlannedRun>,
    ) -> Result<(), RunnerError> {
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
        let script = substitute(template, vars, &format!("commands.{which}")).map_err(|e| {
            RunnerError::Template {
                name: self.c.name.clone(),
                why: e.to_string(),
            }
        })?;
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
        let status = cmd.status().map_err(|source| RunnerError::StartHook {
            which: which.to_string(),
            source,
        })?;
        if !status.success() {
            return Err(RunnerError::HookFailed {
                name: self.c.name.clone(),
                which: which.to_string(),
                status,
                case: case.map(|c| c.name.clone()),
                // The script holds the case's real values; the message shows them masked.
                script: redact_secrets(&script),
            });
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
