//! What a database run does (plain validated data, built by the CLI) and the interval grid
//! every producer cuts its figures on.

use iogauge_stats::units::{opt_secs, secs};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Who does what.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Mode {
    /// SLOB `runit W R`: readers only read, writers only update.
    ReadersWriters { readers: u32, writers: u32 },
    /// SLOB2: every session updates with probability `update_pct`/100, else reads.
    Sessions { sessions: u32, update_pct: f64 },
}

/// How much an update changes (SLOB's REDO_STRESS): always `scratch = scratch + 1`, plus one
/// padding column (lite) or all of them (heavy) set to a new random value. PostgreSQL logs
/// only the changed middle of a row updated in place, so this scales WAL per update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedoStress {
    #[default]
    None,
    Lite,
    Heavy,
}

impl RedoStress {
    /// As `--redo-stress` takes it.
    pub fn name(self) -> &'static str {
        match self {
            RedoStress::None => "none",
            RedoStress::Lite => "lite",
            RedoStress::Heavy => "heavy",
        }
    }
}

/// Where a session's loop of operations runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    /// As pgio and SLOB do it: each session calls a PL/pgSQL procedure that performs a batch
    /// of operations inside the server, each update its own committed transaction, and
    /// returns every operation's latency as measured there with `clock_timestamp()`
    /// (microsecond resolution). One round trip per batch, so the client's share of the CPU
    /// stays small and the latency is the database's own.
    #[default]
    Server,
    /// One round trip per operation (a prepared statement): the latency includes the
    /// protocol round trip and the client's wake-up, as an application would see it.
    Client,
}

impl Driver {
    /// Runs stored before the choice existed were all driven by the client.
    pub fn before_the_choice() -> Driver {
        Driver::Client
    }

    pub fn name(self) -> &'static str {
        match self {
            Driver::Server => "server",
            Driver::Client => "client",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub mode: Mode,
    /// Rows read or updated per operation: a random key and the `work_unit − 1` keys above it.
    pub work_unit: u32,
    pub redo_stress: RedoStress,
    /// Every Nth operation of a session goes to schema 1 (SLOB's HOT_SCHEMA_FREQUENCY).
    pub hot_schema_every: Option<u32>,
    /// Pause between a session's operations; with `think_time_max`, the shortest pause.
    #[serde(default, with = "opt_secs")]
    pub think_time: Option<Duration>,
    /// Random think time: each pause drawn uniformly from `think_time ..= think_time_max`
    /// (SLOB's think time range).
    #[serde(default, with = "opt_secs", skip_serializing_if = "Option::is_none")]
    pub think_time_max: Option<Duration>,
    /// SLOB's HOTSPOT_MB / HOTSPOT_OFFSET_MB / HOTSPOT_FREQUENCY: every Nth operation of a
    /// session starts its work unit inside one range of keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotspot: Option<Hotspot>,
    /// The loaded data set: session i works on schema `i mod schemas + 1`.
    pub schemas: u32,
    pub blocks_per_schema: u64,
    pub seed: u64,
    #[serde(default = "Driver::before_the_choice")]
    pub driver: Driver,
    /// Over MPI ranks sharing one server: the job's number of this rank's first session, so
    /// that session `i` here is session `first_session + i` of the whole job (its schema and
    /// its random stream), exactly as in one process running every session.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_session: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An in-table hot spot: keys `offset_blocks + 1 ..= offset_blocks + size_blocks` (one row,
/// hence one 8 KiB block, per key), where every `every`-th operation of a session works.
/// Rows are loaded in shuffled key order, so these rows sit in blocks spread over the whole
/// table: the hot spot is `size_blocks` × 8 KiB of data the caches see again and again, not
/// one contiguous region of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hotspot {
    pub offset_blocks: u64,
    pub size_blocks: u64,
    pub every: u32,
}

impl Workload {
    pub fn sessions(&self) -> u32 {
        match self.mode {
            Mode::ReadersWriters { readers, writers } => readers + writers,
            Mode::Sessions { sessions, .. } => sessions,
        }
    }

