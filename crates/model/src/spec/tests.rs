//! The job spec's parsers and their round trips, table-driven.

use super::*;

#[test]
fn steady_criteria_table() {
    assert_eq!(
        parse_steady_criterion("iops:20%"),
        Ok(SteadyCriterion::Deviation { pct: 20.0 })
    );
    assert_eq!(
        parse_steady_criterion("iops_slope:0.5%"),
        Ok(SteadyCriterion::Slope { pct_per_s: 0.5 })
    );
    assert_eq!(
        parse_steady_criterion("iops:5"),
        Ok(SteadyCriterion::Deviation { pct: 5.0 })
    );
    for bad in [
        "iops",
        "iops:",
        "iops:-1%",
        "iops:0%",
        "lat:5%",
        "iops:x%",
        "iops:nan%",
    ] {
        assert!(parse_steady_criterion(bad).is_err(), "{bad}");
    }
    let w = SteadyWait {
        criterion: SteadyCriterion::Deviation { pct: 20.0 },
        window: Duration::from_secs(5),
        timeout: Duration::from_secs(60),
    };
    let c = w.config(Duration::from_millis(500));
    assert_eq!(c.window, 10);
    assert_eq!(c.interval_s, 0.5);
    assert!(c.validate().is_ok());
}

#[test]
fn block_splits() {
    assert_eq!(
        "8k".parse::<BlockSplit>().unwrap(),
        BlockSplit::single(8192)
    );
    let s: BlockSplit = "8k:70,1m:30".parse().unwrap();
    assert_eq!((s.min(), s.max()), (8192, 1 << 20));
    assert_eq!(s.to_string(), "8k:70,1m:30");
    for bad in ["8k:70,1m:20", "8k:70,1m", "1000", "0", "128m", "8k:101"] {
        assert!(bad.parse::<BlockSplit>().is_err(), "{bad} should fail");
    }
}

#[test]
fn regions() {
    let r: Region = "0%..25%".parse().unwrap();
    assert_eq!(r.resolve(1 << 30, 8192), Some((0, 1 << 28)));
    let r: Region = "75%..100%".parse().unwrap();
    assert_eq!(r.resolve(1 << 30, 8192), Some((3 << 28, 1 << 30)));
    let r: Region = "1m..2m".parse().unwrap();
    assert_eq!(r.resolve(1 << 20, 4096), None, "outside the target");
    let r: Region = "1000..9000".parse().unwrap();
    assert_eq!(
        r.resolve(1 << 20, 4096),
        Some((4096, 8192)),
        "aligned inwards"
    );
    for bad in ["25%", "50%..10%", "0%..120%", "2g..1g", "a..b"] {
        assert!(bad.parse::<Region>().is_err(), "{bad} should fail");
    }
    // Issue #25 row 18: three dots were read as 0%..0.5%.
    let e = "0%...50%".parse::<Region>().unwrap_err();
    assert!(e.contains("more than two dots"), "{e}");
}

/// Issue #25 row 17: what is wrong and the accepted form, not Rust's parse error.
#[test]
fn whole_number_parts_say_the_accepted_form() {
    let e = "4k:99.5,8k:0.5".parse::<BlockSplit>().unwrap_err();
    assert!(
        e.contains("'4k:99.5': a share is a whole percentage from 0 to 100"),
        "{e}"
    );
    let e = "hotspot:64m@0:18446744073709551616"
        .parse::<Dist>()
        .unwrap_err();
    assert!(e.contains("a whole number from 1 to 4294967295"), "{e}");
}

/// A start near u64::MAX is outside every target: rounding it up to the alignment used to
/// wrap to 0, so `--region 18446744073709551614..18446744073709551615` tested the whole
/// target (issue #14, found by the parser property tests).
#[test]
fn regions_far_past_the_end_are_outside() {
    let r: Region = "18446744073709551614..18446744073709551615"
        .parse()
        .unwrap();
    assert_eq!(r.resolve(4 << 20, 4096), None);
    assert_eq!(r.resolve(u64::MAX, 4096), None);
    let r: Region = "4m..8m".parse().unwrap();
    assert_eq!(r.resolve(4 << 20, 4096), None, "a start at the end");
    let r: Region = "18446744073709551000..18446744073709551615"
        .parse()
        .unwrap();
    assert_eq!(r.resolve(u64::MAX, 4096), None, "no aligned block left");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Any text: a region or a message, never a panic; a region prints back to itself and
    /// resolves inside the target, aligned, or not at all.
    #[test]
    fn regions_resolve_inside_or_not_at_all(
        s in "[0-9.%kmgt]{0,22}\\.\\.[0-9.%kmgt]{0,22}|\\PC{0,16}",
        size in proptest::prelude::any::<u64>(),
        align_pow in 9u32..21,
    ) {
        if let Ok(r) = s.parse::<Region>() {
            proptest::prop_assert_eq!(r.to_string().parse::<Region>(), Ok(r));
            let align = 1u64 << align_pow;
            if let Some((a, b)) = r.resolve(size, align) {
                proptest::prop_assert!(a < b && b <= size, "{} on {}: {}..{}", s, size, a, b);
                proptest::prop_assert!(a % align == 0 && b % align == 0);
            }
        }
    }

    /// Block splits, distributions and steady criteria: a value or a message, and a split
    /// prints back to itself with shares that add up to 100.
    #[test]
    fn other_job_values_parse_or_explain(s in "[0-9.%kmgt:,@a-z_]{0,24}|\\PC{0,16}") {
        if let Ok(b) = s.parse::<BlockSplit>() {
            let total: u32 = b.0.iter().map(|x| u32::from(x.pct)).sum();
            proptest::prop_assert_eq!(total, 100);
            proptest::prop_assert_eq!(b.to_string().parse::<BlockSplit>(), Ok(b));
        }
        if let Ok(Dist::Zipf { theta }) = s.parse::<Dist>() {
            proptest::prop_assert!(theta.is_finite() && theta > 0.0);
        }
        let _ = parse_steady_criterion(&s);
    }
}

#[test]
fn dists() {
    assert_eq!("uniform".parse::<Dist>().unwrap(), Dist::Uniform);
    assert_eq!(
        "zipf:1.2".parse::<Dist>().unwrap(),
        Dist::Zipf { theta: 1.2 }
    );
    assert_eq!(
        "hotspot:64m@1g:4".parse::<Dist>().unwrap(),
        Dist::Hotspot {
            size: 64 << 20,
            offset: 1 << 30,
            every: 4
        }
    );
    for bad in [
        "zipf:0",
        "zipf:x",
        "hotspot:64m",
        "hotspot:64m@0:0",
        "pareto",
    ] {
        assert!(bad.parse::<Dist>().is_err(), "{bad} should fail");
    }
}

#[test]
fn spec_json_round_trip() {
    let mut j = JobSpec::new(RwMode::RandRw);
    j.bs = "8k:70,1m:30".parse().unwrap();
    j.dist = "hotspot:64m@0:4".parse().unwrap();
    j.time = None;
    j.ios = Some(1000);
    let back: JobSpec = serde_json::from_str(&serde_json::to_string(&j).unwrap()).unwrap();
    assert_eq!(back, j);
}
