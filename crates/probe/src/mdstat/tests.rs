//! Tests of mdstat.rs on captured /proc/mdstat text (tests/fixtures/mdstat/).

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../tests/fixtures/mdstat/", $name, ".txt"))
    };
}

fn parse(text: &str) -> Vec<MdArray> {
    parse_mdstat(text).unwrap_or_else(|e| panic!("{e}"))
}

fn names(a: &MdArray) -> Vec<&str> {
    a.members.iter().map(|m| m.name.as_str()).collect()
}

#[test]
fn healthy_raid1() {
    let a = parse(fixture!("healthy_raid1"));
    assert_eq!(a.len(), 1);
    let md0 = &a[0];
    assert_eq!(md0.name, "md0");
    assert!(md0.active);
    assert_eq!(md0.level.as_deref(), Some("raid1"));
    assert_eq!(names(md0), ["sdb1", "sda1"]);
    assert_eq!(md0.members[0].index, 1);
    assert_eq!((md0.raid_disks, md0.active_disks), (Some(2), Some(2)));
    assert_eq!(md0.status.as_deref(), Some("UU"));
    assert!(!md0.degraded);
    assert_eq!(md0.sync, None);
}

#[test]
fn degraded_raid1_with_failed_member() {
    let md0 = &parse(fixture!("degraded_raid1"))[0];
    assert!(md0.degraded);
    assert_eq!((md0.raid_disks, md0.active_disks), (Some(2), Some(1)));
    assert_eq!(md0.status.as_deref(), Some("U_"));
    let failed: Vec<_> = md0.members.iter().filter(|m| m.faulty).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].name, "sdb1");
}

#[test]
fn resync_in_progress() {
    let md = &parse(fixture!("resync_raid1"))[0];
    assert_eq!(md.name, "md127");
    assert!(!md.degraded);
    let s = md.sync.as_ref().unwrap();
    assert_eq!(s.action, "resync");
    assert_eq!(s.percent, Some(12.6));
    assert!(!s.delayed_or_pending);
}

#[test]
fn raid5_recovery() {
    let md1 = &parse(fixture!("recovery_raid5"))[0];
    assert_eq!(md1.level.as_deref(), Some("raid5"));
    assert_eq!(md1.members.len(), 4);
    assert_eq!((md1.raid_disks, md1.active_disks), (Some(4), Some(3)));
    assert!(md1.degraded);
    let s = md1.sync.as_ref().unwrap();
    assert_eq!((s.action.as_str(), s.percent), ("recovery", Some(8.1)));
}

#[test]
fn delayed_and_pending() {
    let a = parse(fixture!("delayed_pending"));
    assert_eq!(a.len(), 2);
    for md in &a {
        let s = md.sync.as_ref().unwrap();
        assert_eq!(s.action, "resync");
        assert_eq!(s.percent, None);
        assert!(s.delayed_or_pending);
    }
    // `active (auto-read-only)` is still active, and the level is not the flag.
    assert!(a[1].active);
    assert_eq!(a[1].level.as_deref(), Some("raid1"));
}

#[test]
fn raid0_and_linear_have_no_status() {
    let a = parse(fixture!("raid0_linear"));
    assert_eq!(a.len(), 2);
    assert_eq!(a[0].level.as_deref(), Some("raid0"));
    assert_eq!(a[1].level.as_deref(), Some("linear"));
    for md in &a {
        assert_eq!((md.raid_disks, md.status.as_deref()), (None, None));
        assert!(!md.degraded);
        assert_eq!(md.members.len(), 2);
    }
}

#[test]
fn inactive_array() {
    let md = &parse(fixture!("inactive"))[0];
    assert!(!md.active);
    assert_eq!(md.level, None);
    assert!(md.members.iter().all(|m| m.spare));
    assert_eq!(names(md), ["sdb", "sda"]);
    assert!(!md.degraded);
}

#[test]
fn raid10_check_and_member_flags() {
    let a = parse(fixture!("raid10_check_write_mostly"));
    let s = a[0].sync.as_ref().unwrap();
    assert_eq!((s.action.as_str(), s.percent), ("check", Some(43.2)));
    assert_eq!(a[0].status.as_deref(), Some("UUUU"));
    let md4 = &a[1];
    assert!(md4.members[0].write_mostly && !md4.members[0].spare);
    assert!(md4.members[2].spare);
    assert!(!md4.degraded, "a spare does not make an array degraded");
}

#[test]
fn no_arrays() {
    assert!(parse(fixture!("empty_no_arrays")).is_empty());
    assert!(parse("").is_empty());
}

#[test]
fn malformed_lines_are_errors() {
    let cases = [
        (
            "      1024 blocks [1/1] [U]\n",
            "indented line before any array",
        ),
        (
            "md0 active raid1 sda1[0]\n",
            "expected `mdN : active|inactive ...`",
        ),
        (
            "md0 : running raid1 sda1[0]\n",
            "expected `active` or `inactive`",
        ),
        (
            "md0 : active raid1 sda1 sdb1[0]\n",
            "member without `[index]`",
        ),
        (
            "md0 : active raid1 sda1[x]\n",
            "member index is not a number",
        ),
        ("md0 : active raid1 sda1[0](Z)\n", "unknown member flag"),
        (
            "md0 : active raid1 sda1[0]\n  9 blocks [2/x] [U_]\n",
            "bad `[n/m]`",
        ),
        (
            "md0 : active raid1 sda1[0]\n  9 blocks [2/1] [U?]\n",
            "unknown bracketed",
        ),
        (
            "md0 : active raid1 sda1[0]\n  [=>..]  resync = fast\n",
            "without `%`",
        ),
        (
            "md0 : active raid1 sda1[0]\n  frobnicate: yes\n",
            "unrecognised line",
        ),
    ];
    for (text, want) in cases {
        let e = parse_mdstat(text).expect_err(text).to_string();
        assert!(e.contains(want), "{text:?}: {e}");
        assert!(e.contains("line "), "{e}");
    }
}

#[test]
fn reads_this_machine() {
    // No md driver here means no arrays, not an error; with one, it must parse.
    read_mdstat().unwrap();
}