    /// Session `i`'s own schema (1-based).
    pub fn schema_of(&self, i: u32) -> u32 {
        (self.first_session + i) % self.schemas + 1
    }

    /// Rank `rank`'s part of the sessions when `size` ranks share them: a contiguous block of
    /// the job's sessions (readers first, as one process numbers them), `n / size` each and
    /// one more for the first `n mod size`. `None` when the rank would get none.
    pub fn share(&self, rank: u32, size: u32) -> Option<Workload> {
        let n = self.sessions();
        let count = |r: u32| n / size + u32::from(r < n % size);
        let start: u32 = (0..rank).map(count).sum();
        let mine = count(rank);
        if mine == 0 {
            return None;
        }
        let mode = match self.mode {
            Mode::ReadersWriters { readers, .. } => {
                let r = readers.clamp(start, start + mine) - start;
                Mode::ReadersWriters {
                    readers: r,
                    writers: mine - r,
                }
            }
            Mode::Sessions { update_pct, .. } => Mode::Sessions {
                sessions: mine,
                update_pct,
            },
        };
        Some(Workload {
            mode,
            first_session: self.first_session + start,
            ..self.clone()
        })
    }

    /// Checks the workload against itself; messages name the option and the accepted range.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |s: String| Err(s);
        if self.sessions() == 0 {
            return bad("no sessions: give at least one reader, writer or session".into());
        }
        if let Mode::Sessions { update_pct, .. } = self.mode {
            if !(0.0..=100.0).contains(&update_pct) {
                return bad(format!("update-pct must be 0..=100, got {update_pct}"));
            }
        }
        if let (Some(lo), Some(hi)) = (self.think_time, self.think_time_max) {
            if hi < lo {
                return bad(format!(
                    "think-time range {lo:?}..{hi:?} ends before it starts: give MIN..MAX"
                ));
            }
        }
        if self.schemas == 0 || self.blocks_per_schema == 0 {
            return bad("the data set is empty: run setup first".into());
        }
        if self.work_unit == 0 || self.work_unit as u64 > self.blocks_per_schema {
            return bad(format!(
                "work-unit must be 1..={} (the rows per schema), got {}",
                self.blocks_per_schema, self.work_unit
            ));
        }
        if self.hot_schema_every == Some(0) {
            return bad("hot-schema-every must be at least 1".into());
        }
        if let Some(h) = self.hotspot {
            if h.every == 0 {
                return bad("hotspot: every Nth operation needs N of at least 1".into());
            }
            if h.size_blocks < u64::from(self.work_unit) {
                return bad(format!(
                    "hotspot: {} rows (8 KiB each) cannot hold a work unit of {} rows; give a larger SIZE or a smaller --work-unit",
                    h.size_blocks, self.work_unit
                ));
            }
            if h.offset_blocks + h.size_blocks > self.blocks_per_schema {
                return bad(format!(
                    "hotspot: OFFSET + SIZE is {} rows, past the {} rows (8 KiB each) of a schema; give a smaller OFFSET or SIZE",
                    h.offset_blocks + h.size_blocks,
                    self.blocks_per_schema
                ));
            }
        }
        Ok(())
    }
}

/// The interval grid: ramp intervals from t0, then measured intervals from the end of the
/// ramp (each phase's last interval may be shorter), as the synthetic engine cuts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    #[serde(with = "secs")]
    pub interval: Duration,
    #[serde(with = "secs")]
    pub ramp: Duration,
    #[serde(with = "secs")]
    pub time: Duration,
}

/// One interval of the grid, as offsets from t0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub start: Duration,
    pub end: Duration,
    pub ramp: bool,
}

impl Grid {
    pub fn validate(&self) -> Result<(), String> {
        if self.interval.is_zero() || self.time.is_zero() {
            return Err("interval and time must be longer than zero".into());
        }
        Ok(())
    }

    pub fn total(&self) -> Duration {
        self.ramp + self.time
    }

