//! `--store`, flattened into every subcommand that reads or writes results, and with
//! `--label` and `--json` into every one that measures.

use clap::Args;
use std::path::PathBuf;

/// Where results are stored.
#[derive(Args, Debug)]
pub struct StoreArgs {
    /// Results database (SQLite). Default: $IOGAUGE_STORE, else
    /// $XDG_DATA_HOME/iogauge/results.sqlite, else ~/.local/share/iogauge/results.sqlite.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
}

/// Where a measurement's result goes: `--store`, `--label`, `--json`, flattened into `run`,
/// `calibrate` and `db run`.
#[derive(Args, Debug)]
pub struct ResultArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub label: LabelArgs,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Do not trace the block layer: no per-layer latency (time before the queue, in the
    /// queue, on the device) from the kernel's block tracepoints.
    #[arg(long)]
    pub no_trace: bool,
}

/// `--label`, flattened into the commands that store a measurement.
#[derive(Args, Debug)]
pub struct LabelArgs {
    /// A name for this result, stored with it and shown by history and show (ORION's
    /// -testname), e.g. "before the firmware update". At most 80 characters.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

impl LabelArgs {
    /// The label, checked: not blank, at most 80 characters, none that would move or hide
    /// text where it is printed (controls, bidi and other format characters such as U+202E,
    /// line and paragraph separators: `iogauge_model::echo::is_unprintable`).
    pub fn checked(self) -> Result<Option<String>, crate::usage::UsageError> {
        let Some(l) = self.label else {
            return Ok(None);
        };
        let t = l.trim();
        let give = "give 1 to 80 printable characters, as --label \"before the firmware update\"";
        if let Some(c) = t.chars().find(|&c| iogauge_model::echo::is_unprintable(c)) {
            return crate::usage::usage(format!(
                "--label: U+{:04X} is a control, format or separator character, which would reorder or break the lines the label is printed on; {give}",
                u32::from(c)
            ));
        }
        if t.is_empty() || t.chars().count() > 80 {
            return crate::usage::usage(format!("--label: {give}"));
        }
        Ok(Some(t.to_string()))
    }
}
