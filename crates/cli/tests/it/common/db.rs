//! The database tests' one tester (DESIGN's "one seam per variation"): the two engines
//! iogauge runs the SLOB method on, what differs between them (flags, names, files, the
//! words a result uses) in one table, [`per_engine!`] to run one test body on each, and the
//! steps every database test repeats: a private server set up, run and dropped, its
//! processes and files, a server of the user's named by a DSN.

use super::*;
use serde_json::Value;
use std::process::Command;

/// The engines `iogauge db` runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Postgres,
    Mariadb,
}

/// One test body run on each engine: `per_engine! { fn name(e) { … } }` makes `fn name(e:
/// Engine)` and the tests `name::postgres` and `name::mariadb`, so a behaviour is asserted
/// for both by one body. Where an engine lacks a feature, the body says so in a per-engine
/// value (a `match e`), never by skipping.
macro_rules! per_engine {
    ($($(#[$m:meta])* fn $name:ident($e:ident) $body:block)*) => {$(
        $(#[$m])*
        fn $name($e: $crate::common::Engine) $body

        mod $name {
            #[test]
            fn postgres() {
                super::$name($crate::common::Engine::Postgres)
            }

            #[test]
            fn mariadb() {
                super::$name($crate::common::Engine::Mariadb)
            }
        }
    )*};
}
pub(crate) use per_engine;

impl Engine {
    pub const ALL: [Engine; 2] = [Engine::Postgres, Engine::Mariadb];

    /// Its name for `--engine`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Postgres => "postgres",
            Engine::Mariadb => "mariadb",
        }
    }

    /// A loud failure, not a skip, when the engine is not installed (Debian's PostgreSQL is
    /// the suite's base; MariaDB is checked).
    pub fn require(self) {
        if self == Engine::Mariadb {
            require_mariadb();
        }
    }

    /// The directory name a test gives its private server.
    pub fn dir_name(self) -> &'static str {
        match self {
            Engine::Postgres => "pg",
            Engine::Mariadb => "maria",
        }
    }

    /// A small data set's `--scale`: 2,000 rows of PostgreSQL's, 1,024 of MariaDB's (16 MiB).
    pub fn small_scale(self) -> &'static str {
        match self {
            Engine::Postgres => "2000",
            Engine::Mariadb => "16M",
        }
    }

    /// The file that says iogauge made the server in a directory.
    pub fn marker(self) -> &'static str {
        match self {
            Engine::Postgres => ".iogauge-pg",
            Engine::Mariadb => ".iogauge-maria",
        }
    }

    /// The private server's Unix socket in `dir`.
    pub fn socket(self, dir: &Path) -> PathBuf {
        dir.join("run").join(match self {
            Engine::Postgres => ".s.PGSQL.5432",
            Engine::Mariadb => "mysqld.sock",
        })
    }

    /// The file a running private server in `dir` holds its pid in.
    pub fn pid_file(self, dir: &Path) -> PathBuf {
        match self {
            Engine::Postgres => dir.join("data").join("postmaster.pid"),
            Engine::Mariadb => dir.join("run").join("mysqld.pid"),
        }
    }

    /// The wait event of a session reading a data file.
    pub fn read_event(self) -> &'static str {
        match self {
            Engine::Postgres => "DataFileRead",
            Engine::Mariadb => "innodb_data_file read",
        }
    }

    /// What a command on a directory without a server of the engine's says.
    pub fn none_here(self) -> &'static str {
        match self {
            Engine::Postgres => "no iogauge cluster",
            Engine::Mariadb => "no MariaDB made by iogauge",
        }
    }

    /// How `show` names the server ("… on PostgreSQL 15.x", "… on MariaDB 10.x").
    pub fn shown_as(self) -> &'static str {
        match self {
            Engine::Postgres => "on PostgreSQL 15.",
            Engine::Mariadb => "on MariaDB 10.",
        }
    }
}

/// The start of a database test on `e`: root, the engine installed (a loud failure, not a
/// skip), the test's gate (`busy`, `heavy`, `exclusive`) and a work directory. Hold both
/// to the end: `let (_g, w) = db_test(e, busy);`.
pub fn db_test(e: Engine, gate: fn() -> Guard) -> (Guard, tempfile::TempDir) {
    e.require();
    root_test(gate)
}

