//! Parsers under fire (issue #14, "What to build": property tests that throw arbitrary strings
//! at every parser of user input). Each value goes to the real binary, as a user would type
//! it; the answer must be clean: exit 2 with one `error:` line that names the flag (or the
//! file), or success. Never a panic, a signal, another exit code or a hang.
//!
//! Two tiers. The parse tier adds `--store DIR/missing/s.sqlite`: a value the parsers accept
//! goes on to that store, which is refused before any target is touched (the "went on"
//! answer), so thousands of values cost no I/O. The run tier makes real runs (32 I/Os on a
//! 4 MiB file in the work directory) with the values that only mean something against a real
//! target: regions, distributions, block splits, layouts.
//!
//! Values come from [`hostile`]: token soup biased to what matters (digits, units, '%', '..',
//! ':', '@', ',', '=', quotes, unicode lookalikes, 1e308, 18446744073709551616, negatives,
//! NaN, empty), mutations of valid values, and arbitrary printable text. Control characters
//! have one test of their own. Cases are random per run (no regression files); a failure
//! prints the smallest value it shrank to, and the full command line.

use crate::common::*;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::path::Path;
use std::time::Duration;

#[path = "campaign.rs"]
mod campaign;
#[path = "db.rs"]
mod db;
#[path = "flags.rs"]
mod flags;
#[path = "plan.rs"]
mod plan;
#[path = "results.rs"]
mod results;

/// Values per parser: enough to hit every token class several times, few enough that the
/// module runs in well under a minute.
const CASES: u32 = 64;

/// A runner with no regression files (tests write only to their own work directory) and a
/// bounded shrink, so a failure reports a small value quickly.
fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 256,
        ..Config::default()
    })
}

/// Numbers at the edges of every type the parsers produce.
const NUMS: &[&str] = &[
    "0",
    "1",
    "8",
    "12.5",
    "100",
    "512",
    "4096",
    "1e308",
    "1e-300",
    "1E3",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "-1",
    "-0",
    "+1",
    "0x10",
    "NaN",
    "nan",
    "inf",
    "-inf",
    ".",
    "0.",
    "00",
];

/// Units iogauge knows and units it does not.
const UNITS: &[&str] = &[
    "k", "K", "m", "M", "g", "G", "t", "T", "p", "e", "b", "KiB", "MB", "s", "ms", "us", "µs",
    "ns", "min", "h", "d", "%",
];

/// Separators, quotes, whitespace and unicode lookalikes. Control characters have a test of
/// their own ([`control_characters_are_escaped_on_the_one_line`]): they break every echo at
/// once, and would hide every other finding here.
const MARKS: &[&str] = &[
    "%", "..", "...", ":", "@", ",", "=", "/", " ", "'", "\"", "\\", "-", "_", "$", "${x}", "\t",
    "\u{200b}", "\u{feff}", "\u{202e}", "é", "🦀", "٣", "８", "ｋ",
];

/// Values biased toward what breaks parsers: token soup (with the parser's own `words`),
/// mutations of `valid` values, the valid values themselves, and arbitrary printable text.
pub fn hostile(
    valid: &'static [&'static str],
    words: &'static [&'static str],
) -> BoxedStrategy<String> {
    let pieces: Vec<&'static str> = [NUMS, UNITS, MARKS, words, valid].concat();
    let soup = prop::collection::vec(select(pieces.clone()), 0..7).prop_map(|p| p.concat());
    let edits = prop::collection::vec((any::<usize>(), select(pieces), 0..3u8), 1..4);
    let mutated = (select(valid), edits).prop_map(|(v, e)| mutate(v, &e));
    prop_oneof![
        3 => soup,
        3 => mutated,
        1 => select(valid).prop_map(String::from),
        1 => "\\PC{0,16}",
    ]
    .boxed()
}

