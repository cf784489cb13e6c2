//! The checks of `iogauge doctor`, each read from the running kernel and the installed
//! programs, never from what a build was told.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Here and working.
    Ok,
    /// Worth knowing; nothing is lost.
    Note,
    /// Here in part: some figures are weaker or some options unavailable.
    Limited,
    /// Not here: what it costs is said.
    Missing,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Note => "note",
            Status::Limited => "limited",
            Status::Missing => "missing",
        }
    }
}

/// One piece: what was found, and for a piece not all there what it costs and the fix.
#[derive(Debug)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub found: String,
    pub cost: Option<String>,
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, found: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Ok,
            found: found.into(),
            cost: None,
            fix: None,
        }
    }

    fn not(
        name: &'static str,
        status: Status,
        found: impl Into<String>,
        cost: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name,
            status,
            found: found.into(),
            cost: Some(cost.into()).filter(|c: &String| !c.is_empty()),
            fix: Some(fix.into()).filter(|f: &String| !f.is_empty()),
        }
    }

    /// `ok       io_uring     works (kernel.io_uring_disabled = 0)`, with `; costs: …; fix: …`.
    pub fn line(&self) -> String {
        let mut s = format!("{:<8} {:<12} {}", self.status.word(), self.name, self.found);
        if let Some(c) = &self.cost {
            s.push_str("; costs: ");
            s.push_str(c);
        }
        if let Some(f) = &self.fix {
            s.push_str("; fix: ");
            s.push_str(f);
        }
        s
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "status": self.status.word(),
            "found": self.found,
            "cost": self.cost,
            "fix": self.fix,
        })
    }
}

/// Every check, in the order a run meets them.
pub fn all(dir: &Path) -> Vec<Check> {
    vec![
        io_uring(),
        direct(dir),
        privileges(),
        tracer(),
        tracefs(),
        huge_pages(),
        cgroups(),
        postgres(),
        mariadb(),
        mpi(),
        chromium(),
    ]
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn io_uring() -> Check {
    let disabled = read("/proc/sys/kernel/io_uring_disabled");
    let setting = disabled.as_deref().map_or(String::new(), |d| {
        format!(" (kernel.io_uring_disabled = {d})")
    });
    match iogauge_engine::probe_uring() {
        Ok(()) => Check::ok("io_uring", format!("works{setting}")),
        Err(e) => Check::not(
            "io_uring",
            Status::Missing,
            format!("{e}{setting}"),
            "run and calibrate need --engine psync (one I/O per system call: a queue of N needs N workers)",
            match disabled.as_deref() {
                Some("1" | "2") => "sysctl -w kernel.io_uring_disabled=0",
                _ => "a kernel with io_uring (5.6 or newer)",
            },
        ),
    }
}

/// O_DIRECT where the targets will be: an unnamed file (`O_TMPFILE`) opened with it, gone
/// when closed.
fn direct(dir: &Path) -> Check {
    let fs = iogauge_probe::fs_of(dir).map_or_else(|_| "unknown".into(), |f| f.name);
    let at = format!("{fs} at {}", dir.display());
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
        return Check::not(
            "O_DIRECT",
            Status::Note,
            format!("not checked on {at}"),
            "",
            "",
        );
    };
    // SAFETY: `c` is a NUL-terminated path; the returned fd (if any) is closed below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_TMPFILE | libc::O_RDWR | libc::O_DIRECT | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd >= 0 {
        // SAFETY: `fd` was just opened by this function and is not used after.
        unsafe { libc::close(fd) };
        return Check::ok("O_DIRECT", format!("works on {at}"));
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL) => Check::not(
            "O_DIRECT",
            Status::Missing,
            format!("{at} refuses O_DIRECT"),
            "targets there are measured through the page cache only (--buffered)",
            "put the targets on ext4, xfs or a block device (doctor --target DIR checks another place)",
        ),
        Some(libc::EACCES | libc::EROFS | libc::EPERM) => Check::not(
            "O_DIRECT",
            Status::Missing,
            format!("cannot create files on {at} ({e})"),
            "iogauge cannot make its scratch files there",
            "use a writable directory (doctor --target DIR)",
        ),
        _ => Check::not(
            "O_DIRECT",
            Status::Note,
            format!("not checked on {at} ({e}); a run says so if O_DIRECT is refused"),
            "",
            "",
        ),
    }
}

