//! Tests of the samplers on captured /proc text (tests/fixtures/sample/) and of the derived
//! figures on hand-computed intervals.

use super::*;
use iogauge_model::system::{CpuCounters, DiskCounters, MemInfo, Snapshot, SwapCounters};

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../tests/fixtures/sample/", $name, ".txt"))
    };
}

fn disks(text: &str) -> Vec<DiskCounters> {
    parse_diskstats(text).unwrap_or_else(|e| panic!("{e}"))
}

fn find<'a>(ds: &'a [DiskCounters], name: &str) -> &'a DiskCounters {
    ds.iter().find(|d| d.name == name).unwrap()
}

#[test]
fn diskstats_4_17_has_no_discards_or_flushes() {
    let ds = disks(fixture!("diskstats_4.17"));
    assert_eq!(ds.len(), 4);
    let sda = find(&ds, "sda");
    assert_eq!((sda.major, sda.minor), (8, 0));
    assert_eq!(sda.reads, 51520);
    assert_eq!(sda.reads_merged, 1234);
    assert_eq!(sda.sectors_read, 3456789);
    assert_eq!(sda.time_reading_ms, 45678);
    assert_eq!(sda.writes, 23456);
    assert_eq!(sda.writes_merged, 7890);
    assert_eq!(sda.sectors_written, 987654);
    assert_eq!(sda.time_writing_ms, 34567);
    assert_eq!(sda.in_progress, 0);
    assert_eq!(sda.time_in_progress_ms, 56789);
    assert_eq!(sda.weighted_time_in_progress_ms, 80245);
    assert_eq!(sda.discards, None);
    assert_eq!(sda.time_discarding_ms, None);
    assert_eq!(sda.flushes, None);
    assert_eq!(find(&ds, "sda1").minor, 1);
    assert_eq!(find(&ds, "dm-0").major, 253);
}

#[test]
fn diskstats_4_19_has_discards_only() {
    let ds = disks(fixture!("diskstats_4.19"));
    let nvme = find(&ds, "nvme0n1");
    assert_eq!(nvme.discards, Some(1247));
    assert_eq!(nvme.discards_merged, Some(0));
    assert_eq!(nvme.sectors_discarded, Some(20498432));
    assert_eq!(nvme.time_discarding_ms, Some(1019));
    assert_eq!((nvme.flushes, nvme.time_flushing_ms), (None, None));
    assert_eq!(find(&ds, "nvme0n1p2").reads, 1833945);
    let lo = find(&ds, "loop0");
    assert!(lo.never_used());
    assert!(!nvme.never_used());
}

#[test]
fn diskstats_5_10_has_flushes() {
    let ds = disks(fixture!("diskstats_5.10"));
    let sda = find(&ds, "sda");
    assert_eq!(sda.flushes, Some(128741));
    assert_eq!(sda.time_flushing_ms, Some(193999));
    assert_eq!(find(&ds, "loop3").reads, 56);
    let vda = find(&ds, "vda");
    assert_eq!(vda.weighted_time_in_progress_ms, 21403601);
    assert_eq!(vda.time_flushing_ms, Some(836));
}

#[test]
fn diskstats_of_this_kernel() {
    // Whatever machine captured it (6.18 here), every line must parse.
    assert!(!disks(fixture!("diskstats_6.18")).is_empty());
}

#[test]
fn malformed_diskstats_lines_are_errors() {
    let bad = [
        // Truncated 4.18 line (16 columns).
        "8 0 sda 1 2 3 4 5 6 7 8 0 9 10 11 12",
        // Truncated 5.5 line (19 columns): a lost flush column must not pass unnoticed.
        "8 0 sda 1 2 3 4 5 6 7 8 0 9 10 11 12 13 14 15",
        "8 0 sda 1 2 3",
        "8 0 sda 1 2 3 4 5 6 7 8 0 9 x10",
        "8 0 sda 1 2 3 4 5 6 7 8 0 9 10 11 12 13 1x4",
        "8 0 sda -1 2 3 4 5 6 7 8 0 9 10",
        "x 0 sda 1 2 3 4 5 6 7 8 0 9 10",
    ];
    for line in bad {
        match parse_disk_line(line) {
            Err(SampleError::Parse { file, line: l, .. }) => {
                assert_eq!(file, "/proc/diskstats");
                assert_eq!(l, line);
            }
            other => panic!("{line:?} gave {other:?}"),
        }
    }
    let text = format!("{}8 0 sda 1 2\n", fixture!("diskstats_4.17"));
    let e = parse_diskstats(&text).unwrap_err().to_string();
    assert!(e.contains("5 columns"), "{e}");
}

#[test]
fn stat_with_guest_columns() {
    let c = parse_stat(fixture!("stat_6.18")).unwrap();
    let first = fixture!("stat_6.18").lines().next().unwrap();
    let cols: Vec<u64> = first
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(cols.len(), 10, "guest and guest_nice present");
    let got = [
        c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal,
    ];
    assert_eq!(got.as_slice(), &cols[..8]);
}

