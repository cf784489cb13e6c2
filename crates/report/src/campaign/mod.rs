//! Renderers of a campaign: the self-contained HTML report and the Markdown / CSV / JSON
//! exports, all made from one [`iogauge_campaign::CampaignView`].

mod html;
mod html_table;
mod svg;
mod svg_bars;
mod svg_draw;
mod svg_series;
mod svg_stats;
mod svg_style;
mod tables;

pub use html::campaign_html;
pub use tables::{campaign_csv, campaign_json, campaign_markdown};
