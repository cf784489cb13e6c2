//! The workload `db run` asks for, as plain data before the data set is known: who the
//! sessions are (readers and writers, or mixed sessions), what each operation does, and the
//! seed. [`WorkloadSpec::workload`] makes it the run's [`Workload`] once the server says how
//! many schemas of how many blocks are loaded.

use iogauge_model::db::workload::{Driver, Hotspot, Mode, RedoStress, Workload};
use std::time::Duration;

/// `db run`'s workload flags, checked.
#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    pub readers: Option<u32>,
    pub writers: Option<u32>,
    pub sessions: Option<u32>,
    pub update_pct: Option<u8>,
    pub work_unit: u32,
    pub redo_stress: RedoStress,
    pub hot_schema_every: Option<u32>,
    pub hotspot: Option<Hotspot>,
    /// The think time, or its range (MIN, Some(MAX)).
    pub think_time: Option<(Duration, Option<Duration>)>,
    pub driver: Driver,
    pub seed: u64,
}

impl WorkloadSpec {
    /// The workload on the data set found on the server.
    pub fn workload(&self, schemas: u32, blocks_per_schema: u64) -> Workload {
        Workload {
            first_session: 0,
            mode: self.mode(schemas),
            work_unit: self.work_unit,
            redo_stress: self.redo_stress,
            hot_schema_every: self.hot_schema_every,
            think_time: self.think_time.map(|t| t.0),
            think_time_max: self.think_time.and_then(|t| t.1),
            hotspot: self.hotspot,
            schemas,
            blocks_per_schema,
            seed: self.seed,
            driver: self.driver,
        }
    }

    /// SLOB's runit: readers and writers; SLOB2: sessions that update some of the time; by
    /// default one reader per schema.
    fn mode(&self, schemas: u32) -> Mode {
        match self.sessions {
            Some(sessions) => Mode::Sessions {
                sessions,
                update_pct: f64::from(self.update_pct.unwrap_or(0)),
            },
            None => match (self.readers, self.writers) {
                (None, None) => Mode::ReadersWriters {
                    readers: schemas,
                    writers: 0,
                },
                (r, w) => Mode::ReadersWriters {
                    readers: r.unwrap_or(0),
                    writers: w.unwrap_or(0),
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WorkloadSpec {
        WorkloadSpec {
            readers: None,
            writers: None,
            sessions: None,
            update_pct: None,
            work_unit: 8,
            redo_stress: RedoStress::None,
            hot_schema_every: None,
            hotspot: None,
            think_time: None,
            driver: Driver::Server,
            seed: 1,
        }
    }

    /// SLOB's defaults: one reader per schema; a writer count alone means no readers; SLOB2's
    /// sessions update `update_pct` of the time (none unless asked).
    #[test]
    fn modes_from_the_flags() {
        let mode = |s: WorkloadSpec| s.workload(4, 100).mode;
        let rw = |readers, writers| Mode::ReadersWriters { readers, writers };
        assert_eq!(mode(spec()), rw(4, 0));
        let writers = WorkloadSpec {
            writers: Some(2),
            ..spec()
        };
        assert_eq!(mode(writers), rw(0, 2));
        let sessions = WorkloadSpec {
            sessions: Some(3),
            readers: Some(9),
            ..spec()
        };
        assert_eq!(
            mode(sessions),
            Mode::Sessions {
                sessions: 3,
                update_pct: 0.0
            }
        );
    }

    #[test]
    fn think_time_range_and_the_data_set() {
        let ms = Duration::from_millis;
        let w = WorkloadSpec {
            think_time: Some((ms(1), Some(ms(5)))),
            ..spec()
        }
        .workload(2, 64);
        assert_eq!((w.think_time, w.think_time_max), (Some(ms(1)), Some(ms(5))));
        assert_eq!(
            (w.schemas, w.blocks_per_schema, w.first_session),
            (2, 64, 0)
        );
    }
}
