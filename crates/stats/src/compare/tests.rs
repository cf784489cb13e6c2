use super::*;
use proptest::prelude::*;
use rand::Rng;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.abs().max(1.0)
}

fn close_opt(got: Option<f64>, want: Option<f64>) -> bool {
    match (got, want) {
        (Some(g), Some(w)) => close(g, w),
        (g, w) => g == w,
    }
}

/// Ten repetitions around 100 with one run at 150, the shape the field's "drop high and
/// low" is for.
const TEN_RUNS: [f64; 10] = [
    100.0, 102.0, 98.0, 101.0, 99.0, 100.0, 103.0, 97.0, 100.0, 150.0,
];

/// (samples, mean, median, stddev, cv, min, max, trimmed mean)
type DescribeCase = (
    &'static [f64],
    f64,
    f64,
    Option<f64>,
    Option<f64>,
    f64,
    f64,
    f64,
);

#[test]
fn describe_against_hand_computation() {
    #[rustfmt::skip]
    let cases: [DescribeCase; 9] = [
        // Σ(x − 5)² = 9+1+1+1+0+0+4+16 = 32; s = √(32/7); trimmed = (4+4+4+5+5+7)/6 = 29/6.
        (&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], 5.0, 4.5,
            Some((32.0f64 / 7.0).sqrt()), Some((32.0f64 / 7.0).sqrt() / 5.0), 2.0, 9.0, 29.0 / 6.0),
        // Sum 1050; Σ(x − 105)² = 64+49+36+25+25+25+16+9+4+2025 = 2278; trimmed = 803/8.
        (&TEN_RUNS, 105.0, 100.0,
            Some((2278.0f64 / 9.0).sqrt()), Some((2278.0f64 / 9.0).sqrt() / 105.0), 97.0, 150.0, 100.375),
        // n = 3: trimmed mean is the median.
        (&[3.0, 1.0, 2.0], 2.0, 2.0, Some(1.0), Some(0.5), 1.0, 3.0, 2.0),
        // n = 2: nothing to trim.
        (&[10.0, 20.0], 15.0, 15.0, Some(50f64.sqrt()), Some(50f64.sqrt() / 15.0), 10.0, 20.0, 15.0),
        // n = 1: no spread.
        (&[7.0], 7.0, 7.0, None, None, 7.0, 7.0, 7.0),
        (&[3.0; 4], 3.0, 3.0, Some(0.0), Some(0.0), 3.0, 3.0, 3.0),
        // Mean 0: no CV.
        (&[0.0; 3], 0.0, 0.0, Some(0.0), None, 0.0, 0.0, 0.0),
        (&[-1.0, 1.0], 0.0, 0.0, Some(std::f64::consts::SQRT_2), None, -1.0, 1.0, 0.0),
        // 0.1 + 0.1 + 0.1 = 0.30000000000000004: the mean is clamped back to 0.1 exactly.
        (&[0.1; 3], 0.1, 0.1, Some(0.0), Some(0.0), 0.1, 0.1, 0.1),
    ];
    for (xs, mean, median, sd, cv, min, max, trimmed) in cases {
        let d = Describe::of(xs).unwrap();
        assert_eq!(d.n, xs.len(), "{xs:?}");
        assert!(close(d.mean, mean), "{xs:?}: mean {}", d.mean);
        assert!(close(d.median, median), "{xs:?}: median {}", d.median);
        assert!(close_opt(d.stddev, sd), "{xs:?}: stddev {:?}", d.stddev);
        assert!(close_opt(d.cv, cv), "{xs:?}: cv {:?}", d.cv);
        assert_eq!((d.min, d.max), (min, max), "{xs:?}");
        assert!(
            close(d.trimmed_mean, trimmed),
            "{xs:?}: trimmed {}",
            d.trimmed_mean
        );
        assert_eq!(d.ci95.is_some(), xs.len() >= 2, "{xs:?}: ci");
    }
    assert_eq!(Describe::of(&[0.1; 3]).unwrap().mean, 0.1);
    assert_eq!(
        Describe::of(&[3.0; 4]).unwrap().ci95,
        Some(Ci { lo: 3.0, hi: 3.0 })
    );
}

