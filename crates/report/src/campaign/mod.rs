//! Renderers of a campaign: the self-contained HTML report, the Markdown / CSV / JSON
//! exports and the lines printed while it runs, all made from one
//! [`iogauge_campaign::CampaignView`].

mod bars;
mod cases;
mod html;
mod html_table;
pub(crate) mod limits;
mod progress;
mod run_chart;
mod tables;
pub(crate) mod verdicts;

pub use html::campaign_html;
pub use progress::{campaign_command, campaign_dry_run, campaign_plan_line, campaign_run_label};
pub use tables::{campaign_csv, campaign_json, campaign_markdown};
pub use verdicts::verdicts_text;
