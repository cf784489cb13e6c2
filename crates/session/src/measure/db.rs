//! `iogauge db run`: sessions on a real PostgreSQL, with the devices under the data set and
//! the CPU sampled on the same grid from the moment the sessions start — on this process, or
//! over ranks (see `ranks`): SLOB across RAC instances, the sessions of one server shared
//! between the ranks, or a private cluster per rank.

#[cfg(any(feature = "mpi", test))]
mod bundle;
#[cfg(feature = "mpi")]
mod ranks;
mod sessions;

use sessions::data_files;
pub use sessions::Shared;
use sessions::{ending, layers, measure};

use super::Finished;
use crate::ranks::{hostname, names_a_rank, per_rank, per_rank_text, rank_seed, Team};
use crate::{Session, SessionError};
use iogauge_db::{driver, Place, Prepared};
use iogauge_model::Document;

/// Where this process's part runs: over ranks, `{rank}` and `{host}` in `--dir` (every rank
/// needs a cluster of its own) or `--dsn`. Whether each rank has a server of its own.
pub fn place(team: &Team, place: &mut Place) -> anyhow::Result<bool> {
    if !team.ranked() {
        return Ok(false);
    }
    let (rank, size, host) = (team.rank(), team.size(), hostname());
    Ok(match place {
        Place::Private(d) => {
            if !names_a_rank(&d.to_string_lossy()) && size > 1 {
                return Err(team.said_by_lead(SessionError::Usage(format!(
                    "--dir {}: under mpirun every rank needs its own cluster: put {{rank}} (or {{host}}, one rank per host) in --dir, as --dir {}.{{rank}}, or give every rank one server with --dsn",
                    d.display(),
                    d.display()
                )).into()));
            }
            *d = per_rank(d, rank, &host);
            true
        }
        Place::Dsn(s) => {
            let own = names_a_rank(s);
            *s = per_rank_text(s, rank, &host);
            own
        }
    })
}

/// Over ranks, once the server is prepared: each rank's own seed on a server of its own, or
/// its share of one server's sessions (each a block numbered as one process numbers them, so
/// every session keeps its schema and its random stream).
pub fn share(team: &Team, p: &mut Prepared, own_servers: bool) -> anyhow::Result<Shared> {
    if !team.ranked() {
        return Ok(Shared {
            own_servers,
            workload: None,
        });
    }
    let (rank, size) = (team.rank(), team.size());
    let job = p.workload.clone();
    if own_servers {
        p.workload.seed = rank_seed(p.workload.seed, rank);
    } else {
        // Every rank sees the same count: a mistake said once, by rank 0.
        let n = job.sessions();
        let share = job.share(rank, size).filter(|_| n >= size);
        p.workload = share.ok_or_else(|| {
            team.said_by_lead(SessionError::Usage(format!(
                "{n} sessions cannot be shared between {size} ranks: give at least one session per rank (--readers/--writers or --sessions)"
            )).into())
        })?;
    }
    Ok(Shared {
        own_servers,
        workload: Some(job),
    })
}

/// The run of prepared `p` (this rank's part over ranks, as [`share`] made it), the server
/// stopped after it; the document to store.
pub fn run(session: &mut Session, p: Prepared, shared: Shared) -> anyhow::Result<Finished> {
    match &session.team {
        #[cfg(feature = "mpi")]
        Team::Ranks(_) => ranks::run(session, p, shared),
        _ => {
            let _ = shared;
            alone(session, p)
        }
    }
}

fn alone(session: &Session, mut p: Prepared) -> anyhow::Result<Finished> {
    let nothing = driver::Sync {
        ready: &mut || true,
        tick: &mut || {},
    };
    let layers = layers(&p, session.tracing());
    // Attached after the tracer, which put the job (and the server it starts) in its cgroup.
    let capture = session
        .capturing()
        .then(|| own_capture(&p, session.store_path().map(std::path::Path::to_path_buf)));
    let ended = std::sync::atomic::AtomicBool::new(false);
    let ((outcome, samples, sample_error), captured) = std::thread::scope(|scope| {
        let recording = capture.map(|c| {
            c.map(|(running, sink)| {
                let ended = &ended;
                scope.spawn(move || running.record(sink, None, ended, None, &mut |_, _, _| {}))
            })
        });
        let measured = measure(&p, &layers, session.stop().clone(), nothing);
        ended.store(true, std::sync::atomic::Ordering::Relaxed);
        let captured = recording.map(|r| {
            r.and_then(|h| {
                h.join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
                    .map_err(|e| format!("{e:#}"))
            })
        });
        (measured, captured)
    });
    // The run ends with its sessions: the server's shutdown after them is not measured.
    let ended_at = crate::now();
    let mut outcome = outcome.map_err(|e| p.not_started(e))?;
    p.explain(&mut outcome);
    let (mut report, histograms) = p.document(&outcome, samples, sample_error)?;
    report.meta.ended_at = Some(ended_at);
    // Stopped before printing: its shutdown's warnings belong to the run.
    report
        .warnings
        .extend(p.stop_server(outcome.error.is_some()));
    report.warnings.extend(layers.warning());
    match captured {
        None => {}
        Some(Ok(c)) => {
            report.trace = c.id;
            if let Some(d) = c.trailer.dropped.filter(|&d| d > 0) {
                report.warnings.push(format!(
                    "--capture: {d} of the run's block requests were not recorded (the kernel's ring was full): the trace misses them"
                ));
            }
        }
        Some(Err(why)) => report.warnings.push(format!(
            "--capture: the run's block requests were not recorded: {why}"
        )),
    }
    Ok(Finished::lead(
        Document::from(report),
        histograms,
        ending(&outcome),
    ))
}

/// The capture of the run's own block requests (`db run --capture`) on the disks holding its
/// data and WAL directories: the job's cgroup, the server's processes (those working in its
/// data directory, and their children as they come) and its files' writeback; and the stored
/// trace it goes into. Why not, in words.
fn own_capture(
    p: &Prepared,
    store: Option<std::path::PathBuf>,
) -> Result<(super::capture::Running, crate::traces::TraceSink), String> {
    use super::capture as cap;
    let data = p.server.data_dir.clone().ok_or(
        "a server given by --dsn whose data directory is not known here: run it with --dir, or capture it with `iogauge capture --data-dir`",
    )?;
    let dirs = [Some(data.clone()), p.server.wal_dir()];
    let disks = cap::disks_of(dirs.iter().flatten().map(std::path::PathBuf::as_path))?;
    let servers = cap::servers_on(&data);
    let plan = cap::CapturePlan {
        disks,
        filter: iogauge_trace::capture::CaptureFilter {
            cgroups: crate::layers::job_cgroups(),
            pids: servers.clone(),
            files: data_files(&dirs),
        },
        kept: format!(
            "the db run's own requests (its cgroup, the server on {} and its files)",
            data.display()
        ),
        follow: servers,
        time: None,
        ring_bytes: iogauge_trace::capture::RING_BYTES,
    };
    let running = cap::start(&plan).map_err(|e| format!("{e:#}"))?;
    let store = store
        .map(|s| iogauge_store::Store::open(&s))
        .transpose()
        .map_err(|e| e.to_string())?;
    let source = format!("db run on {}", data.display());
    let sink = crate::traces::TraceSink::create(store, None, &running.header, &source)
        .map_err(|e| format!("{e:#}"))?;
    Ok((running, sink))
}
