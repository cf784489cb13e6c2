//! The private cluster: a PostgreSQL instance iogauge creates on the directory under test,
//! reachable only through a unix socket in that directory, started and stopped by iogauge.
//!
//! Layout of the cluster directory:
//! ```text
//! DIR/.iogauge-pg      marker: iogauge created this (and what else it created), locked while in use
//! DIR/data/            PGDATA (initdb), with iogauge.conf included from postgresql.conf
//! DIR/run/             unix socket directory (listen_addresses = '')
//! DIR/server.log       initdb's and the server's output
//! DIR/pristine/        file-level copy of the stopped, loaded cluster (data/, wal/)
//! ```
//! iogauge never writes to or deletes a path it did not create: it refuses a non-empty
//! directory without its marker, and `destroy` removes only what the marker says it made.
//! A `Cluster` stops the server it started when dropped.

use crate::bin::PgBin;
use crate::cgroup::MemCgroup;
use crate::dsn::{connect, server_err, CONNECT_TIMEOUT};
use crate::error::PgError;
use crate::files;
use crate::server::{leftover_pid, log_tail, stop_leftover, user_name, wait_until, Owner, Server};
use crate::settings::{merged, render_conf, settings, Setting};
use postgres::Config;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database the test schemas live in.
pub const DATABASE: &str = "iogauge";
const PORT: u16 = 5432;
const START_TIMEOUT: Duration = Duration::from_secs(120);
const STOP_GRACE: Duration = Duration::from_secs(120);

/// What `Cluster::init` needs.
#[derive(Clone, Debug, Default)]
pub struct ClusterConfig {
    /// The cluster directory, on the storage under test. Created if missing; an existing one
    /// must be empty.
    pub dir: PathBuf,
    /// WAL elsewhere (`initdb --waldir`); by default WAL shares the data's storage.
    pub wal_dir: Option<PathBuf>,
    /// `name=value` settings over [`crate::settings::DEFAULTS`].
    pub overrides: Vec<(String, String)>,
    /// The account the server runs as when iogauge runs as root; default "postgres".
    pub run_as: Option<String>,
    /// The PostgreSQL to use; default [`PgBin::find`].
    pub bin: Option<PgBin>,
}

/// A private cluster on disk, and the server this process started on it, if any.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    bin: PgBin,
    owner: Owner,
    marker: files::Marker,
    /// Holds an exclusive flock on the marker: one iogauge per cluster at a time.
    _lock: File,
    server: Option<Server>,
    cache_limit: Option<u64>,
}

impl Cluster {
    /// initdb on `cfg.dir` with iogauge's settings. The server is not started.
    pub fn init(cfg: &ClusterConfig) -> Result<Cluster, PgError> {
        let bin = match &cfg.bin {
            Some(b) => b.clone(),
            None => PgBin::find()?,
        };
        if bin.major < 14 {
            return Err(PgError::Usage(format!(
                "PostgreSQL {} at {} is too old: iogauge needs 14 or newer (pg_stat_wal)",
                bin.major,
                bin.dir.display()
            )));
        }
        let owner = Owner::resolve(cfg.run_as.as_deref().unwrap_or("postgres"))?;
        let dir = files::absolute(&cfg.dir)?;
        let socket = dir.join("run").join(format!(".s.PGSQL.{PORT}"));
        if socket.as_os_str().len() > 107 {
            return Err(PgError::dir(
                &dir,
                "path too long for the server's unix socket (108 bytes); choose a shorter directory",
            ));
        }
        let created_dir = files::claim_dir(&dir)?;
        owner.check_reachable(&dir)?;
        let wal_dir = match &cfg.wal_dir {
            Some(w) => {
                let w = files::absolute(w)?;
                Some((w.clone(), files::claim_dir(&w)?))
            }
            None => None,
        };
        let marker = files::Marker {
            created_dir,
            wal_dir: wal_dir.clone(),
            bin: bin.dir.clone(),
        };
        marker.write(&dir)?;
        let lock = files::lock(&dir)?;
        let data = dir.join("data");
        let run = dir.join("run");
        for d in [&data, &run] {
            std::fs::create_dir(d).map_err(|e| PgError::io(d, e))?;
            owner.chown(d)?;
        }
        if let Some((w, _)) = &wal_dir {
            owner.chown(w)?;
        }
        let mut cluster = Cluster {
            dir,
            bin,
            owner,
            marker,
            _lock: lock,
            server: None,
            cache_limit: None,
        };
        cluster.initdb()?;
        cluster.configure(&cfg.overrides)?;
        Ok(cluster)
    }

