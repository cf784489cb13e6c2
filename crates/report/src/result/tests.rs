//! The result report on the captured fixture documents: enough charts per kind, overlays,
//! escaping, and nothing an SVG attribute cannot hold.

use super::{result_html, Stored};
use crate::svg::page::colour;
use iogauge_model::Document;
use iogauge_stats::LatHist;

const RUN: &str = include_str!("../../../campaign/tests/fixtures/run_randread.json");
const RUN_RW: &str = include_str!("../../../campaign/tests/fixtures/run_randrw.json");
const CALIBRATE: &str = include_str!("../../../campaign/tests/fixtures/calibrate.json");
const DB_RUN: &str = include_str!("../../../campaign/tests/fixtures/db_run.json");

fn doc(json: &str) -> Document {
    Document::from_json(json).expect("a fixture reads")
}

fn hist(us: &[u64]) -> Vec<u8> {
    let mut h = LatHist::default();
    for &u in us {
        h.record(u * 1000);
    }
    h.encode().expect("encodes")
}

/// A result's id, document and stored histograms.
type Given<'a> = (i64, &'a Document, iogauge_model::Histograms);

fn html(docs: &[Given]) -> String {
    let stored: Vec<Stored> = docs
        .iter()
        .map(|(id, d, h)| Stored {
            id: *id,
            document: d,
            histograms: h,
        })
        .collect();
    result_html(&stored).expect("renders")
}

fn charts(html: &str, kind: &str) -> usize {
    html.matches(&format!("data-chart=\"{kind}:")).count()
}

fn clean(html: &str) {
    for bad in ["NaN", "inf\"", "=\"-\"", "<script"] {
        assert!(!html.contains(bad), "{bad} in the report");
    }
}

#[test]
fn a_run_has_its_series_curves_and_device_table() {
    let d = doc(RUN);
    let h = vec![("read".to_string(), hist(&[100, 200, 300, 5000]))];
    let page = html(&[(7, &d, h)]);
    clean(&page);
    // IOPS, MiB/s, latency; device IOPS, %util, await, CPU.
    assert_eq!(charts(&page, "series"), 7, "{page}");
    assert_eq!(charts(&page, "latcurve"), 1);
    assert!(page.contains("<title>iogauge result 7</title>"));
    assert!(page.contains("Workload and devices") && page.contains("<td>read</td>"));
    assert!(page.contains("class=\"ramp\"") || page.contains("class=\"steady\""));
    assert!(!page.contains("Log writer"), "no log writer, no table");
}

/// A run with a log writer (`run --log-bs`) gets its row: size, writes/s and times in ms.
#[test]
fn a_run_with_a_log_writer_has_its_row() {
    let mut d = doc(RUN);
    let Document::Run(r) = &mut d else {
        panic!("a run fixture")
    };
    let mut l = iogauge_model::run::LogSummary {
        bs: 8192,
        target: "/wal/<x>".into(),
        writes: 2000,
        writes_s: 1000.0,
        mbps: 7.8125,
        ..Default::default()
    };
    l.sync_lat_us.mean = 1500.0;
    r.log = Some(l);
    let page = html(&[(7, &d, vec![])]);
    clean(&page);
    let row = &page[page.find("<h3>Log writer</h3>").expect("the table")..];
    for cell in [
        "/wal/&lt;x&gt;",
        "<td>8k</td>",
        "<td>1000</td>",
        "<td>1.50</td>",
    ] {
        assert!(row.contains(cell), "{cell}: {row}");
    }
}

