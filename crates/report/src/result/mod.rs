//! The self-contained HTML report of stored results (`iogauge report ID [ID…]`): for runs the
//! time series (IOPS and MiB/s per direction, latency percentiles, device IOPS, %util, await,
//! CPU, ramp shaded, steady window marked), latency percentile curves and the workload against
//! the devices; for calibrations ORION's pictures (IOPS and MB/s against outstanding I/Os,
//! latency against IOPS, the matrix as a heat map); for database runs the load profile and
//! average active sessions by wait event; for one calibration beside one database run the
//! placement study's table; for every result its findings, and for runs the tracer recorded,
//! where each interval's I/O time went per layer (stacked bars). Several results of a kind
//! share their charts, one colour each (before/after a change). Inline CSS and SVG only: no
//! script, nothing fetched.

mod calib;
mod curves;
mod db;
mod findings;
mod item;
mod layers;
mod page;
mod placement;
mod run;
mod system;

pub use item::Stored;
pub use page::result_html;

#[cfg(test)]
mod tests;
