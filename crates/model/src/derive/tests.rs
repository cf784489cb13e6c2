//! Derived figures on hand-computed intervals: iostat -x formulas, CPU percentages, PSI,
//! counter wrap-around and devices appearing or vanishing.

use super::*;
use crate::system::{CpuLine, IoPressure, LoadAvg, MemInfo, SwapCounters};

mod span;

/// A 5.5+ device with round counters.
fn dev(name: &str) -> DiskCounters {
    DiskCounters {
        major: 8,
        minor: 0,
        name: name.into(),
        reads: 1000,
        reads_merged: 10,
        sectors_read: 16_000,
        time_reading_ms: 2000,
        writes: 500,
        writes_merged: 5,
        sectors_written: 8000,
        time_writing_ms: 1500,
        in_progress: 0,
        time_in_progress_ms: 10_000,
        weighted_time_in_progress_ms: 30_000,
        discards: Some(0),
        discards_merged: Some(0),
        sectors_discarded: Some(0),
        time_discarding_ms: Some(0),
        flushes: Some(10),
        time_flushing_ms: Some(5),
    }
}

fn cpu() -> CpuCounters {
    CpuCounters {
        user: 100,
        nice: 10,
        system: 50,
        idle: 700,
        iowait: 100,
        irq: 5,
        softirq: 15,
        steal: 20,
    }
}

fn snap(at_ns: u64, disks: Vec<DiskCounters>) -> Snapshot {
    Snapshot {
        at_ns,
        disks,
        cpu: cpu(),
        mem: MemInfo::default(),
        psi: None,
        cpus: Vec::new(),
        load: None,
        layers: Vec::new(),
        ring: None,
        others: Vec::new(),
        swap: None,
        job: None,
        psi_cpu: None,
    }
}

const SEC: u64 = 1_000_000_000;

