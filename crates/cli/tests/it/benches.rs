//! Every benchmark under `bench/` says what it does and what it needs (`--help`: root, peers,
//! packages) without running anything, from wherever it is started.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The benchmarks: every file in `bench/` but its README (the tables they measured).
fn benches() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench");
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "md"))
        .collect();
    all.sort();
    all
}

#[test]
fn every_bench_says_what_it_needs() {
    let all = benches();
    assert!(all.len() >= 9, "{all:?}");
    for b in all {
        // Started from another directory: nothing may depend on the caller's.
        let out = Command::new(&b)
            .arg("--help")
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", b.display()));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: {out:?}", b.display());
        assert!(
            text.contains("Needs"),
            "{}: no Needs line:\n{text}",
            b.display()
        );
    }
}

/// One smallest real pass of `bench/NAME`: started from another directory, its files under a
/// fresh `--dir` (a `{dir}` in `args`) outside the repository, its results store there too,
/// running the suite's own binary (`IOGAUGE_BENCH_BIN`, so it builds nothing: a cargo build
/// inside `cargo test` would wait for cargo's lock). Returns what it printed on stdout, after
/// checking it exited 0 (or one of `codes`).
fn smallest_pass(name: &str, args: &[&str], codes: &[i32]) -> String {
    let w = crate::common::workdir();
    let dir = w.path().join("out");
    let dir = dir.to_str().unwrap();
    let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", dir)).collect();
    let bench = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench")
        .join(name);
    let started = std::time::Instant::now();
    let out = Command::new(&bench)
        .args(&args)
        .current_dir(w.path())
        .env("IOGAUGE_BENCH_BIN", crate::common::exe())
        .env("IOGAUGE_STORE", w.path().join("results.sqlite"))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bench.display()));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || codes.contains(&code),
        "bench/{name} {args:?} exited {code} after {:.0?}:\n{text}\n{}",
        started.elapsed(),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("bench/{name}: smallest pass in {:.0?}", started.elapsed());
    text
}

/// Each bench's smallest pass, one test each. They disturb the machine (the device, the OS
/// cache, cgroups) and assert no timing: busy, so never beside a timing-sensitive test, and
/// beside other busy ones (each bench's cgroups, loop devices and files are its own). Two
/// are heavy, one at a time among all: `trace` (its traced windows within one run need a
/// quiet disk to give a ratio, and it flips the machine-wide `kernel.bpf_stats_enabled`) and
/// `vs-fio` (it reserves huge pages, machine-wide). What each asserts is the line its method
/// ends with: a bench that stops early, or prints nothing of what it measured, fails.
macro_rules! smallest {
    ($test:ident, $name:literal, [$($arg:literal),*], $codes:expr, [$($want:literal),+]) => {
        smallest!($test, busy, $name, [$($arg),*], $codes, [$($want),+]);
    };
    ($test:ident, $guard:ident, $name:literal, [$($arg:literal),*], $codes:expr, [$($want:literal),+]) => {
        #[test]
        fn $test() {
            crate::common::require_root();
            let _g = crate::common::$guard();
            let text = smallest_pass($name, &[$($arg),*], $codes);
            for want in [$($want),+] {
                assert!(text.contains(want), "bench/{}: no {want:?} in:\n{text}", $name);
            }
        }
    };
}

smallest!(
    calibrate_smallest_pass,
    "calibrate",
    [
        "--file",
        "{dir}/cal.dat",
        "--size",
        "64m",
        "--rounds",
        "1",
        "--point-time",
        "1s"
    ],
    &[],
    ["median max_iops / fio", "calibration took"]
);
smallest!(
    db_driver_smallest_pass,
    "db-driver",
    [
        "--dir",
        "{dir}",
        "--rounds",
        "1",
        "--secs",
        "4",
        "--cold-scale",
        "8M",
        "--cold-secs",
        "2"
    ],
    &[],
    ["part 1:", "part 2:", "page cache served"]
);
smallest!(
    layouts_smallest_pass,
    "layouts",
    [
        "--dir",
        "{dir}",
        "--rounds",
        "1",
        "--size",
        "16m",
        "--time",
        "1s",
        "--member-iops",
        "200"
    ],
    &[],
    ["members throttled", "of unmirrored", "real files"]
);
smallest!(
    mpi_smallest_pass,
    "mpi",
    [
        "--dir",
        "{dir}",
        "--pairs",
        "1",
        "--size",
        "64M",
        "--time",
        "1s",
        "--no-calibrate"
    ],
    &[],
    ["randread-8k-qd32"]
);
smallest!(
    mpi_scale_smallest_pass,
    "mpi-scale",
    ["--dir", "{dir}", "--ranks", "2", "--reps", "1", "--time", "1s"],
    &[],
    ["| tree | 2 | 1 |", "| flat | 2 | 1 |"]
);
smallest!(
    report_smallest_pass,
    "report",
    ["--dir", "{dir}", "--rounds", "1", "--reps", "2", "--time", "2s"],
    &[],
    ["report:  median", "report of 4 runs overlaid"]
);
smallest!(
    sampler_smallest_pass,
    "sampler",
    ["--samples", "2"],
    &[],
    [
        "interval     1s  samples    2",
        "interval  100ms  samples   10"
    ]
);
/// bench/soak: exit 1 is a growth target missed, which a 4 s run may miss (its slope is
/// start-up's); both parts' judgements must be there, as they are only after a part ran.
#[test]
fn soak_smallest_pass() {
    crate::common::require_root();
    let _g = crate::common::busy();
    let text = smallest_pass(
        "soak",
        &[
            "--dir",
            "{dir}",
            "--run-time",
            "4s",
            "--db-time",
            "4s",
            "--every",
            "1",
        ],
        &[1],
    );
    let judged: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" RSS samples, "))
        .collect();
    assert!(
        judged.len() == 2 && judged[0].starts_with("run: ") && judged[1].starts_with("db run: "),
        "{text}"
    );
}
smallest!(
    trace_smallest_pass,
    heavy,
    "trace",
    [
        "--dir",
        "{dir}",
        "--pairs",
        "6",
        "--secs",
        "1",
        "--cost-runs",
        "1",
        "--cycles",
        "3",
        "--on-ms",
        "1000",
        "--off-ms",
        "1000"
    ],
    &[],
    [
        "over 6 pairs of runs",
        // A window whose intervals all fall within 300 ms of a change gives no ratio (one of
        // two did in a full run): some of the three must.
        "traced windows within one run",
        "tracer's programs"
    ]
);
smallest!(
    vs_fio_smallest_pass,
    heavy,
    "vs-fio",
    [
        "--file",
        "{dir}/f.dat",
        "--size",
        "64m",
        "--pairs",
        "1",
        "--time",
        "1",
        "--shapes",
        "randread-4k-qd1"
    ],
    &[],
    ["randread-4k-qd1"]
);
smallest!(
    vs_sysbench_smallest_pass,
    "vs-sysbench",
    [
        "--dir",
        "{dir}",
        "--schemas",
        "1",
        "--scale",
        "16M",
        "--time",
        "3",
        "--pairs",
        "1",
        "--workloads",
        "point_select"
    ],
    &[],
    [
        "point_select: median device reads/s iogauge / sysbench",
        "point_select: at iogauge's default work unit, median device reads/s",
        "target: median point-select device reads/s ratio (iogauge's default)"
    ]
);
