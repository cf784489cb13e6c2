//! What iogauge renders from the results store, as functions the binary calls with checked
//! options: `report` (the HTML of stored results or of a campaign), `export` (a campaign as
//! CSV, Markdown or JSON), `compare` (two runs or two cases), and the campaign read back
//! ([`gather`]) with the line printed as each of its runs is stored. They return text and
//! typed errors ([`ReadError`], [`GatherError`]); the binary writes and picks exit codes.

mod compare;
mod error;
mod gather;
mod open;
mod render;
mod run_line;

pub use compare::{compare, CompareOptions};
pub use error::ReadError;
pub use gather::{gather, GatherError};
pub use render::{export, report, Format, Report, Subject};
pub use run_line::run_line;