#[test]
fn outlier_table() {
    #[rustfmt::skip]
    let cases: [(&str, &[f64], &[usize]); 10] = [
        ("tight", &[100.0, 101.0, 99.0, 100.0, 102.0, 98.0, 100.0, 101.0], &[]),
        // x̃ = 100, MAD = 1.5; M(150) = 0.6745 × 50 / 1.5 = 22.5, M(103) = 1.35.
        ("one high", &TEN_RUNS, &[9]),
        // x̃ = 997.5, MAD = 7.5; M(100) = 0.6745 × 897.5 / 7.5 = 80.7.
        ("one low", &[1000.0, 1010.0, 990.0, 1005.0, 995.0, 100.0], &[5]),
        // MAD = 0, MeanAD = 90/8; M(100) = 90 / (1.253314 × 11.25) = 6.38.
        ("MAD 0, one far", &[10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 100.0], &[7]),
        // MAD = 0, MeanAD = 0.6; M(102) = 2 / 0.752 = 2.66.
        ("MAD 0, jitter", &[100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 101.0, 102.0, 99.0, 98.0], &[]),
        // A lone sample off a repeated value scores n / 1.253314: 3.19 at n = 4, 3.99 at n = 5.
        ("MAD 0, lone, n=4", &[5.0, 5.0, 5.0, 6.0], &[]),
        ("MAD 0, lone, n=5", &[5.0, 5.0, 5.0, 5.0, 6.0], &[4]),
        ("all equal", &[42.0; 6], &[]),
        // n = 2: both sit MAD from the median, M = 0.6745.
        ("two", &[1.0, 1000.0], &[]),
        ("single", &[1.0], &[]),
    ];
    for (name, xs, want) in cases {
        assert_eq!(outliers(xs), want, "{name}");
        assert_eq!(Describe::of(xs).unwrap().outliers, want, "{name}");
    }
    assert!(outliers(&[]).is_empty());
}

#[test]
fn bootstrap_ci_contains_true_mean_and_is_deterministic() {
    // 1000 plus noise that sums to zero: the true mean is 1000.
    let noise = [3.0, -2.0, 4.0, -1.0, 0.0, -4.0, 2.0, 1.0, -3.0, 0.0];
    let xs: Vec<f64> = noise.iter().map(|e| 1000.0 + e).collect();
    let d = Describe::of(&xs).unwrap();
    let ci = d.ci95.unwrap();
    assert!(ci.contains(1000.0), "{ci:?}");
    assert!(ci.lo > 997.0 && ci.hi < 1003.0, "{ci:?}");
    assert_eq!(Describe::of(&xs).unwrap(), d);
    assert_eq!(Describe::of(&xs).unwrap().ci95, Some(ci));

    // n = 2: resample means are a, (a+b)/2, b with probabilities ¼, ½, ¼, so the 50th and
    // 1950th of 2000 are a and b.
    assert_eq!(
        Describe::of(&[10.0, 20.0]).unwrap().ci95,
        Some(Ci { lo: 10.0, hi: 20.0 })
    );
}

#[test]
fn bootstrap_coverage_is_near_nominal() {
    // 400 series of n = 10, uniform noise ±10 around 1000. The percentile interval
    // undercovers at this n (358 of 400 here, 89.5 % against 95 %); it must not be far off.
    let mut noise = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let hits = (0..400)
        .filter(|_| {
            let xs: Vec<f64> = (0..10)
                .map(|_| 1000.0 + noise.random_range(-10.0..10.0))
                .collect();
            bootstrap_mean_ci(&xs, &mut rng).contains(1000.0)
        })
        .count();
    assert!((340..=395).contains(&hits), "coverage {hits}/400");
}