    pub fn slots(&self) -> Vec<Slot> {
        let mut out = Vec::new();
        for (from, len, ramp) in [
            (Duration::ZERO, self.ramp, true),
            (self.ramp, self.time, false),
        ] {
            let end = from + len;
            let mut s = from;
            while s < end {
                let e = (s + self.interval).min(end);
                out.push(Slot {
                    start: s,
                    end: e,
                    ramp,
                });
                s = e;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn grid_marks_ramp_and_cuts_short_tails() {
        let ms = Duration::from_millis;
        let g = Grid {
            interval: ms(1000),
            ramp: ms(1500),
            time: ms(2000),
        };
        let s: Vec<(u128, u128, bool)> = g
            .slots()
            .iter()
            .map(|s| (s.start.as_millis(), s.end.as_millis(), s.ramp))
            .collect();
        assert_eq!(
            s,
            [
                (0, 1000, true),
                (1000, 1500, true),
                (1500, 2500, false),
                (2500, 3500, false)
            ]
        );
        let no_ramp = Grid {
            ramp: Duration::ZERO,
            ..g
        };
        assert_eq!(no_ramp.slots().len(), 2);
        assert!(Grid {
            time: Duration::ZERO,
            ..g
        }
        .validate()
        .is_err());
    }

    #[test]
    fn ranks_share_the_sessions_as_one_process_numbers_them() {
        let w = wl(Mode::ReadersWriters {
            readers: 3,
            writers: 2,
        });
        let parts: Vec<Workload> = (0..2).map(|r| w.share(r, 2).unwrap()).collect();
        assert_eq!(
            parts.iter().map(|p| p.mode).collect::<Vec<_>>(),
            vec![
                Mode::ReadersWriters {
                    readers: 3,
                    writers: 0
                },
                Mode::ReadersWriters {
                    readers: 0,
                    writers: 2
                }
            ]
        );
        // Every session keeps its schema: rank 1's first is the job's fourth.
        assert_eq!(parts[1].first_session, 3);
        assert_eq!(parts[1].schema_of(0), w.schema_of(3));
        assert!(
            w.share(5, 6).is_none(),
            "five sessions, six ranks: the sixth has none"
        );
    }

    #[test]
    fn sessions_and_schemas() {
        let w = wl(Mode::ReadersWriters {
            readers: 2,
            writers: 1,
        });
        assert_eq!(w.sessions(), 3);
        assert_eq!((w.schema_of(0), w.schema_of(2), w.schema_of(3)), (1, 3, 1));
    }

    #[test]
    fn driver_names_and_the_stored_default() {
        assert_eq!(Driver::default(), Driver::Server);
        assert_eq!(Driver::Client.name(), "client");
        let w = wl(Mode::Sessions {
            sessions: 1,
            update_pct: 0.0,
        });
        let mut v = serde_json::to_value(&w).unwrap();
        assert_eq!(v["driver"], "server");
        v.as_object_mut().unwrap().remove("driver");
        let old: Workload = serde_json::from_value(v).unwrap();
        assert_eq!(old.driver, Driver::Client, "runs stored before the choice");
    }

    #[test]
    fn validation_names_the_option() {
        let mut w = wl(Mode::Sessions {
            sessions: 1,
            update_pct: 120.0,
        });
        assert!(w.validate().unwrap_err().to_string().contains("update-pct"));
        w.mode = Mode::Sessions {
            sessions: 1,
            update_pct: 10.0,
        };
        w.work_unit = 101;
        assert!(w.validate().unwrap_err().to_string().contains("work-unit"));
        w.work_unit = 100;
        assert!(w.validate().is_ok());
        w.work_unit = 8;
        let hot = |offset_blocks, size_blocks, every| Hotspot {
            offset_blocks,
            size_blocks,
            every,
        };
        for (h, says) in [
            (hot(0, 10, 0), "at least 1"),
            (hot(0, 7, 2), "cannot hold a work unit of 8"),
            (hot(91, 10, 2), "past the 100 rows"),
        ] {
            w.hotspot = Some(h);
            let e = w.validate().unwrap_err();
            assert!(e.starts_with("hotspot: ") && e.contains(says), "{e}");
        }
        w.hotspot = Some(hot(90, 10, 2));
        assert!(w.validate().is_ok());
    }
}
