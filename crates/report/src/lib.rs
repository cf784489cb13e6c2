//! Renderers: every output of a run is made from the same `RunReport`. The terminal summary
//! and the JSON export implement one trait; the caller decides where the text goes.

mod calib;
mod campaign;
mod db;
mod history;
mod run;
mod series;
mod watch;

pub use calib::{calibration_body, calibration_head, matrix_csv, point_line, preflight_text};
pub use campaign::{campaign_csv, campaign_html, campaign_json, campaign_markdown};
pub use db::{db_run_text, db_setup_text};
pub use history::history_table;
pub use run::{job_line, progress_line, Exporter, Json, Text};
pub use series::interval_table;
pub use watch::{db_rates_line, watch_line};
