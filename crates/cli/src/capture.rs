//! `iogauge capture`: the block requests of some disks (all, or a process's, or a database
//! server's) recorded into a stored trace (and/or a file) until a time or Ctrl-C, then its
//! summary printed.

pub mod args;

use crate::session::print_stdout;
use crate::usage::{usage, UsageError};
use args::CaptureArgs;
use iogauge_session::measure::capture::{self as cap, CapturePlan, EVERYTHING};
use iogauge_session::traces::TraceSink;
use iogauge_trace::capture::{CaptureFilter, RING_BYTES};
use iogauge_trace::Disk;
use std::process::ExitCode;

/// The whole disks --path and --device name, each once, sorted.
fn named_disks(a: &CaptureArgs) -> Result<Vec<Disk>, UsageError> {
    let mut names: Vec<String> = Vec::new();
    for p in &a.paths {
        names.push(cap::disk_of(p).map_err(|e| UsageError(format!("--path {e}")))?);
    }
    for d in &a.devices {
        // A /dev path names its disk as --path does (a partition's included).
        names.push(if d.starts_with('/') {
            cap::disk_of(std::path::Path::new(d))
                .map_err(|e| UsageError(format!("--device {e}")))?
        } else {
            d.clone()
        });
    }
    names.sort();
    names.dedup();
    names
        .iter()
        .map(|n| {
            Disk::named(n).map_err(|e| {
                UsageError(format!(
                    "--device {n}: {e}; give a whole disk as /sys/block lists it"
                ))
            })
        })
        .collect()
}

/// The flags checked into a plan, before anything is attached or created.
fn plan_of(a: &CaptureArgs) -> Result<CapturePlan, UsageError> {
    if a.paths.is_empty() && a.devices.is_empty() {
        return usage(
            "say which disks to record: --path PATH (the disk holding it) or --device NAME",
        );
    }
    let disks = named_disks(a)?;
    let mut follow = a.pids.clone();
    let mut kept = Vec::new();
    if !a.pids.is_empty() {
        for p in &a.pids {
            if !std::path::Path::new(&format!("/proc/{p}")).exists() {
                return usage(format!("--pid {p}: no such process"));
            }
        }
        kept.push(format!(
            "the requests of process {} and its descendants",
            join(&a.pids)
        ));
    }
    if let Some(dir) = &a.data_dir {
        let servers = cap::servers_on(dir);
        if servers.is_empty() {
            return usage(format!(
                "--data-dir {}: no running process works in it; start the server, or give its --pid",
                dir.display()
            ));
        }
        kept.push(format!(
            "the requests of the server on {} (process {} and its descendants)",
            dir.display(),
            join(&servers)
        ));
        follow.extend(servers);
    }
    let given = cgroup_given(a, &mut kept)?;
    let cgroups: Vec<u64> = {
        let mut c: Vec<u64> = follow
            .iter()
            .filter_map(|&p| cap::io_cgroup_of(p))
            .collect();
        c.extend(given);
        c.sort_unstable();
        c.dedup();
        c
    };
    let ring = a.ring.unwrap_or(RING_BYTES as u64);
    if !ring.is_power_of_two() || !(4096..=1 << 30).contains(&ring) {
        return usage(format!(
            "--ring {ring}: give a power of two from 4k to 1g, e.g. --ring 64m"
        ));
    }
    if let Some(o) = &a.output {
        if o.exists() {
            return usage(format!(
                "--output {}: exists; iogauge never replaces a file: give a new name",
                o.display()
            ));
        }
    }
    Ok(CapturePlan {
        disks,
        filter: CaptureFilter {
            cgroups,
            pids: follow.clone(),
            files: Vec::new(),
        },
        kept: if kept.is_empty() {
            EVERYTHING.to_string()
        } else {
            kept.join("; ")
        },
        follow,
        time: a.time,
        ring_bytes: ring as usize,
    })
}

/// `--cgroup DIR`'s kernfs id (the inode of its directory), said in `kept`.
fn cgroup_given(a: &CaptureArgs, kept: &mut Vec<String>) -> Result<Option<u64>, UsageError> {
    use std::os::unix::fs::MetadataExt;
    let Some(dir) = &a.cgroup else {
        return Ok(None);
    };
    if !dir.join("cgroup.procs").is_file() {
        return usage(format!(
            "--cgroup {}: not a cgroup's directory (it has no cgroup.procs); give one under /sys/fs/cgroup/blkio (v1) or /sys/fs/cgroup (v2)",
            dir.display()
        ));
    }
    let ino = std::fs::metadata(dir)
        .map_err(|e| UsageError(format!("--cgroup {}: {e}", dir.display())))?
        .ino();
    kept.push(format!("the requests of cgroup {}", dir.display()));
    Ok(Some(ino))
}

fn join(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn capture(a: CaptureArgs) -> anyhow::Result<ExitCode> {
    let plan = plan_of(&a)?;
    let store = if a.no_store {
        None
    } else {
        Some(iogauge_store::Store::open_resolved(
            a.store.store.as_deref(),
        )?)
    };
    let store_path = store.as_ref().map(|s| s.path().to_path_buf());
    let stop = iogauge_session::stop_flag()?;
    let running = cap::start(&plan)?;
    let disks: Vec<&str> = plan.disks.iter().map(|d| d.name.as_str()).collect();
    let source = format!("{} ({})", disks.join(", "), plan.kept);
    let sink = TraceSink::create(store, a.output.as_deref(), &running.header, &source)?;
    eprintln!(
        "capturing the block requests of {}{}; Ctrl-C ends it",
        disks.join(", "),
        a.time
            .map_or(String::new(), |t| format!(" for {:.0} s", t.as_secs_f64()))
    );
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let progress = &mut |secs: f64, n: u64, dropped: u64| {
        if tty {
            eprint!("\r{secs:>6.0} s  {n:>12} requests  {dropped} lost ");
        }
    };
    let done = running.record(sink, plan.time, &stop, None, progress)?;
    if tty {
        eprintln!();
    }
    let name = done
        .id
        .map_or_else(|| "trace".to_string(), |id| format!("trace {id}"));
    let text = if a.json {
        let v = serde_json::json!({
            "id": done.id,
            "header": done.header,
            "trailer": done.trailer,
            "summary": done.summary,
        });
        format!("{}\n", serde_json::to_string_pretty(&v)?)
    } else {
        iogauge_report::trace_text(&name, &done.header, Some(&done.trailer), &done.summary)
    };
    print_stdout(&text)?;
    if done.unrecorded > 0 {
        eprintln!(
            "note: {} requests of operations a trace does not hold (secure erase, zone commands) were not recorded",
            done.unrecorded
        );
    }
    if let (Some(id), Some(p)) = (done.id, store_path) {
        eprintln!("stored as trace {id} in {}", p.display());
    }
    if let Some(o) = &a.output {
        eprintln!("written to {}", o.display());
    }
    Ok(ExitCode::SUCCESS)
}
