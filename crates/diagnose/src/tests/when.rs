//! Findings located in time: a disk saturated for part of a run is said with its stretch,
//! and a short saturation the whole run dilutes becomes a finding of its stretch.

use crate::fixture::*;
use iogauge_model::derive::DiskRates;
use iogauge_model::finding::{Finding, Layer, Stretch};
use iogauge_model::run::RunReport;
use iogauge_model::summary::DirSummary;

/// One second's reads: `iops` of 8 KiB at `lat_us`.
fn second(iops: f64, lat_us: f64) -> DirSummary {
    DirSummary {
        ios: iops as u64,
        bytes: (iops * 8192.0) as u64,
        ..dir(iops, 8.0, lat_us)
    }
}

/// A run of `n` one-second intervals whose disk is saturated in `busy` (8000 IOPS at 4 ms,
/// the device's await 3.8 ms, 30 in flight) and idle-ish elsewhere (3000 IOPS at 200 µs).
fn saturated_during(n: u32, busy: std::ops::Range<usize>) -> RunReport {
    let sat = (
        second(8000.0, 4000.0),
        disk(8000.0, 3.8, 0.0, 0.0, 100.0, 30.4),
    );
    let calm = (
        second(3000.0, 200.0),
        disk(3000.0, 0.15, 0.0, 0.0, 40.0, 0.45),
    );
    let mut r = run(
        DirSummary::default(),
        DirSummary::default(),
        DiskRates::default(),
    );
    let proto = r.intervals[0].clone();
    r.intervals = (0..n)
        .map(|i| {
            let mut iv = proto.clone();
            let (io, d): &(DirSummary, DiskRates) = if busy.contains(&(i as usize)) {
                &sat
            } else {
                &calm
            };
            iv.t_s = f64::from(i);
            iv.read = io.clone();
            if let Some(s) = &mut iv.system {
                s.disks.insert("vda".into(), d.clone());
            }
            iv
        })
        .collect();
    let (ios, lat): (u64, f64) = r.intervals.iter().fold((0, 0.0), |(n, l), i| {
        (n + i.read.ios, l + i.read.ios as f64 * i.read.lat_us.mean)
    });
    r.summary.elapsed_s = f64::from(n);
    r.summary.read = DirSummary {
        ios,
        bytes: ios * 8192,
        ..dir(ios as f64 / f64::from(n), 8.0, lat / ios as f64)
    };
    r
}

fn device(v: &[Finding]) -> &Finding {
    v.iter()
        .find(|f| f.layer == Layer::Device)
        .unwrap_or_else(|| panic!("no device finding: {v:#?}"))
}

#[test]
fn a_disk_saturated_for_part_of_the_run_is_said_with_its_stretch() {
    let v = of(saturated_during(10, 4..8));
    let d = device(&v);
    assert_eq!(
        d.during,
        vec![Stretch {
            from_s: 4.0,
            to_s: 8.0
        }],
        "{v:#?}"
    );
    assert!(d.impact >= 0.2, "{v:#?}");
}

#[test]
fn a_disk_saturated_throughout_has_no_stretch() {
    let v = of(saturated_during(10, 0..10));
    assert!(device(&v).during.is_empty(), "{v:#?}");
}

#[test]
fn a_short_saturation_the_whole_dilutes_is_a_finding_of_its_stretch() {
    // 6 of 40 s saturated (three parts of 2 s): the whole run's disk is 49% busy, no
    // finding of the whole.
    let v = of(saturated_during(40, 28..34));
    let d = device(&v);
    assert_eq!(
        d.during,
        vec![Stretch {
            from_s: 28.0,
            to_s: 34.0
        }],
        "{v:#?}"
    );
    // The stretch's impact (device time 3.8 of 4 ms) times its share of the run, 15%.
    assert!((d.impact - 0.1425).abs() < 0.01, "{}", d.impact);
    assert!(d.title.contains("vda is the limit"), "{}", d.title);
}

#[test]
fn a_saturation_shorter_than_three_parts_is_not_said() {
    // Two parts of 2 s.
    let v = of(saturated_during(40, 28..32));
    assert!(v.iter().all(|f| f.layer != Layer::Device), "{v:#?}");
}

#[test]
fn a_saturation_that_comes_and_goes_is_not_located() {
    let v = of(saturated_during(20, 0..20));
    assert!(device(&v).during.is_empty());
    // Every other second: the whole run's finding, with no stretch said.
    let mut r = saturated_during(20, 0..0);
    let busy = saturated_during(20, 0..20);
    for i in (0..20).step_by(2) {
        r.intervals[i] = busy.intervals[i].clone();
    }
    let v = of(r);
    if let Some(d) = v.iter().find(|f| f.layer == Layer::Device) {
        assert!(d.during.is_empty() || d.during.len() == 1, "{v:#?}");
    }
}
