//! A MariaDB of the user's, as `--dsn mysql://…` names one: Debian's `mariadbd`, started by
//! the test (not by iogauge) on a TCP port of 127.0.0.1, with an account that logs in by
//! password. Killed and removed when dropped.

use super::*;
use std::process::Command;

/// The account's password: what no output or stored result may hold.
pub const MARIA_SECRET: &str = "s3cretMaria";

/// The server: its directory, its port and its process.
pub struct UserMaria {
    dir: PathBuf,
    port: u16,
    server: Child,
}

impl UserMaria {
    /// Makes and starts a server in `dir` (a new directory), with the account `bench`
    /// (password [`MARIA_SECRET`], every privilege) from 127.0.0.1 only.
    pub fn start(dir: &Path) -> UserMaria {
        gated("a MariaDB server");
        std::fs::create_dir_all(dir).unwrap();
        let data = dir.join("data");
        // Its temporary files in its own directory: a starting MariaDB deletes every `#sql*`
        // file in its tmpdir, which in /tmp would be other tests' servers'.
        let tmpdir = format!("--tmpdir={}", dir.display());
        let made = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(&tmpdir)
            .args(["--user=root", "--skip-test-db"])
            .args(["--auth-root-authentication-method=socket"])
            .output()
            .expect("mariadb-install-db (scripts/test installs mariadb-server)");
        assert_ran(&made, "mariadb-install-db");
        let port = free_port();
        let server = Command::new("mariadbd")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(&tmpdir)
            .arg(format!("--socket={}", dir.join("sock").display()))
            .arg(format!("--log-error={}", dir.join("server.log").display()))
            .arg(format!("--port={port}"))
            .args(["--bind-address=127.0.0.1", "--user=root"])
            .args([
                "--innodb-buffer-pool-size=16M",
                "--innodb-log-file-size=16M",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mariadbd (scripts/test installs mariadb-server)");
        let mut m = UserMaria {
            dir: dir.to_path_buf(),
            port,
            server,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !m.root_sql("SELECT 1").0 {
            if let Ok(Some(st)) = m.server.try_wait() {
                panic!("mariadbd exited ({st}): {}", m.log());
            }
            assert!(Instant::now() < deadline, "mariadbd not up: {}", m.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        let (ok, out) = m.root_sql(&format!(
            "CREATE USER bench@'127.0.0.1' IDENTIFIED BY '{MARIA_SECRET}'; \
             GRANT ALL ON *.* TO bench@'127.0.0.1'"
        ));
        assert!(ok, "{out}");
        m
    }

    /// The DSN of the account, password in it.
    pub fn dsn(&self) -> String {
        format!("mysql://bench:{MARIA_SECRET}@127.0.0.1:{}/mysql", self.port)
    }

    /// Its TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `sql` as the server's root on its socket: (success, stdout and stderr).
    pub fn root_sql(&self, sql: &str) -> (bool, String) {
        maria_client(None, "root", &self.dir.join("sock"), sql)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for UserMaria {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `mariadb` client as `os_user` (through runuser) or as root, as database `user`, on
/// the server's socket: (success, stdout and stderr).
pub fn maria_client(os_user: Option<&str>, user: &str, sock: &Path, sql: &str) -> (bool, String) {
    let out = as_os_user(os_user, "mariadb")
        .args(["--no-defaults", "-S"])
        .arg(sock)
        .args(["-u", user, "-N", "-e", sql])
        .output()
        .expect("runuser and the mariadb client (mariadb-server brings it)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}
