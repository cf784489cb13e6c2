//! `iogauge history`: one line per stored run, newest first, with the columns of Oracle's
//! DBA_RSRC_IO_CALIBRATE (start, end, max_iops, max_mbps, max_pmbps, latency, disks), and a
//! line for each other kind saying what the columns hold for it.

use iogauge_model::history::{RunRow, RunStatus};
use iogauge_model::Kind;
use std::fmt::Write as _;

pub fn history_table(rows: &[RunRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        s.push_str("no stored runs\n");
        return s;
    }
    let _ = writeln!(
        s,
        "{:>5}  {:<24} {:<24} {:<10} {:>9} {:>9} {:>9} {:>9} {:>5}  [label] target",
        "id", "start", "end", "kind", "max_iops", "max_mbps", "max_pmbps", "lat_ms", "disks"
    );
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$}"));
    for r in rows {
        let kind = match r.status {
            RunStatus::Complete => r.kind.to_string(),
            RunStatus::Interrupted => format!("{}*", r.kind),
        };
        let _ = writeln!(
            s,
            "{:>5}  {:<24} {:<24} {:<10} {:>9} {:>9} {:>9} {:>9} {:>5}  {}",
            r.id,
            r.started_at,
            r.ended_at,
            kind,
            opt(r.max_iops, 0),
            opt(r.max_mbps, 1),
            opt(r.max_pmbps, 1),
            opt(r.latency_ms, 2),
            r.disks.map_or("-".to_string(), |d| d.to_string()),
            match &r.label {
                Some(l) => format!("[{l}] {}", r.target),
                None => r.target.clone(),
            }
        );
    }
    if rows.iter().any(|r| r.status == RunStatus::Interrupted) {
        s.push_str("* interrupted: figures cover the part that ran\n");
    }
    // The columns are a calibration's; say what they hold for the other kinds.
    if rows.iter().any(|r| r.kind == Kind::Run) {
        s.push_str(
            "run: max_iops and max_mbps are the measured window's, lat_ms its mean latency\n",
        );
    }
    if rows.iter().any(|r| r.kind == Kind::DbRun) {
        s.push_str("db: max_iops and lat_ms are the database's reads/s and mean read time (PostgreSQL's include page-cache hits), not the devices' (`compare CAL DB` sets those beside a calibration); disks are those behind its data (db run --disks, else the disks sampled)\n");
    }
    s
}
