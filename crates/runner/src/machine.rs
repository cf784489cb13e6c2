//! Where this machine is, recorded with a campaign's stored definition.

use iogauge_campaign::view::Environment;

/// Where this machine is, for the stored definition.
pub fn this_machine() -> Environment {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    Environment {
        host: read("/proc/sys/kernel/hostname"),
        kernel: format!(
            "{} {}",
            read("/proc/sys/kernel/ostype"),
            read("/proc/sys/kernel/osrelease")
        ),
        iogauge_version: env!("CARGO_PKG_VERSION").to_string(),
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get() as u32),
        // Unknown memory shows as 0 in the report's environment (it is not a figure).
        ram_bytes: iogauge_probe::ram_bytes().unwrap_or(0),
        ..Environment::default()
    }
}