    /// An existing cluster iogauge created at `dir`.
    pub fn open(dir: &Path) -> Result<Cluster, PgError> {
        let dir = files::absolute(dir)?;
        let marker = files::Marker::read(&dir)?;
        let lock = files::lock(&dir)?;
        let bin =
            PgBin::find_in(std::slice::from_ref(&marker.bin), None).or_else(|_| PgBin::find())?;
        let owner =
            Owner::resolve(&owner_of(&dir.join("data")).unwrap_or_else(|| "postgres".into()))?;
        Ok(Cluster {
            dir,
            bin,
            owner,
            marker,
            _lock: lock,
            server: None,
            cache_limit: None,
        })
    }

    fn initdb(&self) -> Result<(), PgError> {
        let mut cmd = self.owner.command(&self.bin.tool("initdb"), &self.dir);
        cmd.arg("-D")
            .arg(self.data_dir())
            .args(["--auth=trust", "--encoding=UTF8", "--locale=C", "-U"])
            .arg(&self.owner.name);
        if let Some((w, _)) = &self.marker.wal_dir {
            cmd.arg(format!("--waldir={}", w.display()));
        }
        self.run_logged("initdb", cmd)
    }

    /// Runs `cmd` with output appended to the log; an error carries the log's tail.
    fn run_logged(&self, what: &str, mut cmd: std::process::Command) -> Result<(), PgError> {
        let log = self.log_path();
        let f = File::options()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(|e| PgError::io(&log, e))?;
        let f2 = f.try_clone().map_err(|e| PgError::io(&log, e))?;
        let st = cmd
            .stdout(f)
            .stderr(f2)
            .status()
            .map_err(|e| PgError::Command {
                what: what.into(),
                log: log.clone(),
                why: e.to_string(),
            })?;
        if st.success() {
            Ok(())
        } else {
            Err(PgError::Command {
                what: what.into(),
                why: format!("{st}: {}", log_tail(&log, 5)),
                log,
            })
        }
    }

    /// Writes iogauge's settings (defaults with `overrides` applied) to `data/iogauge.conf`,
    /// included at the end of postgresql.conf. Takes effect at the next start.
    pub fn configure(&mut self, overrides: &[(String, String)]) -> Result<(), PgError> {
        let mut all = merged(overrides);
        all.push((
            "unix_socket_directories".into(),
            self.run_dir().display().to_string(),
        ));
        all.push(("port".into(), PORT.to_string()));
        let conf = self.data_dir().join("iogauge.conf");
        std::fs::write(&conf, render_conf(&all)).map_err(|e| PgError::io(&conf, e))?;
        self.owner.chown(&conf)?;
        let main = self.data_dir().join("postgresql.conf");
        let text = std::fs::read_to_string(&main).map_err(|e| PgError::io(&main, e))?;
        let include = "include = 'iogauge.conf'";
        if !text.lines().any(|l| l.trim() == include) {
            std::fs::write(&main, format!("{text}\n{include}\n"))
                .map_err(|e| PgError::io(&main, e))?;
        }
        Ok(())
    }