/// A path as the `&str` an argument list wants.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Polls `done` every 20 ms for up to `secs`.
pub fn within(secs: u64, mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Processes whose working directory is the server's data directory: the postmaster and
/// every backend chdir there, and so does mariadbd.
pub fn server_procs(dir: &Path) -> Vec<u32> {
    let data = dir.join("data");
    let data = data.canonicalize().unwrap_or(data);
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == data))
        .collect()
}

/// A file's permission bits (of a link itself, not of what it points to).
pub fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

pub fn chmod(p: &Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// `iogauge db ARGS`, which must succeed.
pub fn db_ok(args: &[&str]) -> Output {
    let out = bin().arg("db").args(args).output().expect("spawn iogauge");
    assert_ran(&out, &format!("db {args:?}"));
    out
}

/// A private server of `engine`'s at `dir` (made by [`Db::setup`], or by a first `db run`):
/// the commands on it carry `--engine` and `--dir`.
pub struct Db {
    pub engine: Engine,
    pub dir: PathBuf,
}

impl Db {
    /// A server at `w`/`pg` or `w`/`maria`, not made yet.
    pub fn new(w: &tempfile::TempDir, engine: Engine) -> Db {
        Db::at(engine, w.path().join(engine.dir_name()))
    }

    pub fn at(engine: Engine, dir: PathBuf) -> Db {
        Db { engine, dir }
    }

    /// `--dir` as a string.
    pub fn d(&self) -> &str {
        s(&self.dir)
    }

    /// `db SUB --engine E --dir DIR EXTRA…`.
    pub fn args<'a>(&'a self, sub: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec!["db", sub, "--engine", self.engine.name(), "--dir", self.d()];
        a.extend_from_slice(extra);
        a
    }

    /// `db SUB … EXTRA`, which must succeed.
    pub fn ok(&self, sub: &str, extra: &[&str]) -> Output {
        db_ok(&self.args(sub, extra)[1..])
    }

    /// `db SUB … EXTRA`, which must fail with `code`: its one line.
    pub fn fails(&self, sub: &str, extra: &[&str], code: i32) -> String {
        fails(&self.args(sub, extra), code)
    }

    /// `db SUB … EXTRA` started in the background.
    pub fn spawn(&self, sub: &str, extra: &[&str]) -> Child {
        spawn(&self.args(sub, extra))
    }

    /// `db setup` with `extra`: its text.
    pub fn setup(&self, extra: &[&str]) -> String {
        String::from_utf8_lossy(&self.ok("setup", extra).stdout).into_owned()
    }

    /// A small loaded server: one schema of [`Engine::small_scale`].
    pub fn setup_small(&self) -> &Db {
        self.setup(&["--schemas", "1", "--scale", self.engine.small_scale()]);
        self
    }

    /// `db run … --json --interval 500ms EXTRA`: its result and stored id.
    pub fn run_json(&self, extra: &[&str]) -> (Value, i64) {
        let out = self.ok("run", &[&["--json", "--interval", "500ms"], extra].concat());
        (
            serde_json::from_slice(&out.stdout).expect("JSON on stdout"),
            stored_id(&out.stderr),
        )
    }

    /// `db run --readers 1 --time 1s`: the server works.
    pub fn runs(&self) {
        stored_id(&self.ok("run", &["--readers", "1", "--time", "1s"]).stderr);
    }

    /// `db drop`.
    pub fn drop_it(&self) {
        self.ok("drop", &[]);
    }

    /// The server's processes.
    pub fn procs(&self) -> Vec<u32> {
        server_procs(&self.dir)
    }

    /// No process of the server is left.
    pub fn gone(&self) -> bool {
        self.procs().is_empty()
    }

    /// Its Unix socket.
    pub fn socket(&self) -> PathBuf {
        self.engine.socket(&self.dir)
    }

    /// `db run --readers 1 --time SECS` started in the background, returned once its server
    /// listens.
    pub fn run_in_background(&self, secs: &str) -> Child {
        let child = self.spawn("run", &["--readers", "1", "--time", secs]);
        assert!(
            within(60, || self.socket().exists() && !self.gone()),
            "the server of the db run never came up"
        );
        child
    }
}

