//! Buckets, quantiles, and the snapshots' histograms: cumulative counts with one interval's
//! buckets each, merged again over any span.

use super::*;

#[test]
fn buckets_cover_every_value_in_order() {
    let mut last = 0;
    for ns in (0..100_000u64).chain([1 << 20, (1 << 20) + 1, u64::MAX / 2, u64::MAX]) {
        let b = bucket_of(ns);
        assert!(b >= last, "{ns}");
        assert!(
            bucket_low(b) <= ns,
            "{ns}: bucket {b} starts at {}",
            bucket_low(b)
        );
        if ns < u64::MAX / 2 {
            assert!(ns < bucket_low(b + 1), "{ns}: bucket {b}");
        }
        last = b;
    }
    // A bucket spans 1/16 of its octave.
    assert_eq!(
        bucket_low(bucket_of(1_000_000) + 1) - bucket_low(bucket_of(1_000_000)),
        1 << 15
    );
}

fn hist(values: &[u64]) -> StageHist {
    let mut h = StageHist::default();
    for &v in values {
        h.count += 1;
        h.sum_ns += v;
        let b = bucket_of(v);
        match h.buckets.binary_search_by_key(&b, |(k, _)| *k) {
            Ok(i) => h.buckets[i].1 += 1,
            Err(i) => h.buckets.insert(i, (b, 1)),
        }
    }
    h
}

#[test]
fn quantiles_are_within_the_bucket_width() {
    let values: Vec<u64> = (1..=10_000).map(|i| i * 997).collect();
    let h = hist(&values);
    for q in [0.5, 0.9, 0.99] {
        let exact = values[(q * values.len() as f64) as usize - 1] as f64;
        let got = h.quantile_ns(q).unwrap();
        assert!((got - exact).abs() / exact < 0.04, "q{q}: {got} vs {exact}");
    }
    assert_eq!(h.mean_ns(), Some(997.0 * 5000.5));
    assert_eq!(StageHist::default().quantile_ns(0.5), None);
}

#[test]
fn an_interval_is_the_difference_of_two_samples() {
    let a = hist(&[1_000, 2_000, 50_000]);
    let b = hist(&[1_000, 2_000, 50_000, 2_000, 9_000_000]);
    let d = b.since(&a);
    assert_eq!((d.count, d.sum_ns), (2, 9_002_000));
    assert_eq!(d, hist(&[2_000, 9_000_000]));
    assert_eq!(a.since(&a), StageHist::default());
}

#[test]
fn rates_between_two_samples() {
    let prev = StageCounters {
        requests: 10,
        bytes: 10 * 4096,
        ..Default::default()
    };
    let cur = StageCounters {
        requests: 110,
        bytes: 10 * 4096 + 100 * 65536,
        merges: 50,
        device: hist(&[100_000; 100]),
        ..Default::default()
    };
    let r = StageRates::between(&prev, &cur, 2.0);
    assert_eq!((r.req_s, r.req_kib, r.merges_s), (50.0, 64.0, 25.0));
    let d = r.device.unwrap();
    assert!(
        (d.mean_us - 100.0).abs() < 1e-9 && (d.p50_us - 100.0).abs() < 4.0,
        "{d:?}"
    );
    assert!(r.queue.is_none());
}

/// Cumulative readings of one disk's read device stage, as the tracer gives them.
fn reading(values: &[u64]) -> LayerCounters {
    LayerCounters {
        name: "vda".into(),
        read: StageCounters {
            requests: values.len() as u64,
            device: hist(values),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn a_snapshot_keeps_its_own_intervals_buckets_and_gives_the_same_rates() {
    let all = [1_000, 2_000, 50_000, 2_000, 9_000_000, 2_100, 70_000];
    let (r0, r1, r2) = (reading(&all[..3]), reading(&all[..5]), reading(&all));
    let s0 = r0.fresh_since(None);
    let s1 = r1.fresh_since(Some(&r0));
    let s2 = r2.fresh_since(Some(&r1));
    assert_eq!(s0, r0, "the first reading keeps everything");
    assert_eq!(s1.read.device.buckets, hist(&all[3..5]).buckets);
    assert_eq!(
        (s2.read.device.count, s2.read.device.sum_ns),
        (7, all.iter().sum())
    );
    // Interval by interval, the histograms and rates are the cumulative readings' own.
    for ((pa, pb), (ca, cb)) in [((&r0, &s0), (&r1, &s1)), ((&r1, &s1), (&r2, &s2))] {
        let want = ca.read.device.since(&pa.read.device);
        assert_eq!(cb.read.device.after(&pb.read.device), want);
        let rates = LayerRates::between(pb, cb, 1.0);
        assert_eq!(rates.read.device, StageLat::of(&want));
        assert_eq!(
            rates.read.req_s,
            (ca.read.requests - pa.read.requests) as f64
        );
    }
    // Over both intervals, the merged buckets are the cumulative difference.
    let mut merged = s2.clone();
    merged.add_buckets(&s1);
    assert_eq!(
        merged.read.device.after(&s0.read.device),
        r2.read.device.since(&r0.read.device)
    );
    let mut h = hist(&[5, 5_000]);
    h.add_buckets(&StageHist::default());
    assert_eq!(h, hist(&[5, 5_000]));
}

#[test]
fn ring_readings_keep_their_intervals_buckets() {
    let ring = |v: &[u64]| RingCounters {
        read: hist(v),
        write: StageHist::default(),
        ..Default::default()
    };
    let (a, b) = (
        ring(&[10_000, 20_000]),
        ring(&[10_000, 20_000, 20_000, 40_000]),
    );
    let fresh = b.fresh_since(Some(&a));
    assert_eq!(fresh.read.buckets, hist(&[20_000, 40_000]).buckets);
    assert_eq!(fresh.read.count, 4);
    assert_eq!(
        RingRates::between(&a, &fresh).read,
        StageLat::of(&b.read.since(&a.read))
    );
}
