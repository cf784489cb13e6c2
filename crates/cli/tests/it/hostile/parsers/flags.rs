//! The job flags of `run`, `calibrate`, `db run`, `db setup` and `watch` under fire: sizes,
//! durations, percentages, regions, distributions, block splits, layouts, steady criteria and
//! the enumerations; first parsed only (no I/O), then the values that need a target in real
//! runs on a 4 MiB file.

use super::*;

const SIZE_WORDS: &[&str] = &["kib", "GiB", "tb", "1.5", "0.5"];
const DURATION_WORDS: &[&str] = &["1s", "100ms", "2.5", "8760h", "8761h", "31536000"];
const SIZES: &[&str] = &["1g", "4k", "1.5g", "8KiB", "16t", "512"];
const DURATIONS: &[&str] = &["30s", "500ms", "2.5m", "1h", "8760h", "10"];
const PCTS: &[&str] = &["0", "70", "100", "50"];

/// Sizes, durations and percentages of `run` and `calibrate` (issue #14, property tests;
/// rows 18 and 19 are the runtime side of --cache-size and --dist).
#[test]
fn sizes_durations_and_percentages_are_refused_naming_the_flag_or_accepted() {
    let _g = shared();
    let run = |flag, context, valid, words| Flag {
        cmd: &["run"],
        context,
        flag,
        valid,
        words,
    };
    let cal = |flag, valid, words| Flag {
        cmd: &["calibrate"],
        context: &["--target", "{wd}/t"],
        flag,
        valid,
        words,
    };
    let t: &[&str] = &["--target", "{wd}/t"];
    let steady: &[&str] = &["--target", "{wd}/t", "--steady"];
    let flags = [
        run("--size", t, SIZES, SIZE_WORDS),
        run(
            "--bs",
            t,
            &["8k", "8k:70,1m:30", "4k:50,64k:50", "512", "64m"],
            SIZE_WORDS,
        ),
        run("--time", t, DURATIONS, DURATION_WORDS),
        run("--ramp", t, DURATIONS, DURATION_WORDS),
        run(
            "--interval",
            t,
            &["1s", "100ms", "1h", "250ms"],
            DURATION_WORDS,
        ),
        run("--steady-window", steady, DURATIONS, DURATION_WORDS),
        run("--steady-timeout", steady, DURATIONS, DURATION_WORDS),
        run(
            "--read-pct",
            &["--target", "{wd}/t", "--rw", "randrw"],
            PCTS,
            &[],
        ),
        cal("--cache-size", SIZES, SIZE_WORDS),
        cal("--size", SIZES, SIZE_WORDS),
        cal("--block", &["8k", "4k", "512"], SIZE_WORDS),
        cal("--large-block", &["1m", "64m", "128k"], SIZE_WORDS),
        cal(
            "--max-latency",
            &["20ms", "10ms", "1s", "500us"],
            DURATION_WORDS,
        ),
        cal("--point-time", &["2s", "500ms", "1m"], DURATION_WORDS),
        cal("--write-pct", PCTS, &[]),
    ];
    let wd = workdir();
    let before = listing(wd.path());
    fire(
        &flags,
        CASES,
        wd.path(),
        &missing_store(wd.path()),
        Some(WENT_ON),
        &[],
    );
    assert_eq!(
        listing(wd.path()),
        before,
        "parsing wrote into the work directory"
    );
}

/// Regions, distributions, layouts and steady criteria: the structured values (issue #14,
/// property tests; row 19 is the hot range past the end).
#[test]
fn structured_values_are_refused_naming_the_flag_or_accepted() {
    let _g = shared();
    let mirror: &[&str] = &["--target", "{wd}/t,{wd}/t2", "--layout", "mirror:2"];
    let flags = [
        Flag {
            cmd: &["run"],
            context: &["--target", "{wd}/t"],
            flag: "--region",
            valid: REGIONS,
            words: &[],
        },
        Flag {
            cmd: &["calibrate"],
            context: &["--target", "{wd}/t"],
            flag: "--region",
            valid: REGIONS,
            words: &[],
        },
        Flag {
            cmd: &["run"],
            context: &["--target", "{wd}/t"],
            flag: "--dist",
            valid: DISTS,
            words: DIST_WORDS,
        },
        Flag {
            cmd: &["run"],
            context: &["--target", "{wd}/t,{wd}/t2"],
            flag: "--layout",
            valid: LAYOUTS,
            words: LAYOUT_WORDS,
        },
        Flag {
            cmd: &["calibrate"],
            context: &["--target", "{wd}/t,{wd}/t2"],
            flag: "--layout",
            valid: LAYOUTS,
            words: LAYOUT_WORDS,
        },
        Flag {
            cmd: &["run"],
            context: mirror,
            flag: "--failgroups",
            valid: FAILGROUPS,
            words: &["t", "t2"],
        },
        Flag {
            cmd: &["run"],
            context: mirror,
            flag: "--degraded",
            valid: &["t", "t2", "{wd}/t"],
            words: &["t", "t2"],
        },
        Flag {
            cmd: &["run"],
            context: mirror,
            flag: "--read-from",
            valid: &["primary", "balanced"],
            words: &["primary", "balanced"],
        },
        Flag {
            cmd: &["run"],
            context: &["--target", "{wd}/t"],
            flag: "--steady",
            valid: &["iops:20%", "iops_slope:2%", "iops:5"],
            words: &["iops", "iops_slope", "lat", ":"],
        },
    ];
    let wd = workdir();
    let before = listing(wd.path());
    fire(
        &flags,
        CASES,
        wd.path(),
        &missing_store(wd.path()),
        Some(WENT_ON),
        &[],
    );
    assert_eq!(
        listing(wd.path()),
        before,
        "parsing wrote into the work directory"
    );
}