#[test]
fn swapped_pages_per_second() {
    let (mut a, mut b) = (snap(0, vec![]), snap(2 * SEC, vec![]));
    a.swap = Some(SwapCounters {
        pages_in: 100,
        pages_out: 1000,
    });
    b.swap = Some(SwapCounters {
        pages_in: 300,
        pages_out: 1000,
    });
    let d = derive(&a, &b);
    assert_eq!(
        d.swap,
        Some(SwapRates {
            in_s: 100.0,
            out_s: 0.0
        })
    );
    // Two parts as one interval: weighted by their seconds.
    let later = Derived {
        swap: Some(SwapRates {
            in_s: 40.0,
            out_s: 4.0,
        }),
        ..Derived::default()
    };
    let both = Derived::combine(&[(1.0, &d), (3.0, &later)]).unwrap();
    assert_eq!(
        both.swap,
        Some(SwapRates {
            in_s: 55.0,
            out_s: 3.0
        })
    );
    b.swap = None;
    assert_eq!(derive(&a, &b).swap, None);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn assert_rates(got: &DiskRates, want: &DiskRates, case: &str) {
    let pairs = [
        ("r_s", got.r_s, want.r_s),
        ("w_s", got.w_s, want.w_s),
        ("rMB_s", got.r_mb_s, want.r_mb_s),
        ("wMB_s", got.w_mb_s, want.w_mb_s),
        ("rrqm_s", got.rrqm_s, want.rrqm_s),
        ("wrqm_s", got.wrqm_s, want.wrqm_s),
        ("rrqm_pct", got.rrqm_pct, want.rrqm_pct),
        ("wrqm_pct", got.wrqm_pct, want.wrqm_pct),
        ("rareq_sz", got.rareq_sz, want.rareq_sz),
        ("wareq_sz", got.wareq_sz, want.wareq_sz),
        ("aqu_sz", got.aqu_sz, want.aqu_sz),
        ("r_await", got.r_await, want.r_await),
        ("w_await", got.w_await, want.w_await),
        ("util", got.util, want.util),
    ];
    for (name, g, w) in pairs {
        assert!(close(g, w), "{case}: {name} = {g}, want {w}");
    }
    assert_eq!(got.d_s, want.d_s, "{case}: d_s");
    assert_eq!(got.f_s, want.f_s, "{case}: f_s");
}

#[test]
fn iostat_formulas_table() {
    // (case, Δt s, change to the later counters, expected figures)
    type Change = fn(&mut DiskCounters);
    let busy: Change = |c| {
        c.reads += 400; // 200/s
        c.reads_merged += 100; // 50/s, 20% of the 500 reads asked for
        c.sectors_read += 6400; // 3.125 MiB → 1.5625 MiB/s, 8 KiB per read
        c.time_reading_ms += 800; // 2 ms per read
        c.writes += 200;
        c.sectors_written += 3200;
        c.time_writing_ms += 1000; // 5 ms per write
        c.time_in_progress_ms += 1500; // 75% of 2000 ms
        c.weighted_time_in_progress_ms += 6000; // 3 in queue on average
        *c.flushes.as_mut().unwrap() += 20;
    };
    let saturated: Change = |c| {
        c.writes += 1000;
        c.sectors_written += 2048 * 1000; // 1 MiB writes
        c.time_writing_ms += 64_000;
        c.time_in_progress_ms += 1010; // a little over 1 s: capped at 100%
        c.weighted_time_in_progress_ms += 32_000;
    };
    let idle: Change = |_| {};
    let zero = DiskRates {
        r_s: 0.0,
        w_s: 0.0,
        r_mb_s: 0.0,
        w_mb_s: 0.0,
        rrqm_s: 0.0,
        wrqm_s: 0.0,
        rrqm_pct: 0.0,
        wrqm_pct: 0.0,
        rareq_sz: 0.0,
        wareq_sz: 0.0,
        aqu_sz: 0.0,
        r_await: 0.0,
        w_await: 0.0,
        util: 0.0,
        d_s: Some(0.0),
        f_s: Some(0.0),
    };
    let table: [(&str, f64, Change, DiskRates); 3] = [
        (
            "busy",
            2.0,
            busy,
            DiskRates {
                r_s: 200.0,
                w_s: 100.0,
                r_mb_s: 1.5625,
                w_mb_s: 0.78125,
                rrqm_s: 50.0,
                wrqm_s: 0.0,
                rrqm_pct: 20.0,
                wrqm_pct: 0.0,
                rareq_sz: 8.0,
                wareq_sz: 8.0,
                aqu_sz: 3.0,
                r_await: 2.0,
                w_await: 5.0,
                util: 75.0,
                d_s: Some(0.0),
                f_s: Some(10.0),
            },
        ),
        (
            "saturated",
            1.0,
            saturated,
            DiskRates {
                w_s: 1000.0,
                w_mb_s: 1000.0,
                wareq_sz: 1024.0,
                aqu_sz: 32.0,
                w_await: 64.0,
                util: 100.0,
                ..zero.clone()
            },
        ),
        ("idle: no I/O gives 0, not NaN", 1.0, idle, zero.clone()),
    ];
    for (case, secs, change, want) in table {
        let prev = dev("sda");
        let mut cur = prev.clone();
        change(&mut cur);
        let d = derive(
            &snap(SEC, vec![prev]),
            &snap(SEC + (secs * 1e9) as u64, vec![cur]),
        );
        assert_rates(&d.disks["sda"], &want, case);
    }
}

#[test]
fn optional_columns_need_both_snapshots() {
    let mut old = dev("sda");
    (old.flushes, old.time_flushing_ms) = (None, None);
    let d = DiskRates::between(&old, &dev("sda"), 1.0);
    assert_eq!((d.d_s, d.f_s), (Some(0.0), None));
    let mut older = old.clone();
    older.discards = None;
    assert_eq!(DiskRates::between(&older, &old, 1.0).d_s, None);
}

#[test]
fn zero_interval_gives_zero_rates() {
    let mut cur = dev("sda");
    cur.reads += 10;
    cur.time_in_progress_ms += 10;
    let d = derive(&snap(SEC, vec![dev("sda")]), &snap(SEC, vec![cur]));
    assert_eq!(d.disks["sda"].r_s, 0.0);
    assert_eq!(d.disks["sda"].util, 0.0);
    assert!(close(d.disks["sda"].r_await, 0.0));
}

#[test]
fn counter_delta_table() {
    let table = [
        // (prev, cur, delta)
        (5, 5, 0),
        (5, 9, 4),
        // A 32-bit ms counter (diskstats' %u time columns) wrapping.
        (4_294_967_000, 200, 496),
        (u64::from(u32::MAX), 0, 1),
        // A 64-bit counter going back: a reset, counted from zero.
        (5_000_000_000, 100, 100),
    ];
    for (prev, cur, want) in table {
        assert_eq!(counter_delta(prev, cur), want, "{prev} → {cur}");
    }
}

#[test]
fn wrapped_time_counter_gives_right_await() {
    let mut prev = dev("sda");
    prev.time_reading_ms = u64::from(u32::MAX) - 99; // 100 ms before the wrap
    let mut cur = prev.clone();
    cur.reads += 50;
    cur.time_reading_ms = 100; // 200 ms later
    let d = derive(&snap(0, vec![prev]), &snap(SEC, vec![cur]));
    assert!(close(d.disks["sda"].r_await, 4.0), "{:?}", d.disks["sda"]);
}

#[test]
fn devices_appearing_or_vanishing_are_left_out() {
    let prev = snap(0, vec![dev("vda"), dev("sdb")]);
    let cur = snap(SEC, vec![dev("sdc"), dev("vda")]);
    let d = derive(&prev, &cur);
    assert_eq!(d.disks.keys().collect::<Vec<_>>(), ["vda"]);
    assert!(derive(&snap(0, vec![]), &cur).disks.is_empty());
}

#[test]
fn cpu_percentages() {
    let mut later = cpu();
    later.user += 90;
    later.nice += 10;
    later.system += 40;
    later.irq += 5;
    later.softirq += 15;
    later.idle += 600;
    later.iowait += 200;
    later.steal += 40;
    // 1000 ticks in all.
    let r = CpuRates::between(&cpu(), &later);
    let want = CpuRates {
        user: 10.0,
        system: 6.0,
        iowait: 20.0,
        steal: 4.0,
        idle: 60.0,
    };
    for (g, w) in [
        (r.user, want.user),
        (r.system, want.system),
        (r.iowait, want.iowait),
        (r.steal, want.steal),
        (r.idle, want.idle),
    ] {
        assert!(close(g, w), "{r:?}");
    }
    assert_eq!(CpuRates::between(&cpu(), &cpu()), CpuRates::default());
}

#[test]
fn psi_and_memory() {
    let psi = |total: u64| IoPressure {
        some_avg10: 0.0,
        some_total_us: total,
        full_avg10: 0.0,
        full_total_us: 0,
    };
    let mut prev = snap(0, vec![]);
    let mut cur = snap(2 * SEC, vec![]);
    cur.mem.dirty = 4096;
    assert_eq!(derive(&prev, &cur).psi_some_pct, None);
    prev.psi = Some(psi(1_000_000));
    cur.psi = Some(psi(1_250_000));
    let d = derive(&prev, &cur);
    assert!(close(d.psi_some_pct.unwrap(), 12.5), "{d:?}");
    assert_eq!(d.mem.dirty, 4096);
}

#[test]
fn json_names_are_iostats() {
    let d = DiskRates::between(&dev("sda"), &dev("sda"), 1.0);
    let v = serde_json::to_value(&d).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want = [
        "r_s", "w_s", "rMB_s", "wMB_s", "rrqm_s", "wrqm_s", "rrqm_pct", "wrqm_pct", "rareq_sz",
        "wareq_sz", "aqu_sz", "r_await", "w_await", "util", "d_s", "f_s",
    ];
    want.sort_unstable();
    assert_eq!(keys, want);
}

/// Two CPUs, one saturated in system time, one idle, and one brought online only in the
/// later snapshot (left out: it has no earlier counters).
#[test]
fn per_cpu_percentages() {
    let line = |cpu: u32, counters: CpuCounters| CpuLine { cpu, counters };
    let mut prev = snap(0, vec![]);
    let mut cur = snap(SEC, vec![]);
    assert!(per_cpu(&prev, &cur).is_empty(), "no per-CPU lines: none");
    prev.cpus = vec![line(0, cpu()), line(2, cpu())];
    let mut busy = cpu();
    busy.system += 100;
    let mut idle = cpu();
    idle.idle += 100;
    cur.cpus = vec![line(2, idle), line(0, busy), line(5, cpu())];
    let r = per_cpu(&prev, &cur);
    assert_eq!(r.iter().map(|x| x.cpu).collect::<Vec<_>>(), [0, 2]);
    assert!(
        close(r[0].rates.system, 100.0) && close(r[0].rates.idle, 0.0),
        "{r:?}"
    );
    assert!(
        close(r[1].rates.idle, 100.0) && close(r[1].rates.system, 0.0),
        "{r:?}"
    );
    assert!(per_cpu(&snap(0, vec![]), &cur).is_empty());
}

#[test]
fn load_average_is_the_later_snapshots() {
    let prev = snap(0, vec![]);
    let mut cur = snap(SEC, vec![]);
    assert_eq!(derive(&prev, &cur).load, None);
    let load = LoadAvg {
        one: 2.5,
        five: 1.25,
        fifteen: 0.5,
        runnable: 3,
        tasks: 120,
    };
    cur.load = Some(load.clone());
    assert_eq!(derive(&prev, &cur).load, Some(load));
    let v = serde_json::to_value(derive(&prev, &snap(SEC, vec![]))).unwrap();
    assert!(v.get("load").is_none(), "no load, no key: {v}");
}

/// Per-CPU lines are stored as compact arrays; a snapshot stored before iogauge kept them
/// (or the load average) still reads, with none.
#[test]
fn per_cpu_lines_are_compact_and_old_snapshots_read() {
    let mut s = snap(7, vec![]);
    s.cpus = vec![CpuLine {
        cpu: 3,
        counters: cpu(),
    }];
    s.load = Some(LoadAvg::default());
    let json = serde_json::to_string(&s).unwrap();
    assert!(
        json.contains(r#""cpus":[[3,100,10,50,700,100,5,15,20]]"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Snapshot>(&json).unwrap(), s);
    let old = r#"{"at_ns":1,"disks":[],"cpu":{"user":1,"nice":0,"system":0,"idle":0,"iowait":0,"irq":0,"softirq":0,"steal":0},"mem":{"cached":0,"buffers":0,"dirty":0,"writeback":0},"psi":null}"#;
    let o: Snapshot = serde_json::from_str(old).unwrap();
    assert!(o.cpus.is_empty() && o.load.is_none());
    let bad = "[[4294967296,0,0,0,0,0,0,0,0]]";
    assert!(serde_json::from_str::<Vec<CpuLine>>(bad).is_err());
}

/// Two consecutive intervals combined give what the snapshots at their outer ends give.
#[test]
fn combining_intervals_equals_deriving_the_whole() {
    let a = dev("sda");
    let mut b = a.clone();
    b.reads += 300;
    b.reads_merged += 30;
    b.sectors_read += 4800;
    b.time_reading_ms += 900;
    b.writes += 10;
    b.sectors_written += 80;
    b.time_writing_ms += 50;
    b.time_in_progress_ms += 400;
    b.weighted_time_in_progress_ms += 1200;
    b.flushes = Some(14);
    let mut c = b.clone();
    c.reads += 900;
    c.reads_merged += 1;
    c.sectors_read += 7200;
    c.time_reading_ms += 450;
    c.writes += 700;
    c.writes_merged += 90;
    c.sectors_written += 11_200;
    c.time_writing_ms += 2100;
    c.time_in_progress_ms += 1900;
    c.weighted_time_in_progress_ms += 4000;
    c.flushes = Some(40);
    let (mut cb, mut cc) = (cpu(), cpu());
    cb.user += 30;
    cb.idle += 70;
    cc.user = cb.user + 10;
    cc.system += 90;
    cc.iowait += 50;
    // Ticks run at a constant rate: 100 in the first second, 200 in the next two.
    cc.idle = cb.idle + 50;
    let s0 = snap(0, vec![a]);
    let mut s1 = snap(1_000_000_000, vec![b]);
    s1.cpu = cb;
    let mut s2 = snap(3_000_000_000, vec![c]);
    s2.cpu = cc;
    let (p, q) = (derive(&s0, &s1), derive(&s1, &s2));
    let got = Derived::combine(&[(1.0, &p), (2.0, &q)]).unwrap();
    let want = derive(&s0, &s2);
    assert_rates(&got.disks["sda"], &want.disks["sda"], "combined");
    for (g, w) in [
        (got.cpu.user, want.cpu.user),
        (got.cpu.system, want.cpu.system),
        (got.cpu.iowait, want.cpu.iowait),
        (got.cpu.idle, want.cpu.idle),
    ] {
        assert!(close(g, w), "cpu {g} vs {w}");
    }
    assert!(Derived::combine(&[]).is_none());
}

#[test]
fn the_job_s_cpu_figures_and_cpu_pressure_per_second() {
    use crate::sched::{CpuPressure, JobCpu, JobCpuRates};
    let (mut a, mut b) = (snap(0, vec![]), snap(2 * SEC, vec![]));
    a.job = Some(JobCpu {
        cpu_ns: SEC,
        wait_ns: 0,
        threads: 3,
    });
    b.job = Some(JobCpu {
        cpu_ns: 2 * SEC,
        wait_ns: 6 * SEC,
        threads: 3,
    });
    a.psi_cpu = Some(CpuPressure { some_total_us: 0 });
    b.psi_cpu = Some(CpuPressure {
        some_total_us: 500_000,
    });
    let d = derive(&a, &b);
    let want = JobCpuRates {
        cpu_s: 0.5,
        wait_s: 3.0,
        threads: 3,
    };
    assert_eq!(d.job, Some(want));
    assert_eq!(d.psi_cpu_some_pct, Some(25.0));
    // Two parts as one: weighted by their seconds; a part without them: not measured.
    let later = Derived {
        job: Some(JobCpuRates {
            cpu_s: 1.0,
            wait_s: 0.0,
            threads: 1,
        }),
        psi_cpu_some_pct: Some(5.0),
        ..Derived::default()
    };
    let both = Derived::combine(&[(1.0, &d), (3.0, &later)]).unwrap();
    assert_eq!(
        both.job,
        Some(JobCpuRates {
            cpu_s: 0.875,
            wait_s: 0.75,
            threads: 1
        })
    );
    assert_eq!(both.psi_cpu_some_pct, Some(10.0));
    assert_eq!(
        Derived::combine(&[(1.0, &d), (1.0, &Derived::default())])
            .unwrap()
            .job,
        None
    );
    b.job = None;
    assert_eq!(derive(&a, &b).job, None);
    // A document stored before iogauge read them loads, with both absent.
    let old: Snapshot = serde_json::from_str(
        r#"{"at_ns":1,"disks":[],"cpu":{"user":0,"nice":0,"system":0,"idle":0,"iowait":0,"irq":0,"softirq":0,"steal":0},"mem":{"cached":0,"buffers":0,"dirty":0,"writeback":0},"psi":null}"#,
    )
    .unwrap();
    assert_eq!((old.job, old.psi_cpu), (None, None));
}

/// A run of 20 ms between snapshots 40 ms apart is nearest the first one at both ends; it is
/// measured between the two (a cached `--ios` run had no device figures at all).
#[test]
fn a_window_shorter_than_the_snapshots_gap_spans_two_of_them() {
    let mut later = dev("vda");
    later.reads += 40;
    let samples = [snap(0, vec![dev("vda")]), snap(40_000_000, vec![later])];
    use iogauge_stats::Nanos;
    let d = crate::hardware::system_between(&samples, Nanos(100_000), Nanos(20_100_000))
        .expect("two snapshots, one window");
    assert_eq!(d.disks["vda"].r_s, 1000.0);
    let one = crate::hardware::system_between(&samples[..1], Nanos(0), Nanos(1));
    assert!(one.is_none(), "one snapshot measures nothing");
}
