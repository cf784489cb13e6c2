//! Why tracing is unavailable, in one line, and aya's errors made one line.

use crate::maps::MAX_DISKS;

/// Why the per-layer split is unavailable, in one line.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error("iogauge was built without clang and without the committed BPF objects (crates/trace/src/bpf/*.bpf.o), so it carries no BPF programs: rebuild from a full source tree, or with clang")]
    NoClang,
    #[error("no kernel BTF ({0}): the tracer needs a kernel built with CONFIG_DEBUG_INFO_BTF (/sys/kernel/btf/vmlinux)")]
    NoBtf(String),
    #[error("loading the BPF programs: {0} (needs root, or CAP_BPF and CAP_PERFMON)")]
    Load(String),
    #[error("attaching to tracepoint {0}: {1}")]
    Attach(&'static str, String),
    #[error("tracefs is not mounted, and mounting it at /sys/kernel/tracing failed ({0}): mount -t tracefs nodev /sys/kernel/tracing as root")]
    Tracefs(String),
    #[error("block device {0}: {1}")]
    Disk(String, String),
    #[error("{0} disks to trace, at most {MAX_DISKS}")]
    TooMany(usize),
    #[error("a capture ring of {0} bytes: it must be a power of two of at least the page size ({1} bytes)")]
    RingSize(usize, usize),
    #[error("a capture filter of {0} {1}, at most {2}")]
    FilterTooLarge(usize, &'static str, usize),
    #[error("the capture was started without a filter, so it keeps every request and has no processes to replace: start it with a CaptureFilter naming processes")]
    Unfiltered,
    #[error("updating BPF map {0}: {1}")]
    Map(&'static str, String),
}

/// An error and its sources on one line (a verifier log has many: its last lines say why).
pub(crate) fn one_line(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        // aya's errors often repeat their source's text: said once.
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = c.source();
    }
    // The verifier ends its log with statistics; the reason is just above them.
    let noise = [
        "verification time",
        "stack depth",
        "processed ",
        "mark_read",
    ];
    let lines: Vec<&str> = s
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !noise.iter().any(|n| l.starts_with(n)))
        .collect();
    let mut out = lines.first().copied().unwrap_or_default().to_string();
    if lines.len() > 1 {
        let tail = &lines[lines.len().saturating_sub(2).max(1)..];
        out = format!("{out} … {}", tail.join(" "));
    }
    out
}