#[test]
fn ratio_table() {
    let base = [100.0, 101.0, 99.0, 100.0, 100.0];
    let fast = [150.0, 152.0, 148.0, 151.0, 149.0];
    let r = Ratio::of(&fast, &base, Statistic::Mean, 1).unwrap();
    assert!(close(r.ratio, 1.5) && close(r.trimmed_ratio, 1.5), "{r:?}");
    let ci = r.ci95.unwrap();
    // Every resampled ratio lies within min(case)/max(base) .. max(case)/min(base).
    assert!(ci.lo >= 148.0 / 101.0 && ci.hi <= 152.0 / 99.0, "{ci:?}");
    assert!(ci.contains(1.5), "{ci:?}");
    assert!(matches!(Verdict::of(&r), Verdict::Different { .. }));
    assert_eq!(
        Ratio::of(&fast, &base, Statistic::Mean, 1).unwrap(),
        r,
        "same seed, same result"
    );

    // Slower by the same factor: the reciprocal side of 1.
    let r = Ratio::of(&base, &fast, Statistic::Mean, 1).unwrap();
    assert!(r.ci95.unwrap().hi < 1.0);
    assert!(matches!(Verdict::of(&r), Verdict::Different { .. }));

    // The same values on both sides: ratio 1, interval around it.
    let same = [100.0, 102.0, 98.0, 101.0, 99.0];
    let r = Ratio::of(&same, &same, Statistic::Mean, 1).unwrap();
    assert_eq!(r.ratio, 1.0);
    assert!(r.ci95.unwrap().contains(1.0));
    assert!(matches!(Verdict::of(&r), Verdict::NoDifference { .. }));

    // Normalised to the baseline mean 150; n < 3 on both sides, so no trimming.
    let r = Ratio::of(&[150.0, 300.0], &[100.0, 200.0], Statistic::Mean, 1).unwrap();
    assert_eq!(r.normalised, vec![1.0, 2.0]);
    assert!(close(r.ratio, 1.5) && close(r.trimmed_ratio, 1.5));

    // Trimming drops the 100 on the case side: (2+3)/2 / 10 = 0.25, against 26.5/10.
    let r = Ratio::of(&[1.0, 2.0, 3.0, 100.0], &[10.0; 3], Statistic::Mean, 1).unwrap();
    assert!(
        close(r.ratio, 2.65) && close(r.trimmed_ratio, 0.25),
        "{r:?}"
    );

    // A case at 0 is allowed (no physical reads at all).
    let r = Ratio::of(&[0.0; 3], &[5.0; 3], Statistic::Mean, 1).unwrap();
    assert_eq!((r.ratio, r.ci95), (0.0, Some(Ci { lo: 0.0, hi: 0.0 })));

    // One sample on a side: no interval, no verdict.
    let r = Ratio::of(&[5.0], &base, Statistic::Mean, 1).unwrap();
    assert_eq!(r.ci95, None);
    assert_eq!(
        Verdict::of(&r),
        Verdict::TooFew {
            n_case: 1,
            n_baseline: 5
        }
    );
}

/// Ten repetitions around 100 (the baseline).
const BASE_RUNS: [f64; 10] = [
    100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 101.5, 98.5, 100.0, 100.0,
];

/// Ten repetitions around 130, one of which stalled at 20.
const STALLED_RUNS: [f64; 10] = [
    130.0, 131.0, 129.5, 130.5, 20.0, 129.5, 130.0, 131.5, 129.5, 130.0,
];

