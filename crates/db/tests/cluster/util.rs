//! Helpers the test cases share.

use super::Ctx;
use iogauge_db::driver;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::workload::{Driver, Grid, Mode, RedoStress, Workload};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn workload(ctx: &Ctx, mode: Mode) -> Workload {
    Workload {
        first_session: 0,
        mode,
        work_unit: 8,
        redo_stress: RedoStress::None,
        hot_schema_every: None,
        think_time: None,
        think_time_max: None,
        hotspot: None,
        schemas: ctx.spec.schemas,
        blocks_per_schema: ctx.spec.blocks_per_schema,
        seed: 42,
        driver: Driver::default(),
    }
}

pub fn grid(ramp: u64, time: u64) -> Grid {
    Grid {
        interval: ms(500),
        ramp: ms(ramp),
        time: ms(time),
    }
}

pub fn run(ctx: &mut Ctx, wl: &Workload, g: &Grid) -> DbOutcome {
    let cfg = ctx.cluster().config();
    let o = driver::run(&cfg, wl, g, Arc::new(AtomicBool::new(false)), |_| {})
        .unwrap_or_else(|e| panic!("run: {e}"));
    assert!(o.error.is_none(), "run error: {:?}", o.error);
    assert!(!o.interrupted);
    o
}

/// Per-session counts add up to the totals, per interval and over the run.
pub fn check_counts(o: &DbOutcome, wu: u64) {
    for iv in &o.intervals {
        let s = &iv.sessions;
        assert_eq!(
            s.per_session.iter().sum::<u64>(),
            s.ops(),
            "interval {}",
            iv.index
        );
        assert_eq!(s.read_lat.count(), s.read_ops);
        assert_eq!(s.update_lat.count(), s.update_ops);
        assert_eq!(
            s.rows_read,
            s.read_ops * wu,
            "every read finds work_unit rows"
        );
        assert_eq!(s.rows_updated, s.update_ops * wu);
    }
    let all = o.all_sessions();
    assert_eq!(o.per_session.iter().sum::<u64>(), all.ops());
    assert_eq!(all.per_session, o.per_session);
    assert!(
        o.per_session.iter().all(|&n| n > 0),
        "every session worked: {:?}",
        o.per_session
    );
}

/// Processes whose working directory is `data`: the postmaster and every backend chdir there.
pub fn procs_in(data: &Path) -> Vec<u32> {
    let Ok(data) = data.canonicalize() else {
        return Vec::new();
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == data))
        .collect()
}
