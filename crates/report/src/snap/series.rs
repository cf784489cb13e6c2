//! The interval table of `iogauge show ID --interval`.

use super::{run_randread, run_randrw};
use crate::interval_table;
use insta::assert_snapshot;

#[test]
fn randread_intervals_with_device_and_cpu() {
    assert_snapshot!("randread", interval_table(&run_randread()));
}

#[test]
fn randrw_intervals_ramp_then_measured() {
    assert_snapshot!("randrw", interval_table(&run_randrw()));
}

/// An interval without samples (a run without device sampling, or a lost snapshot) and a
/// device seen in one interval only: both show as `-`. A write-heavy interval shows the
/// write latency.
#[test]
fn missing_samples_and_a_device_seen_once() {
    let mut r = run_randrw();
    r.intervals.truncate(6);
    r.intervals[0].system = None;
    let sys = r.intervals[1]
        .system
        .as_mut()
        .expect("the fixture has samples");
    let vda = sys.disks["vda"].clone();
    sys.disks.insert("dm-0".into(), vda);
    let iv = &mut r.intervals[2];
    std::mem::swap(&mut iv.read, &mut iv.write);
    assert_snapshot!("gaps", interval_table(&r));
}
