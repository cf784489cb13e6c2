//! What limits the storage, said with evidence: a [`Finding`] is one diagnosis rule's
//! conclusion about a whole result (never about one point of it), ranked by the share of the
//! I/O time (or, for a database, of DB time) it explains, as Oracle's ADDM ranks its findings.
//! Every document kind carries its findings (`findings` in the JSON); the rules that make them
//! live in one diagnosis module, beside the pipeline, not in the producers.

use serde::{Deserialize, Serialize};

/// The layer a finding names: from the application down to the device, then the layers a
/// database adds on top. The order is the stack's, top to bottom.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// No layer limits the storage below the load offered (a healthy run).
    #[default]
    None,
    /// The CPU: iogauge's own submit threads, system time, one core pinned.
    Cpu,
    /// The page cache: reads served from memory, writes held in it.
    PageCache,
    /// The kernel's read-ahead: the device reads more than was asked.
    ReadAhead,
    /// Held before the request queue: a cgroup I/O limit, writeback throttling, splitting.
    Throttle,
    /// The block layer's request queue: time between insertion and issue.
    OsQueue,
    /// The device itself: busy, its service time rising with concurrency.
    Device,
    /// Other processes' I/O on the job's devices: their requests share its queue and device.
    Neighbours,
    /// A write cache below the device (writes completing faster than the medium can).
    WriteCache,
    /// A layout or mirror multiplying the writes the application asked for.
    Layout,
    /// One member or disk doing the work of several (a degraded mirror, a slow member).
    Members,
    /// The tested span: a short-stroked region flattering the device.
    Span,
    /// A job over MPI ranks held back by its slowest ranks (stragglers).
    Ranks,
    /// The database's I/O waits (single-block and multi-block reads).
    DbIo,
    /// The database's lock and lightweight-lock waits: the sessions wait on each other.
    DbLocks,
    /// The database's WAL: the log writer's writes and syncs, commits waiting on them.
    DbWal,
    /// Checkpoints and backends writing their own buffers (PostgreSQL's analogue of Oracle's
    /// `free buffer waits`).
    DbWrites,
}

/// One figure a finding rests on, as measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What was measured, in words ("vda %util", "queue time ÷ device time").
    pub what: String,
    pub value: f64,
    /// The unit of `value` ("%", "ms", "IOPS", "×", "" for a plain number).
    pub unit: String,
}

/// What a finding is, as ADDM types its findings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A limit: it explains a share of the time (≥ [`PROBLEM`]), and removing it would save
    /// that share ([`Finding::benefit`]).
    #[default]
    Problem,
    /// It follows from a problem found beside it ([`Finding::follows`]): removing that one
    /// removes this (the sessions' read waits of a saturated disk, a throttled member's
    /// imbalance).
    Symptom,
    /// A layer that was not the limit, with its figure (less than [`PROBLEM`] of the time;
    /// the healthy result's "no limit found").
    Information,
}

/// The share of the time from which a finding is a problem.
pub const PROBLEM: f64 = 0.2;

/// A rule's conclusion about a whole result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule that made it, stable across versions ("device-saturated", "os-queue").
    pub rule: String,
    pub layer: Layer,
    /// One sentence naming the limit, as a storage engineer would say it.
    pub title: String,
    /// The share (0–1) of the I/O time, or of DB time, that this finding explains; findings
    /// are ranked by it. 0 for the healthy run's "no limit found".
    pub impact: f64,
    pub evidence: Vec<Evidence>,
    /// What the user should do or check next.
    pub next: String,
    /// Where the rule comes from (the USE method, btt's Q2D/D2C, ADDM, a seed study).
    pub source: String,
    /// Problem, symptom or information. (Results stored before it was said read as
    /// problems.)
    #[serde(default)]
    pub kind: Kind,
    /// A symptom's problem: the rule of the finding it follows from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follows: Option<String>,
    /// A problem's benefit, in words: what removing it would save ("~95% of the I/O time:
    /// mean latency from 39.7 ms to about 2.0 ms").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benefit: Option<String>,
    /// When it held, where that was only part of the measured window: stretches of
    /// intervals, seconds from the job's start ("t = 40–70 s"). Empty when it held over
    /// the whole window, or when it came and went too often to say when.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub during: Vec<Stretch>,
}

/// A stretch of a run, seconds from the job's start: `from_s` ≤ t < `to_s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stretch {
    pub from_s: f64,
    pub to_s: f64,
}

impl Stretch {
    /// Its length, seconds.
    pub fn secs(&self) -> f64 {
        self.to_s - self.from_s
    }
}

/// `t = 40–70 s`, `t = 10–20 s and 40–70 s`: when a finding held, in words; `None` for a
/// finding of the whole window.
pub fn during_text(during: &[Stretch]) -> Option<String> {
    let parts: Vec<String> = during
        .iter()
        .map(|s| format!("{}–{} s", secs(s.from_s), secs(s.to_s)))
        .collect();
    match parts.as_slice() {
        [] => None,
        [one] => Some(format!("t = {one}")),
        [head @ .., last] => Some(format!("t = {} and {last}", head.join(", "))),
    }
}

/// Seconds as a stretch's bound reads: whole seconds from 10 s, one decimal below.
fn secs(t: f64) -> String {
    if t >= 10.0 || (t - t.round()).abs() < 0.05 {
        format!("{t:.0}")
    } else {
        format!("{t:.1}")
    }
}

impl Evidence {
    pub fn new(what: impl Into<String>, value: f64, unit: impl Into<String>) -> Evidence {
        Evidence {
            what: what.into(),
            value,
            unit: unit.into(),
        }
    }
}

/// `findings` ranked as shown: by impact, highest first; equal impacts in stack order.
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by(|a, b| b.impact.total_cmp(&a.impact).then(a.layer.cmp(&b.layer)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(layer: Layer, impact: f64) -> Finding {
        Finding {
            rule: format!("{layer:?}"),
            layer,
            title: String::new(),
            impact,
            evidence: vec![Evidence::new("x", 1.0, "%")],
            next: String::new(),
            source: String::new(),
            ..Finding::default()
        }
    }

    #[test]
    fn ranked_by_impact_then_down_the_stack() {
        let mut v = vec![
            f(Layer::Device, 0.4),
            f(Layer::Cpu, 0.9),
            f(Layer::OsQueue, 0.4),
        ];
        rank(&mut v);
        let layers: Vec<Layer> = v.iter().map(|f| f.layer).collect();
        assert_eq!(layers, [Layer::Cpu, Layer::OsQueue, Layer::Device]);
    }

    #[test]
    fn layers_are_snake_case_in_json() {
        let j = serde_json::to_string(&f(Layer::OsQueue, 0.5)).unwrap();
        assert!(j.contains("\"layer\":\"os_queue\""), "{j}");
        let back: Finding = serde_json::from_str(&j).unwrap();
        assert_eq!(back.layer, Layer::OsQueue);
    }

    #[test]
    fn stretches_in_words() {
        let s = |a, b| Stretch { from_s: a, to_s: b };
        assert_eq!(during_text(&[]), None);
        assert_eq!(during_text(&[s(40.0, 70.0)]).unwrap(), "t = 40–70 s");
        assert_eq!(
            during_text(&[s(2.5, 4.0), s(10.0, 12.0), s(40.0, 70.0)]).unwrap(),
            "t = 2.5–4 s, 10–12 s and 40–70 s"
        );
        assert_eq!(s(2.5, 4.0).secs(), 1.5);
    }
}