#[test]
fn stat_without_guest_columns() {
    let c = parse_stat(fixture!("stat_2.6_no_guest")).unwrap();
    let want = CpuCounters {
        user: 2255,
        nice: 34,
        system: 2290,
        idle: 22625563,
        iowait: 6290,
        irq: 127,
        softirq: 456,
        steal: 0,
    };
    assert_eq!(c, want);
}

#[test]
fn bad_stat_is_an_error() {
    let e = parse_stat("cpu  1 2 x 4\nctxt 1\nbtime 2\nprocesses 3\n").unwrap_err();
    assert!(
        matches!(
            e,
            SampleError::Parse {
                file: "/proc/stat",
                ..
            }
        ),
        "{e}"
    );
    assert!(
        parse_stat("ctxt 1\nbtime 2\nprocesses 3\n").is_err(),
        "no cpu line"
    );
}

/// The captured 6.18 /proc/stat has two CPUs; each column of the aggregate line is (about)
/// their sum.
#[test]
fn per_cpu_lines_of_a_captured_stat() {
    let (total, cpus) = parse_stat_cpus(fixture!("stat_6.18")).unwrap();
    assert_eq!(cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(
        cpus[0].counters,
        CpuCounters {
            user: 197649,
            nice: 0,
            system: 29019,
            idle: 209248,
            iowait: 18180,
            irq: 0,
            softirq: 297,
            steal: 15457,
        }
    );
    let fields = |c: &CpuCounters| {
        [
            c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal,
        ]
    };
    let (a, b) = (fields(&cpus[0].counters), fields(&cpus[1].counters));
    // show_stat() (fs/proc/stat.c) sums the CPUs in one pass and prints each in another, so
    // a field can move by a tick between the two: the capture's iowait is 67338, its CPUs'
    // 67337.
    for ((x, y), t) in a.iter().zip(b).zip(fields(&total)) {
        assert!(
            (x + y).abs_diff(t) <= 1 + t / 1000,
            "{a:?} + {b:?} vs {total:?}"
        );
    }
    let (_, old) = parse_stat_cpus(fixture!("stat_2.6_no_guest")).unwrap();
    assert_eq!(old[1].counters.idle, 11313845);
}

/// Offline CPUs have no line: the numbers are read from the lines, not counted.
#[test]
fn per_cpu_numbers_skip_offline_cpus() {
    let text =
        "cpu  6 0 6 6\ncpu0 1 0 1 1\ncpu1 2 0 2 2\ncpu3 3 0 3 3\nctxt 1\nbtime 2\nprocesses 3\n";
    let (_, cpus) = parse_stat_cpus(text).unwrap();
    assert_eq!(cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(), [0, 1, 3]);
    assert_eq!(cpus[2].counters.system, 3);
}

#[test]
fn bad_per_cpu_lines_are_errors_naming_the_line() {
    for (bad, why) in [
        ("cpuX 1 0 1 1", "is not cpuN"),
        ("cpu1 1 0", "fewer than"),
        ("cpu1 1 0 y 1", "is not a tick count"),
    ] {
        let text = format!("cpu  1 0 1 1\n{bad}\nctxt 1\nbtime 2\nprocesses 3\n");
        let e = parse_stat_cpus(&text).unwrap_err().to_string();
        assert!(e.contains(bad) && e.contains(why), "{bad:?}: {e}");
        assert!(parse_stat(&text).is_err(), "{bad:?}");
    }
}

#[test]
fn loadavg_of_a_captured_file() {
    let l = parse_loadavg(fixture!("loadavg")).unwrap();
    assert_eq!(
        (l.one, l.five, l.fifteen, l.runnable, l.tasks),
        (0.18, 0.78, 1.18, 1, 87)
    );
    let busy = parse_loadavg("64.07 12.50 3.01 65/1203 998877\n").unwrap();
    assert_eq!((busy.one, busy.runnable, busy.tasks), (64.07, 65, 1203));
}

#[test]
fn bad_loadavg_is_an_error() {
    for text in [
        "",
        "0.18 0.78\n",
        "a 0.78 1.18 1/87 11425\n",
        "0.18 0.78 1.18 87 11425\n",
        "0.18 0.78 1.18 1/x 11425\n",
    ] {
        let e = parse_loadavg(text).unwrap_err();
        assert!(
            matches!(
                e,
                SampleError::Parse {
                    file: "/proc/loadavg",
                    ..
                }
            ),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn meminfo_in_bytes() {
    let m = parse_meminfo(fixture!("meminfo_4.19")).unwrap();
    let want = MemInfo {
        cached: 4702180 * 1024,
        buffers: 298112 * 1024,
        dirty: 52416 * 1024,
        writeback: 8192 * 1024,
    };
    assert_eq!(m, want);
    assert!(parse_meminfo(fixture!("meminfo_6.18")).unwrap().cached > 0);
    assert_eq!(
        parse_mem_total(fixture!("meminfo_4.19")).unwrap(),
        8167848 * 1024
    );
    assert!(ram_bytes().unwrap() > 1 << 30, "this machine has memory");
}

#[test]
fn bad_meminfo_is_an_error() {
    let no_dirty: String = fixture!("meminfo_4.19")
        .lines()
        .filter(|l| !l.starts_with("Dirty:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let e = parse_meminfo(&no_dirty).unwrap_err().to_string();
    assert!(e.contains("no `Dirty: N kB` line"), "{e}");
    let no_vmalloc = fixture!("meminfo_4.19").replace("VmallocChunk:", "Vmalloc:");
    // A field only procfs insists on: still an error, with procfs' own words.
    assert!(parse_meminfo(&no_vmalloc).is_err());
    let garbled = fixture!("meminfo_4.19").replace("Cached:          4702180", "Cached: 47x");
    assert!(parse_meminfo(&garbled).is_err());
}

#[test]
fn pressure_io() {
    let p = parse_pressure("some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\nfull avg10=0.75 avg60=0.10 avg300=0.00 total=65432\n").unwrap();
    assert!((p.some_avg10 - 1.5).abs() < 1e-6);
    assert_eq!(p.some_total_us, 123456);
    assert!((p.full_avg10 - 0.75).abs() < 1e-6);
    assert_eq!(p.full_total_us, 65432);
    assert!(parse_pressure(fixture!("pressure_io")).is_ok());
}

#[test]
fn bad_pressure_is_an_error() {
    for text in [
        "some avg10=1.50 avg60=0.25 avg300=0.00 total=1\n",
        "some\nfull avg10=0 avg60=0 avg300=0 total=1\n",
        "some avg10=1.50 avg60=0.25 total=1\nfull avg10=0 avg60=0 avg300=0 total=1\n",
        "some avg10=1 avg60=0 avg300=0 total=-1\nfull avg10=0 avg60=0 avg300=0 total=1\n",
        "",
    ] {
        assert!(parse_pressure(text).is_err(), "{text:?}");
    }
}

/// /proc/vmstat of this VM (no swap: both 0), and the same with pages swapped.
#[test]
fn swapped_pages_are_read_from_vmstat() {
    let text = fixture!("vmstat_6.18");
    assert_eq!(parse_swap(text), Some(SwapCounters::default()));
    let swapped = text
        .replace("pswpin 0\n", "pswpin 1234\n")
        .replace("pswpout 0\n", "pswpout 56789\n");
    assert_eq!(
        parse_swap(&swapped),
        Some(SwapCounters {
            pages_in: 1234,
            pages_out: 56789
        })
    );
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("pswpout"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(parse_swap(&without), None);
    assert_eq!(parse_swap(""), None);
}

#[test]
fn snapshot_serde_round_trip() {
    let texts = Texts {
        diskstats: fixture!("diskstats_5.10"),
        stat: fixture!("stat_6.18"),
        meminfo: fixture!("meminfo_4.19"),
        pressure_io: Some(fixture!("pressure_io")),
        loadavg: fixture!("loadavg"),
        vmstat: Some(fixture!("vmstat_6.18")),
        pressure_cpu: Some("some avg10=0.00 avg60=0.00 avg300=0.00 total=77\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
    };
    let s = parse_snapshot(7, texts, |d| d.name == "sda").unwrap();
    assert_eq!(s.swap, Some(SwapCounters::default()));
    assert_eq!(s.disks.len(), 1);
    assert_eq!(s.cpus.len(), 2);
    assert_eq!(s.load.as_ref().map(|l| l.tasks), Some(87));
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<Snapshot>(&json).unwrap(), s);
}

#[test]
fn live_sample() {
    let s = Sampler::new(None).sample(1).unwrap();
    assert!(s.cpu.idle > 0);
    assert!(s.swap.is_some(), "/proc/vmstat has pswpin and pswpout");
    // One line per online CPU, as many as the kernel says are online.
    // SAFETY: sysconf only reads a system setting.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    assert_eq!(s.cpus.len() as i64, online as i64, "{:?}", s.cpus);
    assert!(s.load.as_ref().is_some_and(|l| l.tasks > 0), "{:?}", s.load);
    assert!(s
        .disks
        .iter()
        .all(|d| !d.name.is_empty() && !d.never_used()));
    let root = std::fs::metadata("/").unwrap();
    let dev = crate::backing_device(std::os::unix::fs::MetadataExt::dev(&root)).unwrap();
    let named = Sampler::new(Some(vec![dev.clone(), "no-such-disk".into()]))
        .sample(2)
        .unwrap();
    assert_eq!(named.disks.len(), 1);
    assert_eq!(named.disks[0].name, dev);
}