/// Applies edits to `base`: insert a piece, replace a character by it, or cut there.
pub fn mutate(base: &str, edits: &[(usize, &str, u8)]) -> String {
    let mut chars: Vec<char> = base.chars().collect();
    for (at, piece, op) in edits {
        let i = at % (chars.len() + 1);
        let piece: Vec<char> = piece.chars().collect();
        match op {
            0 => {
                chars.splice(i..i, piece);
            }
            1 if i < chars.len() => {
                chars.splice(i..=i, piece);
            }
            _ => chars.truncate(i),
        }
    }
    chars.into_iter().collect()
}

/// One invocation of the real binary and what it said.
pub struct Call {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub out: String,
    pub err: String,
}

/// Runs `iogauge ARGS` in `dir` (relative paths stay in the work directory), killed after a
/// minute: a hang is a failure too.
pub fn call(dir: &Path, args: &[String]) -> Call {
    let out = bin()
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("spawn iogauge");
    Call {
        args: args.to_vec(),
        code: out.status.code(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// What a clean answer to a hostile value looks like.
pub struct Clean<'a> {
    /// A refusal (exit 2) must name one of these: the flag, the file, the argument.
    pub names: &'a [&'a str],
    /// A refusal that says this means the value was accepted and the command stopped later,
    /// where the test made it stop (the parse tier's missing store).
    pub went_on: Option<&'a str>,
    /// Exit codes besides 2 that are a clean answer (0: accepted and done).
    pub also: &'a [i32],
    /// Text that must never be printed (a password).
    pub secret: Option<&'a str>,
}

/// The refusal the parse tier's `--store DIR/missing/s.sqlite` gives once every value passed.
pub const WENT_ON: &str = "results store";

impl Clean<'_> {
    pub fn check(&self, c: &Call) -> Result<(), TestCaseError> {
        let fail = |why: String| {
            Err(TestCaseError::fail(format!(
                "{why}\n  iogauge {:?}\n  exit {:?}\n  stderr: {:?}",
                c.args, c.code, c.err
            )))
        };
        if c.err.contains("panicked") || c.code == Some(101) {
            return fail("panic".into());
        }
        match c.code {
            None => return fail("killed by a signal or timed out".into()),
            Some(2) => {
                let line = c.err.trim_end();
                if line.lines().count() != 1 || !line.starts_with("error: ") {
                    return fail("a refusal is one `error: …` line".into());
                }
                // A carriage return or an escape sequence rewrites the line on a terminal.
                if line.contains(['\r', '\u{1b}']) {
                    return fail("a raw control character in the error line".into());
                }
                let went_on = self.went_on.is_some_and(|s| line.contains(s));
                if !went_on && !self.names.iter().any(|n| line.contains(n)) {
                    return fail(format!("the error names none of {:?}", self.names));
                }
            }
            Some(x) if self.also.contains(&x) => {}
            Some(x) => return fail(format!("exit {x}; a clean answer is 2 or {:?}", self.also)),
        }
        if let Some(s) = self.secret {
            if c.err.contains(s) || c.out.contains(s) {
                return fail(format!("the password {s:?} was printed"));
            }
        }
        Ok(())
    }
}

/// One flag under fire: `iogauge CMD CONTEXT… FLAG=VALUE`. `{wd}` in the context and in the
/// values stands for the work directory.
pub struct Flag {
    pub cmd: &'static [&'static str],
    pub context: &'static [&'static str],
    pub flag: &'static str,
    pub valid: &'static [&'static str],
    pub words: &'static [&'static str],
}

impl Flag {
    pub fn args(&self, wd: &Path, value: &str) -> Vec<String> {
        let wd = wd.display().to_string();
        let mut a: Vec<String> = self.cmd.iter().map(|s| s.to_string()).collect();
        a.extend(self.context.iter().map(|s| s.replace("{wd}", &wd)));
        // FLAG=VALUE, so a value starting with '-' is still this flag's value.
        a.push(format!("{}={}", self.flag, value.replace("{wd}", &wd)));
        a
    }
}