#[test]
fn an_outlier_moves_the_mean_ratio_not_the_trimmed_one() {
    let mean = Ratio::of(&STALLED_RUNS, &BASE_RUNS, Statistic::Mean, 5).unwrap();
    let trimmed = Ratio::of(&STALLED_RUNS, &BASE_RUNS, Statistic::Trimmed, 5).unwrap();
    // Means: 1191.5/10 over 1000/10. Trimmed: the 20 and the 131.5 dropped, 1040/8 over
    // (the 98.5 and 101.5 dropped) 800/8.
    assert!(close(mean.ratio, 1.1915), "{mean:?}");
    assert!(close(mean.trimmed_ratio, 1.3), "{mean:?}");
    // Both statistics come from one set of resamples: only the headline differs.
    assert_eq!(
        (mean.ci95, mean.trimmed_ci95),
        (trimmed.ci95, trimmed.trimmed_ci95)
    );
    assert_eq!((mean.headline(), trimmed.headline()), (mean.ratio, 1.3));
    assert_eq!(trimmed.headline_ci(), trimmed.trimmed_ci95);

    // Resamples with the stalled run three times (7 % of them) pull the mean below the
    // baseline's, so its interval holds 1; the trimmed mean drops one copy and stays above.
    let (mci, tci) = (mean.ci95.unwrap(), trimmed.trimmed_ci95.unwrap());
    assert!(mci.contains(1.0) && mci.contains(mean.ratio), "{mci:?}");
    assert!(tci.contains(1.3) && tci.lo > 1.0, "{tci:?}");
    assert!(tci.hi < 1.33, "{tci:?}");
    assert!(matches!(
        Verdict::of(&mean),
        Verdict::NoDifference {
            statistic: Statistic::Mean,
            ..
        }
    ));
    let v = Verdict::of(&trimmed);
    assert!(
        matches!(
            v,
            Verdict::Different { ratio, statistic: Statistic::Trimmed, .. } if ratio == 1.3
        ),
        "{v:?}"
    );
    assert!(
        v.sentence("B", "A", true)
            .starts_with("B is 1.30× A (trimmed means, 95% CI 1.0"),
        "{}",
        v.sentence("B", "A", true)
    );

    // Normalised to the baseline's headline figure: its mean 100, its trimmed mean 100.
    assert!(close(mean.normalised[4], 0.2), "{:?}", mean.normalised);
    let r = Ratio::of(
        &[90.0, 120.0],
        &[10.0, 20.0, 30.0, 100.0],
        Statistic::Trimmed,
        1,
    )
    .unwrap();
    assert_eq!(r.normalised, vec![3.6, 4.8], "÷ (20 + 30) / 2");
    let r = Ratio::of(
        &[90.0, 120.0],
        &[10.0, 20.0, 30.0, 100.0],
        Statistic::Mean,
        1,
    )
    .unwrap();
    assert_eq!(r.normalised, vec![2.25, 3.0], "÷ 160 / 4");
}

#[test]
fn trimmed_interval_holds_the_trimmed_ratio() {
    // Ten runs around 100 against the same 10 % lower: trimmed ratio 0.9.
    let lower: Vec<f64> = BASE_RUNS.iter().map(|x| x * 0.9).collect();
    let r = Ratio::of(&lower, &BASE_RUNS, Statistic::Trimmed, 11).unwrap();
    assert!(close(r.headline(), 0.9), "{r:?}");
    let ci = r.headline_ci().unwrap();
    assert!(ci.contains(r.headline()) && ci.hi < 1.0, "{ci:?}");
    assert!(matches!(Verdict::of(&r), Verdict::Different { .. }));
    assert_eq!(Ratio::of(&lower, &BASE_RUNS, Statistic::Trimmed, 11), Ok(r));
    // With the stalled run, under another seed.
    let r = Ratio::of(&STALLED_RUNS, &BASE_RUNS, Statistic::Trimmed, 12).unwrap();
    let ci = r.headline_ci().unwrap();
    assert!(ci.contains(r.trimmed_ratio) && ci.lo > 1.0, "{ci:?}");
    // n < 3: nothing to trim, so the two statistics agree.
    let r = Ratio::of(&[150.0, 300.0], &[100.0, 200.0], Statistic::Trimmed, 1).unwrap();
    assert_eq!(r.ci95, r.trimmed_ci95);
    assert_eq!(r.headline(), r.ratio);
}

#[test]
fn statistic_words() {
    for s in Statistic::ALL {
        assert_eq!(Statistic::parse(s.name()), Some(s));
        assert_eq!(s.to_string(), s.name());
    }
    assert_eq!(Statistic::parse("median"), None);
    assert_eq!(Statistic::default(), Statistic::Mean);
    assert_eq!(Statistic::Trimmed.label(), "trimmed mean");
}

#[test]
fn few_repetitions_withhold_the_verdict() {
    // Clearly different, but n = 2: withheld.
    let r = Ratio::of(&[200.0, 201.0], &[100.0, 101.0], Statistic::Mean, 3).unwrap();
    assert!(!r.ci95.unwrap().contains(1.0));
    let v = Verdict::of(&r);
    assert_eq!(
        v.sentence("B", "A", true),
        "too few repetitions to tell: n=2"
    );
    let r = Ratio::of(&[200.0, 201.0, 202.0], &[100.0, 101.0], Statistic::Mean, 3).unwrap();
    assert_eq!(
        Verdict::of(&r).sentence("B", "A", true),
        "too few repetitions to tell: n=3 for B, n=2 for A"
    );
}

