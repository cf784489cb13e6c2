//! Where an interval's I/O time went below the application, per device, from the block
//! layer's stage latencies (`Derived::layers`, btt's stages): the mean time a request spent
//! before the queue, in it and in the device, reads and writes weighted by their requests.
//! The text tables, `watch` and the HTML report all read it from here.

use iogauge_model::derive::Derived;
use iogauge_model::layers::{LayerRates, StageLat, StageRates};
use iogauge_model::run::{IntervalReport, RunReport};

/// One device's interval, mean µs per request; `None` for a stage no request went through.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Split {
    pub pre_us: Option<f64>,
    pub queue_us: Option<f64>,
    pub device_us: Option<f64>,
    /// Requests completed per second, both directions.
    pub req_s: f64,
}

impl Split {
    /// The job's own requests when the tracer told them from other processes', else every
    /// request on the device.
    pub(crate) fn of(l: &LayerRates) -> Split {
        let (r, w) = l.own();
        let dirs = [r, w];
        let mean = |stage: fn(&StageRates) -> Option<StageLat>| {
            let (mut sum, mut n) = (0.0, 0.0);
            for d in dirs {
                if let Some(s) = stage(d).filter(|s| s.mean_us.is_finite()) {
                    // A direction with no completion this interval still weighs one.
                    let w = d.req_s.max(f64::MIN_POSITIVE);
                    sum += s.mean_us * w;
                    n += w;
                }
            }
            (n > 0.0).then(|| sum / n)
        };
        Split {
            pre_us: mean(|d| d.pre_queue),
            queue_us: mean(|d| d.queue),
            device_us: mean(|d| d.device),
            req_s: r.req_s + w.req_s,
        }
    }

    /// The three traced stages, bottom first (before the queue, queue, device), µs; 0 for
    /// stages without figures.
    pub(crate) fn stages_us(&self) -> [f64; 3] {
        [self.pre_us, self.queue_us, self.device_us].map(|s| s.unwrap_or(0.0))
    }

    /// The three traced stages' sum, µs (0 for stages without figures).
    pub(crate) fn traced_us(&self) -> f64 {
        self.stages_us().iter().sum()
    }
}

/// The traced device that did the most requests in the interval, preferring the whole
/// disks `disks` (a loop or dm device's own "device" time holds its disk's queue): its name
/// and split. `None` without layer figures (a document from before the tracer, no BPF).
pub(crate) fn busiest<'a>(sys: &'a Derived, disks: &[String]) -> Option<(&'a str, Split)> {
    let pick = |whole: bool| {
        sys.layers
            .iter()
            .filter(|(n, _)| !whole || disks.contains(n))
            .map(|(n, l)| (n.as_str(), Split::of(l)))
            .filter(|(_, s)| s.device_us.is_some() || s.queue_us.is_some())
            .max_by(|a, b| a.1.req_s.total_cmp(&b.1.req_s))
    };
    pick(true).or_else(|| pick(false))
}

/// [`busiest`] among the devices the targets sit on directly (`entry`: a loop device, a
/// layout's members), whose device stage holds the layers below them (a loop device's
/// holds the disk under its image), else among `disks`: the split is the top device's.
pub(crate) fn busiest_entry<'a>(
    sys: &'a Derived,
    entry: &[String],
    disks: &[String],
) -> Option<(&'a str, Split)> {
    busiest(sys, entry)
        .filter(|(n, _)| entry.iter().any(|e| e == n))
        .or_else(|| busiest(sys, disks))
}

/// The devices a run's split reads: the targets' own, then the disks at the bottom.
pub(crate) type Devs<'a> = (&'a [String], &'a [String]);

/// A run's [`Devs`]: its targets' devices and its disks.
pub(crate) fn run_devs(r: &RunReport) -> (Vec<String>, Vec<String>) {
    (
        r.targets.iter().filter_map(|t| t.device.clone()).collect(),
        r.hardware.as_ref().map_or(Vec::new(), |h| h.disks.clone()),
    )
}

/// A run interval's mean I/O time from the application down: the application's mean
/// latency, the kernel's whole time for the job's io_uring I/Os (submit → completion; `None`
/// without it: the psync engine, a kernel without io_uring's tracepoints, a document from
/// before) and the busiest traced disk's block stages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AppSplit {
    pub app_us: f64,
    pub kernel_us: Option<f64>,
    pub block: Split,
}