/// Throws `cases` hostile values at each flag, each invocation extended by `extra`; a clean
/// answer is a refusal naming the flag, `went_on`, or an exit code in `also`. Panics once
/// with every flag's smallest failing value.
pub fn fire(
    flags: &[Flag],
    cases: u32,
    wd: &Path,
    extra: &[String],
    went_on: Option<&str>,
    also: &[i32],
) {
    let mut failures = Vec::new();
    for f in flags {
        let names = [f.flag];
        let clean = Clean {
            names: &names,
            went_on,
            also,
            secret: None,
        };
        let result = runner(cases).run(&hostile(f.valid, f.words), |v| {
            let mut args = f.args(wd, &v);
            args.extend_from_slice(extra);
            clean.check(&call(wd, &args))
        });
        if let Err(e) = result {
            failures.push(format!("{} {}: {e}", f.cmd.join(" "), f.flag));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The parse tier's extra arguments: a store in a directory that does not exist.
pub fn missing_store(wd: &Path) -> Vec<String> {
    vec![
        "--store".into(),
        wd.join("missing/s.sqlite").display().to_string(),
    ]
}

/// The names in `dir`, sorted: a parse-tier test must leave it as it found it.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read the work directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A file of `mib` MiB of random bytes (created by the test, so runs only read it).
pub fn data_file(path: &Path, mib: usize) {
    use std::io::Read;
    let mut buf = vec![0u8; mib << 20];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .expect("read /dev/urandom");
    std::fs::write(path, buf).expect("write the data file");
}

#[test]
fn mutations_insert_replace_and_cut() {
    assert_eq!(mutate("8k", &[(0, "x", 0)]), "x8k");
    assert_eq!(mutate("8k", &[(3, "..", 1)]), "..k");
    assert_eq!(mutate("8k", &[(1, "m", 1), (2, "", 2)]), "8m");
    assert_eq!(mutate("8k", &[(3, "", 2)]), "");
}

/// Control characters in a value: a newline, a carriage return, a terminal escape. Echoed as
/// they are, they split the one error line (or cut it before the flag's name) and let a value
/// rewrite the user's terminal; every echo must escape them (issue #14 row 15: one clear
/// line). One value per parser family that echoes its input.
#[test]
fn control_characters_are_escaped_on_the_one_line() {
    let _g = shared();
    let wd = workdir();
    let w = wd.path().display().to_string();
    let store = format!("--store={w}/missing/s.sqlite");
    let cases: Vec<(Vec<String>, &[&str])> = vec![
        (
            vec!["run".into(), "--size=1\n2".into(), store.clone()],
            &["--size"],
        ),
        (
            vec!["run".into(), "--bs=8k:\r70".into(), store.clone()],
            &["--bs"],
        ),
        (
            vec!["run".into(), "--region=0%..\u{1b}[2J".into(), store.clone()],
            &["--region"],
        ),
        (
            vec!["run".into(), "--qd=\n1".into(), store.clone()],
            &["--qd"],
        ),
        (vec!["plan".into(), "--columns=a\nb".into()], &["--columns"]),
        (vec!["plan".into(), "--iops=1\nx".into()], &["--iops"]),
        (
            vec!["db".into(), "setup".into(), "--pg-set=a\nb=1".into()],
            &["--pg-set"],
        ),
        (
            vec![
                "db".into(),
                "drop".into(),
                format!("--dsn=host={w}/x user=u\nv"),
            ],
            &["--dsn", "connection string", "PostgreSQL"],
        ),
        (
            vec![
                "show".into(),
                "1".into(),
                "--interval=1\ns".into(),
                store.clone(),
            ],
            &["--interval"],
        ),
        (
            vec![
                "campaign".into(),
                format!("{w}/\n.toml"),
                "--dry-run".into(),
            ],
            &["campaign file"],
        ),
    ];
    let mut failures = Vec::new();
    for (args, names) in &cases {
        let clean = Clean {
            names,
            went_on: None,
            also: &[],
            secret: None,
        };
        if let Err(e) = clean.check(&call(wd.path(), args)) {
            failures.push(e.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