#[test]
fn sentence_table() {
    let diff = |ratio, lo, hi| Verdict::Different {
        ratio,
        lo,
        hi,
        statistic: Statistic::Mean,
    };
    let same = |ratio, lo, hi| Verdict::NoDifference {
        ratio,
        lo,
        hi,
        statistic: Statistic::Mean,
    };
    #[rustfmt::skip]
    let cases = [
        (diff(1.42, 1.35, 1.49), true, "B is 1.42× A (95% CI 1.35–1.49), better"),
        (diff(0.71, 0.66, 0.77), true, "B is 0.71× A (95% CI 0.66–0.77), worse"),
        // Latency: lower is better.
        (diff(0.71, 0.66, 0.77), false, "B is 0.71× A (95% CI 0.66–0.77), better"),
        (diff(1.42, 1.35, 1.49), false, "B is 1.42× A (95% CI 1.35–1.49), worse"),
        (same(1.02, 0.97, 1.08), true, "no difference between B and A beyond noise (1.02×, 95% CI 0.97–1.08)"),
        (same(1.02, 0.97, 1.08), false, "no difference between B and A beyond noise (1.02×, 95% CI 0.97–1.08)"),
        // Small ratios keep two significant digits; large ones two decimals.
        (diff(0.042, 0.0042, 0.05), true, "B is 0.042× A (95% CI 0.0042–0.050), worse"),
        (diff(12.5, 0.0, 100.0), true, "B is 12.50× A (95% CI 0.00–100.00), better"),
    ];
    for (v, higher_is_better, want) in cases {
        assert_eq!(v.sentence("B", "A", higher_is_better), want);
    }
    let statistic = Statistic::Trimmed;
    let (ratio, lo, hi) = (0.5, 0.47, 0.53);
    assert_eq!(
        Verdict::Different {
            ratio,
            lo,
            hi,
            statistic
        }
        .sentence("B", "A", true),
        "B is 0.50× A (trimmed means, 95% CI 0.47–0.53), worse"
    );
    let (ratio, lo, hi) = (1.02, 0.97, 1.08);
    assert_eq!(
        Verdict::NoDifference {
            ratio,
            lo,
            hi,
            statistic
        }
        .sentence("B", "A", true),
        "no difference between B and A beyond noise (trimmed means 1.02×, 95% CI 0.97–1.08)"
    );
}

#[test]
fn degenerate_inputs_are_refused() {
    use CompareError::*;
    let nan = f64::NAN;
    assert_eq!(
        Describe::of(&[]),
        Err(Empty {
            group: Group::Samples
        })
    );
    for (xs, index) in [
        (&[1.0, nan][..], 1),
        (&[f64::INFINITY], 0),
        (&[2.0, 3.0, f64::NEG_INFINITY], 2),
    ] {
        match Describe::of(xs) {
            Err(NonFinite {
                group: Group::Samples,
                index: i,
                ..
            }) => assert_eq!(i, index),
            other => panic!("{xs:?}: {other:?}"),
        }
    }
    #[rustfmt::skip]
    let cases: [(&[f64], &[f64], CompareError); 6] = [
        (&[], &[1.0], Empty { group: Group::Case }),
        (&[1.0], &[], Empty { group: Group::Baseline }),
        (&[1.0, 2.0], &[1.0, f64::INFINITY], NonFinite { group: Group::Baseline, index: 1, value: f64::INFINITY }),
        (&[-1.0], &[1.0], OutOfRange { group: Group::Case, index: 0, value: -1.0 }),
        (&[1.0], &[2.0, 0.0], OutOfRange { group: Group::Baseline, index: 1, value: 0.0 }),
        (&[1.0], &[-3.0], OutOfRange { group: Group::Baseline, index: 0, value: -3.0 }),
    ];
    for (case, base, want) in cases {
        assert_eq!(
            Ratio::of(case, base, Statistic::Mean, 0),
            Err(want),
            "{case:?} / {base:?}"
        );
    }
    assert!(matches!(
        Ratio::of(&[nan], &[1.0], Statistic::Mean, 0),
        Err(NonFinite {
            group: Group::Case,
            index: 0,
            ..
        })
    ));
    let msg = Ratio::of(&[1.0], &[2.0, 0.0], Statistic::Mean, 0)
        .unwrap_err()
        .to_string();
    assert_eq!(msg, "baseline: sample 1 is 0; a ratio needs every case sample >= 0 and every baseline sample > 0");
}

