//! `analysis::metrics` and `analysis::warnings` on small hand-made cases whose figures are
//! worked out by hand in the comments.

mod cases;

use cases::{case, close, find, run, series, two_cases};
use iogauge_campaign::analysis::{metrics, modified_z, seed, warnings};
use iogauge_campaign::{CaseView, MetricView};
use iogauge_stats::compare::Statistic;

/// A described metric worked out by hand: metric, case, n, mean, median, stddev, cv, min,
/// max, trimmed mean, and (ratio, trimmed ratio) against the baseline.
type Row = (
    &'static str,
    &'static str,
    usize,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    Option<(f64, f64)>,
);

/// The rows of [`describe_and_ratio_by_hand`], each with its arithmetic.
fn by_hand() -> Vec<Row> {
    vec![
        // A: 100 110 120. Mean 330/3 = 110 = median; deviations −10 0 10, Σ² = 200,
        // s = √(200/2) = 10, CV = 10/110; trimmed (drop 100 and 120) = 110.
        (
            "iops",
            "A",
            3,
            110.0,
            110.0,
            10.0,
            10.0 / 110.0,
            100.0,
            120.0,
            110.0,
            None,
        ),
        // B: 150 160 200 (the interrupted 5 left out). Mean 510/3 = 170, median 160;
        // deviations −20 −10 30, Σ² = 400 + 100 + 900 = 1400, s = √700 = 26.4575…,
        // CV = √700/170; trimmed = 160. Ratio 170/110 = 1.5454…, trimmed 160/110.
        (
            "iops",
            "B",
            3,
            170.0,
            160.0,
            700f64.sqrt(),
            700f64.sqrt() / 170.0,
            150.0,
            200.0,
            160.0,
            Some((170.0 / 110.0, 160.0 / 110.0)),
        ),
        // Constant 1.0 against constant 2.0: ratio 0.5 both ways, no spread.
        (
            "read_lat_p99_ms",
            "B",
            3,
            1.0,
            1.0,
            0.0,
            0.0,
            1.0,
            1.0,
            1.0,
            Some((0.5, 0.5)),
        ),
        // Only B has writes: described, not compared.
        (
            "write_iops",
            "B",
            3,
            10.0,
            10.0,
            0.0,
            0.0,
            10.0,
            10.0,
            10.0,
            None,
        ),
    ]
}

