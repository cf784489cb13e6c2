//! What `iogauge db setup` loaded, as verified on the server: per schema one table with one
//! row per 8 KiB block.

use iogauge_stats::Bytes;
use serde::{Deserialize, Serialize};

/// One table as verified on the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableCheck {
    pub schema: u32,
    pub rows: u64,
    /// Distinct heap blocks holding a row.
    pub blocks_used: u64,
    /// Blocks in the table's main fork.
    pub blocks: u64,
    /// Table, index and TOAST together (`pg_total_relation_size`).
    pub total_bytes: Bytes,
    /// The directory of the table's tablespace (`db setup --target`); `None`: the database's
    /// default, with the cluster's data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<std::path::PathBuf>,
}

/// The loaded data set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    pub schemas: u32,
    pub rows: u64,
    pub blocks: u64,
    /// Sum of `pg_total_relation_size` over the tables: compare with RAM and shared_buffers.
    pub bytes: Bytes,
    pub tables: Vec<TableCheck>,
    /// Load time (zero for a plain `verify`).
    pub elapsed_s: f64,
}
