//! The campaign HTML report rendered by a real browser: headless Chromium must load it
//! without a single console message (our page has no script, so any message is an error,
//! such as an SVG attribute it could not parse), screenshot it, and show every chart in its
//! DOM. Plus the size/speed budget of a large campaign.
//!
//! Needs `/usr/bin/chromium` (`apt-get install -y chromium`); without it the tests fail
//! rather than skip. Set `IOGAUGE_REPORT_OUT=<dir>` to keep the report and screenshot.

use iogauge_campaign::{
    AasPoint, CampaignView, CaseView, Environment, LatCurve, MetricCase, MetricView, RunDigest,
    SeriesPoint,
};
use iogauge_report::campaign_html;
use iogauge_stats::compare::{Describe, Ratio, Statistic, Verdict};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";

/// The shape of a synthetic campaign.
struct Shape {
    cases: usize,
    runs: usize,
    intervals: usize,
    /// Give the last case's runs database wait events (or every case's when `all_db`).
    db: bool,
    all_db: bool,
    /// The campaign's statistic: the ratios' headline.
    statistic: Statistic,
}

/// Deterministic noise in [-1, 1) from a counter (SplitMix64).
fn noise(k: u64) -> f64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

const NAMES: [&str; 3] = ["ext4", "xfs <tuned> & \"fast\"", "db on btrfs"];

fn case_name(i: usize) -> String {
    match NAMES.get(i) {
        Some(n) => n.to_string(),
        None => format!("case-{i:02}"),
    }
}

fn series(case: usize, rep: u32, n: usize) -> Vec<SeriesPoint> {
    let base = 40_000.0 * (1.0 + 0.35 * case as f64);
    (0..n)
        .map(|t| {
            let k = (case * 1_000_003 + rep as usize * 10_007 + t) as u64;
            let tf = t as f64;
            let iops = base * (1.0 + 0.06 * (tf / 9.0).sin() + 0.03 * noise(k));
            let ramp = t < 5;
            let iops = if ramp {
                iops * (t as f64 + 1.0) / 6.0
            } else {
                iops
            };
            SeriesPoint {
                t_s: tf,
                dur_s: 1.0,
                ramp,
                read_iops: iops * 0.7,
                write_iops: iops * 0.3,
                lat_mean_us: Some(180.0 + 20.0 * noise(k + 1)),
                lat_p99_us: (t % 97 != 50)
                    .then(|| 900.0 + 250.0 * (tf / 13.0).cos() + 80.0 * noise(k + 2)),
                dev_iops: (t >= 3).then_some(iops * 1.04),
                util_pct: (t >= 3).then(|| (70.0 + 20.0 * (tf / 11.0).sin()).min(100.0)),
            }
        })
        .collect()
}

fn aas(rep: u32, n: usize) -> Vec<AasPoint> {
    let events = [
        "CPU",
        "IO:DataFileRead",
        "LWLock:BufferMapping",
        "IO:WALSync",
        "Client:ClientRead",
    ];
    (0..n)
        .map(|t| {
            let k = (rep as usize * 7919 + t) as u64;
            let events = events
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let v = (4.0 / (i as f64 + 1.0)) * (1.0 + 0.3 * noise(k * 5 + i as u64));
                    (e.to_string(), v.max(0.0))
                })
                .collect();
            AasPoint {
                t_s: t as f64,
                events,
            }
        })
        .collect()
}

fn lat_curve(label: &str, scale: f64) -> LatCurve {
    let ps = [
        0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999, 100.0,
    ];
    let points = ps
        .iter()
        .map(|&p: &f64| {
            let nines = -(1.0 - p / 100.0).max(1e-7).log10();
            (p, scale * (60.0 + 90.0 * nines * nines))
        })
        .collect();
    LatCurve {
        label: label.into(),
        points,
    }
}

/// One metric's samples per case, as (key, label, unit, higher_is_better, f(case, rep)).
type MetricDef = (
    &'static str,
    &'static str,
    &'static str,
    bool,
    fn(usize, u32) -> f64,
);