/// A buffered run's block stages per I/O of the application's: only its reads that missed
/// the page cache wait for a device (its writes land in memory; their writeback comes later,
/// outside any write's latency), so the busiest traced disk's read stages count for the
/// share of the application's I/Os they stand for (its read requests ÷ the application's
/// I/Os, at most 1). With the tracer running and no request at all (every read a cache
/// hit), the stages are 0: known to be empty, not unknown. `None` without the tracer.
fn buffered_block(sys: &Derived, disks: &[String], ios_s: f64) -> Option<Split> {
    if sys.layers.is_empty() {
        return None;
    }
    let reads = |whole: bool| {
        sys.layers
            .iter()
            .filter(|(n, _)| !whole || disks.contains(n))
            .map(|(_, l)| l.own().0)
            .filter(|r| r.req_s > 0.0 && r.device.is_some())
            .max_by(|a, b| a.req_s.total_cmp(&b.req_s))
    };
    let Some(r) = reads(true).or_else(|| reads(false)) else {
        return Some(Split {
            pre_us: Some(0.0),
            queue_us: Some(0.0),
            device_us: Some(0.0),
            req_s: 0.0,
        });
    };
    let reach = (r.req_s / ios_s.max(f64::MIN_POSITIVE)).min(1.0);
    let part = |s: Option<StageLat>| Some(s.map_or(0.0, |s| s.mean_us) * reach);
    Some(Split {
        pre_us: part(r.pre_queue),
        queue_us: part(r.queue),
        device_us: part(r.device),
        req_s: r.req_s,
    })
}

impl AppSplit {
    /// `None` for an idle interval or one without block-layer figures. `direct`: the I/Os
    /// bypassed the page cache (each is a request of its own), else [`buffered_block`].
    pub(crate) fn of(iv: &IntervalReport, devs: Devs, direct: bool) -> Option<AppSplit> {
        let (entry, disks) = devs;
        let (r, w) = (iv.read.ios as f64, iv.write.ios as f64);
        if r + w <= 0.0 {
            return None;
        }
        let sys = iv.system.as_ref()?;
        let block = if direct {
            busiest_entry(sys, entry, disks)?.1
        } else {
            buffered_block(sys, disks, (r + w) / iv.dur_s.max(1e-9))?
        };
        let app_us = (iv.read.lat_us.mean * r + iv.write.lat_us.mean * w) / (r + w);
        let kernel_us = sys.ring.as_ref().and_then(|k| {
            let (mut sum, mut n) = (0.0, 0.0);
            for (lat, ios) in [(k.read, r), (k.write, w)] {
                if let Some(l) = lat.filter(|l| l.mean_us.is_finite() && ios > 0.0) {
                    sum += l.mean_us * ios;
                    n += ios;
                }
            }
            (n > 0.0).then(|| sum / n)
        });
        Some(AppSplit {
            app_us,
            kernel_us,
            block,
        })
    }

    /// Top to bottom: iogauge's own time (the application's less the kernel's), the kernel's
    /// submit and completion paths (its time less the block stages), then the block stages;
    /// without the kernel's time the first two are one part. The kernel's time is within
    /// the application's: a mean of the requests the tracer timed (one in N) above the
    /// application's mean of them all is the sample's error, and counts as the whole (a
    /// throttled run's latencies, 26 µs or 99 ms, read 76.6 ms "of 73.8").
    ///
    /// The block stages are sampled too (one request in N, N set by the device's whole
    /// rate): beside a neighbour at 95,000 requests a second a paced job's 600 writes had a
    /// few dozen timed, and their device mean read 428.7 µs "of 408.2". Stages adding to
    /// more than what holds them (the kernel's time, else the application's) are scaled down
    /// to it, in their proportions: the job's io_uring I/Os are timed at its own rate, the
    /// stages at the device's; their sum above it is the sample's error.
    pub(crate) fn parts(&self) -> Vec<f64> {
        let kernel = self.kernel_us.map(|k| k.min(self.app_us));
        // What the stages are within: the kernel's time, else the application's.
        let bound = kernel.unwrap_or(self.app_us);
        let sampled = self.block.traced_us();
        let scale = if sampled > bound && sampled > 0.0 {
            bound / sampled
        } else {
            1.0
        };
        let traced = sampled * scale;
        let mut parts = match kernel {
            Some(k) => vec![(self.app_us - k).max(0.0), (k - traced).max(0.0)],
            None => vec![(self.app_us - traced).max(0.0)],
        };
        parts.extend(self.block.stages_us().into_iter().map(|s| s * scale));
        parts
    }
}

