//! Average active sessions by wait event (ASH style), per group of processes: the test
//! sessions apart from the checkpointer, background writer and WAL writer. Sampled by
//! `iogauge_db`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Average active sessions per event over one interval, per group of processes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Aas {
    /// Samples taken in the interval (the denominator).
    pub samples: u32,
    pub sessions: BTreeMap<String, f64>,
    pub checkpointer: BTreeMap<String, f64>,
    pub bgwriter: BTreeMap<String, f64>,
    pub log_writer: BTreeMap<String, f64>,
}

impl Aas {
    /// Total AAS of the test sessions over all events.
    pub fn sessions_total(&self) -> f64 {
        self.sessions.values().sum()
    }

    /// Another server's sessions in the same interval added (ranks each on their own
    /// server): active sessions of separate servers add up.
    pub fn add_server(&mut self, o: &Aas) {
        self.samples = self.samples.max(o.samples);
        for (dst, src) in [
            (&mut self.sessions, &o.sessions),
            (&mut self.checkpointer, &o.checkpointer),
            (&mut self.bgwriter, &o.bgwriter),
            (&mut self.log_writer, &o.log_writer),
        ] {
            for (k, v) in src {
                *dst.entry(k.clone()).or_default() += v;
            }
        }
    }

    /// Several intervals as one: each average weighted by its interval's samples, which is
    /// the average over all their samples.
    pub fn combine<'a>(parts: impl IntoIterator<Item = &'a Aas>) -> Aas {
        let mut out = Aas::default();
        for a in parts {
            let n = a.samples as f64;
            out.samples += a.samples;
            for (dst, src) in [
                (&mut out.sessions, &a.sessions),
                (&mut out.checkpointer, &a.checkpointer),
                (&mut out.bgwriter, &a.bgwriter),
                (&mut out.log_writer, &a.log_writer),
            ] {
                for (k, v) in src {
                    *dst.entry(k.clone()).or_default() += v * n;
                }
            }
        }
        let total = out.samples.max(1) as f64;
        for m in [
            &mut out.sessions,
            &mut out.checkpointer,
            &mut out.bgwriter,
            &mut out.log_writer,
        ] {
            m.values_mut().for_each(|v| *v /= total);
        }
        out
    }
}
