//! CPU time (/proc/stat, the whole machine and each CPU), page cache state
//! (/proc/meminfo), I/O pressure (/proc/pressure/io) and the load average (/proc/loadavg),
//! parsed with procfs-core from text.

use super::error::SampleError;
use iogauge_model::system::{CpuCounters, CpuLine, IoPressure, LoadAvg, MemInfo, SwapCounters};
use procfs::{FromBufRead, FromBufReadSI, FromRead};

/// Parses /proc/stat's aggregate `cpu` line with procfs-core's `KernelStats` (which also
/// insists on the `ctxt`, `btime` and `processes` lines every kernel prints).
pub fn parse_stat(text: &str) -> Result<CpuCounters, SampleError> {
    Ok(parse_stat_cpus(text)?.0)
}

/// Parses /proc/stat: the aggregate `cpu` line and one [`CpuLine`] per `cpuN` line (online
/// CPUs only, in the kernel's order), through procfs-core's `KernelStats`. procfs keeps
/// the per-CPU lines as a list without their numbers, so the numbers are read here, and
/// every `cpuN` line is checked first as the aggregate one is.
pub fn parse_stat_cpus(text: &str) -> Result<(CpuCounters, Vec<CpuLine>), SampleError> {
    // Ticks per second only feed procfs' `*_ms()` helpers, unused here: counters stay ticks.
    let si = procfs::ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: 100,
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    };
    let cpu_line = text.lines().find(|l| l.starts_with("cpu ")).unwrap_or("");
    let err = |reason: String| stat_error(cpu_line, reason);
    // procfs reports a bad column as "internal error, please report this procfs bug": check
    // the lines we use first, so the message says what is wrong with them.
    let cols: Vec<&str> = cpu_line.split_whitespace().skip(1).collect();
    check_ticks(
        cpu_line,
        &cols,
        "no `cpu` line with user, nice, system and idle",
    )?;
    let mut numbers = Vec::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
    {
        let mut cols = line.split_whitespace();
        let name = cols.next().unwrap_or("");
        let n = name["cpu".len()..]
            .parse::<u32>()
            .map_err(|_| stat_error(line, format!("{name:?} is not cpuN")))?;
        let cols: Vec<&str> = cols.collect();
        check_ticks(line, &cols, "fewer than user, nice, system and idle")?;
        numbers.push(n);
    }
    let ks = procfs::KernelStats::from_buf_read(text.as_bytes(), &si)
        .map_err(|e| err(procfs_reason(e)))?;
    if ks.cpu_time.len() != numbers.len() {
        return Err(err(format!(
            "{} cpuN lines, procfs read {}",
            numbers.len(),
            ks.cpu_time.len()
        )));
    }
    let cpus = numbers
        .into_iter()
        .zip(&ks.cpu_time)
        .map(|(cpu, t)| CpuLine {
            cpu,
            counters: counters(t),
        })
        .collect();
    Ok((counters(&ks.total), cpus))
}

fn stat_error(line: &str, reason: String) -> SampleError {
    SampleError::Parse {
        file: "/proc/stat",
        line: line.to_string(),
        reason,
    }
}

/// The tick columns (`cols`, after the name) of a /proc/stat CPU `line`: at least user,
/// nice, system and idle (`short` says so when not), each a count.
fn check_ticks(line: &str, cols: &[&str], short: &str) -> Result<(), SampleError> {
    if cols.len() < 4 {
        return Err(stat_error(line, short.into()));
    }
    match cols.iter().find(|c| c.parse::<u64>().is_err()) {
        Some(c) => Err(stat_error(line, format!("{c:?} is not a tick count"))),
        None => Ok(()),
    }
}

/// The columns iogauge keeps of one /proc/stat CPU line; those an old kernel does not print
/// read as 0.
fn counters(t: &procfs::CpuTime) -> CpuCounters {
    CpuCounters {
        user: t.user,
        nice: t.nice,
        system: t.system,
        idle: t.idle,
        iowait: t.iowait.unwrap_or(0),
        irq: t.irq.unwrap_or(0),
        softirq: t.softirq.unwrap_or(0),
        steal: t.steal.unwrap_or(0),
    }
}

