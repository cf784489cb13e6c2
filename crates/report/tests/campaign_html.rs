//! The campaign HTML report rendered by a real browser: headless Chromium must load it
//! without a single console message (our page has no script, so any message is an error,
//! such as an SVG attribute it could not parse), screenshot it, and show every chart in its
//! DOM. Plus the size/speed budget of a large campaign.
//!
//! Needs `/usr/bin/chromium` (`apt-get install -y chromium`); without it the tests fail
//! rather than skip. Set `IOGAUGE_REPORT_OUT=<dir>` to keep the report and screenshot.

mod view;

use iogauge_report::campaign_html;
use iogauge_stats::compare::Statistic;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use view::{build, small, Shape};

const CHROMIUM: &str = "/usr/bin/chromium";

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
    // Each case's limit, escaped, and where the limits differ.
    assert_eq!(count(&dom, "<h2 id=\"limits\">"), 1);
    assert!(dom.contains("limited by the &lt;queue&gt; &amp; nr_requests (60% of the I/O time; vda %util &lt;busy&gt; 97%)"));
    assert!(dom.contains("is limited by the device where"), "{dom}");
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

/// A stored result's report with findings and the tracer's layer figures (the stacked
/// bars) loads as cleanly.
#[test]
fn chromium_renders_a_result_with_findings_and_layers() {
    use iogauge_model::finding::{Evidence, Finding, Layer};
    use iogauge_model::layers::{LayerRates, StageLat, StageRates};
    use iogauge_model::Document;
    let json = include_str!("../../campaign/tests/fixtures/run_randread.json");
    let mut doc = Document::from_json(json).unwrap();
    let Document::Run(r) = &mut doc else {
        unreachable!("a run fixture")
    };
    let lat = |m: f64| {
        Some(StageLat {
            mean_us: m,
            p50_us: m,
            p99_us: 3.0 * m,
        })
    };
    for iv in &mut r.intervals {
        let dir = StageRates {
            req_s: 5e4,
            req_kib: 8.0,
            queue: lat(90.0),
            device: lat(400.0),
            ..Default::default()
        };
        let l = LayerRates {
            read: dir,
            ..Default::default()
        };
        iv.system.as_mut().unwrap().layers.insert("vda".into(), l);
    }
    r.findings = vec![Finding {
        rule: "os-queue".into(),
        layer: Layer::OsQueue,
        title: "I/Os wait in the <OS queue> & \"more\"".into(),
        impact: 0.4,
        evidence: vec![Evidence::new("queue ÷ device", 0.22, "×")],
        next: "raise nr_requests".into(),
        source: "btt Q2D/D2C".into(),
        ..Default::default()
    }];
    let stored = [iogauge_report::Stored {
        id: 1,
        document: &doc,
        histograms: &[],
    }];
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("result.html");
    std::fs::write(&page, iogauge_report::result_html(&stored).unwrap()).unwrap();
    let (dom, err) = run_chromium(tmp.path(), "result", &["--dump-dom"], &page);
    let console = console_messages(&err);
    assert!(
        console.is_empty(),
        "the page logged:\n{}",
        console.join("\n")
    );
    assert_eq!(count(&dom, "data-chart=\"stack:1\""), 1);
    assert!(
        dom.contains("I/Os wait in the &lt;OS queue&gt; &amp; \"more\""),
        "{dom}"
    );
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
