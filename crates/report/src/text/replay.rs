//! A replay's lines in a run's text (`iogauge replay`): what was replayed and how (the
//! header), and how late its requests went (under the summary).

use iogauge_model::run::RunReport;
use iogauge_model::spec::JobSpec;

/// `iogauge replay: trace 3 (iogauge), 2048 reads and writes, timed, map modulo; QD 256,
/// io_uring, O_DIRECT`, or `None` for a run that is no replay.
pub(crate) fn replay_header(o: &JobSpec) -> Option<String> {
    let r = o.replay.as_ref()?;
    let skipped = if r.skipped > 0 {
        format!(" ({} flushes and discards not issued)", r.skipped)
    } else {
        String::new()
    };
    // A fast replay's depth is in its pace; a timed one's slots are what it may keep in flight.
    let slots = match r.pace {
        iogauge_model::spec::Pace::Timed { .. } => format!("up to {} in flight, ", o.qd),
        iogauge_model::spec::Pace::Fast { .. } => String::new(),
    };
    Some(format!(
        "iogauge replay: {} ({}), {} reads and writes{skipped}, {}, map {}; {slots}{}, {}",
        r.source,
        r.format,
        r.requests,
        r.pace,
        r.map,
        o.engine,
        if o.direct { "O_DIRECT" } else { "buffered" },
    ))
}

/// `replay: 2048 requests issued, 3 more than 1 ms late; lateness p50 12 µs, p99 380 µs,
/// max 2.1 ms`; empty for a run that is no replay.
pub(crate) fn replay_line(r: &RunReport) -> String {
    let Some(p) = &r.replay else {
        return String::new();
    };
    let mut s = format!("replay: {} requests issued", p.issued);
    if let (Some(late), Some(after), Some(l)) = (p.late, p.late_after_ms, &p.lateness_us) {
        s += &format!(
            ", {late} more than {after} ms late; lateness p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
            l.p50, l.p99, l.max
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::run::ReplayReport;
    use iogauge_model::spec::{Pace, Replay, ReplayMap, RwMode};
    use iogauge_stats::LatHist;

    #[test]
    fn a_replay_says_what_it_replayed_and_how_late() {
        let mut o = JobSpec::new(RwMode::RandRw);
        assert_eq!(replay_header(&o), None);
        o.replay = Some(Replay {
            source: "trace 3".into(),
            format: "iogauge".into(),
            pace: Pace::Timed { speed: 2.0 },
            map: ReplayMap::Modulo,
            requests: 2048,
            skipped: 5,
        });
        let h = replay_header(&o).unwrap();
        assert!(h.starts_with("iogauge replay: trace 3 (iogauge), 2048 reads and writes (5 flushes and discards not issued), timed x2, map modulo; up to 32 in flight, io_uring"), "{h}");
        let mut lat = LatHist::new();
        lat.record(2_000_000);
        let mut r =
            RunReport::from_series(o, Vec::new(), std::time::SystemTime::UNIX_EPOCH, &[], false);
        assert_eq!(replay_line(&r), "");
        r.replay = Some(ReplayReport::of(7, Some((1, 1.0, &lat))));
        let l = replay_line(&r);
        assert!(
            l.starts_with("replay: 7 requests issued, 1 more than 1 ms late; lateness p50 2"),
            "{l}"
        );
    }
}
