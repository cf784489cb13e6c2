//! Renderers of a campaign: the self-contained HTML report, the Markdown / CSV / JSON
//! exports and the lines printed while it runs, all made from one
//! [`iogauge_campaign::CampaignView`]; with `--relative`, the same in ratios to the baseline
//! (`relative.rs`, `relative_html.rs`).

mod bars;
mod cases;
mod html;
mod html_table;
pub(crate) mod limits;
mod md;
mod progress;
mod relative;
mod relative_html;
mod run_chart;
mod tables;
pub(crate) mod verdicts;

pub use html::campaign_html;
pub use progress::{campaign_command, campaign_dry_run, campaign_plan_line, campaign_run_label};
pub use relative::{campaign_csv_relative, campaign_json_relative, campaign_markdown_relative};
pub use relative_html::campaign_html_relative;
pub use tables::{campaign_csv, campaign_json, campaign_markdown};
pub use verdicts::verdicts_text;
