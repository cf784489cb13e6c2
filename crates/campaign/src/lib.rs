//! Campaigns: a TOML file that declares configurations (variables and their values, or
//! explicit cases), the workload command and its options, repetitions, warm-up, order and a
//! baseline; its expansion into an ordered plan of runs; and, once the runs are stored, the
//! statistics per case and metric that reports render.
//!
//! Pure: no process is spawned and no store is opened here (a campaign file is read, and its
//! cases checked, by [`load()`]). `iogauge_runner` runs the plan and gathers the store back
//! into a [`view::CampaignView`], which `iogauge report` / `export` / `compare` render.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod analysis;
pub mod digest;
pub mod load;
pub mod metric;
pub mod plan;
pub mod relative;
mod secrets;
pub mod spec;
#[cfg(test)]
mod spec_tests;
pub mod view;

pub use analysis::{metrics, warnings};
pub use digest::{catalogue, digest, lat_curves, DigestError, Metric};
pub use load::{load, CheckLine, LoadError, Loaded};
pub use plan::PlannedRun;
pub use relative::{relative, RelativeCase, RelativeFigure, RelativeMetric, RelativeView};
pub use spec::{Campaign, Case, Command, Order, SpecError, Warmup};
pub use view::{
    AasPoint, CampaignView, CaseView, Environment, LatCurve, MetricCase, MetricView, RunDigest,
    SeriesPoint,
};

/// Version of the campaign JSON export; bump on any incompatible change.
pub const SCHEMA: u32 = 1;
