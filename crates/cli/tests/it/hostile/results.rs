//! Results, campaigns, plans and reports under attack (issue #14, rows 3, 4, 5, 10, 11, 12,
//! 15 in part, 17 and 20). Here: a stdout that fails never costs a stored result (row 3), and
//! the helpers and the password-protected PostgreSQL the other files share; campaigns in
//! `results/campaigns.rs`, plans and comparisons in `results/plans.rs`, exports in
//! `results/exports.rs`.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// `iogauge` against a store of the test's own.
fn iog(store: &Path) -> assert_cmd::Command {
    let mut c = bin();
    c.env("IOGAUGE_STORE", store);
    c
}

/// `iogauge ARGS` on `store` with stdout to `out`; returns (exit code, stderr).
fn run_to(store: &Path, args: &[&str], out: Stdio) -> (Option<i32>, String) {
    let o = command()
        .env("IOGAUGE_STORE", store)
        .args(args)
        .stdout(out)
        .stderr(Stdio::piped())
        .output()
        .expect("spawn iogauge");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn dev_full() -> Stdio {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full")
        .into()
}

/// The run id in "…the run is stored as run N in…", after checking the line is the one
/// error line of an output failure, exit 1.
fn stored_despite_output(code: Option<i32>, err: &str) -> i64 {
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(
        err.starts_with("error: writing the result to stdout: "),
        "{err}"
    );
    let rest = err.split("the run is stored as run ").nth(1).expect(err);
    let id: i64 = rest.split_whitespace().next().unwrap().parse().unwrap();
    assert!(err.contains(&format!("`iogauge show {id}`")), "{err}");
    id
}

/// `show ID --json` of a stored run.
fn show(store: &Path, id: i64) -> serde_json::Value {
    let out = iog(store)
        .args(["show", &id.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "run {id} is not stored");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `history --json` of a store.
fn history(store: &Path) -> Vec<serde_json::Value> {
    let out = iog(store).args(["history", "--json"]).output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

// Row 3: `run --json > /dev/full` stored the run only if stdout worked.
#[test]
fn run_output_to_a_full_device_is_stored_first() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data");
    let args = [
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "16m",
        "--time",
        "500ms",
        "--json",
    ];
    let (code, err) = run_to(&store, &args, dev_full());
    let id = stored_despite_output(code, &err);
    let v = show(&store, id);
    assert_eq!(
        (v["kind"].as_str(), v["interrupted"].as_bool()),
        (Some("run"), Some(false))
    );
    // The text summary too, not only JSON.
    let (code, err) = run_to(&store, &args[..args.len() - 1], dev_full());
    show(&store, stored_despite_output(code, &err));
}

// Row 3: a reader that goes away (`| head -c 10`) before the result is written.
#[test]
fn a_reader_that_went_away_does_not_cost_the_result() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data");
    let mut child = command()
        .env("IOGAUGE_STORE", &store)
        .args(["run", "--target", t.to_str().unwrap(), "--size", "16m"])
        .args(["--time", "1s", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reading end closes before a byte is written, as `head` exits after its bytes.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let id = stored_despite_output(out.status.code(), &err);
    assert!(err.contains("Broken pipe"), "{err}");
    assert_eq!(show(&store, id)["kind"], "run");
}

// Row 3: calibrate stores before it prints; its head, printed before any I/O, fails fast.
#[test]
fn calibrate_output_to_a_full_device_is_stored_first() {
    let _g = busy();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data");
    let mut args = vec![
        "calibrate",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "64m",
    ];
    args.extend(["--point-time", "500ms", "--max-latency", "50ms"]);
    // Without --json the head goes out before the first I/O: nothing is measured or lost.
    let started = Instant::now();
    let (code, err) = run_to(&store, &args, dev_full());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with("error: writing the result to stdout (nothing was measured): "),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it measured first"
    );
    args.push("--json");
    let (code, err) = run_to(&store, &args, dev_full());
    let v = show(&store, stored_despite_output(code, &err));
    assert_eq!(v["kind"], "calibrate");
    assert!(f(&v["max_iops"]) > 0.0, "{v}");
}

/// A PostgreSQL 15 of the test's own on 127.0.0.1 with password (SCRAM) authentication,
/// stopped when dropped: what a `--dsn` with a password reaches.
struct Postgres {
    data: PathBuf,
    port: u16,
}

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
const SECRET: &str = "secretpw";

impl Postgres {
    fn start(dir: &Path) -> Postgres {
        require_root();
        assert!(
            Path::new(PG_BIN).join("initdb").exists(),
            "PostgreSQL 15 is missing: apt-get install -y postgresql-15"
        );
        let data = dir.join("pgdata");
        let pw = dir.join("pw");
        std::fs::write(&pw, SECRET).unwrap();
        let port = free_port();
        std::fs::create_dir(&data).unwrap();
        sh(&format!(
            "chown postgres '{}' '{}' && chmod 755 '{}'",
            data.display(),
            pw.display(),
            dir.display()
        ));
        sh(&format!(
            "runuser -u postgres -- {PG_BIN}/initdb -D '{}' -U postgres --auth=scram-sha-256 --pwfile='{}' >/dev/null",
            data.display(),
            pw.display()
        ));
        sh(&format!(
            "runuser -u postgres -- {PG_BIN}/pg_ctl -D '{d}' -l '{d}/log' -w -o \"-p {port} -k '{d}' -c listen_addresses=127.0.0.1\" start >/dev/null",
            d = data.display()
        ));
        Postgres { data, port }
    }

    fn dsn(&self) -> String {
        format!(
            "postgres://postgres:{SECRET}@127.0.0.1:{}/postgres",
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = std::process::Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(format!("{PG_BIN}/pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .status();
    }
}

/// Loads one small schema set on the server, checking nothing echoes the password.
fn load_schemas(store: &Path, dsn: &str) {
    let out = iog(store)
        .args([
            "db",
            "setup",
            "--dsn",
            dsn,
            "--schemas",
            "2",
            "--scale",
            "2000",
        ])
        .output()
        .unwrap();
    let all = [out.stdout, out.stderr].concat();
    let text = String::from_utf8_lossy(&all);
    assert!(out.status.success(), "db setup: {text}");
}

// Row 3: `db run` stores before it prints.
#[test]
fn db_run_output_to_a_full_device_is_stored_first() {
    let _g = busy();
    let w = workdir();
    let pg = Postgres::start(w.path());
    let store = w.path().join("s.sqlite");
    load_schemas(&store, &pg.dsn());
    let dsn = pg.dsn();
    let args = ["db", "run", "--dsn", &dsn, "--readers", "1", "--time", "1s"];
    let (code, err) = run_to(&store, &[&args[..], &["--json"]].concat(), dev_full());
    let v = show(&store, stored_despite_output(code, &err));
    assert_eq!(v["kind"], "db");
    assert!(!err.contains(SECRET), "{err}");
}

mod campaigns;
mod exports;
mod plans;
