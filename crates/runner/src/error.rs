//! Why a campaign could not go on. Each message names the campaign and the way out, as the
//! binary prints it (`error: …` and the causes); [`RunnerError::is_usage`] says whether the
//! file or the flags were at fault (exit 2) rather than the system (exit 1).

use iogauge_report::GatherError;
use iogauge_store::StoreError;
use std::path::PathBuf;
use std::process::ExitStatus;

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Gather(#[from] GatherError),
    /// The store holds runs of this campaign's name made with another plan.
    #[error("campaign {name}: {} holds runs of it made with other cases or options; pass --fresh to start over (earlier runs stay in the history) or --name to store this one apart", store.display())]
    OtherPlan { name: String, store: PathBuf },
    /// The file's hooks changed since the stored runs of this campaign were made.
    #[error("campaign {name}: {hooks} changed since the runs {} holds of it were made; put them back to resume, or pass --fresh to start over (earlier runs stay in the history)", store.display())]
    OtherHooks {
        name: String,
        store: PathBuf,
        hooks: String,
    },
    /// A hook's template does not expand with the case's variables.
    #[error("campaign {name}: {why}")]
    Template { name: String, why: String },
    #[error("finding the iogauge binary")]
    Exe(#[source] std::io::Error),
    #[error("starting sh for commands.{which}")]
    StartHook {
        which: String,
        #[source]
        source: std::io::Error,
    },
    /// A hook ended with an error; `script` is masked.
    #[error("campaign {name}: commands.{which} failed ({status}){}: {script}", case.as_ref().map(|c| format!(" for case {c:?}")).unwrap_or_default())]
    HookFailed {
        name: String,
        which: String,
        status: ExitStatus,
        case: Option<String>,
        script: String,
    },
    #[error("starting `iogauge db reset` for commands.reset")]
    StartReset(#[source] std::io::Error),
    #[error("campaign {name}: commands.reset: `iogauge db reset` failed for case {case:?} ({status}); its error is above")]
    ResetFailed {
        name: String,
        case: String,
        status: ExitStatus,
    },
    /// A stand-in's source run is not stored (the plan runs it first, so only a store
    /// changed under the campaign gets here).
    #[error("campaign {name}: case {case:?} repetition {rep} replays case {like:?}'s repetition {rep}, which is not stored complete; run the campaign again to make it")]
    NoSource {
        name: String,
        case: String,
        like: String,
        rep: u32,
    },
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("starting an iogauge run")]
    StartRun(#[source] std::io::Error),
    #[error("waiting for an iogauge run")]
    WaitRun(#[source] std::io::Error),
    /// A run failed; it said why on its stderr.
    #[error("campaign {name}: case {case:?} repetition {rep} failed (exit code {code}, its error is above); finished runs are stored, fix the cause and run the campaign again to resume")]
    RunFailed {
        name: String,
        case: String,
        rep: u32,
        code: i32,
    },
}

impl RunnerError {
    /// Whether the campaign file or the flags cannot work as written (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            RunnerError::Store(s) => s.is_usage(),
            RunnerError::Gather(g) => g.is_usage(),
            RunnerError::OtherPlan { .. }
            | RunnerError::OtherHooks { .. }
            | RunnerError::Template { .. } => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RunnerError;

    /// The file or flags at fault are usage errors (exit 2); a failing hook or run is not.
    #[test]
    fn usage_or_not() {
        let other = RunnerError::OtherPlan {
            name: "qd".into(),
            store: "/s.sqlite".into(),
        };
        assert!(other.is_usage());
        assert!(other.to_string().starts_with(
            "campaign qd: /s.sqlite holds runs of it made with other cases or options; pass --fresh"
        ));
        let template = RunnerError::Template {
            name: "qd".into(),
            why: "commands.pre: unknown variable".into(),
        };
        assert!(template.is_usage());
        let failed = RunnerError::RunFailed {
            name: "qd".into(),
            case: "qd=4".into(),
            rep: 2,
            code: 1,
        };
        assert!(!failed.is_usage());
        assert!(failed.to_string().starts_with(
            "campaign qd: case \"qd=4\" repetition 2 failed (exit code 1, its error is above)"
        ));
    }

    #[test]
    fn a_failed_hook_names_its_case_when_it_has_one() {
        use std::os::unix::process::ExitStatusExt;
        let hook = |case: Option<&str>| RunnerError::HookFailed {
            name: "qd".into(),
            which: "pre".into(),
            status: std::process::ExitStatus::from_raw(3 << 8),
            case: case.map(Into::into),
            script: "false".into(),
        };
        assert_eq!(
            hook(Some("qd=1")).to_string(),
            "campaign qd: commands.pre failed (exit status: 3) for case \"qd=1\": false"
        );
        assert_eq!(
            hook(None).to_string(),
            "campaign qd: commands.pre failed (exit status: 3): false"
        );
        assert!(!hook(None).is_usage());
    }
}
