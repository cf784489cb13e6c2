//! Capacity planning, pure: workload IOPS and MB/s (what the database does) become hardware
//! IOPS and MB/s (what the disks must do) through a redundancy's write penalty, then disks and
//! enclosures; or, in reverse, disks become the workload they can serve. A history of periods
//! is sized at a percentile rather than an average.
//!
//! No printing and no file access: a history is parsed from any `Read`, and [`render`]
//! returns strings. The serde types are the JSON schema of `iogauge plan --json`.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod capacity;
mod history;
pub mod limits;
mod peaks;
mod profile;
mod redundancy;
pub mod render;
mod sizing;
mod units;

pub use capacity::{capacity, Capacity};
pub use history::{parse_history, Columns, ColumnsError, HistoryError, Period, Role};
pub use peaks::{
    histogram, nearest_rank, plan_history, top_periods, Bucket, HistoryPlan, Peak, Percentiles,
    Spread,
};
pub use profile::{DiskProfile, UnknownProfile};
pub use redundancy::{BadPenalty, Redundancy, UnknownRedundancy};
pub use sizing::{ceil_count, size, Basis, Binding, Disk, Layout, Model, Sizing, Workload};
pub use units::{Iops, MiBps};

use serde::Serialize;

/// The result of one `iogauge plan`, tagged by `mode`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum Plan {
    /// Forward: a workload sized into disks and enclosures.
    Size(Sizing),
    /// Forward, from a history of periods sized at a percentile.
    History(Box<HistoryPlan>),
    /// Reverse: the workload a number of disks can serve.
    Capacity(Capacity),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &serde_json::Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn json_keys_are_the_documented_ones() {
        let model = Model::new(Redundancy::Mirror);
        let disk = Disk {
            iops: Iops(180.0),
            mbps: Some(MiBps(200.0)),
        };
        let layout = Layout {
            per_enclosure: Some(12),
            disks: None,
        };
        let w = Workload::mix(10_000.0, 0.5, Some(400.0));
        let sized = serde_json::to_value(Plan::Size(size(&w, &model, &disk, &layout))).unwrap();
        let reverse =
            serde_json::to_value(Plan::Capacity(capacity(84, 0.5, &model, &disk, Some(12))))
                .unwrap();
        for v in [&sized, &reverse] {
            let k = keys(v);
            for want in [
                "mode",
                "workload_iops",
                "hardware_iops",
                "disks",
                "enclosures",
                "utilization",
                "workload_mbps",
                "hardware_mbps",
                "disks_mbps",
                "enclosures_mbps",
                "utilization_mbps",
            ] {
                assert!(k.contains(&want), "{want} missing in {v}");
            }
        }
        assert_eq!(sized["mode"], "size");
        assert_eq!(sized["hardware_iops"], 15_000.0);
        assert_eq!(sized["disks"], 84);
        assert_eq!(sized["enclosures"], 7);
        assert_eq!(sized["binding"], "iops");
        assert_eq!(reverse["mode"], "capacity");
    }
}