/// The effective capabilities of this process (`CapEff` of /proc/self/status).
fn capabilities() -> u64 {
    read("/proc/self/status")
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0)
}

fn privileges() -> Check {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Check::ok("privileges", "root");
    }
    const CAP_PERFMON: u64 = 38;
    const CAP_BPF: u64 = 39;
    let caps = capabilities();
    let has = |bit: u64| caps & (1 << bit) != 0;
    let found = if has(CAP_BPF) && has(CAP_PERFMON) {
        "not root, with CAP_BPF and CAP_PERFMON"
    } else {
        "not root"
    };
    Check::not(
        "privileges",
        Status::Limited,
        found,
        "no page-cache drop before a cold db run, no memory cgroup for --cache-limit, no raw devices you cannot open; without CAP_BPF and CAP_PERFMON no tracer",
        "run as root (sudo iogauge …)",
    )
}

fn tracer() -> Check {
    if !iogauge_trace::built_in() {
        return Check::not(
            "tracer",
            Status::Missing,
            "this build carries no BPF programs",
            "no per-layer latency split; MariaDB's redo-log times not measured",
            "rebuild from a full source tree (the objects are committed under crates/trace/src/bpf)",
        );
    }
    let btf = Path::new("/sys/kernel/btf/vmlinux").exists();
    match iogauge_trace::Tracer::start(&[], None) {
        Ok(t) => {
            drop(t);
            Check::ok(
                "tracer",
                format!(
                    "BPF programs load and attach (objects {}; kernel BTF {})",
                    super::objects_from(iogauge_trace::OBJECTS_FROM),
                    if btf {
                        "at /sys/kernel/btf/vmlinux"
                    } else {
                        "found"
                    }
                ),
            )
        }
        Err(e) => Check::not(
            "tracer",
            Status::Missing,
            e.to_string(),
            "no per-layer latency split; MariaDB's redo-log times not measured",
            if btf {
                "run as root"
            } else {
                "a kernel with CONFIG_DEBUG_INFO_BTF"
            },
        ),
    }
}

/// Where tracefs is mounted, from /proc/self/mounts.
fn tracefs_at() -> Option<PathBuf> {
    read("/proc/self/mounts")?.lines().find_map(|l| {
        let mut f = l.split(' ');
        let (_, at, kind) = (f.next()?, f.next()?, f.next()?);
        (kind == "tracefs").then(|| PathBuf::from(at))
    })
}

fn tracefs() -> Check {
    if let Some(at) = tracefs_at() {
        return Check::ok("tracefs", format!("mounted at {}", at.display()));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Check::not(
            "tracefs",
            Status::Note,
            "not mounted; iogauge mounts it at /sys/kernel/tracing when MariaDB's redo probe needs it (the block tracer needs none)",
            "",
            "",
        );
    }
    Check::not(
        "tracefs",
        Status::Missing,
        "not mounted, and only root can mount it",
        "MariaDB's redo-log write and sync times not measured",
        "mount -t tracefs nodev /sys/kernel/tracing (as root)",
    )
}

fn huge_pages() -> Check {
    let thp = read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|s| {
        let start = s.find('[')? + 1;
        let end = s[start..].find(']')? + start;
        Some(s[start..end].to_string())
    });
    let free = read("/proc/meminfo").and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("HugePages_Free:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
    });
    let found = format!(
        "transparent huge pages: {}; hugetlbfs pages free: {}",
        thp.as_deref().unwrap_or("not in this kernel"),
        free.map_or("not in this kernel".into(), |n| n.to_string())
    );
    let thp_usable = matches!(thp.as_deref(), Some("always" | "madvise"));
    if thp_usable || free.is_some_and(|n| n > 0) {
        return Check::ok("huge pages", found);
    }
    Check::not(
        "huge pages",
        Status::Limited,
        found,
        "I/O buffers on 4 KiB pages: small-block figures depend on where memory happened to be (virtio, IOMMU)",
        "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled, or echo 64 > /proc/sys/vm/nr_hugepages",
    )
}

