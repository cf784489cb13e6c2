//! Cases for the guards of issue #14: settings the server refuses, init and load cleaning up
//! after a failure or Ctrl-C, and the cluster closed to everyone but iogauge's account.

use super::util::procs_in;
use super::Ctx;
use iogauge_db::watch::DbWatch;
use iogauge_db::ServerDir;
use iogauge_db::{parse_override, schema, Cluster, ClusterConfig, DATABASE};
use iogauge_model::live::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A value the server refuses is a usage error naming it, and the configuration in force
/// stays as it was: the cluster still starts.
pub fn refused_setting_keeps_the_configuration(ctx: &mut Ctx) {
    let conf = ctx.cluster().data_dir().join("iogauge.conf");
    let before = std::fs::read_to_string(&conf).unwrap();
    let bad = vec![
        parse_override("work_mem=8MB").unwrap(),
        parse_override("shared_buffers=bogus").unwrap(),
    ];
    let e = ctx.cluster().configure(&bad).unwrap_err();
    let m = e.to_string();
    assert!(e.is_usage(), "{m}");
    assert!(
        m.starts_with("shared_buffers=bogus: PostgreSQL refuses it: invalid value"),
        "{m}"
    );
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), before);
    ctx.cluster().stop().unwrap();
    ctx.cluster().start().unwrap();
}

/// A failed or interrupted init removes what it created, and only that.
pub fn init_cleans_up_after_failure_and_ctrl_c(ctx: &mut Ctx) {
    let dir = ctx.dir.with_file_name("iogauge-pg-guard");
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = |overrides: Vec<(String, String)>, stop: bool| ClusterConfig {
        dir: dir.clone(),
        overrides,
        stop: Some(Arc::new(AtomicBool::new(stop))),
        ..Default::default()
    };
    let e = Cluster::init(&cfg(vec![parse_override("x=").unwrap()], false)).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("\"x\""), "{e}");
    assert!(!dir.exists(), "init left {}", dir.display());
    let e = Cluster::init(&cfg(vec![], true)).unwrap_err();
    assert!(e.is_interrupted(), "{e}");
    assert!(!dir.exists(), "init left {}", dir.display());
    // A directory the user made stays, empty.
    std::fs::create_dir(&dir).unwrap();
    let bad = vec![parse_override("max_connections=0").unwrap()];
    let e = Cluster::init(&cfg(bad, false)).unwrap_err();
    assert!(e.to_string().contains("max_connections=0"), "{e}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    std::fs::remove_dir(&dir).unwrap();
    // A regular file is not a directory: a usage error, the file untouched.
    std::fs::write(&dir, "user data").unwrap();
    let e = Cluster::init(&cfg(vec![], false)).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("not a directory"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&dir).unwrap(), "user data");
    std::fs::remove_file(&dir).unwrap();
}

/// Ctrl-C during a load: interrupted, and no half-loaded schema left; reset brings the
/// loaded data back from the pristine copy.
pub fn interrupted_load_drops_its_schemas(ctx: &mut Ctx) {
    let cfg = ctx.cluster().config();
    let e = schema::setup(&cfg, &ctx.spec, &AtomicBool::new(true), &|_, _| {}).unwrap_err();
    assert!(e.is_interrupted(), "{e}");
    assert_eq!(schema::discover(&cfg).unwrap(), None);
    ctx.cluster().reset().unwrap();
    assert_eq!(schema::discover(&cfg).unwrap(), Some((2, 2000)));
}

/// Peer authentication through iogauge's map on a 0700 socket directory: iogauge (and
/// `iogauge watch`, the same account) connects; the rules name nobody else.
pub fn only_iogauge_may_connect(ctx: &mut Ctx) {
    let c = ctx.cluster();
    let hba = std::fs::read_to_string(c.data_dir().join("pg_hba.conf")).unwrap();
    let rules: Vec<&str> = hba.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rules, ["local all all peer map=iogauge"]);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&c.run_dir()), 0o700);
    assert_eq!(mode(&c.data_dir().join("pg_ident.conf")), 0o600);
    let mut w = DbWatch::connect(&SocketAddr {
        engine: Default::default(),
        socket_dir: c.run_dir(),
        port: 5432,
        user: c.config().get_user().unwrap().to_string(),
        dbname: DATABASE.into(),
    })
    .unwrap();
    w.look().unwrap();
    // The postmaster is this process's own child (so the kernel's death signal, set at its
    // fork, ties it to this process).
    let pid = c.pid().expect("the server runs");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let ppid = status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .unwrap();
    assert_eq!(ppid.trim(), std::process::id().to_string());
    assert!(procs_in(&c.data_dir()).contains(&pid));
}
