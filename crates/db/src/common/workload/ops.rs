//! A session's sequence of operations: which schema, read or update, the first key and the
//! update's padding. Both drivers draw from it, so a seed gives the same operations whether
//! the client sends them one by one or hands them to the server in batches.

use crate::common::schema::PAD_LEN;
use crate::common::workload::role::{role, Role};
use iogauge_model::db::workload::{RedoStress, Workload};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Duration;

/// One operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op {
    /// On schema 1 instead of the session's own (SLOB's hot schema).
    pub hot: bool,
    pub update: bool,
    /// The first key; the operation covers `lo ..= lo + work_unit − 1`.
    pub lo: i64,
}

/// Draws session `id`'s operations in order.
pub(crate) struct OpGen {
    rng: Xoshiro256PlusPlus,
    role: Role,
    /// Keys a work unit may start at: `1 ..= span`.
    span: u64,
    /// Every Nth operation goes to schema 1, when the session's own schema is another.
    hot_every: Option<u64>,
    /// The hot spot: every Nth operation's first key is drawn from `lo ..= hi`.
    hotspot: Option<(u64, u64, u64)>,
    pad: bool,
    ops: u64,
    /// Think time: fixed (lo = hi) or drawn from `lo..=hi`.
    think: Option<(Duration, Duration)>,
}

