//! What one session of a database run does: its role from the workload (readers first,
//! then writers, or mixed sessions).

use iogauge_model::db::workload::{Mode, Workload};

/// What one session does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Role {
    Reader,
    Writer,
    /// Update with this probability (0..=1), else read.
    Mixed(f64),
}

/// Session `i`'s role: readers first, then writers.
pub(crate) fn role(w: &Workload, i: u32) -> Role {
    match w.mode {
        Mode::ReadersWriters { readers, .. } if i < readers => Role::Reader,
        Mode::ReadersWriters { .. } => Role::Writer,
        Mode::Sessions { update_pct, .. } => Role::Mixed(update_pct / 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::db::workload::{Driver, RedoStress};

    fn wl(mode: Mode) -> Workload {
        Workload {
            first_session: 0,
            mode,
            work_unit: 8,
            redo_stress: RedoStress::None,
            hot_schema_every: None,
            think_time: None,
            think_time_max: None,
            hotspot: None,
            schemas: 3,
            blocks_per_schema: 100,
            seed: 1,
            driver: Driver::Server,
        }
    }

    #[test]
    fn readers_come_first_then_writers() {
        let w = wl(Mode::ReadersWriters {
            readers: 2,
            writers: 1,
        });
        assert_eq!(role(&w, 1), Role::Reader);
        assert_eq!(role(&w, 2), Role::Writer);
        let m = wl(Mode::Sessions {
            sessions: 4,
            update_pct: 25.0,
        });
        assert_eq!(role(&m, 3), Role::Mixed(0.25));
    }
}
