//! The ordered list of runs a campaign still needs, and how long they should take.
//!
//! The measured runs' order is a pure function of the file (order and seed), so a resume
//! walks the same list and skips what is stored; warm-ups are placed afresh for what remains.

use crate::spec::{Campaign, Command, Order, Warmup};
use iogauge_model::units::parse_duration;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeSet;
use std::time::Duration;

/// `order` with each stand-in's (case, rep) moved to just after its source's, when it came
/// before: everything else keeps its place.
fn after_sources(order: Vec<(usize, u32)>, sources: &[Option<usize>]) -> Vec<(usize, u32)> {
    if sources.iter().all(Option::is_none) {
        return order;
    }
    let mut out = Vec::with_capacity(order.len());
    let mut seen = BTreeSet::new();
    let mut held: Vec<(usize, u32)> = Vec::new();
    for (case, rep) in order {
        if let Some(s) = sources[case] {
            if !seen.contains(&(s, rep)) {
                held.push((case, rep));
                continue;
            }
        }
        out.push((case, rep));
        seen.insert((case, rep));
        // What waited for this run goes right after it (a stand-in is never a source).
        held.retain(|&(c, r)| {
            let ready = r == rep && sources[c] == Some(case);
            if ready {
                out.push((c, r));
                seen.insert((c, r));
            }
            !ready
        });
    }
    out.extend(held);
    out
}

/// One run to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedRun {
    /// Index into [`Campaign::cases`].
    pub case: usize,
    /// 1-based repetition (a warm-up carries the repetition it precedes).
    pub rep: u32,
    pub warmup: bool,
}

impl Campaign {
    /// Every measured (case, repetition) in the order the file asks for, except that a raw
    /// stand-in's repetition waits for its source's (it replays that run).
    pub fn measured_order(&self) -> Vec<(usize, u32)> {
        after_sources(self.file_order(), &self.sources())
    }

    /// For each case, the index of the case it stands in for (`[stand_in]`), if any.
    pub fn sources(&self) -> Vec<Option<usize>> {
        self.cases
            .iter()
            .map(|c| {
                let like = c.like.as_ref()?;
                self.cases.iter().position(|s| &s.name == like)
            })
            .collect()
    }

    fn file_order(&self) -> Vec<(usize, u32)> {
        let n = self.cases.len();
        let reps = 1..=self.repeat;
        match self.order {
            Order::AsWritten => (0..n)
                .flat_map(|c| reps.clone().map(move |r| (c, r)))
                .collect(),
            Order::Interleaved => reps.flat_map(|r| (0..n).map(move |c| (c, r))).collect(),
            Order::Random => {
                let mut slots: Vec<usize> = (0..n)
                    .flat_map(|c| std::iter::repeat_n(c, self.repeat as usize))
                    .collect();
                slots.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(self.seed));
                // Repetition k of a case is its k-th appearance.
                let mut seen = vec![0u32; n];
                slots
                    .into_iter()
                    .map(|c| {
                        seen[c] += 1;
                        (c, seen[c])
                    })
                    .collect()
            }
        }
    }

    /// What is left to run, given the (case name, repetition) pairs already stored complete,
    /// with warm-ups before each case's first remaining run (or before every run).
    pub fn plan(&self, done: &BTreeSet<(String, u32)>) -> Vec<PlannedRun> {
        let mut warmed = vec![false; self.cases.len()];
        let mut out = Vec::new();
        for (case, rep) in self.measured_order() {
            if done.contains(&(self.cases[case].name.clone(), rep)) {
                continue;
            }
            let warm = match self.warmup {
                Warmup::None => false,
                Warmup::Run => true,
                Warmup::Case => !std::mem::replace(&mut warmed[case], true),
            };
            if warm {
                out.push(PlannedRun {
                    case,
                    rep,
                    warmup: true,
                });
            }
            out.push(PlannedRun {
                case,
                rep,
                warmup: false,
            });
        }
        out
    }

    /// A rough duration of one run of `case`: its measured time and ramp plus the set-up
    /// every run of the command pays (target open, server start and stop).
    pub fn estimate(&self, case: usize) -> Duration {
        let c = &self.cases[case];
        let dur = |flag: &str| c.option(flag).and_then(|v| parse_duration(v).ok());
        let ramp = dur("ramp").unwrap_or_default();
        match c.command(self.command) {
            Command::Run => {
                let time = dur("time").unwrap_or(Duration::from_secs(10));
                let steady = if c.option("steady").is_some() {
                    dur("steady-window").unwrap_or(Duration::from_secs(5))
                } else {
                    Duration::ZERO
                };
                ramp.max(steady) + time + Duration::from_secs(1)
            }
            Command::Calibrate => {
                // About 16 points (doubling, bisection, large I/Os, one process), each
                // a quarter of ramp-up on top of its point time.
                let point = dur("point-time").unwrap_or(Duration::from_secs(2));
                point * 20 + Duration::from_secs(2)
            }
            Command::DbRun => {
                let time = dur("time").unwrap_or(Duration::from_secs(30));
                ramp + time + Duration::from_secs(4)
            }
        }
    }
}
