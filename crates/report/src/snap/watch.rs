//! The lines of `iogauge watch --plain` and the database rates line of the watch panel.

use super::{db_run, run_randread, run_randrw};
use crate::{db_rates_line, watch_cpu_lines, watch_line};
use insta::assert_snapshot;
use iogauge_model::derive::{CpuRates, Derived, PerCpuRates, SwapRates};
use iogauge_model::live::{DbNow, LiveHeader, LiveInterval};
use iogauge_model::run::IntervalReport;
use iogauge_model::system::LoadAvg;

const AT: &str = "2025-06-01T10:00:01Z";

fn header(kind: &str, pid: u32) -> LiveHeader {
    LiveHeader {
        pid,
        kind: kind.into(),
        what: "randrw (70% reads) 8k, QD 32 x 1 worker, io_uring, O_DIRECT".into(),
        started_at: "2025-06-01T10:00:00Z".into(),
        db: None,
    }
}

fn system(iv: &IntervalReport) -> Derived {
    iv.system.clone().expect("the fixture has samples")
}

fn live(iv: &IntervalReport) -> LiveInterval {
    LiveInterval {
        elapsed_s: iv.t_s + iv.dur_s,
        interval: iv.clone(),
        ranks: None,
    }
}

/// The machine alone: a device, one that went away, the CPU and PSI.
#[test]
fn devices_and_cpu_only() {
    let r = run_randread();
    let mut s = String::new();
    for iv in &r.intervals[..3] {
        s += &watch_line(AT, &system(iv), &["vda".into(), "sdz".into()], None, None);
        s.push('\n');
    }
    let mut no_psi = system(&r.intervals[5]);
    no_psi.psi_some_pct = None;
    s += &watch_line(AT, &no_psi, &[], None, None);
    s.push('\n');
    let mut swapping = system(&r.intervals[5]);
    swapping.swap = Some(SwapRates {
        in_s: 12.0,
        out_s: 340.0,
    });
    s += &watch_line(AT, &swapping, &[], None, None);
    assert_snapshot!("machine", s);
}

/// `--cpu each` with the load average: the interval's line, then one line per CPU (CPU 2
/// offline, CPU 3 saturated in system time).
#[test]
fn each_cpu_and_the_load_average() {
    let r = run_randread();
    let mut d = system(&r.intervals[4]);
    d.load = Some(LoadAvg {
        one: 1.52,
        five: 0.8,
        fifteen: 0.33,
        runnable: 2,
        tasks: 187,
    });
    let cpu = |cpu: u32, user: f64, system: f64, iowait: f64| PerCpuRates {
        cpu,
        rates: CpuRates {
            user,
            system,
            iowait,
            steal: 0.0,
            idle: 100.0 - user - system - iowait,
        },
    };
    let cpus = [
        cpu(0, 2.0, 3.0, 0.0),
        cpu(1, 10.0, 20.5, 30.0),
        cpu(3, 0.0, 100.0, 0.0),
    ];
    let mut lines = vec![watch_line(AT, &d, &["vda".into()], None, None)];
    lines.extend(watch_cpu_lines(AT, &cpus));
    assert_snapshot!("each_cpu", lines.join("\n"));
}

/// A run in progress: before its first interval, in the ramp, measured (reads and writes).
#[test]
fn with_a_run_in_progress() {
    let r = run_randrw();
    let h = header("run", 4242);
    let devices = ["vda".to_string()];
    let first = system(&r.intervals[0]);
    let lines = [
        watch_line(AT, &first, &devices, Some((&h, None)), None),
        watch_line(
            AT,
            &first,
            &devices,
            Some((&h, Some(&live(&r.intervals[0])))),
            None,
        ),
        watch_line(
            AT,
            &system(&r.intervals[10]),
            &devices,
            Some((&h, Some(&live(&r.intervals[10])))),
            None,
        ),
    ];
    assert_snapshot!("run_in_progress", lines.join("\n"));
}

/// A database run: before its first interval with the database's first look (no rates yet,
/// no session active), then with rates and sessions by wait event.
#[test]
fn with_a_database_run() {
    let r = run_randread();
    let d = system(&r.intervals[4]);
    let h = header("db run", 5151);
    let devices = ["vda".to_string()];
    let first = DbNow::default();
    let later = DbNow {
        rates: Some(db_run().summary.db),
        active: [("CPU".to_string(), 1), ("IO:DataFileRead".to_string(), 3)]
            .into_iter()
            .collect(),
    };
    let lines = [
        watch_line(AT, &d, &devices, Some((&h, None)), Some(&first)),
        watch_line(AT, &d, &devices, Some((&h, None)), Some(&later)),
        watch_line(AT, &d, &devices, None, Some(&later)),
    ];
    assert_snapshot!("db_run", lines.join("\n"));
}