    /// Runs the server at the next start inside a memory cgroup limited to `bytes`, or without
    /// one. The limit covers the server's shared memory and processes as well as the page
    /// cache it uses: `start` refuses a limit below shared memory + 32 MiB.
    pub fn set_cache_limit(&mut self, bytes: Option<u64>) {
        self.cache_limit = bytes;
    }

    /// Starts the server and waits until it accepts connections; creates the test database on
    /// first start. A server left running by an earlier iogauge on this cluster is stopped
    /// first (the marker's lock shows no other iogauge is using it).
    pub fn start(&mut self) -> Result<(), PgError> {
        if let Some(s) = self.server.as_mut() {
            if s.exited().is_none() {
                return Ok(());
            }
            // It died since: clean up (reap, remove its cgroup) and start afresh.
            let _ = self
                .server
                .take()
                .expect("checked above")
                .stop(Duration::ZERO);
        }
        let data = self.data_dir();
        if let Some(pid) = leftover_pid(&data) {
            stop_leftover(&data, pid)?;
        }
        if let Some(limit) = self.cache_limit {
            self.check_cache_limit(limit)?;
        }
        let cgroup = match self.cache_limit {
            Some(limit) => Some(MemCgroup::create(
                &format!("iogauge-pg-{}", std::process::id()),
                limit,
            )?),
            None => None,
        };
        let server = Server::spawn(
            &self.owner,
            &self.bin.tool("postgres"),
            &data,
            &self.log_path(),
            cgroup,
        )?;
        self.server = Some(server);
        let mut admin = self.config();
        admin.dbname("postgres");
        let mut last = String::new();
        let mut exited = None;
        let ready = wait_until(START_TIMEOUT, || {
            if let Some(st) = self.server.as_mut().and_then(|s| s.exited()) {
                exited = Some(st);
                return true;
            }
            match connect(&admin) {
                Ok(_) => true,
                Err(e) => {
                    last = e.to_string();
                    false
                }
            }
        });
        if let Some(st) = exited {
            let s = self.server.take().expect("server was just set");
            let _ = s.stop(Duration::ZERO);
            return Err(PgError::Start {
                dir: self.dir.clone(),
                why: format!("postgres exited ({st}): {}", log_tail(&self.log_path(), 5)),
            });
        }
        if !ready {
            let _ = self.stop();
            return Err(PgError::Start {
                dir: self.dir.clone(),
                why: format!("not accepting connections after {START_TIMEOUT:?}: {last}"),
            });
        }
        self.ensure_database(&admin)
    }

    /// The cgroup's limit covers the server's shared memory (never reclaimable without swap)
    /// and its processes too: refuse a limit that would leave no page cache, or get the
    /// server OOM-killed mid-run.
    fn check_cache_limit(&self, limit: u64) -> Result<(), PgError> {
        const HEADROOM: u64 = 32 << 20;
        if self.bin.major < 15 {
            return Ok(());
        }
        let out = self
            .owner
            .command(&self.bin.tool("postgres"), &self.dir)
            .arg("-D")
            .arg(self.data_dir())
            .args(["-C", "shared_memory_size"])
            .output()
            .map_err(|e| PgError::io(self.bin.tool("postgres"), e))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(shm_mb) = text.trim().parse::<u64>().ok() else {
            return Err(PgError::Start {
                dir: self.dir.clone(),
                why: format!(
                    "cannot read shared_memory_size: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            });
        };
        let need = (shm_mb << 20) + HEADROOM;
        if limit < need {
            return Err(PgError::Usage(format!(
                "cache limit {} MiB is too small: the server's shared memory is {shm_mb} MiB \
                 and its processes need about 32 MiB more; give at least {} MiB",
                limit >> 20,
                need >> 20
            )));
        }
        Ok(())
    }

    fn ensure_database(&self, admin: &Config) -> Result<(), PgError> {
        let mut c = connect(admin)?;
        let exists = c
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DATABASE])
            .map_err(|e| server_err(admin, &e))?
            .is_some();
        if !exists {
            c.batch_execute(&format!("CREATE DATABASE {DATABASE}"))
                .map_err(|e| server_err(admin, &e))?;
        }
        Ok(())
    }

    /// Stops the server (fast shutdown) if it runs: the one this process started, or one left
    /// running by an earlier iogauge. Removes the cgroup.
    pub fn stop(&mut self) -> Result<(), PgError> {
        match self.server.take() {
            Some(s) => s.stop(STOP_GRACE),
            None => match leftover_pid(&self.data_dir()) {
                Some(pid) => stop_leftover(&self.data_dir(), pid),
                None => Ok(()),
            },
        }
    }

    /// Whether the server this process started is still up; `Err` with the exit status and
    /// the log's last lines if it died. `Ok(false)` when this process started none.
    pub fn check_alive(&mut self) -> Result<bool, PgError> {
        let Some(s) = self.server.as_mut() else {
            return Ok(false);
        };
        match s.exited() {
            None => Ok(true),
            Some(st) => {
                let s = self.server.take().expect("checked above");
                let _ = s.stop(Duration::ZERO);
                Err(PgError::Server {
                    server: self.dir.display().to_string(),
                    why: format!("the server died ({st}): {}", log_tail(&self.log_path(), 5)),
                })
            }
        }
    }

    /// The postmaster's pid, if this process started it and it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(|s| s.pid())
    }