/// A PostgreSQL of the user's, as a `--dsn` names one: Debian's, started by the test (not
/// by iogauge) as `postgres` on a Unix socket only, trust for local connections. Its
/// directory is under /tmp (the postgres user must reach it). Stopped and removed when
/// dropped.
pub struct UserPg {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
}

impl UserPg {
    pub fn start() -> UserPg {
        gated("a PostgreSQL server");
        let port = free_port();
        let dir = PathBuf::from(format!(
            "/tmp/iogauge-user-pg-{}-{port}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("Debian's PostgreSQL (scripts/test installs it)")
            .flatten()
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("initdb").exists())
            .expect("an initdb under /usr/lib/postgresql");
        std::fs::create_dir_all(&dir).unwrap();
        let own = Command::new("chown")
            .arg("postgres")
            .arg(&dir)
            .status()
            .unwrap();
        assert!(own.success());
        let pg = UserPg { dir, bin, port };
        let data = pg.dir.join("data");
        pg.as_postgres("initdb", &["-D", s(&data), "-A", "trust", "-U", "postgres"]);
        let opts = format!("-p {port} -k {} -c listen_addresses=''", pg.dir.display());
        let log = pg.dir.join("log");
        pg.as_postgres(
            "pg_ctl",
            &["-D", s(&data), "-o", &opts, "-l", s(&log), "-w", "start"],
        );
        pg
    }

    /// One of its programs as the `postgres` user, which must succeed.
    fn as_postgres(&self, program: &str, args: &[&str]) {
        let st = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join(program))
            .args(args)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "{program} {args:?}");
    }

    /// `sql` as `postgres` on its socket: (success, stdout and stderr).
    pub fn sql(&self, sql: &str) -> (bool, String) {
        let port = self.port.to_string();
        let out = as_os_user(Some("postgres"), "psql")
            .args([
                "-h",
                s(&self.dir),
                "-p",
                &port,
                "-d",
                "postgres",
                "-Atc",
                sql,
            ])
            .output()
            .expect("runuser and psql");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    }

    /// Its DSN (no password: trust on its socket).
    pub fn dsn(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres",
            self.dir.display(),
            self.port
        )
    }
}

impl Drop for UserPg {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", s(&self.dir.join("data")), "-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A server of the user's of either engine, named by a DSN.
pub enum UserServer {
    Postgres(UserPg),
    Mariadb(UserMaria),
}

impl UserServer {
    /// Starts one (a MariaDB in `dir`; a PostgreSQL in a directory of its own under /tmp).
    pub fn start(engine: Engine, dir: &Path) -> UserServer {
        match engine {
            Engine::Postgres => UserServer::Postgres(UserPg::start()),
            Engine::Mariadb => UserServer::Mariadb(UserMaria::start(dir)),
        }
    }

    pub fn dsn(&self) -> String {
        match self {
            UserServer::Postgres(p) => p.dsn(),
            UserServer::Mariadb(m) => m.dsn(),
        }
    }

    /// How iogauge names it (its DSN without the password).
    pub fn named(&self) -> String {
        match self {
            UserServer::Postgres(p) => p.dsn(),
            UserServer::Mariadb(_) => "mysql://bench@127.0.0.1:".into(),
        }
    }

    /// The names of iogauge's schemas (databases, on MariaDB) left on it.
    pub fn iogauge_schemas(&self) -> String {
        let (ok, out) = match self {
            UserServer::Postgres(p) => {
                p.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'iogauge%'")
            }
            UserServer::Mariadb(m) => m.root_sql("SHOW DATABASES LIKE 'iogauge%'"),
        };
        assert!(ok, "{out}");
        out.trim().to_string()
    }

    /// The password in its DSN, which nothing may echo or store: the MariaDB account has
    /// one; the PostgreSQL trusts its socket's peers and has none.
    pub fn secret(&self) -> Option<&'static str> {
        match self {
            UserServer::Postgres(_) => None,
            UserServer::Mariadb(_) => Some(MARIA_SECRET),
        }
    }
}
