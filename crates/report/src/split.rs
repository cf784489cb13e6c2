//! Where an interval's I/O time went below the application, per device, from the block
//! layer's stage latencies (`Derived::layers`, btt's stages): the mean time a request spent
//! before the queue, in it and in the device, reads and writes weighted by their requests.
//! The text tables, `watch` and the HTML report all read it from here.

use iogauge_model::derive::Derived;
use iogauge_model::layers::{LayerRates, StageLat, StageRates};

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
    pub(crate) fn of(l: &LayerRates) -> Split {
        let dirs = [&l.read, &l.write];
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
            req_s: l.read.req_s + l.write.req_s,
        }
    }

    /// The three traced stages' sum, µs (0 for stages without figures).
    pub(crate) fn traced_us(&self) -> f64 {
        [self.pre_us, self.queue_us, self.device_us]
            .into_iter()
            .flatten()
            .sum()
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
}