    /// The memory cgroup the running server is in, if any.
    pub fn cgroup(&self) -> Option<&Path> {
        self.server.as_ref().and_then(|s| s.cgroup())
    }

    /// How to connect: the unix socket, the server's superuser, the test database.
    pub fn config(&self) -> Config {
        let mut c = Config::new();
        c.host_path(self.run_dir())
            .port(PORT)
            .user(&self.owner.name)
            .dbname(DATABASE)
            .application_name("iogauge")
            .connect_timeout(CONNECT_TIMEOUT);
        c
    }

    pub fn client(&self) -> Result<postgres::Client, PgError> {
        connect(&self.config())
    }

    /// The settings in force, read back from the running server.
    pub fn settings(&self) -> Result<Vec<Setting>, PgError> {
        let cfg = self.config();
        settings(&mut connect(&cfg)?).map_err(|e| server_err(&cfg, &e))
    }

    /// Takes the file-level copy `reset` restores: stops the server, copies data (and the WAL
    /// directory), restarts it if it was running.
    pub fn snapshot_pristine(&mut self) -> Result<(), PgError> {
        let was = self.server.is_some();
        self.stop()?;
        files::snapshot(
            &self.dir,
            self.marker.wal_dir.as_ref().map(|w| w.0.as_path()),
        )?;
        if was {
            self.start()?;
        }
        Ok(())
    }

    /// Back to the pristine loaded state: stop, replace data (and WAL) with the copy, sync,
    /// restart if it was running.
    pub fn reset(&mut self) -> Result<(), PgError> {
        let was = self.server.is_some();
        self.stop()?;
        files::restore(
            &self.dir,
            self.marker.wal_dir.as_ref().map(|w| w.0.as_path()),
        )?;
        if was {
            self.start()?;
        }
        Ok(())
    }

    /// Stops the server and removes everything iogauge created here, and nothing else.
    pub fn destroy(mut self) -> Result<(), PgError> {
        self.stop()?;
        files::remove(&self.dir, &self.marker)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }
    pub fn run_dir(&self) -> PathBuf {
        self.dir.join("run")
    }
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }
    pub fn bin(&self) -> &PgBin {
        &self.bin
    }
    pub fn has_pristine(&self) -> bool {
        self.dir.join("pristine").join("data").is_dir()
    }
}

impl Drop for Cluster {
    /// Stops the server this process started (never one it found running).
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            let _ = s.stop(STOP_GRACE);
        }
    }
}

/// The name of the account owning `path`.
fn owner_of(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    user_name(std::fs::metadata(path).ok()?.uid())
}