const METRICS: [MetricDef; 3] = [
    ("iops", "IOPS", "IOPS", true, |c, r| {
        // Case 1, repetition 3 is far off: an outlier to flag.
        let off = if c == 1 && r == 3 { 1.45 } else { 1.0 };
        40_000.0
            * (1.0 + 0.35 * c as f64)
            * (1.0 + 0.01 * noise((c * 31 + r as usize) as u64))
            * off
    }),
    ("mib_s", "throughput", "MiB/s", true, |c, r| {
        160.0 * (1.0 + 0.2 * c as f64) * (1.0 + 0.05 * noise((c * 37 + r as usize) as u64))
    }),
    (
        "read_lat_p99_ms",
        "read latency p99",
        "ms",
        false,
        |c, r| 0.9 * (1.0 - 0.1 * c as f64) * (1.0 + 0.2 * noise((c * 41 + r as usize) as u64)),
    ),
];

/// Case `c` of the shape: its runs (db runs where the shape says), metrics and curves.
fn case_view(s: &Shape, c: usize, names: &[String]) -> CaseView {
    let db = s.all_db || (s.db && c == s.cases - 1);
    let runs = (1..=s.runs as u32)
        .map(|rep| RunDigest {
            id: (c * s.runs) as i64 + rep as i64,
            rep,
            kind: if db { "db run".into() } else { "run".into() },
            started_at: format!("2025-03-0{}T10:{:02}:00Z", 1 + c % 9, rep % 60),
            interrupted: c == 0 && rep == 2,
            metrics: METRICS
                .iter()
                .map(|(k, _, _, _, f)| (k.to_string(), f(c, rep)))
                .collect(),
            series: series(c, rep, s.intervals),
            steady_from_s: (rep != 3).then_some(10.0),
            steady_left_s: (rep == 2).then_some(s.intervals as f64 * 0.8),
            read_share: if c == 2 && rep == 1 {
                None
            } else {
                Some(0.7 - 0.1 * c as f64)
            },
            aas: if db {
                aas(rep, s.intervals)
            } else {
                Vec::new()
            },
            warnings: if rep == 2 && c == 0 {
                vec!["interrupted at 80% <SIGINT>".into()]
            } else {
                Vec::new()
            },
        })
        .collect();
    let lat = if db {
        vec![lat_curve("db read", 2.0), lat_curve("db update", 3.0)]
    } else {
        vec![
            lat_curve("read", 1.0 + 0.2 * c as f64),
            lat_curve("write", 1.5),
        ]
    };
    CaseView {
        name: names[c].clone(),
        vars: BTreeMap::from([("fs".into(), names[c].clone()), ("qd".into(), "32".into())]),
        args: vec![
            "iogauge".into(),
            "run".into(),
            "--qd".into(),
            "32".into(),
            format!("--target=/mnt/{c}"),
        ],
        runs,
        lat_curves: lat,
        baseline: None,
    }
}