impl OpGen {
    pub fn new(wl: &Workload, id: u32) -> OpGen {
        OpGen {
            rng: Xoshiro256PlusPlus::seed_from_u64(
                wl.seed
                    ^ (u64::from(wl.first_session) + u64::from(id) + 1)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            role: role(wl, id),
            span: wl.blocks_per_schema - wl.work_unit as u64 + 1,
            hot_every: wl
                .hot_schema_every
                .filter(|_| wl.schema_of(id) != 1)
                .map(u64::from),
            hotspot: wl.hotspot.map(|h| {
                let lo = h.offset_blocks + 1;
                (
                    lo,
                    lo + h.size_blocks - wl.work_unit as u64,
                    u64::from(h.every),
                )
            }),
            pad: wl.redo_stress != RedoStress::None,
            ops: 0,
            think: wl
                .think_time
                .map(|lo| (lo, wl.think_time_max.unwrap_or(lo).max(lo))),
        }
    }

    /// The pause before the next operation: the workload's think time, or a draw from its
    /// range (from the same generator, so a seed repeats the pauses too).
    pub fn pause(&mut self) -> Option<Duration> {
        let (lo, hi) = self.think?;
        if hi == lo {
            return Some(lo);
        }
        let ns = self
            .rng
            .random_range(lo.as_nanos() as u64..=hi.as_nanos() as u64);
        Some(Duration::from_nanos(ns))
    }

    /// The next operation; for an update under redo stress, `pad` is refilled with its
    /// `PAD_LEN` random letters (left alone otherwise).
    pub fn next(&mut self, pad: &mut String) -> Op {
        self.ops += 1;
        let hot = self.hot_every.is_some_and(|n| self.ops.is_multiple_of(n));
        let update = match self.role {
            Role::Reader => false,
            Role::Writer => true,
            Role::Mixed(p) => self.rng.random::<f64>() < p,
        };
        let lo = match self.hotspot {
            Some((lo, hi, every)) if self.ops.is_multiple_of(every) => {
                self.rng.random_range(lo..=hi) as i64
            }
            _ => self.rng.random_range(1..=self.span) as i64,
        };
        if update && self.pad {
            pad.clear();
            pad.extend((0..PAD_LEN).map(|_| self.rng.random_range(b'a'..=b'z') as char));
        }
        Op { hot, update, lo }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::db::workload::{Driver, Mode};

    fn wl(mode: Mode, hot: Option<u32>, redo: RedoStress) -> Workload {
        Workload {
            first_session: 0,
            mode,
            work_unit: 8,
            redo_stress: redo,
            hot_schema_every: hot,
            think_time: None,
            think_time_max: None,
            hotspot: None,
            schemas: 2,
            blocks_per_schema: 100,
            seed: 9,
            driver: Driver::Server,
        }
    }

    fn draw(w: &Workload, id: u32, n: usize) -> Vec<(Op, String)> {
        let mut g = OpGen::new(w, id);
        let mut pad = String::new();
        (0..n)
            .map(|_| {
                pad.clear();
                (g.next(&mut pad), pad.clone())
            })
            .collect()
    }

    #[test]
    fn think_time_fixed_or_drawn_from_its_range() {
        let ms = Duration::from_millis;
        let mut w = wl(
            Mode::Sessions {
                sessions: 1,
                update_pct: 0.0,
            },
            None,
            RedoStress::None,
        );
        assert_eq!(OpGen::new(&w, 0).pause(), None);
        w.think_time = Some(ms(2));
        assert_eq!(OpGen::new(&w, 0).pause(), Some(ms(2)));
        w.think_time_max = Some(ms(5));
        let mut g = OpGen::new(&w, 0);
        let p: Vec<Duration> = (0..1000).map(|_| g.pause().unwrap()).collect();
        assert!(p.iter().all(|d| (ms(2)..=ms(5)).contains(d)));
        let mean = p.iter().sum::<Duration>() / 1000;
        assert!((ms(3)..ms(4)).contains(&mean), "uniform: mean {mean:?}");
        assert!(p.windows(2).any(|w| w[0] != w[1]), "not one value");
        let mut again = OpGen::new(&w, 0);
        assert_eq!(again.pause(), Some(p[0]), "the seed repeats the pauses");
    }

    #[test]
    fn keys_stay_in_range_and_repeat_with_the_seed() {
        let w = wl(
            Mode::Sessions {
                sessions: 2,
                update_pct: 50.0,
            },
            None,
            RedoStress::None,
        );
        let a = draw(&w, 0, 500);
        assert!(a.iter().all(|(o, _)| (1..=93).contains(&o.lo)));
        assert!(a.iter().any(|(o, _)| o.update) && a.iter().any(|(o, _)| !o.update));
        assert_eq!(a, draw(&w, 0, 500));
        assert_ne!(a, draw(&w, 1, 500), "sessions draw apart");
    }

    #[test]
    fn hotspot_takes_every_nth_operation() {
        let mut w = wl(
            Mode::Sessions {
                sessions: 1,
                update_pct: 0.0,
            },
            None,
            RedoStress::None,
        );
        // 16 rows from key 41: work units start at 41..=49 (8 rows each, inside the spot).
        w.hotspot = Some(iogauge_model::db::workload::Hotspot {
            offset_blocks: 40,
            size_blocks: 16,
            every: 3,
        });
        let ops = draw(&w, 0, 3000);
        let (hot, rest): (Vec<_>, Vec<_>) =
            ops.iter().enumerate().partition(|(i, _)| (i + 1) % 3 == 0);
        assert!(hot.iter().all(|(_, (o, _))| (41..=49).contains(&o.lo)));
        let starts: std::collections::BTreeSet<i64> = hot.iter().map(|(_, (o, _))| o.lo).collect();
        assert_eq!(starts.len(), 9, "every start in the spot is drawn");
        let outside = rest.iter().filter(|(_, (o, _))| !(41..=49).contains(&o.lo));
        assert!(outside.count() > 1800, "the other operations go anywhere");
    }

    #[test]
    fn hot_schema_rule_and_roles() {
        let rw = Mode::ReadersWriters {
            readers: 1,
            writers: 1,
        };
        let w = wl(rw, Some(3), RedoStress::Lite);
        // Session 1 (a writer on schema 2): every third operation on schema 1, padded.
        let s1 = draw(&w, 1, 9);
        let hot: Vec<bool> = s1.iter().map(|(o, _)| o.hot).collect();
        assert_eq!(
            hot,
            [false, false, true, false, false, true, false, false, true]
        );
        assert!(s1.iter().all(|(o, p)| o.update && p.len() == PAD_LEN));
        assert!(s1
            .iter()
            .all(|(_, p)| p.bytes().all(|b| b.is_ascii_lowercase())));
        // Session 0 (a reader on schema 1, the hot one itself): never hot, never padded.
        let s0 = draw(&w, 0, 9);
        assert!(s0.iter().all(|(o, p)| !o.hot && !o.update && p.is_empty()));
        // No redo stress: updates carry no padding.
        let plain = draw(&wl(rw, None, RedoStress::None), 1, 5);
        assert!(plain.iter().all(|(o, p)| o.update && p.is_empty()));
    }
}
