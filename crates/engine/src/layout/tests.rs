use super::*;
use proptest::prelude::*;
use std::collections::HashSet;
use Direction::{Read, Write};

const K: u64 = 1 << 10;
const M: u64 = 1 << 20;

fn spec(s: &str) -> LayoutSpec {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn build(s: &str, sizes: &[u64], groups: Option<Vec<Vec<usize>>>, degraded: &[usize]) -> Layout {
    Layout::new(spec(s), sizes, groups, degraded, 4096).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// `(member, offset, len, copy)` of every member I/O of one logical I/O.
fn map(l: &Layout, dir: Direction, offset: u64, len: u64, choose: u64) -> Vec<(u32, u64, u64, u8)> {
    let mut out = Vec::new();
    l.map(dir, offset, len as u32, choose, &mut out);
    out.iter()
        .map(|io| (io.member, io.offset, u64::from(io.len), io.copy))
        .collect()
}

#[test]
fn new_rejects_impossible_layouts() {
    let sizes = [8 * M; 4];
    let new =
        |s: &str, g: Option<Vec<Vec<usize>>>, d: &[usize]| Layout::new(spec(s), &sizes, g, d, 4096);
    let two = || Some(vec![vec![0, 1], vec![2, 3]]);
    assert_eq!(
        new("mirror:3", two(), &[]).unwrap_err(),
        LayoutError::TooFewGroups {
            layout: spec("mirror:3"),
            groups: 2
        }
    );
    assert!(
        Layout::new(spec("mirror:3"), &[M, M], None, &[], 4096).is_err(),
        "two disks, three copies"
    );
    assert_eq!(
        new("mirror:2", Some(vec![vec![0, 1], vec![2, 7]]), &[]).unwrap_err(),
        LayoutError::UnknownMember {
            member: 7,
            members: 4
        }
    );
    assert_eq!(
        new("mirror:2", Some(vec![vec![0, 1], vec![1, 3]]), &[]).unwrap_err(),
        LayoutError::DuplicateMember { member: 1 }
    );
    assert_eq!(
        new("mirror:2", Some(vec![vec![0, 1], vec![3]]), &[]).unwrap_err(),
        LayoutError::MissingMember { member: 2 }
    );
    assert_eq!(
        new("mirror:2", Some(vec![vec![0, 1, 2, 3], vec![]]), &[]).unwrap_err(),
        LayoutError::EmptyGroup
    );
    assert_eq!(
        new("mirror:2", two(), &[4]).unwrap_err(),
        LayoutError::UnknownDegraded {
            member: 4,
            members: 4
        }
    );
    for s in ["concat", "stripe:1m"] {
        assert!(matches!(
            new(s, None, &[2]).unwrap_err(),
            LayoutError::Unprotected { member: 2, .. }
        ));
    }
    // Two groups of two: 0 partners 2 and 1 partners 3.
    let e = new("mirror:2,stripe:1m", two(), &[2, 0]).unwrap_err();
    assert_eq!(
        e,
        LayoutError::DataLost {
            layout: spec("mirror:2,stripe:1m"),
            members: vec![0, 2]
        }
    );
    assert!(
        e.to_string()
            .contains("degraded targets #1, #3 hold every copy"),
        "{e}"
    );
    assert!(
        new("mirror:2,stripe:1m", two(), &[0, 3]).is_ok(),
        "0 and 3 are not partners"
    );
    assert!(
        new("mirror:3", None, &[0, 1]).is_ok(),
        "mirror:3 survives two failures"
    );
    assert!(new("mirror:3", None, &[0, 1, 2]).is_err());
    let e = Layout::new(spec("stripe:1m"), &[4 * M, M - 1], None, &[], 4096).unwrap_err();
    assert!(
        e.to_string()
            .contains("target #2 holds 1048575 bytes, which is not one whole 1m unit"),
        "{e}"
    );
    assert!(Layout::new(spec("concat"), &[M, 100], None, &[], 512).is_err());
    assert_eq!(
        Layout::new(spec("concat"), &[M], None, &[], 100).unwrap_err(),
        LayoutError::Align(100)
    );
    assert_eq!(
        Layout::new(spec("concat"), &[], None, &[], 512).unwrap_err(),
        LayoutError::NoMembers
    );
}

#[test]
fn concat_continues_on_the_next_member() {
    let l = Layout::new(spec("concat"), &[8 * K + 100, 12 * K], None, &[], 4096).unwrap();
    assert_eq!(
        l.logical_size(),
        20 * K,
        "sizes rounded down to the alignment"
    );
    assert_eq!(
        map(&l, Write, 4 * K, 8 * K, 0),
        [(0, 4 * K, 4 * K, 0), (1, 0, 4 * K, 0)]
    );
    assert_eq!(map(&l, Read, 16 * K, 4 * K, 9), [(1, 8 * K, 4 * K, 0)]);
    assert_eq!(l.write_amplification(), 1);
}

#[test]
fn stripe_1m_over_4_members() {
    let l = build(
        "stripe:1m",
        &[10 * M + 5, 10 * M, 11 * M, 10 * M],
        None,
        &[],
    );
    assert_eq!(l.logical_size(), 40 * M);
    for (off, member, at) in [
        (0, 0, 0),
        (M, 1, 0),
        (3 * M, 3, 0),
        (4 * M, 0, M),
        (5 * M + 512 * K, 1, M + 512 * K),
        (39 * M, 3, 9 * M),
    ] {
        assert_eq!(
            map(&l, Read, off, 8 * K, 0),
            [(member, at, 8 * K, 0)],
            "offset {off}"
        );
    }
    // 512k at 3.75m: the last 256k of AU 3 (member 3) and the first 256k of AU 4 (member 0).
    let piece = 256 * K;
    assert_eq!(
        map(&l, Write, 3 * M + 768 * K, 2 * piece, 0),
        [(3, 768 * K, piece, 0), (0, M, piece, 0)]
    );
    // A 3 MiB read at 512k touches four members.
    let m = map(&l, Read, 512 * K, 3 * M, 0);
    assert_eq!(
        m.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(),
        [(0, 512 * K), (1, M), (2, M), (3, 512 * K)]
    );
}

#[test]
fn mirror_2_over_2_members_is_raid_1_with_rotating_primaries() {
    let l = build("mirror:2", &[8 * M, 8 * M], None, &[]);
    assert_eq!(l.logical_size(), 8 * M);
    assert_eq!(l.write_amplification(), 2);
    assert_eq!(l.partners(0), [1]);
    assert_eq!(
        map(&l, Write, M + 4 * K, 8 * K, 0),
        [(1, M + 4 * K, 8 * K, 0), (0, M + 4 * K, 8 * K, 1)]
    );
    assert_eq!(
        map(&l, Read, 0, 8 * K, 1),
        [(0, 0, 8 * K, 0)],
        "primary ignores the token"
    );
    assert_eq!(map(&l, Read, M, 8 * K, 0), [(1, M, 8 * K, 0)]);
    let b = l.clone().with_read_from(ReadFrom::Balanced);
    assert_eq!(map(&b, Read, 0, 8 * K, 0), [(0, 0, 8 * K, 0)]);
    assert_eq!(map(&b, Read, 0, 8 * K, 1), [(1, 0, 8 * K, 1)]);
    // Degraded member 0: reads of AU 0 move to member 1, writes to it are dropped.
    let d = build("mirror:2", &[8 * M, 8 * M], None, &[0]).with_read_from(ReadFrom::Balanced);
    assert_eq!(map(&d, Read, 0, 8 * K, 0), [(1, 0, 8 * K, 1)]);
    let mut out = Vec::new();
    assert_eq!(d.map(Write, 0, 8192, 0, &mut out), 1, "one dropped copy");
    assert_eq!(
        out,
        [MemberIo {
            member: 1,
            offset: 0,
            len: 8192,
            copy: 1
        }]
    );
    assert_eq!(d.degraded().collect::<Vec<_>>(), [0]);
}

#[test]
fn mirror_2_over_4_members_in_2_failgroups() {
    let groups = Some(vec![vec![0, 1], vec![2, 3]]);
    let l = build("mirror:2,stripe:1m", &[8 * M; 4], groups, &[]);
    assert_eq!(l.logical_size(), 16 * M, "half of the 32 MiB");
    assert_eq!(
        (l.partners(0), l.partners(1), l.partners(3)),
        (&[2][..], &[3][..], &[1][..])
    );
    assert_eq!((l.failgroup_of(1), l.failgroup_of(2)), (0, 1));
    // AU c: primary in group c mod 2, member c mod 2 of each group, at member AU c / 2.
    for (c, want) in [
        (0, [(0, 0), (2, 0)]),
        (1, [(3, 0), (1, 0)]),
        (2, [(0, M), (2, M)]),
        (3, [(3, M), (1, M)]),
        (15, [(3, 7 * M), (1, 7 * M)]),
    ] {
        let got: Vec<(u32, u64)> = map(&l, Write, c * M, 4 * K, 0)
            .iter()
            .map(|p| (p.0, p.1))
            .collect();
        assert_eq!(got, want, "AU {c}");
    }
    let d = build(
        "mirror:2,stripe:1m",
        &[8 * M; 4],
        Some(vec![vec![0, 1], vec![2, 3]]),
        &[3],
    );
    assert_eq!(
        map(&d, Read, M, 4 * K, 0),
        [(1, 0, 4 * K, 1)],
        "AU 1's primary is degraded"
    );
    assert_eq!(map(&d, Write, M, 4 * K, 0), [(1, 0, 4 * K, 1)]);
}

#[test]
fn mirror_2_over_3_single_disk_groups_rotates_partners() {
    let l = build("mirror:2", &[3 * M; 3], None, &[]);
    // Each AU cycle of 3 gives every disk 2 AUs: 4 of 4.5 possible AUs fit.
    assert_eq!(l.logical_size(), 4 * M);
    for (c, want) in [
        (0, [(0, 0), (1, 0)]),
        (1, [(1, M), (2, 0)]),
        (2, [(2, M), (0, M)]),
        (3, [(0, 2 * M), (1, 2 * M)]),
    ] {
        let got: Vec<(u32, u64)> = map(&l, Write, c * M, 4 * K, 0)
            .iter()
            .map(|p| (p.0, p.1))
            .collect();
        assert_eq!(got, want, "AU {c}");
    }
    assert_eq!(l.partners(0), [1, 2]);
    assert!(Layout::new(spec("mirror:2"), &[3 * M; 3], None, &[0, 2], 4096).is_err());
}

#[test]
fn mirror_3_over_3_groups_keeps_a_copy_everywhere() {
    let l = build("mirror:3,stripe:1m", &[6 * M, 6 * M, 7 * M], None, &[]);
    assert_eq!(l.logical_size(), 6 * M);
    let got: Vec<(u32, u64, u8)> = map(&l, Write, 4 * M, 4 * K, 0)
        .iter()
        .map(|p| (p.0, p.1, p.3))
        .collect();
    assert_eq!(got, [(1, 4 * M, 0), (2, 4 * M, 1), (0, 4 * M, 2)]);
    let d = build("mirror:3,stripe:1m", &[6 * M, 6 * M, 7 * M], None, &[1, 2])
        .with_read_from(ReadFrom::Balanced);
    for choose in 0..4 {
        assert_eq!(map(&d, Read, 4 * M, 4 * K, choose), [(0, 4 * M, 4 * K, 2)]);
    }
}

#[test]
fn balanced_reads_split_evenly() {
    let l =
        build("mirror:3,stripe:128k", &[4 * M; 3], None, &[]).with_read_from(ReadFrom::Balanced);
    let mut per = [0u32; 3];
    for choose in 0..3000 {
        per[map(&l, Read, 0, 4 * K, choose)[0].0 as usize] += 1;
    }
    assert_eq!(per, [1000; 3]);
}

#[derive(Debug, Clone)]
struct Case {
    spec: LayoutSpec,
    sizes: Vec<u64>,
    groups: Option<Vec<Vec<usize>>>,
    degraded: Vec<usize>,
    align: u64,
}

/// Small random layouts: concat, stripe, mirror:2 and mirror:3 with units of 4–64 KiB,
/// 1–7 members of uneven sizes, random failure groups and degraded members.
fn cases() -> impl Strategy<Value = Case> {
    let units = prop::sample::select(vec![4 * K, 8 * K, 12 * K, 64 * K]);
    let aligns = prop::sample::select(vec![512, 4 * K, 8 * K]);
    let sizes = prop::collection::vec((1u64..10, 0u64..64 * K), 7);
    let degraded = prop::collection::vec(0usize..7, 0..3);
    (
        0usize..4,
        1usize..8,
        units,
        aligns,
        sizes,
        any::<u64>(),
        0usize..4,
        degraded,
    )
        .prop_map(|(kind, n, unit, align, sizes, seed, groups, degraded)| {
            let copies = [1, 1, 2, 3][kind];
            let n = n.max(copies as usize);
            let spec = LayoutSpec {
                copies,
                stripe: (kind > 0).then_some(unit),
            };
            let sizes = sizes[..n]
                .iter()
                .map(|(aus, extra)| aus * unit + extra % unit)
                .collect();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed);
            let g = copies as usize + groups % (n - copies as usize + 1);
            let groups = (groups > 0).then(|| {
                (0..g)
                    .map(|h| order.iter().skip(h).step_by(g).copied().collect())
                    .collect()
            });
            let mut degraded: Vec<usize> = if copies > 1 {
                degraded.iter().map(|d| d % n).collect()
            } else {
                Vec::new()
            };
            degraded.sort_unstable();
            degraded.dedup();
            Case {
                spec,
                sizes,
                groups,
                degraded,
                align,
            }
        })
}

/// Member I/O invariants every mapping keeps: inside the member, never across an AU.
fn check_inside(l: &Layout, c: &Case, ios: &[(u32, u64, u64, u8)]) -> Result<(), TestCaseError> {
    for &(m, off, len, _) in ios {
        prop_assert!(
            len > 0 && off + len <= c.sizes[m as usize],
            "{ios:?} outside {:?}",
            c.sizes
        );
        if let Some(u) = l.spec().unit() {
            prop_assert_eq!(
                off / u,
                (off + len - 1) / u,
                "{:?} crosses a {} unit",
                ios,
                u
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Block by block: the mapping is injective (a bijection onto member blocks for concat
    /// and stripe), copies sit in distinct failure groups, partner lists match the copy sets,
    /// `new` refuses exactly the degraded sets that lose data, degraded reads avoid failed
    /// members and go to the first live copy, and degraded writes are the healthy ones minus
    /// the failed members.
    #[test]
    fn blocks_map_to_distinct_places_in_distinct_groups(c in cases()) {
        let healthy = match Layout::new(c.spec, &c.sizes, c.groups.clone(), &[], c.align) {
            Err(LayoutError::TooSmall { .. }) => return Ok(()),
            r => r.map_err(|e| TestCaseError::fail(e.to_string()))?,
        };
        // 512-byte blocks: the finest alignment, so no block spans two AUs.
        let a = MIN_ALIGN;
        let mut places = HashSet::new();
        let mut partners = vec![HashSet::new(); c.sizes.len()];
        let mut lost = false;
        let failed = |m: u32| c.degraded.contains(&(m as usize));
        for b in 0..healthy.logical_size() / a {
            let copies = map(&healthy, Write, b * a, a, 0);
            check_inside(&healthy, &c, &copies)?;
            prop_assert_eq!(copies.len(), usize::from(c.spec.copies));
            prop_assert!(copies.iter().enumerate().all(|(k, io)| io.3 as usize == k && io.2 == a));
            let groups: HashSet<u32> = copies.iter().map(|io| healthy.failgroup_of(io.0 as usize)).collect();
            prop_assert_eq!(groups.len(), copies.len(), "copies share a failure group: {:?}", copies);
            for io in &copies {
                prop_assert!(places.insert((io.0, io.1)), "block {} reuses {:?}", b, io);
                partners[io.0 as usize].extend(copies.iter().map(|o| o.0).filter(|&o| o != io.0));
            }
            lost |= copies.iter().all(|io| failed(io.0));
        }
        if c.spec.copies == 1 {
            prop_assert_eq!(places.len() as u64 * a, healthy.logical_size());
        }
        for (m, p) in partners.iter().enumerate() {
            let mut p: Vec<u32> = p.iter().copied().collect();
            p.sort_unstable();
            prop_assert_eq!(healthy.partners(m), &p[..], "partners of {}", m);
        }
        if c.degraded.is_empty() {
            return Ok(());
        }
        let built = Layout::new(c.spec, &c.sizes, c.groups.clone(), &c.degraded, c.align);
        prop_assert_eq!(lost, built.is_err(), "{:?}", built.as_ref().err());
        let Ok(primary) = built else { return Ok(()) };
        let balanced = primary.clone().with_read_from(ReadFrom::Balanced);
        for b in 0..healthy.logical_size() / a {
            let all = map(&healthy, Write, b * a, a, 0);
            let live: Vec<_> = all.iter().copied().filter(|io| !failed(io.0)).collect();
            let mut out = Vec::new();
            let dropped = primary.map(Write, b * a, a as u32, 0, &mut out);
            prop_assert_eq!(map(&primary, Write, b * a, a, 0), live.clone());
            prop_assert_eq!(dropped as usize, all.len() - live.len());
            prop_assert_eq!(map(&primary, Read, b * a, a, b), vec![live[0]], "primary = first live copy");
            let r = map(&balanced, Read, b * a, a, b.wrapping_mul(7));
            prop_assert!(r.len() == 1 && live.contains(&r[0]), "{:?} not a live copy of {:?}", r, live);
        }
    }

    /// Multi-block I/Os: pieces lie inside members and AUs, and their lengths sum to the
    /// I/O's length for reads and to length × copies for writes; reads never touch a
    /// degraded member.
    #[test]
    fn ios_split_at_unit_boundaries(c in cases(), ops in prop::collection::vec((any::<u64>(), 1u64..40, any::<bool>(), any::<u64>()), 64)) {
        let l = match Layout::new(c.spec, &c.sizes, c.groups.clone(), &c.degraded, c.align) {
            Err(LayoutError::TooSmall { .. } | LayoutError::DataLost { .. }) => return Ok(()),
            r => r.map_err(|e| TestCaseError::fail(e.to_string()))?,
        };
        let l = if ops[0].2 { l.with_read_from(ReadFrom::Balanced) } else { l };
        let total = l.logical_size();
        let mut out = Vec::new();
        for (at, blocks, read, choose) in ops {
            let off = at % (total / c.align) * c.align;
            let len = (blocks * c.align).min(total - off);
            let dir = if read { Read } else { Write };
            let dropped = l.map(dir, off, len as u32, choose, &mut out);
            let ios: Vec<_> = out.iter().map(|io| (io.member, io.offset, u64::from(io.len), io.copy)).collect();
            check_inside(&l, &c, &ios)?;
            let sum: u64 = ios.iter().map(|io| io.2).sum();
            if read {
                prop_assert_eq!(sum, len);
                prop_assert!(ios.iter().all(|io| !l.is_degraded(io.0 as usize)), "{:?}", ios);
            } else if c.degraded.is_empty() {
                prop_assert_eq!(sum, len * l.copies() as u64);
                prop_assert_eq!(dropped, 0);
            } else {
                prop_assert!(ios.iter().all(|io| !l.is_degraded(io.0 as usize)), "{:?}", ios);
                prop_assert!(sum <= len * l.copies() as u64);
            }
        }
    }
}