/// Each row's description and ratio as [`metrics`] made them.
fn assert_rows(ms: &[MetricView], table: &[Row]) {
    for &(key, name, n, mean, median, sd, cv, min, max, trimmed, ratio) in table {
        let mc = find(ms, key).cases.iter().find(|c| c.case == name).unwrap();
        let d = &mc.describe;
        let what = format!("{key} {name}: {d:?}");
        assert_eq!(d.n, n, "{what}");
        assert_eq!(mc.samples.len(), n, "{what}");
        for (got, want) in [
            (d.mean, mean),
            (d.median, median),
            (d.stddev.unwrap(), sd),
            (d.min, min),
            (d.max, max),
            (d.trimmed_mean, trimmed),
        ] {
            assert!(close(got, want), "{what}: {got} != {want}");
        }
        assert!(d.cv.is_some_and(|c| close(c, cv)), "{what}");
        match (ratio, &mc.ratio) {
            (None, None) => {}
            (Some((r, tr)), Some(got)) => {
                assert!(
                    close(got.ratio, r) && close(got.trimmed_ratio, tr),
                    "{got:?}"
                );
            }
            (want, got) => panic!("{what}: ratio {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn describe_and_ratio_by_hand() {
    let ms = metrics(&two_cases(), "A", Statistic::Mean);
    // Catalogue order; mbps and the rest no run has are left out.
    let keys: Vec<&str> = ms.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(keys, ["iops", "write_iops", "read_lat_p99_ms"]);

    assert_rows(&ms, &by_hand());

    let iops = find(&ms, "iops");
    let names: Vec<&str> = iops.cases.iter().map(|c| c.case.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    assert_eq!(find(&ms, "write_iops").cases.len(), 1);
    // The baseline: no ratio, no verdict.
    assert!(iops.cases[0].ratio.is_none() && iops.cases[0].verdict.is_none());
    // B over A: every resampled ratio lies in [150/120, 200/100] = [1.25, 2.0], so the
    // interval excludes 1 and B is better.
    let b = &iops.cases[1];
    let ci = b.ratio.as_ref().unwrap().ci95.unwrap();
    assert!(1.25 <= ci.lo && ci.lo <= ci.hi && ci.hi <= 2.0, "{ci:?}");
    let v = b.verdict.as_deref().unwrap();
    assert!(
        v.starts_with("B is 1.55× A (95% CI ") && v.ends_with("), better"),
        "{v}"
    );
    // Latency halved: lower is better.
    let lat = &find(&ms, "read_lat_p99_ms").cases[1];
    assert_eq!(
        lat.verdict.as_deref(),
        Some("B is 0.50× A (95% CI 0.50–0.50), better")
    );
    // Reproducible: the same input gives the same intervals.
    assert_eq!(metrics(&two_cases(), "A", Statistic::Mean), ms);
}

#[test]
fn no_ratio_or_verdict_when_the_statistics_cannot_give_one() {
    /// What, baseline samples, case samples, whether a ratio and a verdict are given.
    type Row<'a> = (&'a str, &'a [f64], &'a [f64], bool, bool);
    let table: &[Row] = &[
        (
            "baseline mean 0: the ratio would be infinite",
            &[0.0, 0.0, 0.0],
            &[5.0, 5.0, 5.0],
            false,
            false,
        ),
        (
            "a zero among the baseline samples",
            &[0.0, 2.0, 4.0],
            &[5.0, 5.0, 5.0],
            false,
            false,
        ),
        (
            "two repetitions: a ratio, no verdict",
            &[100.0, 120.0],
            &[90.0, 100.0],
            true,
            false,
        ),
        ("one repetition each", &[100.0], &[90.0], true, false),
        (
            "three each",
            &[100.0, 101.0, 102.0],
            &[90.0, 91.0, 92.0],
            true,
            true,
        ),
    ];
    for &(what, base, other, ratio, verdict) in table {
        let cases = vec![
            series("base", 1, "commits_s", base),
            series("other", 11, "commits_s", other),
        ];
        let ms = metrics(&cases, "base", Statistic::Mean);
        let mc = &ms[0].cases[1];
        assert_eq!(mc.ratio.is_some(), ratio, "{what}: {mc:?}");
        assert_eq!(mc.verdict.is_some(), verdict, "{what}: {mc:?}");
    }
    // A baseline name no case has: figures, no ratios.
    let ms = metrics(&two_cases(), "nobody", Statistic::Mean);
    assert!(ms.iter().flat_map(|m| &m.cases).all(|c| c.ratio.is_none()));
    assert!(metrics(&[], "A", Statistic::Mean).is_empty());
}

#[test]
fn seeds_differ_by_metric_and_case_and_never_change() {
    // FNV-1a 64 of the empty input is its offset basis; of "a" (0x61), the published
    // test vector af63dc4c8601ec8c, here followed by the 0xff separator.
    assert_ne!(seed("iops", "A"), seed("iops", "B"));
    assert_ne!(seed("iops", "A"), seed("mbps", "A"));
    assert_ne!(seed("ab", "c"), seed("a", "bc"));
    let fnv = |bytes: &[u8]| {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
        })
    };
    assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(seed("a", ""), fnv(&[b'a', 0xff]));
}

#[test]
fn modified_z_by_hand() {
    // (samples, z of the last sample)
    let table: &[(&[f64], f64)] = &[
        // Median 100, |deviations| 0 1 1 0 50, MAD 1: z = 0.6745 × 50 = 33.725.
        (&[100.0, 101.0, 99.0, 100.0, 150.0], 33.725),
        // MAD 0: MeanAD = 1/5, z = 1 / (1.253314 × 0.2) = 3.98943.
        (&[100.0, 100.0, 100.0, 100.0, 101.0], 1.0 / (1.253314 * 0.2)),
        // Median 160, |deviations| 10 0 40, MAD 10: z = 0.6745 × 40 / 10 = 2.698.
        (&[150.0, 160.0, 200.0], 2.698),
    ];
    for &(xs, want) in table {
        let z = modified_z(xs).unwrap();
        assert!((z[xs.len() - 1] - want).abs() < 1e-9, "{xs:?}: {z:?}");
    }
    assert_eq!(modified_z(&[3.0, 3.0, 3.0]), None);
    assert_eq!(modified_z(&[]), None);
}

#[test]
fn warnings_table() {
    let with_warnings = |mut c: CaseView, ws: &[&[&str]]| {
        for (r, w) in c.runs.iter_mut().zip(ws) {
            r.warnings = w.iter().map(|s| s.to_string()).collect();
        }
        c
    };
    // (what, cases, repeat, expected warnings)
    let table: Vec<(&str, Vec<CaseView>, u32, Vec<&str>)> = vec![
        (
            // A's CV is 10/110 = 9.1%: quiet. B's is √700/170 = 15.6%: noisy. B's 200 has a
            // modified z of 2.698 (see above): not an outlier.
            "interrupted and noisy",
            two_cases(),
            3,
            vec![
                "case B, repetition 4 (run 14) was interrupted and is left out of the statistics",
                "case B is noisy (coefficient of variation above 10%): iops 15.6%",
            ],
        ),
        (
            "quiet, complete campaign",
            vec![series("A", 1, "iops", &[100.0, 101.0, 102.0])],
            3,
            vec![],
        ),
        (
            // Mean 110, deviations −10 −9 −11 −10 40, Σ² = 2002, s = √500.5 = 22.37,
            // CV 20.3%; the 150 scores 33.7 (above).
            "outlier",
            vec![series("D", 1, "iops", &[100.0, 101.0, 99.0, 100.0, 150.0])],
            5,
            vec![
                "case D: repetition 5 (run 5) is an outlier in iops (modified z 33.7); check what else ran on the machine then, or re-run it",
                "case D is noisy (coefficient of variation above 10%): iops 20.3%",
            ],
        ),
        (
            "outlier off identical values, in two metrics",
            vec![case(
                "E",
                (1..=5)
                    .map(|i| {
                        let x = if i == 3 { 103.0 } else { 100.0 };
                        run(i, i as u32, &[("iops", x), ("mbps", x / 100.0)])
                    })
                    .collect(),
            )],
            5,
            vec!["case E: repetition 3 (run 3) is an outlier in iops (modified z 4.0), mbps (modified z 4.0); check what else ran on the machine then, or re-run it"],
        ),
        (
            // The same shape 1% off: z is as large, but below MATERIAL (2%) of the median.
            "an immaterial outlier is not named",
            vec![series("E", 1, "iops", &[100.0, 100.0, 101.0, 100.0, 100.0])],
            5,
            vec![],
        ),
        (
            "short of repetitions, and too few for a verdict",
            vec![series("F", 1, "iops", &[100.0, 100.0])],
            2,
            vec![
                "each case is repeated 2 times: a verdict needs at least 3 repetitions per case, so none is given; raise repeat",
            ],
        ),
        (
            "fewer runs than asked",
            vec![series("G", 1, "iops", &[100.0, 100.0])],
            3,
            vec!["case G has 2 measured runs of the 3 asked for; run the campaign again to complete it"],
        ),
        (
            "run warnings: everywhere once, else per case with a count",
            vec![
                with_warnings(
                    series("A", 1, "iops", &[100.0, 100.0, 100.0]),
                    &[&["w1", "w2"], &["w1", "w2", "w3"], &["w1"]],
                ),
                with_warnings(series("B", 11, "iops", &[100.0]), &[&["w1", "w1", "interrupted: x"]]),
            ],
            1,
            vec![
                "each case is repeated 1 time: a verdict needs at least 3 repetitions per case, so none is given; raise repeat",
                "every run: w1",
                "case A, 2 of 3 runs: w2",
                "case A, repetition 2 (run 2): w3",
            ],
        ),
    ];
    for (what, cases, repeat, want) in table {
        assert_eq!(warnings(&cases, repeat), want, "{what}");
    }
}

/// `baseline = { fs = "raw" }`: each case against its own baseline. Reads: raw 100, 110, 120
/// (mean 110), ext4 55, 55, 55 → 0.5; writes: raw 40, 40, 40, ext4 50, 50, 50 → 1.25.
#[test]
fn per_case_baselines() {
    let mut cases = vec![
        series("raw r", 1, "iops", &[100.0, 110.0, 120.0]),
        series("raw w", 4, "iops", &[40.0, 40.0, 40.0]),
        series("ext4 r", 7, "iops", &[55.0, 55.0, 55.0]),
        series("ext4 w", 10, "iops", &[50.0, 50.0, 50.0]),
    ];
    cases[2].baseline = Some("raw r".into());
    cases[3].baseline = Some("raw w".into());
    let m = &iogauge_campaign::analysis::metrics_per_case(&cases, Statistic::Mean)[0];
    let ratio = |i: usize| m.cases[i].ratio.as_ref().map(|r| r.ratio);
    assert_eq!((ratio(0), ratio(1)), (None, None), "baselines get no ratio");
    assert!((ratio(2).unwrap() - 0.5).abs() < 1e-12);
    assert!((ratio(3).unwrap() - 1.25).abs() < 1e-12);
    let v = m.cases[3].verdict.as_deref().unwrap();
    assert!(v.starts_with("ext4 w is 1.25× raw w"), "{v}");
    assert_eq!(
        m.cases[2].ratio.as_ref().unwrap().normalised,
        [0.5, 0.5, 0.5]
    );
}

/// `statistic = "trimmed"`: ten repetitions each, one of the case's stalled (20 against
/// about 130). Trimmed means 1040/8 = 130 and 800/8 = 100 give 1.30, a difference beyond the
/// noise; the means 1191.5/10 and 1000/10 give 1.19, with the stalled run's weight in the
/// interval (resamples holding it three times pull the mean below 100), no verdict of one.
/// Normalised samples divide by the baseline's trimmed mean.
#[test]
fn trimmed_statistic_makes_the_headline_and_the_verdict() {
    let base = [
        100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 101.5, 98.5, 100.0, 100.0,
    ];
    let stalled = [
        130.0, 131.0, 129.5, 130.5, 20.0, 129.5, 130.0, 131.5, 129.5, 130.0,
    ];
    let cases = vec![
        series("raw", 1, "iops", &base),
        series("ext4", 11, "iops", &stalled),
    ];
    let by = |s: Statistic| metrics(&cases, "raw", s)[0].cases[1].clone();
    let (mean, trimmed) = (by(Statistic::Mean), by(Statistic::Trimmed));
    let (rm, rt) = (mean.ratio.unwrap(), trimmed.ratio.unwrap());
    assert_eq!(
        (rm.statistic, rt.statistic),
        (Statistic::Mean, Statistic::Trimmed)
    );
    assert!(close(rm.headline(), 1.1915) && close(rt.headline(), 1.3));
    // Both keep both figures; only the headline differs.
    assert_eq!((rm.ratio, rm.trimmed_ratio), (rt.ratio, rt.trimmed_ratio));
    assert!(rt.headline_ci().unwrap().lo > 1.0, "{rt:?}");
    assert_eq!(
        mean.verdict
            .as_deref()
            .map(|v| v.starts_with("no difference between ext4 and raw")),
        Some(true),
        "{:?}",
        mean.verdict
    );
    let v = trimmed.verdict.unwrap();
    assert!(
        v.starts_with("ext4 is 1.30× raw (trimmed means, 95% CI ") && v.ends_with("), better"),
        "{v}"
    );
    assert!(close(rt.normalised[0], 1.3) && close(rt.normalised[4], 0.2));
    // The figures of each case do not depend on the statistic.
    assert_eq!(mean.describe, trimmed.describe);
}
