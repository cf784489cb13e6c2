//! The figures a campaign compares across cases: key, label, unit and which way is better.

/// A figure compared across cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    /// Key in [`crate::RunDigest::metrics`] and [`crate::MetricView::key`].
    pub key: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    /// False for latencies: a ratio above 1 is then worse.
    pub higher_is_better: bool,
}

const fn m(key: &'static str, label: &'static str, unit: &'static str, hib: bool) -> Metric {
    Metric {
        key,
        label,
        unit,
        higher_is_better: hib,
    }
}

/// Every metric a digest can produce, in report order: `run`, then `calibrate`, then `db run`
/// (`device_iops` and `device_mbps` serve `run` and `db run`). Latencies are milliseconds.
pub const CATALOGUE: &[Metric] = &[
    // iogauge run: the measured window's summary (reads + writes).
    m("iops", "IOPS", "IOPS", true),
    m("mbps", "throughput", "MiB/s", true),
    m("read_iops", "read IOPS", "IOPS", true),
    m("write_iops", "write IOPS", "IOPS", true),
    m("read_mbps", "read throughput", "MiB/s", true),
    m("write_mbps", "write throughput", "MiB/s", true),
    m("read_lat_mean_ms", "read latency mean", "ms", false),
    m("read_lat_p99_ms", "read latency p99", "ms", false),
    m("read_lat_p99_9_ms", "read latency p99.9", "ms", false),
    m("read_lat_p99_99_ms", "read latency p99.99", "ms", false),
    m("write_lat_mean_ms", "write latency mean", "ms", false),
    m("write_lat_p99_ms", "write latency p99", "ms", false),
    m("write_lat_p99_9_ms", "write latency p99.9", "ms", false),
    m("write_lat_p99_99_ms", "write latency p99.99", "ms", false),
    // iogauge run --log-bs: the log writer beside the job (write + fdatasync, again and again).
    m("log_writes_s", "log writes/s", "writes/s", true),
    m("log_mbps", "log throughput", "MiB/s", true),
    m("log_write_ms", "log write time", "ms", false),
    m("log_sync_ms", "log sync time (commit wait)", "ms", false),
    // iogauge calibrate: CALIBRATE_IO's figures.
    m("max_iops", "max_iops", "IOPS", true),
    m("latency_ms", "latency at max_iops", "ms", false),
    m("max_mbps", "max_mbps", "MiB/s", true),
    m("max_pmbps", "max_pmbps (one process)", "MiB/s", true),
    // iogauge db run: the sessions, then PostgreSQL's load profile.
    m("ops_s", "operations/s", "ops/s", true),
    m("op_read_lat_mean_ms", "read op latency mean", "ms", false),
    m("op_read_lat_p99_ms", "read op latency p99", "ms", false),
    m("op_read_lat_p99_9_ms", "read op latency p99.9", "ms", false),
    m(
        "op_read_lat_p99_99_ms",
        "read op latency p99.99",
        "ms",
        false,
    ),
    m(
        "op_update_lat_mean_ms",
        "update op latency mean",
        "ms",
        false,
    ),
    m("op_update_lat_p99_ms", "update op latency p99", "ms", false),
    m(
        "op_update_lat_p99_9_ms",
        "update op latency p99.9",
        "ms",
        false,
    ),
    m(
        "op_update_lat_p99_99_ms",
        "update op latency p99.99",
        "ms",
        false,
    ),
    m("db_logical_reads_s", "logical reads/s", "reads/s", true),
    m("db_physical_reads_s", "physical reads/s", "reads/s", true),
    m("db_avg_read_ms", "average read time", "ms", false),
    m(
        "db_physical_writes_s",
        "physical writes/s (blocks + log)",
        "writes/s",
        true,
    ),
    m("commits_s", "commits/s", "commits/s", true),
    // The log's figures (log_mbps, log_write_ms, log_sync_ms) are the run's log writer's
    // above: a db run's WAL or redo, and a run's log writer standing in for it, compare
    // under one name.
    // What the whole disks under the targets completed (reads + writes).
    m("device_iops", "device IOPS", "IOPS", true),
    m("device_mbps", "device throughput", "MiB/s", true),
    m("device_read_iops", "device reads/s", "IOPS", true),
    m("device_write_iops", "device writes/s", "IOPS", true),
    // A db run's disks' write bios per database write (pages + log): a mirror's copies.
    m(
        "device_writes_per_db_write",
        "device writes per database write",
        "x",
        false,
    ),
];

/// The metric catalogue ([`CATALOGUE`]).
pub fn catalogue() -> &'static [Metric] {
    CATALOGUE
}

/// The catalogue entry of `key`.
pub fn metric(key: &str) -> Option<&'static Metric> {
    CATALOGUE.iter().find(|m| m.key == key)
}
