//! `iogauge plan` under fire: every flag alone, the numeric flags together (row 10's
//! 1e308 / 1e-7 combinations), the --history CSV and its --columns. A plan that succeeds must
//! say something finite: no "inf", no "NaN".

use super::*;

const NUMBERS: &[&str] = &["1000", "0", "12.5", "1e308", "1e-7", "1e-300", "200", "70%"];
const NUMBER_WORDS: &[&str] = &["e", "E", "%", "1e", "-", "_", "0.0"];

/// The plan's text says nothing infinite or undefined (issue #14 row 10).
fn finite(c: &Call) -> Result<(), TestCaseError> {
    if c.code != Some(0) {
        return Ok(());
    }
    let odd = |w: &&str| {
        ["inf", "infinity", "nan", "null"]
            .iter()
            .any(|b| w.eq_ignore_ascii_case(b))
            || *w == "18446744073709551615"
    };
    match c.out.split(|ch: char| !ch.is_alphanumeric()).find(odd) {
        None => Ok(()),
        Some(bad) => Err(TestCaseError::fail(format!(
            "the plan says {bad:?}\n  iogauge {:?}\n  stdout: {}",
            c.args, c.out
        ))),
    }
}

/// Each flag of `plan` with the others set to a working plan: refused naming the flag, or a
/// finite plan (issue #14 row 10, property tests).
#[test]
fn plan_flags_are_refused_naming_the_flag_or_give_a_finite_plan() {
    let _g = shared();
    let wd = workdir();
    let cases = plan_flags();
    let store = wd.path().join("s.sqlite").display().to_string();
    let mut failures = Vec::new();
    for (flag, others, valid, words) in &cases {
        let names = [*flag];
        let clean = Clean {
            names: &names,
            went_on: None,
            also: &[0],
            secret: None,
        };
        let result = runner(CASES).run(&hostile(valid, words), |v| {
            let mut a = vec!["plan".to_string()];
            a.extend(others.iter().cloned());
            a.extend([format!("{flag}={v}"), "--store".into(), store.clone()]);
            let c = call(wd.path(), &a);
            clean.check(&c)?;
            finite(&c)
        });
        if let Err(e) = result {
            failures.push(format!("plan {flag}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Each flag of `plan` with the other flags of a working plan around it.
fn plan_flags() -> Vec<PlanFlag> {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plan");
    let history = format!("--history={fixtures}/history.csv");
    let awr = format!("--history={fixtures}/awr.csv");
    let base = [
        "--iops",
        "1000",
        "--read-pct",
        "70",
        "--redundancy",
        "mirror",
    ];
    let disk = ["--disk-iops", "200"];
    vec![
        ("--iops", args(&[&base[2..], &disk]), NUMBERS, NUMBER_WORDS),
        (
            "--read-pct",
            args(&[&base[..2], &base[4..], &disk]),
            &["70", "0", "100%", "12.5%"],
            NUMBER_WORDS,
        ),
        (
            "--mbps",
            args(&[&base, &disk, &["--disk-mbps", "150"]]),
            NUMBERS,
            NUMBER_WORDS,
        ),
        (
            "--disks",
            args(&[&base[2..], &disk]),
            &["1", "12", "18446744073709551615"],
            &[],
        ),
        (
            "--redundancy",
            args(&[&base[..4], &disk]),
            REDUNDANCY,
            REDUNDANCY,
        ),
        (
            "--write-penalty",
            args(&[&base[..4], &disk]),
            &["2", "4", "1", "6.5"],
            NUMBER_WORDS,
        ),
        ("--disk-iops", args(&[&base]), NUMBERS, NUMBER_WORDS),
        (
            "--disk-mbps",
            args(&[&base, &disk, &["--mbps", "100"]]),
            NUMBERS,
            NUMBER_WORDS,
        ),
        ("--disk-profile", args(&[&base]), PROFILES, PROFILES),
        (
            "--per-enclosure",
            args(&[&base, &disk]),
            &["12", "1", "4294967295"],
            &[],
        ),
        (
            "--target-util",
            args(&[&base, &disk]),
            &["70%", "100", "0.5%"],
            NUMBER_WORDS,
        ),
        (
            "--read-cache-hit",
            args(&[&base, &disk]),
            &["60%", "0", "99.9%"],
            NUMBER_WORDS,
        ),
        (
            "--percentile",
            args(&[&[history.as_str()], &base[4..], &disk]),
            &["95", "50%", "100"],
            NUMBER_WORDS,
        ),
        (
            "--columns",
            args(&[&[awr.as_str()], &base[4..], &disk]),
            COLUMNS,
            COLUMN_WORDS,
        ),
        (
            "--from-run",
            args(&[&base]),
            &["1", "-1", "9223372036854775807"],
            &[],
        ),
    ]
}

const REDUNDANCY: &[&str] = &[
    "none", "raid0", "mirror", "raid10", "normal", "3-way", "high", "raid5", "raid6",
];
const PROFILES: &[&str] = &["7.2k", "10k", "15k", "sata-ssd", "nvme"];
const COLUMNS: &[&str] = &[
    "timestamp=BEGIN_TIME,read_iops=PHYRDS_PS,write_iops=PHYWRTS_PS",
    "read_mbps=READ_MB_PS",
    "timestamp=SNAP_ID",
];
const COLUMN_WORDS: &[&str] = &[
    "timestamp",
    "read_iops",
    "write_iops",
    "=",
    ",",
    "PHYRDS_PS",
];

/// A flag of `plan`: its name, the other flags of a working plan, valid values, words.
type PlanFlag = (
    &'static str,
    Vec<String>,
    &'static [&'static str],
    &'static [&'static str],
);

fn args(parts: &[&[&str]]) -> Vec<String> {
    parts
        .iter()
        .flat_map(|p| p.iter().map(|s| s.to_string()))
        .collect()
}

/// The numeric flags all at once, each from the edges (1e308 workloads on 1e-7 IOPS disks,
/// 100% cache hits, 1e-300 utilizations): refused naming a flag, or finite (issue #14 row 10).
#[test]
fn plan_numbers_together_are_refused_or_finite() {
    let _g = shared();
    let wd = workdir();
    let number = || select([NUMBERS, &["1", "1e9", "1e15", "99.999%", "0.0001"]].concat());
    let flags = (
        number(),
        number(),
        number(),
        number(),
        number(),
        number(),
        number(),
    );
    let result = runner(CASES * 2).run(&flags, |(iops, read, disk, mbps, dmbps, util, hit)| {
        let a: Vec<String> = [
            ("--iops", iops),
            ("--read-pct", read),
            ("--disk-iops", disk),
            ("--mbps", mbps),
            ("--disk-mbps", dmbps),
            ("--target-util", util),
            ("--read-cache-hit", hit),
        ]
        .iter()
        .map(|(f, v)| format!("{f}={v}"))
        .chain(["--redundancy=raid6".to_string()])
        .collect();
        let mut all = vec!["plan".to_string()];
        all.extend(a);
        let c = call(wd.path(), &all);
        Clean {
            names: &[
                "--iops",
                "--read-pct",
                "--disk-iops",
                "--mbps",
                "--disk-mbps",
                "--target-util",
                "--read-cache-hit",
            ],
            went_on: None,
            also: &[0],
            secret: None,
        }
        .check(&c)?;
        finite(&c)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// A cell of a history row: numbers at the edges, dates, quoting, empty.
const CELLS: &[&str] = &[
    "1000",
    "0",
    "-5",
    "1e308",
    "1e-300",
    "NaN",
    "inf",
    "18446744073709551616",
    "2024-03-01 00:00",
    "\"1,000\"",
    "\"\"",
    "",
    " ",
    "lots",
    "1_000",
    "0x10",
    "١٠٠",
    "🦀",
    "\"",
    "'1'",
];
const HEADERS: &[&str] = &[
    "timestamp",
    "read_iops",
    "write_iops",
    "read_mbps",
    "write_mbps",
    "BEGIN_TIME",
    " read_iops",
    "\"write_iops\"",
    "",
    "x",
    "timestamp",
];

/// A --history file: a header of known and unknown names, rows of hostile cells, any of four
/// separators and three line ends, maybe a byte-order mark, maybe bytes that are not UTF-8.
fn history() -> BoxedStrategy<Vec<u8>> {
    let header = prop::collection::vec(select(HEADERS), 0..6);
    let row = prop::collection::vec(select(CELLS), 0..6);
    let rows = prop::collection::vec(row, 0..6);
    (
        header,
        rows,
        select(&[",", ";", "\t", ", "][..]),
        select(&["\n", "\r\n", "\r"][..]),
        any::<bool>(),
        prop::option::of(prop::collection::vec(any::<u8>(), 1..8)),
    )
        .prop_map(|(h, rows, sep, end, bom, junk)| {
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            text.push_str(&h.join(sep));
            for r in rows {
                text.push_str(end);
                text.push_str(&r.join(sep));
            }
            let mut bytes = text.into_bytes();
            if let Some(j) = junk {
                let at = j[0] as usize % (bytes.len() + 1);
                bytes.splice(at..at, j);
            }
            bytes
        })
        .boxed()
}

/// Hostile --history files: refused naming --history, or a finite plan (issue #14 row 10,
/// property tests).
#[test]
fn history_files_are_refused_naming_the_file_or_give_a_finite_plan() {
    let _g = shared();
    let wd = workdir();
    let path = wd.path().join("h.csv");
    let clean = Clean {
        names: &["--history"],
        went_on: None,
        also: &[0],
        secret: None,
    };
    let result = runner(CASES * 2).run(&history(), |bytes| {
        std::fs::write(&path, &bytes).expect("write the history file");
        let a = [
            format!("--history={}", path.display()),
            "--redundancy=raid5".into(),
            "--disk-iops=200".into(),
        ];
        let mut all = vec!["plan".to_string()];
        all.extend(a);
        let c = call(wd.path(), &all);
        clean.check(&c)?;
        finite(&c)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
