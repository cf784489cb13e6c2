//! The throttle rule with the job's cgroup limits read: a limit the run reached is named,
//! with its file and cgroup; read and not reached, nothing is inferred.

use crate::fixture::{dir, disk, evidence, find, of, run, set_disk};
use iogauge_model::finding::Layer;
use iogauge_model::preflight::limits::{IoLimit, IoLimits, Limited};
use iogauge_model::preflight::Preflight;
use iogauge_model::run::RunReport;
use iogauge_model::summary::DirSummary;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// 400 reads/s of 80 ms each (32 outstanding) while `vda`'s await is 0.3 ms: the time is
/// above the device's queue.
fn held() -> RunReport {
    run(
        dir(400.0, 8.0, 80_000.0),
        DirSummary::default(),
        disk(400.0, 0.3, 0.0, 0.0, 12.0, 0.12),
    )
}

fn limit(device: &str, what: Limited, value: u64, cgroup: &str, v2: bool) -> IoLimit {
    let dir = if v2 {
        "/sys/fs/cgroup"
    } else {
        "/sys/fs/cgroup/blkio"
    };
    let name = if v2 { "io.max" } else { what.v1_file() };
    IoLimit {
        device: device.into(),
        devnum: "254:0".into(),
        what,
        value,
        file: format!("{dir}{}/{name}", cgroup.trim_end_matches('/')).into(),
        cgroup: cgroup.into(),
    }
}

fn with_limits(r: &mut RunReport, limits: Vec<IoLimit>) {
    r.preflight = Some(Preflight {
        targets: vec![],
        md_arrays: vec![],
        warnings: vec![],
        io_limits: Some(IoLimits {
            v1: Some("/x".into()),
            v2: Some("/y".into()),
            limits,
            unread: vec![],
        }),
    });
}

#[test]
fn a_limit_the_run_reached_is_named() {
    let mut r = held();
    with_limits(
        &mut r,
        vec![
            limit("vda", Limited::ReadIops, 420, "/", false),
            limit("vda", Limited::ReadIops, 5000, "/x", false),
        ],
    );
    let v = of(r);
    let f = &v[0];
    assert_eq!(f.layer, Layer::Throttle, "{v:#?}");
    assert_eq!(
        f.title,
        "blkio.throttle.read_iops_device limits vda to 420 IOPS for this job's cgroup /x (set on /); the run did 400: 100% of the I/O time waited for the limit"
    );
    assert!(close(f.impact, 1.0 - 0.3 / 80.0), "{}", f.impact);
    assert_eq!(
        evidence(
            f,
            "vda limit (/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device)"
        ),
        420.0
    );
    assert_eq!(evidence(f, "vda done"), 400.0);
    assert!(!f.title.contains("likely"));
}

#[test]
fn a_v2_bandwidth_limit_on_the_job_s_own_cgroup() {
    // 400 reads/s of 8 KiB: 3.125 MiB/s against io.max rbps 3.2 MiB/s.
    let mut r = held();
    with_limits(
        &mut r,
        vec![limit("vda", Limited::ReadBps, 3_355_443, "/y", true)],
    );
    let f = find(&of(r), Layer::Throttle).clone();
    assert!(
        f.title.starts_with(
            "io.max rbps limits vda to 3355443 B/s for this job's cgroup /y; the run did 3276800"
        ),
        "{}",
        f.title
    );
}

#[test]
fn limits_read_and_not_reached_say_nothing() {
    // The same time above the device, with a limit far above what it did: not a throttle,
    // and not a likely one either (the untraced guess is for results without the limits).
    let mut r = held();
    with_limits(
        &mut r,
        vec![limit("vda", Limited::ReadIops, 1000, "/", false)],
    );
    let v = of(r.clone());
    assert!(v.iter().all(|f| f.layer != Layer::Throttle), "{v:#?}");
    with_limits(&mut r, vec![]);
    assert!(of(r).iter().all(|f| f.layer != Layer::Throttle));
}

#[test]
fn a_limit_below_the_target_s_device_is_its_device_time() {
    // A loop device (the target's) over vda, vda held to 400 reads/s: the loop device's
    // await (20 of the 80 ms) is the limit's share.
    let mut r = held();
    r.targets[0].device = Some("loop3".into());
    set_disk(&mut r, "loop3", &disk(400.0, 20.0, 0.0, 0.0, 100.0, 8.0));
    with_limits(
        &mut r,
        vec![limit("vda", Limited::ReadIops, 400, "/x", false)],
    );
    let f = find(&of(r), Layer::Throttle).clone();
    assert!(close(f.impact, 20.0 / 80.0), "{}", f.impact);
    assert!(
        f.title
            .contains("limits vda to 400 IOPS for this job's cgroup /x;"),
        "{}",
        f.title
    );
}

#[test]
fn a_traced_wait_with_no_limit_there_has_no_known_cause() {
    // 9 ms before vda's queue with requests to spare, the job's limits read: none on vda,
    // and reads (writeback throttling holds writes only): the time is measured, its cause
    // is said to be unknown.
    let mut r = run(
        dir(100.0, 8.0, 9500.0),
        DirSummary::default(),
        disk(100.0, 0.3, 0.0, 0.0, 3.0, 0.03),
    );
    crate::fixture::set_layers(&mut r, "vda", 100.0, 9000.0, 20.0, 280.0);
    with_limits(
        &mut r,
        vec![limit("loop9", Limited::ReadIops, 10, "/", false)],
    );
    let f = find(&of(r.clone()), Layer::Throttle).clone();
    assert!(f.title.ends_with("the cause is not known"), "{}", f.title);
    assert_eq!(evidence(&f, "cgroup limits on vda"), 0.0);
    // A limit on vda the run did not reach: not the cause, but not ruled out either.
    with_limits(
        &mut r,
        vec![limit("vda", Limited::ReadIops, 1000, "/", false)],
    );
    let f = find(&of(r), Layer::Throttle).clone();
    assert!(!f.title.contains("not known"), "{}", f.title);
    assert_eq!(evidence(&f, "cgroup limits on vda"), 1.0);
}