fn build(s: &Shape) -> CampaignView {
    let names: Vec<String> = (0..s.cases).map(case_name).collect();
    let baseline = names[0].clone();
    let cases: Vec<CaseView> = (0..s.cases).map(|c| case_view(s, c, &names)).collect();
    let metrics = METRICS
        .iter()
        .map(|&(key, label, unit, hib, f)| {
            let samples = |c: usize| (1..=s.runs as u32).map(|r| f(c, r)).collect::<Vec<f64>>();
            let base = samples(0);
            MetricView {
                key: key.into(),
                label: label.into(),
                unit: unit.into(),
                higher_is_better: hib,
                cases: (0..s.cases)
                    .map(|c| {
                        let x = samples(c);
                        let ratio = (c > 0)
                            .then(|| Ratio::of(&x, &base, s.statistic, 7 + c as u64).unwrap());
                        let verdict = ratio
                            .as_ref()
                            .map(|r| Verdict::of(r).sentence(&names[c], &baseline, hib));
                        MetricCase {
                            case: names[c].clone(),
                            describe: Describe::of(&x).unwrap(),
                            samples: x,
                            ratio,
                            verdict,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    CampaignView {
        schema: 1,
        name: "fs-compare <2025> & co".into(),
        file: "name = \"fs-compare\"\nrepeat = 3\n[vars]\nfs = [\"ext4\", \"xfs\"]\n# a < b && c > d\n</pre><script>alert(1)</script>\n".into(),
        command: "run".into(),
        baseline,
        statistic: s.statistic,
        smoke: false,
        repeat: s.runs as u32,
        environment: Environment {
            host: "bench-01".into(),
            kernel: "6.1.0-18-amd64".into(),
            iogauge_version: "0.1.0".into(),
            cpus: 16,
            ram_bytes: 64 << 30,
            targets: vec!["/mnt/0/data: ext4 on nvme0n1 (file, 4.0 GiB)".into()],
            devices: vec!["nvme0n1".into()],
            first_run: Some("2025-03-01T10:01:00Z".into()),
            last_run: None,
        },
        cases,
        metrics,
        warnings: vec![
            "case \"xfs\" ran 2 of 3 repetitions <script>alert('x')</script>".into(),
            "runs 2 was interrupted".into(),
        ],
    }
}

/// Three cases of three runs, ratios of trimmed means (the other views use means).
fn small() -> CampaignView {
    build(&Shape {
        cases: 3,
        runs: 3,
        intervals: 120,
        db: true,
        all_db: false,
        statistic: Statistic::Trimmed,
    })
}

fn chromium() -> &'static Path {
    let p = Path::new(CHROMIUM);
    assert!(
        p.exists(),
        "{CHROMIUM} is missing: this test renders the report in a real browser and is never \
         skipped; install it with `apt-get install -y chromium`"
    );
    p
}

/// Runs headless Chromium on `page` with `args`, a fresh profile and a time limit; returns
/// (stdout, stderr).
fn run_chromium(dir: &Path, tag: &str, args: &[&str], page: &Path) -> (String, String) {
    let (out_p, err_p) = (
        dir.join(format!("{tag}.out")),
        dir.join(format!("{tag}.err")),
    );
    let profile = dir.join(format!("profile-{tag}"));
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
        ])
        .args(["--enable-logging=stderr", "--v=0", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::from(File::create(&out_p).unwrap()))
        .stderr(Stdio::from(File::create(&err_p).unwrap()))
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium {tag} did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (
        std::fs::read_to_string(out_p).unwrap(),
        std::fs::read_to_string(err_p).unwrap(),
    );
    assert!(status.success(), "chromium {tag} failed: {status}\n{err}");
    (out, err)
}

/// What the page said on its console. Chromium logs each console message (console.*,
/// uncaught exceptions, and its own complaints about the page such as "Error: <path>
/// attribute d: Expected number") to stderr as `[pid:tid:time:INFO:CONSOLE:line] "msg",
/// source: URL (line)`; older builds write `CONSOLE(line)`. Everything else on stderr is the
/// browser's own noise (dbus, GPU, sandbox) and is ignored.
fn console_messages(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

fn out_dir(tmp: &Path) -> PathBuf {
    std::env::var_os("IOGAUGE_REPORT_OUT")
        .map(PathBuf::from)
        .inspect(|d| std::fs::create_dir_all(d).unwrap())
        .unwrap_or_else(|| tmp.to_path_buf())
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn chromium_renders_the_report_without_console_errors() {
    let view = small();
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(tmp.path());
    let page = dir.join("report.html");
    std::fs::write(&page, campaign_html(&view)).unwrap();
    let png = dir.join("report.png");
    let _ = std::fs::remove_file(&png);
    let shot = format!("--screenshot={}", png.display());
    let (_, err) = run_chromium(
        tmp.path(),
        "shot",
        &["--window-size=1400,4000", &shot],
        &page,
    );
    let console = console_messages(&err);
    assert!(
        console.is_empty(),
        "the page logged to the console:\n{}",
        console.join("\n")
    );
    let bytes = std::fs::read(&png).expect("chromium wrote no screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        bytes.len() > 50_000,
        "screenshot of {} bytes looks blank",
        bytes.len()
    );
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (1400, 4000), "PNG size");

    let (dom, err) = run_chromium(tmp.path(), "dom", &["--dump-dom"], &page);
    assert!(console_messages(&err).is_empty(), "{err}");
    let runs: usize = view.cases.iter().map(|c| c.runs.len()).sum();
    let db_runs = view
        .cases
        .iter()
        .flat_map(|c| &c.runs)
        .filter(|r| !r.aas.is_empty())
        .count();
    let want = [
        ("bars:", view.metrics.len()),
        ("normalised:", view.metrics.len()),
        ("latcurve:", 4),
        ("rw:", 1),
        ("series:", runs),
        ("aas:", db_runs),
    ];
    for (kind, n) in want {
        let got = count(&dom, &format!("data-chart=\"{kind}"));
        assert_eq!(got, n, "charts of kind {kind} in the DOM");
    }
    assert_eq!(count(&dom, "<svg class=\"chart\""), 3 + 3 + 4 + 1 + 9 + 3);
    assert_eq!(count(&dom, "<details"), view.cases.len());
    // Escaped text stays text: no element came from the view's strings.
    assert!(
        !dom.contains("<script"),
        "a string from the view became markup"
    );
    assert!(dom.contains("&lt;script&gt;alert('x')&lt;/script&gt;"));
    assert!(dom.contains("xfs &lt;tuned&gt; &amp; \"fast\""));
    assert!(!dom.contains("NaN") && !dom.contains("inf\""));
    // The headline is named wherever a ratio is shown.
    for says in [
        "ratios of trimmed means</p>",
        "ratio = case trimmed mean ÷ baseline trimmed mean",
        "<th>ratio (95% CI)<br><span class=\"u\">of trimmed means</span></th>",
        "each run divided by the baseline's trimmed mean",
        ">ratio of trimmed means</text>",
    ] {
        assert!(dom.contains(says), "{says}");
    }
}

/// A view at the edges (one repetition so no intervals, no intervals recorded, every
/// optional figure missing) must load just as cleanly.
#[test]
fn chromium_accepts_a_degenerate_view() {
    let mut view = build(&Shape {
        cases: 2,
        runs: 1,
        intervals: 0,
        db: true,
        all_db: false,
        statistic: Statistic::Mean,
    });
    for r in view.cases.iter_mut().flat_map(|c| c.runs.iter_mut()) {
        (r.steady_from_s, r.steady_left_s, r.read_share) = (None, None, None);
    }
    view.cases[1].lat_curves.clear();
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("edge.html");
    std::fs::write(&page, campaign_html(&view)).unwrap();
    let (dom, err) = run_chromium(tmp.path(), "edge", &["--dump-dom"], &page);
    let console = console_messages(&err);
    assert!(
        console.is_empty(),
        "the page logged to the console:\n{}",
        console.join("\n")
    );
    assert_eq!(count(&dom, "data-chart=\"series:"), 2);
    assert!(dom.contains("no intervals recorded"));
}

/// The detector above must see what a broken page logs, or a clean result means nothing.
#[test]
fn console_detection_sees_svg_and_script_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><svg><rect width=\"-5\" height=\"1\"/><path d=\"M NaN 1\"/></svg>\
         <script>throw new Error('boom')</script></body></html>",
    )
    .unwrap();
    let (_, err) = run_chromium(tmp.path(), "broken", &["--dump-dom"], &page);
    let console = console_messages(&err);
    assert!(console.iter().any(|l| l.contains("attribute d")), "{err}");
    assert!(
        console.iter().any(|l| l.contains("negative value")),
        "{err}"
    );
    assert!(
        console.iter().any(|l| l.contains("Uncaught Error: boom")),
        "{err}"
    );
}

#[test]
fn a_hundred_runs_of_300_intervals_fit_the_budget() {
    let view = build(&Shape {
        cases: 10,
        runs: 10,
        intervals: 300,
        db: true,
        all_db: true,
        statistic: Statistic::Mean,
    });
    let start = Instant::now();
    let html = campaign_html(&view);
    let took = start.elapsed();
    println!(
        "100 runs x 300 intervals (all with wait events): {:.1} ms, {:.2} MB",
        took.as_secs_f64() * 1e3,
        html.len() as f64 / 1e6
    );
    if let Some(d) = std::env::var_os("IOGAUGE_REPORT_OUT") {
        std::fs::write(Path::new(&d).join("big.html"), &html).unwrap();
    }
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(html.len() < 5_000_000, "{} bytes", html.len());
    assert_eq!(count(&html, "data-chart=\"series:"), 100);
    assert_eq!(count(&html, "data-chart=\"aas:"), 100);
}