/// Uniform values, or heavily tied and skewed ones (many 0s, few 1000s), where the
/// bootstrap distribution is lumpy.
fn samples() -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        prop::collection::vec(-1e6f64..1e6, 1..40),
        prop::collection::vec(prop::sample::select(vec![0.0, 0.1, 1.0, 1000.0]), 1..40),
    ]
}

proptest! {
    #[test]
    fn describe_stays_within_the_data(xs in samples()) {
        let d = Describe::of(&xs).unwrap();
        for x in [d.mean, d.median, d.trimmed_mean] {
            prop_assert!(d.min <= x && x <= d.max, "{x} outside [{}, {}]", d.min, d.max);
        }
        prop_assert!(d.stddev.unwrap_or(0.0) >= 0.0);
        prop_assert!(d.outliers.iter().all(|&i| i < xs.len()));
        // Outliers are never the majority: at most ⌊(n−1)/2⌋ lie beyond the MAD.
        prop_assert!(d.outliers.len() <= (xs.len() - 1) / 2, "{:?}", d.outliers);
        if let Some(ci) = d.ci95 {
            prop_assert!(d.min <= ci.lo && ci.lo <= ci.hi && ci.hi <= d.max, "{ci:?}");
            // The bootstrap distribution of the mean is centred on x̄ with well over 2.5 %
            // of its mass on each side, so the percentile interval holds x̄ (up to rounding).
            let eps = 1e-9 * d.max.abs().max(d.min.abs()).max(1.0);
            prop_assert!(ci.lo <= d.mean + eps && d.mean - eps <= ci.hi, "{ci:?} vs {}", d.mean);
        }
    }

    #[test]
    fn ratio_interval_is_bounded(
        case in prop_oneof![
            prop::collection::vec(0f64..1e6, 2..20),
            prop::collection::vec(prop::sample::select(vec![0.0, 1.0, 1000.0]), 2..20),
        ],
        base in prop_oneof![
            prop::collection::vec(1f64..1e6, 2..20),
            prop::collection::vec(prop::sample::select(vec![1.0, 2.0, 1000.0]), 2..20),
        ],
        seed in any::<u64>(),
    ) {
        let r = Ratio::of(&case, &base, Statistic::Mean, seed).unwrap();
        let ci = r.ci95.unwrap();
        let (cmin, cmax) = (case.iter().cloned().fold(f64::INFINITY, f64::min), case.iter().cloned().fold(0.0, f64::max));
        let (bmin, bmax) = (base.iter().cloned().fold(f64::INFINITY, f64::min), base.iter().cloned().fold(0.0, f64::max));
        prop_assert!(cmin / bmax <= ci.lo && ci.lo <= ci.hi && ci.hi <= cmax / bmin, "{ci:?}");
        // As for one mean: each side's resampled mean falls on either side of its mean with
        // well over 2.5 % chance, so the interval holds the ratio of means (up to rounding).
        let eps = 1e-9 * r.ratio.max(1.0);
        prop_assert!(ci.lo <= r.ratio + eps && r.ratio - eps <= ci.hi, "{ci:?} vs {}", r.ratio);
        let v = Verdict::of(&r);
        let few = case.len() < 3 || base.len() < 3;
        prop_assert_eq!(matches!(v, Verdict::TooFew { .. }), few);
        prop_assert_eq!(matches!(v, Verdict::Different { .. }), !few && !ci.contains(1.0));

        // Trimmed: the same bounds (a resample's trimmed mean lies within its range), and
        // the verdict follows the trimmed interval.
        let t = Ratio::of(&case, &base, Statistic::Trimmed, seed).unwrap();
        let tci = t.headline_ci().unwrap();
        prop_assert!(cmin / bmax <= tci.lo && tci.lo <= tci.hi && tci.hi <= cmax / bmin, "{tci:?}");
        prop_assert_eq!((t.ci95, t.headline()), (r.ci95, r.trimmed_ratio));
        let v = Verdict::of(&t);
        prop_assert_eq!(matches!(v, Verdict::Different { .. }), !few && !tci.contains(1.0));
    }
}
