//! The cgroup I/O limits that apply to the job, as read at its start: cgroup v1's
//! `blkio.throttle.{read,write}_{bps,iops}_device` on the job's own cgroup (v1's blk-throttle
//! is flat: a cgroup's limits hold its own tasks, not its children's — blk-throttle.c,
//! `throtl_pd_init`), and v2's `io.max` on the job's cgroup and every one above it (v2's is
//! hierarchical: a parent's limit holds its children too, cgroup-v2.rst "IO"). Reading them
//! is `iogauge_probe`'s; the throttle rule names a limit from here, never guesses one.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What iogauge found of the job's cgroups and their I/O limits.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoLimits {
    /// The job's cgroup in the v1 `blkio` hierarchy (`/x`, as /proc/self/cgroup names it);
    /// `None` where that hierarchy is not mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1: Option<String>,
    /// The job's cgroup in the v2 (unified) hierarchy; `None` where it is not mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v2: Option<String>,
    /// Every limit that holds the job: set on its cgroup (v1), or on its cgroup or one above
    /// it (v2); one per file and device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<IoLimit>,
    /// Files that exist but could not be read or understood, each with why: their limits
    /// are unknown, not absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
}

/// One limit on one device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoLimit {
    /// The device's kernel name (`loop3`), or `MAJ:MIN` when sysfs does not know it.
    pub device: String,
    /// `MAJ:MIN` as the file writes it.
    pub devnum: String,
    pub what: Limited,
    /// IOPS or bytes per second.
    pub value: u64,
    /// The file that sets it: `/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device`,
    /// `/sys/fs/cgroup/x/io.max`.
    pub file: PathBuf,
    /// The cgroup it is set on (`/` for the root), the job's own or one above it.
    pub cgroup: String,
}

/// What a limit caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limited {
    ReadIops,
    WriteIops,
    ReadBps,
    WriteBps,
}

impl Limited {
    pub const ALL: [Limited; 4] = [
        Limited::ReadIops,
        Limited::WriteIops,
        Limited::ReadBps,
        Limited::WriteBps,
    ];

    /// Its name as the JSON writes it: `read_iops`.
    pub fn name(self) -> &'static str {
        match self {
            Limited::ReadIops => "read_iops",
            Limited::WriteIops => "write_iops",
            Limited::ReadBps => "read_bps",
            Limited::WriteBps => "write_bps",
        }
    }

    /// Its unit as a finding says it: `IOPS` or `B/s`.
    pub fn unit(self) -> &'static str {
        match self {
            Limited::ReadIops | Limited::WriteIops => "IOPS",
            Limited::ReadBps | Limited::WriteBps => "B/s",
        }
    }

    pub fn is_read(self) -> bool {
        matches!(self, Limited::ReadIops | Limited::ReadBps)
    }

    /// The v1 file's name for it (`blkio.throttle.read_iops_device`).
    pub fn v1_file(self) -> &'static str {
        match self {
            Limited::ReadIops => "blkio.throttle.read_iops_device",
            Limited::WriteIops => "blkio.throttle.write_iops_device",
            Limited::ReadBps => "blkio.throttle.read_bps_device",
            Limited::WriteBps => "blkio.throttle.write_bps_device",
        }
    }

    /// The v2 `io.max` key for it (`riops`).
    pub fn v2_key(self) -> &'static str {
        match self {
            Limited::ReadIops => "riops",
            Limited::WriteIops => "wiops",
            Limited::ReadBps => "rbps",
            Limited::WriteBps => "wbps",
        }
    }
}

impl IoLimits {
    /// The tightest limit of kind `what` on `device` (the one that binds: each level's limit
    /// holds, so the smallest does).
    pub fn tightest(&self, device: &str, what: Limited) -> Option<&IoLimit> {
        self.limits
            .iter()
            .filter(|l| l.device == device && l.what == what)
            .min_by_key(|l| l.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tightest_limit_binds() {
        let l = |cgroup: &str, value| IoLimit {
            device: "loop3".into(),
            devnum: "7:3".into(),
            what: Limited::ReadIops,
            value,
            file: format!("/sys/fs/cgroup/blkio{cgroup}/blkio.throttle.read_iops_device").into(),
            cgroup: cgroup.into(),
        };
        let limits = IoLimits {
            v1: Some("/x".into()),
            limits: vec![l("/x", 900), l("/", 500)],
            ..IoLimits::default()
        };
        assert_eq!(
            limits.tightest("loop3", Limited::ReadIops).unwrap().cgroup,
            "/"
        );
        assert!(limits.tightest("loop3", Limited::WriteIops).is_none());
        assert!(limits.tightest("vda", Limited::ReadIops).is_none());
        let json = serde_json::to_string(&limits).unwrap();
        assert!(json.contains(r#""what":"read_iops""#), "{json}");
        for w in Limited::ALL {
            assert_eq!(serde_json::to_value(w).unwrap(), w.name());
        }
        assert_eq!(serde_json::from_str::<IoLimits>(&json).unwrap(), limits);
    }
}
