//! Renderers of a campaign: the self-contained HTML report and the Markdown / CSV / JSON
//! exports, all made from one [`iogauge_campaign::CampaignView`].

mod html;
mod html_table;
mod progress;
pub(crate) mod svg;
mod svg_bars;
pub(crate) mod svg_draw;
pub(crate) mod svg_series;
pub(crate) mod svg_stats;
pub(crate) mod svg_style;
mod tables;

pub use html::campaign_html;
pub use progress::{campaign_command, campaign_dry_run, campaign_plan_line, campaign_run_label};
pub use tables::{campaign_csv, campaign_json, campaign_markdown};
