//! Renderers: every output of a result is made from its document. The terminal summaries
//! (`text/`), the exporters (JSON and the human summary, one trait), the HTML reports of a
//! campaign (`campaign/`) and of stored results (`result/`) on one chart toolkit (`svg/`),
//! the placement table of a calibration beside a database run (`placement`), and the
//! commands that read the results store back (`stored/`: report, export, compare). The
//! caller decides where the text goes.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod campaign;
mod export;
mod num;
mod placement;
mod result;
#[cfg(test)]
mod snap;
mod split;
mod stored;
mod svg;
mod text;

pub use campaign::{
    campaign_command, campaign_csv, campaign_dry_run, campaign_html, campaign_json,
    campaign_markdown, campaign_plan_line, campaign_run_label, verdicts_text,
};
pub use export::{Exporter, Json, Text};
pub use num::fmt_num;
pub use result::{result_html, Stored};
pub use stored::{
    compare, export, gather, report, run_line, CompareOptions, Format, GatherError, ReadError,
    Report, Subject,
};
pub use text::calib::{calibration_body, calibration_head, matrix_csv, point_line};
pub use text::db::{db_run_text, db_setup_text};
pub use text::history::history_table;
pub use text::preflight::{preflight_text, storage_lines};
pub use text::run::{job_line, progress_line, run_text};
pub use text::series::{calibration_intervals, db_interval_table, interval_table, with_intervals};
pub use text::trace::trace_text;
pub use text::watch::{
    db_rates_line, load_text, watch_cpu_lines, watch_line, watch_screen, LiveRun, WatchScreen,
};