#[test]
fn db_rates_of_the_fixture_and_without_reads() {
    let r = db_run();
    let mut quiet = r.intervals[0].db;
    quiet.avg_read_ms = None;
    assert_snapshot!(
        "db_rates",
        format!(
            "{}\n{}",
            db_rates_line(&r.summary.db),
            db_rates_line(&quiet)
        )
    );
}

/// The full-screen view drawn into a test terminal: the title, the device table (a device
/// gone shows as such), the CPU gauge and the followed run's line; then a database run whose
/// server cannot be reached, and `--cpu each` with nothing running.
#[test]
fn full_screen_view() {
    use crate::{watch_screen, LiveRun, WatchScreen};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    let draw = |screen: &WatchScreen| {
        let mut t = Terminal::new(TestBackend::new(160, 30)).unwrap();
        t.draw(|f| watch_screen(f, screen)).unwrap();
        let b = t.backend().buffer();
        let width = b.area.width as usize;
        b.content
            .chunks(width)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let r = run_randrw();
    let d = system(&r.intervals[10]);
    let history = [live(&r.intervals[9]), live(&r.intervals[10])];
    let h = header("run", 4242);
    let devices = ["vda".to_string(), "sdz".to_string()];
    let mut screen = WatchScreen {
        timestamp: AT,
        every: std::time::Duration::from_secs(1),
        system: &d,
        cpus: None,
        devices: &devices,
        live: Some(LiveRun {
            header: &h,
            history: &history,
            db_now: None,
            db_error: None,
        }),
    };
    let text = draw(&screen);
    for want in [
        "iogauge watch  2025-06-01T10:00:01Z  every 1s  (q quits)",
        "│vda ",
        "│sdz          gone",
        "busy ",
        "run 4242: randrw (70% reads)",
        "p99 latency (us)",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    assert!(!text.contains("database"), "{text}");
    let db = header("db run", 5151);
    screen.live = Some(LiveRun {
        header: &db,
        history: &[],
        db_now: None,
        db_error: Some("connection refused"),
    });
    let text = draw(&screen);
    for want in [
        "db run 5151",
        "waiting for its first interval",
        "database not reachable: connection refused",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    let cpus = [PerCpuRates {
        cpu: 3,
        rates: CpuRates {
            user: 0.0,
            system: 100.0,
            iowait: 0.0,
            steal: 0.0,
            idle: 0.0,
        },
    }];
    screen.cpus = Some(&cpus);
    screen.live = None;
    let text = draw(&screen);
    for want in [
        "CPU each (busy ",
        "cpu3  ██████████ us   0 sy 100 wa   0 id   0",
        "no run in progress: start `iogauge run` and it appears here",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
}

/// A live interval with the tracer's figures shows the busiest traced device's queue and
/// device time, on the plain line and in the full screen; one without shows neither.
#[test]
fn the_layer_split_live() {
    use crate::split::tests::rates;
    use crate::{watch_screen, LiveRun, WatchScreen};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    let r = run_randrw();
    let mut iv = r.intervals[10].clone();
    let plain = watch_line(
        AT,
        &system(&iv),
        &[],
        Some((&header("run", 1), Some(&live(&iv)))),
        None,
    );
    assert!(!plain.contains("queue"), "{plain}");
    let sys = iv.system.as_mut().unwrap();
    sys.layers
        .insert("vda".into(), rates(40_000.0, 120.0, 600.0));
    sys.layers.insert("loop0".into(), rates(10.0, 1.0, 2.0));
    let h = header("run", 4242);
    let line = watch_line(AT, &system(&iv), &[], Some((&h, Some(&live(&iv)))), None);
    assert!(
        line.ends_with(" p99 2906 us | vda queue 0.12 ms device 0.60 ms (queue 17%)"),
        "{line}"
    );
    let history = [live(&iv)];
    let d = system(&iv);
    let screen = WatchScreen {
        timestamp: AT,
        every: std::time::Duration::from_secs(1),
        system: &d,
        cpus: None,
        devices: &[],
        live: Some(LiveRun {
            header: &h,
            history: &history,
            db_now: None,
            db_error: None,
        }),
    };
    let mut t = Terminal::new(TestBackend::new(180, 24)).unwrap();
    t.draw(|f| watch_screen(f, &screen)).unwrap();
    let text: String = t
        .backend()
        .buffer()
        .content
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(
        text.contains("; vda queue 0.12 ms device 0.60 ms (queue 17%)"),
        "{text}"
    );
}