#[test]
fn two_runs_overlay_on_the_same_axes() {
    let (a, b) = (doc(RUN), doc(RUN_RW));
    let page = html(&[(3, &a, vec![]), (4, &b, vec![])]);
    clean(&page);
    assert_eq!(charts(&page, "series"), 7, "one set of charts for both");
    // The IOPS chart's legend names both results; run 4 has reads and writes.
    let iops = &page[page.find("data-chart=\"series:iops\"").unwrap()..];
    let iops = &iops[..iops.find("</svg>").unwrap()];
    for name in [">3 read<", ">4 read<", ">4 write<"] {
        assert!(iops.contains(name), "{name} missing: {iops}");
    }
    assert_eq!(iops.matches("class=\"ln\"").count(), 3);
    // Spans of one run would be wrong for the other: none when overlaid.
    assert!(!iops.contains("class=\"ramp\""));
    assert!(page.contains(colour(0)) && page.contains(colour(1)));
}

#[test]
fn a_calibration_draws_orion_pictures() {
    let d = doc(CALIBRATE);
    let Document::Calibration(c) = &d else {
        panic!("a calibration")
    };
    // The step histograms a calibration stores (and a per-point one, which is no curve).
    let h: Vec<(String, Vec<u8>)> = ["small", "large", "0:Small:1"]
        .iter()
        .map(|l| (l.to_string(), hist(&[100, 250, 900])))
        .collect();
    let page = html(&[(9, &d, h)]);
    clean(&page);
    assert_eq!(
        charts(&page, "curve"),
        3,
        "IOPS and MB/s vs depth, the knee"
    );
    assert!(page.contains("data-chart=\"curve:knee\"") && page.contains("cap 20 ms"));
    assert_eq!(charts(&page, "latcurve"), 2, "small and large steps");
    let small = points(c, iogauge_model::calib::Step::Small);
    let iops = &page[page.find("data-chart=\"curve:iops\"").unwrap()..];
    let iops = &iops[..iops.find("</svg>").unwrap()];
    assert_eq!(iops.matches("<circle").count(), small.len());
}

fn points(
    c: &iogauge_model::calib::CalibrationReport,
    step: iogauge_model::calib::Step,
) -> Vec<&iogauge_model::calib::PointReport> {
    c.points
        .iter()
        .filter(|p| p.point.step == step && !p.point.superseded)
        .collect()
}

#[test]
fn a_matrix_is_a_heat_map() {
    let mut d = doc(CALIBRATE);
    let Document::Calibration(c) = &mut d else {
        panic!("a calibration")
    };
    c.matrix = (0..3u32)
        .flat_map(|l| (0..4u32).map(move |s| (s, l)))
        .filter(|&(s, l)| s + l > 0)
        .map(|(s, l)| iogauge_model::calib::Cell {
            small: s,
            large: l,
            small_iops: f64::from(s) * 100.0,
            small_lat_us: Default::default(),
            large_mbps: f64::from(l) * 50.0,
        })
        .collect();
    let page = html(&[(2, &d, vec![])]);
    clean(&page);
    assert_eq!(charts(&page, "heatmap"), 2);
    let map = &page[page.find("data-chart=\"heatmap:2:iops\"").unwrap()..];
    let map = &map[..map.find("</svg>").unwrap()];
    assert_eq!(map.matches("<rect").count(), 11, "one rectangle per cell");
    assert!(map.contains(">300<"), "the largest value is labelled");
}

#[test]
fn a_db_run_has_its_load_profile_and_wait_events() {
    let d = doc(DB_RUN);
    let h = vec![
        ("read".to_string(), hist(&[300, 400])),
        ("update".to_string(), hist(&[900, 2000])),
    ];
    let page = html(&[(5, &d, h)]);
    clean(&page);
    assert!(
        charts(&page, "series") >= 6,
        "ops, latency, load, WAL, devices"
    );
    assert_eq!(charts(&page, "aas"), 1);
    assert!(page.contains("data-chart=\"latcurve:db read\""));
    assert!(page.contains("physical reads/s"));
}

