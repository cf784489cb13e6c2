//! `iogauge watch`: the plain lines (one per interval) and the full-screen view (drawn with
//! ratatui's widgets into whatever frame the caller's terminal gives; the terminal itself,
//! crossterm's raw mode and keys, stays with the binary).

mod line;
mod screen;

pub use line::{db_rates_line, load_text, watch_cpu_lines, watch_line};
pub use screen::{watch_screen, LiveRun, WatchScreen};