const REGIONS: &[&str] = &[
    "0%..25%",
    "75%..100%",
    "1g..2g",
    "0..4096",
    "1m..3m",
    "0%..100%",
];
const DISTS: &[&str] = &["uniform", "zipf:1.2", "hotspot:64m@0:4", "hotspot:1m@2m:16"];
const DIST_WORDS: &[&str] = &["zipf:", "hotspot:", "uniform", "@"];
const LAYOUTS: &[&str] = &[
    "concat",
    "stripe:1m",
    "mirror:2",
    "mirror:2,stripe:128k",
    "stripe:4k",
];
const LAYOUT_WORDS: &[&str] = &["concat", "stripe:", "mirror:", "2", "3"];
const FAILGROUPS: &[&str] = &["t/t2", "t,t2", "t2/t", "{wd}/t"];

/// The enumerations and counts (clap's own parsers, and iogauge's FromStr for the enums):
/// the same clean answer (issue #14, property tests).
#[test]
fn enumerations_and_counts_are_refused_naming_the_flag_or_accepted() {
    let _g = shared();
    let run = |flag, valid| Flag {
        cmd: &["run"],
        context: &["--target", "{wd}/t"],
        flag,
        valid,
        words: &[],
    };
    let flags = [
        run("--rw", &["read", "randrw", "randwrite"]),
        run("--engine", &["io_uring", "psync", "uring"]),
        run("--mem", &["hugepage", "page"]),
        run("--fixed-bufs", &["auto", "on", "off"]),
        run(
            "--ring-setup",
            &["auto", "plain", "coop", "single", "defer"],
        ),
        run("--submit-batch", &["0", "1", "65536"]),
        run("--qd", &["1", "32", "4096"]),
        run("--workers", &["1", "256"]),
        run("--ios", &["1", "1000"]),
        run("--rate-iops", &["1", "1000"]),
        run("--seed", &["0", "18446744073709551615"]),
        run("--member-iops", &["1", "10000000"]),
        Flag {
            cmd: &["calibrate"],
            context: &["--target", "{wd}/t"],
            flag: "--criterion",
            valid: &["mean", "p95", "p99"],
            words: &["p", "mean"],
        },
        Flag {
            cmd: &["calibrate"],
            context: &["--target", "{wd}/t"],
            flag: "--disks",
            valid: &["1", "1024"],
            words: &[],
        },
    ];
    let wd = workdir();
    fire(
        &flags,
        CASES / 2,
        wd.path(),
        &missing_store(wd.path()),
        Some(WENT_ON),
        &[],
    );
}

/// `db run` and `db setup` flags that parse before any server is touched, and `watch`'s
/// (issue #14, property tests; row 15 is a bad --pg-set value).
#[test]
fn db_and_watch_flags_are_refused_naming_the_flag_or_accepted() {
    let _g = shared();
    let dbrun = |flag, valid, words| Flag {
        cmd: &["db", "run"],
        context: &["--dir", "{wd}/pg"],
        flag,
        valid,
        words,
    };
    let flags = [
        dbrun("--time", DURATIONS, DURATION_WORDS),
        dbrun("--ramp", DURATIONS, DURATION_WORDS),
        dbrun("--interval", &["1s", "100ms", "1h"], DURATION_WORDS),
        dbrun("--think-time", &["1ms", "0", "1s"], DURATION_WORDS),
        dbrun("--cache-limit", &["256m", "1g"], SIZE_WORDS),
        dbrun("--readers", &["1", "4096", "0"], &[]),
        dbrun("--work-unit", &["64", "1", "10000"], &[]),
        dbrun("--redo-stress", &["none", "lite", "heavy"], &[]),
        dbrun("--driver", &["server", "client"], &[]),
        dbrun("--hot-schema-every", &["1", "8"], &[]),
        dbrun("--disks", &["1", "12", "100000"], &[]),
        Flag {
            cmd: &["db", "run"],
            context: &["--dir", "{wd}/pg", "--sessions", "2"],
            flag: "--update-pct",
            valid: PCTS,
            words: &[],
        },
    ];
    let wd = workdir();
    fire(
        &flags,
        CASES,
        wd.path(),
        &missing_store(wd.path()),
        Some(WENT_ON),
        &[],
    );

    // `watch` has no store to stop at: a device that does not exist stops it after one look
    // at /proc, before the first interval.
    let watch = [Flag {
        cmd: &["watch"],
        context: &["--plain", "--count", "1", "--devices", "no-such-disk"],
        flag: "--interval",
        valid: &["1s", "100ms", "1h"],
        words: DURATION_WORDS,
    }];
    fire(&watch, CASES, wd.path(), &[], Some("no-such-disk"), &[]);
    // Device names: refused naming --devices, or watched for one interval of 100 ms.
    let devices = [Flag {
        cmd: &["watch"],
        context: &["--plain", "--count", "1", "--interval", "100ms"],
        flag: "--devices",
        valid: &["vda", "loop0", "sda,sdb", "nvme0n1"],
        words: &["sd", "vd", "loop", "dm-", ","],
    }];
    fire(&devices, CASES / 2, wd.path(), &[], None, &[0]);
}

