//! **Neighbours** — other processes' I/O on the job's devices. On a shared machine (every
//! production host and cloud VM) the devices' figures hold everyone's requests; the
//! block-layer tracer tells the job's own (its cgroup; writeback of the files it dirtied)
//! from the rest and names who queued the rest (`Origin`: process and pid; a flusher thread
//! for page-cache writeback). The other rules read the job's own share; this one says how
//! much of the devices' work was not the job's, and whose it was.
//!
//! Fires when, on a traced device under the targets, other processes did ≥ 20% of the
//! requests over the window. Impact = that share × the share of the job's I/O time spent in
//! that device's queue and device (their requests wait beside the job's there): for a run
//! the job's (queue + device) time ÷ its application latency (a buffered run's reads only,
//! for the share of its I/Os that reached the device: its writes wait for no request); for a database run the share
//! of DB time in data-file and WAL I/O waits; a calibration, the share alone. Without the
//! tracer's attribution nothing is said (the other rules then say they could not tell).
//!
//! Ground truth: `diagnose::io::a_neighbour_on_the_same_disk` (fio writing to the disk under
//! a run's file, beside it).

use super::db::{io_share, DbClass};
use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

/// Share of a device's requests other processes need for a finding.
pub const SHARE: f64 = 0.2;
/// Origins named in the title.
const NAMED: usize = 3;

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    let Some((name, l, others)) = w
        .layers
        .iter()
        .filter(|(n, _)| w.bottom.contains(n) || w.entry.contains(n))
        .filter_map(|(n, l)| Some((n, l, l.others_share()?)))
        .filter(|(_, _, s)| *s >= SHARE)
        .max_by(|a, b| a.2.total_cmp(&b.2))
    else {
        return Vec::new();
    };
    let waited = match doc {
        Document::Run(_) => {
            let Some(k) = w.work else {
                return Vec::new();
            };
            // Per I/O of the workload's: the time its own requests spent in the queue and
            // the device. A buffered run's writes wait for no request (their writeback comes
            // later), its reads only when they miss the page cache.
            let own: &[_] = if k.direct {
                &[l.read, l.write]
            } else {
                &[l.read]
            };
            let req: f64 = own.iter().map(|s| s.req_s).sum();
            let at_device = ratio(
                own.iter()
                    .map(|s| s.req_s * (s.queue_us + s.device_us))
                    .sum(),
                req,
            );
            let reach = if k.direct {
                1.0
            } else {
                ratio(l.read.req_s, k.read.iops + k.write.iops).min(1.0)
            };
            ratio(at_device * reach, k.lat_us()).min(1.0)
        }
        Document::DbRun(r) => io_share(
            &r.summary.aas,
            &[DbClass::Read, DbClass::Write, DbClass::Log],
        ),
        Document::Calibration(_) => 1.0,
    };
    let impact = others * waited;
    let bios: u64 = w.others.iter().map(|o| o.bios).sum();
    let named: Vec<(String, f64)> = w
        .others
        .iter()
        .take(NAMED)
        .map(|o| {
            let what = if o.writeback * 2 > o.bios {
                format!("{} (pid {}, writeback)", o.comm, o.pid)
            } else {
                format!("{} (pid {})", o.comm, o.pid)
            };
            (what, others * ratio(o.bios as f64, bios as f64) * 100.0)
        })
        .collect();
    let who = named
        .iter()
        .map(|(w, p)| format!("{w} {p:.0}%"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut evidence = vec![ev(
        format!("{name} requests by other processes"),
        others * 100.0,
        "%",
    )];
    evidence.extend(
        named
            .into_iter()
            .map(|(w, p)| ev(format!("{name} requests by {w}"), p, "%")),
    );
    evidence.push(ev("the job's I/O time at the device", waited * 100.0, "%"));
    vec![Made {
        rule: "neighbours",
        layer: Layer::Neighbours,
        title: if who.is_empty() {
            format!("other processes did {:.0}% of {name}'s requests in this run", others * 100.0)
        } else {
            format!("other processes did {:.0}% of {name}'s requests in this run: {who}", others * 100.0)
        },
        impact,
        evidence,
        next: "the job shares its devices: its own figures (above) are its requests alone, but their queue and device times include waiting behind the others'; measure on devices of its own, or when the neighbours are idle, to see the storage alone",
        source: "USE method (saturation by another tenant); the block layer's attribution of requests to cgroups and processes",
    }
    .into()]
}