/// The measured intervals' [`AppSplit`]s averaged, each weighted by its I/Os; `None` when no
/// interval has them. The kernel's time only when every one of them has it.
pub(crate) fn run_split<'a>(
    intervals: impl Iterator<Item = &'a IntervalReport>,
    devs: Devs,
    direct: bool,
) -> Option<AppSplit> {
    let mut all = Vec::new();
    for iv in intervals {
        if let Some(s) = AppSplit::of(iv, devs, direct) {
            all.push(((iv.read.ios + iv.write.ios) as f64, s));
        }
    }
    let n: f64 = all.iter().map(|(w, _)| w).sum();
    if n <= 0.0 {
        return None;
    }
    let avg = |f: &dyn Fn(&AppSplit) -> Option<f64>| -> Option<f64> {
        all.iter()
            .map(|(w, s)| Some(w * f(s)?))
            .sum::<Option<f64>>()
            .map(|t| t / n)
    };
    let stage = |i: usize| avg(&|s| Some(s.block.stages_us()[i]));
    Some(AppSplit {
        app_us: avg(&|s| Some(s.app_us))?,
        kernel_us: avg(&|s| s.kernel_us),
        block: Split {
            pre_us: stage(0),
            queue_us: stage(1),
            device_us: stage(2),
            req_s: avg(&|s| Some(s.block.req_s))?,
        },
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Layer figures of one device: `req_s` reads/s spending `q` µs queued and `d` µs in the
    /// device, and writes/s doing twice each.
    pub(crate) fn rates(req_s: f64, q: f64, d: f64) -> LayerRates {
        let lat = |m: f64| {
            Some(StageLat {
                mean_us: m,
                p50_us: m,
                p99_us: m * 2.0,
            })
        };
        let dir = |k: f64| StageRates {
            req_s: req_s * k,
            req_kib: 8.0,
            pre_queue: lat(1.0),
            queue: lat(q * k),
            device: lat(d * k),
            ..Default::default()
        };
        LayerRates {
            read: dir(1.0),
            write: dir(0.0),
            ..Default::default()
        }
    }

    #[test]
    fn directions_weighed_by_their_requests() {
        let mut l = rates(300.0, 100.0, 400.0);
        l.write = rates(100.0, 500.0, 800.0).read;
        let s = Split::of(&l);
        assert_eq!(s.queue_us, Some(200.0));
        assert_eq!(s.device_us, Some(500.0));
        assert_eq!(s.req_s, 400.0);
        assert_eq!(s.traced_us(), 701.0);
    }

    #[test]
    fn whole_disks_first_then_the_busiest() {
        let mut sys = Derived::default();
        assert!(busiest(&sys, &[]).is_none());
        sys.layers.insert("loop0".into(), rates(900.0, 1.0, 50.0));
        sys.layers.insert("vda".into(), rates(100.0, 30.0, 40.0));
        assert_eq!(busiest(&sys, &["vda".into()]).unwrap().0, "vda");
        assert_eq!(busiest(&sys, &[]).unwrap().0, "loop0");
    }

    /// A buffered run: 400 reads/s reach the disk at 100 µs queued and 400 in the device
    /// while the application did 4,000 I/Os a second: each of its I/Os waited a tenth of
    /// that on average; with no request at all the stages are 0, and without the tracer
    /// unknown.
    #[test]
    fn a_buffered_run_s_stages_count_for_the_reads_that_reached_a_disk() {
        let mut sys = Derived::default();
        assert_eq!(buffered_block(&sys, &[], 4000.0), None);
        sys.layers.insert("vda".into(), LayerRates::default());
        let none = buffered_block(&sys, &[], 4000.0).unwrap();
        assert_eq!(none.traced_us(), 0.0);
        assert_eq!(none.device_us, Some(0.0));
        sys.layers.insert("vda".into(), rates(400.0, 100.0, 400.0));
        let s = buffered_block(&sys, &["vda".into()], 4000.0).unwrap();
        assert_eq!(s.queue_us, Some(10.0));
        assert_eq!(s.device_us, Some(40.0));
        assert_eq!(s.pre_us, Some(0.1));
    }

    /// The kernel's sampled mean above the application's: the whole is the application's,
    /// and no part exceeds it.
    #[test]
    fn the_kernel_s_time_is_within_the_application_s() {
        let block = Split::of(&rates(400.0, 0.0, 460.0));
        let sp = AppSplit {
            app_us: 73_770.0,
            kernel_us: Some(76_550.0),
            block,
        };
        let p = sp.parts();
        assert_eq!(p[0], 0.0);
        assert!(p.iter().all(|x| *x >= 0.0 && *x <= sp.app_us), "{p:?}");
        assert!((p.iter().sum::<f64>() - sp.app_us).abs() < 1e-6, "{p:?}");
    }

    /// Sampled block stages above the application's whole are scaled down to it.
    #[test]
    fn sampled_stages_above_the_whole_are_scaled_to_it() {
        let block = Split::of(&rates(4.0, 4.0, 428.0));
        let sp = AppSplit {
            app_us: 408.0,
            kernel_us: Some(401.0),
            block,
        };
        let p = sp.parts();
        assert!(p.iter().all(|x| *x >= 0.0 && *x <= sp.app_us), "{p:?}");
        assert!((p.iter().sum::<f64>() - sp.app_us).abs() < 1e-6, "{p:?}");
        assert!(
            p[p.len() - 1] > 0.9 * sp.app_us,
            "the device keeps its share: {p:?}"
        );
    }
}