/// Parses /proc/loadavg (`0.18 0.78 1.18 1/87 11425`) with procfs-core's `LoadAverage`.
/// procfs reads the averages as `f32`; the kernel prints them with two decimals, so they
/// are rounded back to hundredths (0.18, not 0.18000000715).
pub fn parse_loadavg(text: &str) -> Result<LoadAvg, SampleError> {
    let l = procfs::LoadAverage::from_read(text.as_bytes()).map_err(|e| SampleError::Parse {
        file: "/proc/loadavg",
        line: text.trim_end().to_string(),
        reason: procfs_reason(e),
    })?;
    let hundredths = |v: f32| (f64::from(v) * 100.0).round() / 100.0;
    Ok(LoadAvg {
        one: hundredths(l.one),
        five: hundredths(l.five),
        fifteen: hundredths(l.fifteen),
        runnable: l.cur,
        tasks: l.max,
    })
}

/// Parses /proc/meminfo with procfs-core's `Meminfo`, which wants every field kernels
/// since 2.6 print and converts `kB` to bytes.
pub fn parse_meminfo(text: &str) -> Result<MemInfo, SampleError> {
    for key in ["Cached:", "Buffers:", "Dirty:", "Writeback:"] {
        let line = text.lines().find(|l| l.starts_with(key));
        let value = line.and_then(|l| l.split_whitespace().nth(1));
        if value.and_then(|v| v.parse::<u64>().ok()).is_none() {
            return Err(SampleError::Parse {
                file: "/proc/meminfo",
                line: line.unwrap_or("").to_string(),
                reason: format!("no `{key} N kB` line"),
            });
        }
    }
    let m = meminfo(text)?;
    Ok(MemInfo {
        cached: m.cached,
        buffers: m.buffers,
        dirty: m.dirty,
        writeback: m.writeback,
    })
}

/// `pswpin` and `pswpout` of a /proc/vmstat text (procfs-core's `VmStat`); `None` when it
/// does not parse or lacks either.
pub fn parse_swap(text: &str) -> Option<SwapCounters> {
    let v = procfs::VmStat::from_buf_read(text.as_bytes()).ok()?.0;
    let count = |key: &str| u64::try_from(*v.get(key)?).ok();
    Some(SwapCounters {
        pages_in: count("pswpin")?,
        pages_out: count("pswpout")?,
    })
}

/// `MemTotal` of a /proc/meminfo text, bytes.
pub fn parse_mem_total(text: &str) -> Result<u64, SampleError> {
    Ok(meminfo(text)?.mem_total)
}

/// The machine's memory (`MemTotal` of /proc/meminfo), bytes.
pub fn ram_bytes() -> Result<u64, SampleError> {
    let path = "/proc/meminfo";
    let text = std::fs::read_to_string(path).map_err(|source| SampleError::Read {
        path: path.into(),
        source,
    })?;
    parse_mem_total(&text)
}

/// /proc/meminfo through procfs-core's `Meminfo` (every field kernels since 2.6 print, `kB`
/// converted to bytes): the one meminfo parser.
fn meminfo(text: &str) -> Result<procfs::Meminfo, SampleError> {
    procfs::Meminfo::from_buf_read(text.as_bytes()).map_err(|e| SampleError::Parse {
        file: "/proc/meminfo",
        line: String::new(),
        reason: procfs_reason(e),
    })
}

/// Parses /proc/pressure/io: a `some` and a `full` line, each with
/// `avg10= avg60= avg300= total=`. Lines go through procfs-core's
/// `parse_pressure_record`, which slices at byte 5 and so would panic on a bare `some`;
/// the prefix is checked here first.
pub fn parse_pressure(text: &str) -> Result<IoPressure, SampleError> {
    let record = |kind: &str| {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(kind))
            .ok_or_else(|| SampleError::Parse {
                file: "/proc/pressure/io",
                line: text.to_string(),
                reason: format!("no `{kind}` line"),
            })?;
        let err = |reason: String| SampleError::Parse {
            file: "/proc/pressure/io",
            line: line.to_string(),
            reason,
        };
        if !line.starts_with(&format!("{kind} ")) {
            return Err(err("no values".into()));
        }
        procfs::parse_pressure_record(line)
            .map_err(|e| err(format!("procfs: {e} (want avg10= avg60= avg300= total=)")))
    };
    let (some, full) = (record("some")?, record("full")?);
    Ok(IoPressure {
        some_avg10: f64::from(some.avg10),
        some_total_us: some.total,
        full_avg10: f64::from(full.avg10),
        full_total_us: full.total,
    })
}

/// procfs' message for a parse failure: its `InternalError`s carry the useful part in `msg`
/// (the rest is "bug at FILE:LINE, please report", misleading for a kernel's odd output).
fn procfs_reason(e: procfs::ProcError) -> String {
    match e {
        procfs::ProcError::InternalError(ie) => format!("procfs: {}", ie.msg),
        other => format!("procfs: {other}"),
    }
}