/// The run tier: values that only mean something against a real target, in real runs of
/// 32 I/Os on 4 MiB files (issue #14, property tests; row 19: a hot range past the end).
#[test]
fn values_that_pass_the_parser_run_cleanly_or_are_refused_naming_the_flag() {
    let _g = busy();
    let wd = workdir();
    data_file(&wd.path().join("t"), 4);
    data_file(&wd.path().join("t2"), 4);
    let one: &[&str] = &["--target", "{wd}/t"];
    let two: &[&str] = &["--target", "{wd}/t,{wd}/t2"];
    let mirror: &[&str] = &["--target", "{wd}/t,{wd}/t2", "--layout", "mirror:2"];
    let run = |context, flag, valid, words| Flag {
        cmd: &["run"],
        context,
        flag,
        valid,
        words,
    };
    let flags = [
        run(one, "--size", &["1m", "4m", "8k", "3.5m"], SIZE_WORDS),
        run(
            one,
            "--bs",
            &["8k", "8k:70,1m:30", "4m", "512:50,2m:50"],
            SIZE_WORDS,
        ),
        run(one, "--region", RUN_REGIONS, &["4m", "4194304", "4194303"]),
        run(one, "--dist", DISTS, DIST_WORDS),
        run(one, "--time", RUN_TIMES, DURATION_WORDS),
        run(one, "--interval", &["100ms", "1h"], DURATION_WORDS),
        run(two, "--layout", LAYOUTS, LAYOUT_WORDS),
        run(mirror, "--failgroups", FAILGROUPS, &["t", "t2"]),
        run(mirror, "--degraded", &["t", "t2", "{wd}/t2"], &["t", "t2"]),
    ];
    let store = wd.path().join("s.sqlite").display().to_string();
    let extra = ["--ios", "32", "--store", &store].map(String::from);
    fire(&flags, CASES / 2, wd.path(), &extra, None, &[0]);
}

/// Values the property tests once found wrong, kept in the run tier's seeds: a start far
/// past the end that wrapped to 0, and times past what `Instant` arithmetic holds.
const RUN_REGIONS: &[&str] = &[
    "0%..25%",
    "1m..3m",
    "18446744073709551614..18446744073709551615",
];
const RUN_TIMES: &[&str] = &["2s", "1ms", "8760h", "10000000000000000000s"];

/// What the property tests found in the job parsers, fixed at the root (crates/engine/src/
/// spec): each once ran or crashed, and is now refused on one line naming the flag.
#[test]
fn edges_the_property_tests_found_are_refused_naming_the_flag() {
    let _g = busy();
    let wd = workdir();
    data_file(&wd.path().join("t"), 4);
    data_file(&wd.path().join("t2"), 4);
    let t = wd.path().join("t").display().to_string();
    let both = format!("{t},{}", wd.path().join("t2").display());
    let store = wd.path().join("s.sqlite").display().to_string();
    for (args, flag) in [
        // Panicked in the driver: "overflow when adding duration to instant".
        (
            vec!["--target", &t, "--time", "10000000000000000000s"],
            "--time",
        ),
        (
            vec!["--target", &t, "--ramp", "10000000000000000000s"],
            "--ramp",
        ),
        (
            vec!["--target", &t, "--steady", "--steady-timeout", "8761h"],
            "--steady-timeout",
        ),
        // Ran on the whole target: the start's rounding to the block wrapped to 0.
        (
            vec![
                "--target",
                &t,
                "--region",
                "18446744073709551614..18446744073709551615",
            ],
            "--region",
        ),
        // Named only --layout.
        (
            vec![
                "--target",
                &both,
                "--layout",
                "mirror:2",
                "--failgroups",
                "t/zz",
            ],
            "--failgroups",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--ios", "32", "--store", &store]);
        let err = run_fails(&all, 2);
        assert!(err.contains(flag), "{all:?}: {err}");
    }
    // A year is the longest duration: accepted (and bounded here by --ios).
    let out = bin()
        .args([
            "run", "--target", &t, "--time", "8760h", "--ios", "32", "--store", &store,
        ])
        .output()
        .expect("spawn iogauge");
    assert_success(&out);
}