#[test]
fn kinds_mix_and_labels_are_escaped() {
    let (mut a, b, c) = (doc(RUN), doc(CALIBRATE), doc(DB_RUN));
    a.meta_mut().label = Some("<b>&\"new\"".into());
    let page = html(&[(1, &a, vec![]), (2, &b, vec![]), (3, &c, vec![])]);
    clean(&page);
    assert!(!page.contains("<b>&\""));
    assert!(page.contains("[&lt;b&gt;&amp;&quot;new&quot;]"));
    for id in ["id=\"runs\"", "id=\"calibrations\"", "id=\"db\""] {
        assert!(page.contains(id), "{id}");
    }
    assert_eq!(
        page.matches("<details>").count(),
        3,
        "each result's text summary"
    );
}

/// One calibration and one db run: the placement table, a row per figure, before the kinds'
/// sections; with a second calibration there is no pair to set side by side.
#[test]
fn a_calibration_and_a_db_run_get_the_placement_table() {
    let (run, cal, db) = (doc(RUN), doc(CALIBRATE), doc(DB_RUN));
    let page = html(&[(1, &run, vec![]), (4, &db, vec![]), (3, &cal, vec![])]);
    clean(&page);
    let at = page.find("id=\"placement\"").expect("the placement table");
    assert!(
        at < page.find("id=\"runs\"").unwrap(),
        "before the kinds' sections"
    );
    let table = &page[at..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(
        table.contains("<th>calibration 3</th><th>db run 4</th>"),
        "{table}"
    );
    assert_eq!(table.matches("<tr data-metric=").count(), 7, "{table}");
    assert!(table.contains("<tr data-metric=\"reads_s\"><td class=\"l\">reads/s</td><td>62382</td><td>62.68</td><td>0.001</td>"), "{table}");
    let two = html(&[(3, &cal, vec![]), (5, &cal, vec![]), (4, &db, vec![])]);
    assert!(!two.contains("id=\"placement\""));
}

#[test]
fn the_busiest_cpu_is_drawn_when_samples_keep_each_cpu() {
    let mut d = doc(RUN);
    let page = html(&[(1, &d, vec![])]);
    assert_eq!(
        charts(&page, "series"),
        7,
        "a fixture without per-CPU lines: no chart"
    );
    let Document::Run(r) = &mut d else {
        panic!("a run")
    };
    // A snapshot at every interval's start and at the end: cpu0 spends every tick in the
    // kernel, cpu1 idles.
    use iogauge_model::system::{CpuCounters, CpuLine, Snapshot};
    let ends: Vec<f64> = r
        .intervals
        .iter()
        .map(|i| i.t_s)
        .chain(r.intervals.last().map(|i| i.t_s + i.dur_s))
        .collect();
    r.samples = ends
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let ticks = 100 * k as u64;
            let busy = CpuCounters {
                system: ticks,
                ..Default::default()
            };
            let idle = CpuCounters {
                idle: ticks,
                ..Default::default()
            };
            Snapshot {
                at_ns: (t * 1e9).round() as u64,
                disks: Vec::new(),
                cpu: CpuCounters {
                    system: ticks,
                    idle: ticks,
                    ..Default::default()
                },
                mem: Default::default(),
                psi: None,
                cpus: vec![
                    CpuLine {
                        cpu: 0,
                        counters: busy,
                    },
                    CpuLine {
                        cpu: 1,
                        counters: idle,
                    },
                ],
                load: None,
                layers: Vec::new(),
                ring: None,
                others: Vec::new(),
                swap: None,
                job: None,
                psi_cpu: None,
            }
        })
        .collect();
    let page = html(&[(1, &d, vec![])]);
    clean(&page);
    let each = &page[page.find("data-chart=\"series:cpu_each\"").expect("drawn")..];
    let each = &each[..each.find("</svg>").unwrap()];
    assert!(
        each.contains(">busiest CPU<") && each.contains(">all CPUs<"),
        "{each}"
    );
    assert!(
        each.contains(">100%<"),
        "the busy core reaches the top tick: {each}"
    );
}