/// The controllers this machine's cgroups offer: v2's `cgroup.controllers`, else v1's
/// mounted hierarchies under /sys/fs/cgroup.
fn controllers() -> (&'static str, Vec<String>) {
    if let Some(list) = read("/sys/fs/cgroup/cgroup.controllers") {
        return ("v2", list.split_whitespace().map(String::from).collect());
    }
    let mounted = ["memory", "blkio", "cpu"]
        .into_iter()
        .filter(|c| Path::new("/sys/fs/cgroup").join(c).is_dir())
        .map(String::from)
        .collect();
    ("v1", mounted)
}

fn cgroups() -> Check {
    let (version, have) = controllers();
    let found = format!(
        "cgroup {version}: {}",
        if have.is_empty() {
            "no controllers".to_string()
        } else {
            have.join(", ")
        }
    );
    let io = if version == "v2" { "io" } else { "blkio" };
    let mut lost = Vec::new();
    if !have.iter().any(|c| c == "memory") {
        lost.push("db run --cache-limit is refused (no memory controller)");
    }
    if !have.iter().any(|c| c == io) {
        lost.push("I/O limits on the job's devices are not read, so a cgroup's throttle could pass for the device");
    }
    if lost.is_empty() {
        return Check::ok("cgroups", found);
    }
    Check::not(
        "cgroups",
        Status::Limited,
        found,
        lost.join("; "),
        format!(
            "enable the {} controller(s) (mount them, or boot with them on)",
            {
                let mut want = vec![];
                if !have.iter().any(|c| c == "memory") {
                    want.push("memory");
                }
                if !have.iter().any(|c| c == io) {
                    want.push(io);
                }
                want.join(" and ")
            }
        ),
    )
}

fn postgres() -> Check {
    let found = iogauge_db::PgBin::all();
    if found.is_empty() {
        return Check::not(
            "PostgreSQL",
            Status::Missing,
            "none on PATH or under /usr/lib/postgresql/*/bin",
            "db run needs a PostgreSQL (14 or newer) or MariaDB",
            "apt install postgresql (or --pg-bin DIR)",
        );
    }
    let list: Vec<String> = found
        .iter()
        .map(|b| format!("{} ({})", b.major, b.dir.display()))
        .collect();
    Check::ok("PostgreSQL", list.join(", "))
}

fn mariadb() -> Check {
    match iogauge_db::mariadb::MariaBin::find(None) {
        Ok(b) => Check::ok("MariaDB", format!("{} ({})", b.version, b.server.display())),
        Err(e) => Check::not(
            "MariaDB",
            Status::Missing,
            // The error's own advice is this line's fix: said once.
            match iogauge_db::chain_text(&e) {
                t if t.contains("not found") => "no mariadbd on PATH or in /usr/sbin".into(),
                t => t,
            },
            "db run --engine mariadb unavailable (PostgreSQL still works)",
            "apt install mariadb-server (or --mysql-bin DIR)",
        ),
    }
}

/// The first `name` on PATH that is an executable file.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn mpi() -> Check {
    let mpirun = on_path("mpirun");
    let at = mpirun.as_ref().map_or("no mpirun on PATH".into(), |p| {
        format!("mpirun at {}", p.display())
    });
    match (cfg!(feature = "mpi"), &mpirun) {
        (true, Some(_)) => Check::ok("MPI", format!("{at}; this build runs over MPI ranks")),
        (true, None) => Check::not(
            "MPI",
            Status::Missing,
            at,
            "no scale-out over hosts (mpirun -np N iogauge …)",
            "apt install openmpi-bin",
        ),
        (false, _) => Check::not(
            "MPI",
            Status::Note,
            format!("{at}; this build has no MPI, so mpirun -np N iogauge … is refused (one host works)"),
            "",
            "for scale-out: cargo build --release --features mpi (with libopenmpi-dev and libclang-dev)",
        ),
    }
}

fn chromium() -> Check {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(on_path);
    Check::not(
        "chromium",
        Status::Note,
        match found {
            Some(p) => format!(
                "{} (not needed: reports are self-contained HTML)",
                p.display()
            ),
            None => {
                "not found, and not needed: reports are self-contained HTML, opened in any browser"
                    .into()
            }
        },
        "",
        "",
    )
}
