//! Spans of snapshots whose stage histograms keep one interval's buckets each.

use super::*;

/// A tracer's cumulative reading of `vda`'s read device stage and of io_uring's reads, after
/// `values` (ns).
fn traced(at_ns: u64, values: &[u64]) -> Snapshot {
    use crate::layers::{bucket_of, LayerCounters, RingCounters, StageCounters, StageHist};
    let mut h = StageHist::default();
    for &v in values {
        h.add_buckets(&StageHist {
            count: 0,
            sum_ns: 0,
            buckets: vec![(bucket_of(v), 1)],
        });
    }
    (h.count, h.sum_ns) = (values.len() as u64, values.iter().sum());
    let mut s = snap(at_ns, vec![dev("vda")]);
    s.layers = vec![LayerCounters {
        name: "vda".into(),
        read: StageCounters {
            requests: values.len() as u64,
            device: h.clone(),
            ..Default::default()
        },
        ..Default::default()
    }];
    s.ring = Some(RingCounters {
        read: h,
        write: StageHist::default(),
        ..Default::default()
    });
    s
}

/// Snapshots as the sampler keeps them: each one's buckets since the reading before.
fn kept(readings: &[Snapshot]) -> Vec<Snapshot> {
    let mut out: Vec<Snapshot> = Vec::new();
    for (i, r) in readings.iter().enumerate() {
        let before = i.checked_sub(1).map(|p| &readings[p]);
        let mut s = r.clone();
        s.layers = crate::layers::LayerCounters::fresh_all(
            &r.layers,
            before.map_or(&[][..], |b| &b.layers),
        );
        s.ring = r
            .ring
            .as_ref()
            .map(|x| x.fresh_since(before.and_then(|b| b.ring.as_ref())));
        out.push(s);
    }
    out
}

#[test]
fn a_span_merges_the_buckets_of_its_snapshots() {
    let all: Vec<u64> = (1..=60).map(|i| i * i * 997).collect();
    let readings = [
        traced(0, &all[..10]),
        traced(SEC, &all[..30]),
        traced(2 * SEC, &all[..45]),
        traced(3 * SEC, &all),
    ];
    let s = kept(&readings);
    // The span from the 1st to the 4th snapshot is one interval from the 1st reading to the
    // 4th: what `derive` of the two ends gives when the end holds every bucket since the 1st.
    let whole = kept(&[readings[0].clone(), readings[3].clone()]);
    assert_eq!(derive_over(&s), Some(derive(&whole[0], &whole[1])));
    let d = derive_over(&s).unwrap();
    assert_eq!(d.layers["vda"].read.req_s, 50.0 / 3.0);
    let p50 = d.layers["vda"].read.device.unwrap().p50_us;
    let exact = all[10 + 25] as f64 / 1e3;
    assert!((p50 - exact).abs() / exact < 0.04, "{p50} vs {exact}");
    assert_eq!(d.ring.unwrap().read, d.layers["vda"].read.device);
    // Two snapshots are one interval; fewer are none.
    assert_eq!(derive_over(&s[1..3]), Some(derive(&s[1], &s[2])));
    assert_eq!(derive_over(&s[..1]), None);
}
