//! A database run's DB time by wait class, and its reads against the disks' in blocks.

use crate::fixture::{db, db_write_stages, evidence, find, maria, of};
use iogauge_model::db::report::{CacheCompare, WriteCompare};
use iogauge_model::finding::Layer;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn lock_waits_rank_above_the_storage() {
    let v = of(db(
        &[
            ("tuple", 3.0),
            ("transactionid", 2.0),
            ("CPU", 0.5),
            ("WALSync", 0.5),
        ],
        None,
    ));
    let f = &v[0];
    assert_eq!(
        (f.layer, f.rule.as_str()),
        (Layer::DbLocks, "db-locks"),
        "{v:#?}"
    );
    assert!(close(f.impact, 5.0 / 6.0), "{}", f.impact);
    assert_eq!(evidence(f, "AAS on tuple"), 3.0);
    assert!(
        v.iter().all(|f| f.layer != Layer::DbWal),
        "WAL at 8%: {v:#?}"
    );
}

#[test]
fn commits_waiting_for_the_wal() {
    let mut r = db(
        &[("WALSync", 0.6), ("WALWriteLock", 0.2), ("CPU", 0.2)],
        None,
    );
    r.summary.db.avg_log_sync_ms = Some(iogauge_model::units::Millis(2.5));
    let v = of(r);
    let f = &v[0];
    assert_eq!(f.layer, Layer::DbWal, "{v:#?}");
    assert!(close(f.impact, 0.8), "{}", f.impact);
    assert_eq!(evidence(f, "average WAL sync"), 2.5);
}

#[test]
fn backends_writing_their_own_buffers() {
    let mut r = db(&[("DataFileWrite", 1.0), ("DataFileRead", 1.0)], None);
    r.summary.db.buffers_written_s.backend = 900.0;
    let v = of(r);
    let w = find(&v, Layer::DbWrites);
    assert!(close(w.impact, 0.5));
    assert_eq!(evidence(w, "by backends"), 900.0);
    assert!(close(find(&v, Layer::DbIo).impact, 0.5));
}

/// Issue #27's second run: PostgreSQL read 146k blocks/s at 0.012 ms, the disk 21k reads/s
/// of 25 KiB. In bytes the disk read more than asked ("0% from the page cache"); in blocks
/// 86% of the reads never reached it.
#[test]
fn the_page_cache_is_judged_in_blocks_not_bytes() {
    let cache = CacheCompare {
        disks: vec!["vda".into()],
        db_physical_reads_s: 146_000.0,
        db_read_mb_s: 146_000.0 * 8.0 / 1024.0,
        device_reads_s: 21_000.0,
        device_read_mb_s: 21_000.0 * 25.0 / 1024.0,
        page_cache_pct: Some(0.0),
        note: None,
    };
    let mut r = db(&[("DataFileRead", 0.5), ("CPU", 3.5)], Some(cache));
    r.summary.db.avg_read_ms = Some(0.012);
    let v = of(r);
    let f = find(&v, Layer::PageCache);
    let absorbed = 1.0 - 21_000.0 / 146_000.0;
    assert!(close(evidence(f, "never reached a disk"), absorbed * 100.0));
    // DataFileRead holds 12.5% of DB time, above the floor (0.1).
    assert!(close(f.impact, absorbed * 0.125), "{}", f.impact);
}

/// A data directory on a filesystem whose devices were not found (btrfs before its members
/// were resolved): no device reads seen is no evidence of a cache, and no finding says so.
#[test]
fn no_page_cache_finding_without_the_data_disks() {
    let cache = CacheCompare {
        disks: vec![],
        db_physical_reads_s: 287.0,
        db_read_mb_s: 287.0 * 8.0 / 1024.0,
        device_reads_s: 0.0,
        device_read_mb_s: 0.0,
        page_cache_pct: Some(100.0),
        note: None,
    };
    let v = of(db(&[("DataFileRead", 3.0), ("CPU", 1.0)], Some(cache)));
    assert!(v.iter().all(|f| f.layer != Layer::PageCache), "{v:#?}");
}

/// Issue #27's first run: 19.8k blocks/s (155 MiB/s) asked, the disk read 813 MiB/s in
/// 33k reads of 25 KiB: read-ahead.
#[test]
fn read_ahead_in_a_db_run() {
    let cache = CacheCompare {
        disks: vec!["vda".into()],
        db_physical_reads_s: 19_800.0,
        db_read_mb_s: 155.0,
        device_reads_s: 33_000.0,
        device_read_mb_s: 813.0,
        page_cache_pct: Some(0.0),
        note: None,
    };
    let v = of(db(&[("DataFileRead", 3.0), ("CPU", 1.0)], Some(cache)));
    let f = find(&v, Layer::ReadAhead);
    assert!(
        close(f.impact, (1.0 - 155.0 / 813.0) * 0.75),
        "{}",
        f.impact
    );
    assert!((evidence(f, "disk read size") - 813.0 * 1024.0 / 33_000.0).abs() < 1e-9);
    assert_eq!(v[0].layer, Layer::DbIo, "{v:#?}");
    assert!(v.iter().all(|f| f.layer != Layer::PageCache), "{v:#?}");
}

#[test]
fn sessions_that_hardly_ran_say_nothing_but_no_limit() {
    let v = of(db(&[("tuple", 0.01)], None));
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].layer, Layer::None);
}

/// PostgreSQL on btrfs raid1c3 over three throttled loop devices (measured): 296 writes a
/// second, the members received 902 bios: three copies, with most of DB time writing.
#[test]
fn a_mirror_below_the_database_multiplies_its_writes() {
    let mut r = db(&[("DataFileWrite", 7.9), ("CPU", 0.1)], None);
    r.writes = Some(WriteCompare {
        disks: vec!["loop0".into(), "loop1".into(), "loop2".into()],
        db_writes_s: 296.0,
        device_writes_s: 902.0,
        per_db_write: Some(902.0 / 296.0),
    });
    let v = of(r.clone());
    let f = find(&v, Layer::Layout);
    assert!(
        f.title.contains("3.05 writes per PostgreSQL write"),
        "{}",
        f.title
    );
    let copies = 1.0 - 296.0 / 902.0;
    assert!(close(f.impact, copies * 7.9 / 8.0), "{}", f.impact);
    assert_eq!(
        v[0].layer,
        Layer::DbWrites,
        "the sessions' own waits rank first: {v:#?}"
    );
    // Readers only (measured: 2 writes a second, 2.24 device writes each): no time explained.
    let mut readers = db(&[("DataFileRead", 7.7), ("CPU", 0.05)], None);
    readers.writes = r.writes.clone();
    assert!(of(readers).iter().all(|f| f.layer != Layer::Layout));
    // Over one disk (ext4 on vda under a WAL-bound run, measured: 2.01 bios per write, all
    // the job's own): the filesystem's writes, no copies.
    let mut one = r.clone();
    one.writes.as_mut().unwrap().disks = vec!["vda".into()];
    one.writes.as_mut().unwrap().per_db_write = Some(2.01);
    assert!(of(one).iter().all(|f| f.layer != Layer::Layout));
    // One copy (raid0 measured 1.07): nothing to say.
    r.writes.as_mut().unwrap().per_db_write = Some(1.07);
    assert!(of(r).iter().all(|f| f.layer != Layer::Layout));
}

/// Every word a finding carries, to check which engine it speaks of.
fn said(v: &[iogauge_model::finding::Finding]) -> String {
    v.iter()
        .map(|f| {
            let ev: Vec<&str> = f.evidence.iter().map(|e| e.what.as_str()).collect();
            format!("{} {} {} {}", f.title, f.next, f.source, ev.join(" "))
        })
        .collect()
}

/// MariaDB's sessions as sampled in `diagnose::maria_read_bound` (10.11, 4 readers, a table
/// 8× the buffer pool): InnoDB's data-file reads are the storage's reads, in InnoDB's words.
#[test]
fn innodb_data_file_reads_are_the_storage_s_reads() {
    let mut r = maria(&[
        ("innodb_data_file read", 2.07),
        ("CPU", 0.53),
        ("handler fetch", 0.14),
        ("handler idle", 0.01),
    ]);
    r.summary.db.avg_read_ms = Some(0.106);
    let v = of(r);
    let f = &v[0];
    assert_eq!((f.layer, f.rule.as_str()), (Layer::DbIo, "db-io-reads"));
    assert!(close(f.impact, 2.07 / 2.75), "{}", f.impact);
    assert_eq!(evidence(f, "AAS on innodb_data_file read"), 2.07);
    assert_eq!(evidence(f, "Innodb_buffer_pool_reads"), 0.106);
    assert!(f.next.contains("innodb_buffer_pool_size"), "{}", f.next);
    let words = said(&v);
    for pg in [
        "PostgreSQL",
        "shared_buffers",
        "pg_stat",
        "blks_read",
        "WAL",
    ] {
        assert!(!words.contains(pg), "{pg} in {words}");
    }
    assert!(words.contains("performance_schema"), "{words}");
}

/// 4 writers of one row each on 10.11 with innodb_flush_log_at_trx_commit=1 (measured AAS):
/// the Commit stage is the redo log's, named so, with the setting as evidence.
#[test]
fn innodb_commits_wait_for_the_redo_log() {
    let mut r = maria(&[
        ("Commit", 1.45),
        ("CPU", 1.37),
        ("innodb_data_file read", 0.67),
        ("handler update", 0.12),
        ("handler fetch", 0.07),
    ]);
    r.summary.db.avg_log_sync_ms = Some(iogauge_model::units::Millis(0.143));
    r.summary.db.log_syncs_s = iogauge_model::units::Iops(3189.0);
    let v = of(r);
    let f = find(&v, Layer::DbWal);
    assert!(close(f.impact, 1.45 / 3.68), "{}", f.impact);
    assert!(f.title.contains("redo log"), "{}", f.title);
    assert_eq!(evidence(f, "average redo sync"), 0.143);
    assert_eq!(evidence(f, "innodb_flush_log_at_trx_commit"), 1.0);
    assert!(
        f.next.contains("innodb_flush_log_at_trx_commit=2"),
        "{}",
        f.next
    );
    assert!(!said(&v).contains("WAL"), "{}", said(&v));
    // 18% in data-file reads: no reads finding; the CPU at 37% is no CPU finding.
    assert!(v
        .iter()
        .all(|f| f.layer != Layer::DbIo && f.layer != Layer::Cpu));
}

#[test]
fn innodb_row_locks_and_metadata_locks_are_locks() {
    let v = of(maria(&[
        ("innodb_row_lock wait", 2.0),
        ("Waiting for table metadata lock", 1.0),
        ("CPU", 1.0),
    ]));
    let f = &v[0];
    assert_eq!(f.layer, Layer::DbLocks, "{v:#?}");
    assert!(close(f.impact, 0.75), "{}", f.impact);
    assert!(f.next.contains("metadata lock"), "{}", f.next);
}

#[test]
fn innodb_sessions_writing_pages_name_the_page_cleaner() {
    let mut r = maria(&[("innodb_data_file write", 1.0), ("CPU", 1.0)]);
    r.summary.db.buffers_written_s.bgwriter = 700.0;
    let v = of(r);
    let f = find(&v, Layer::DbWrites);
    assert!(close(f.impact, 0.5));
    assert_eq!(evidence(f, "Innodb_buffer_pool_pages_flushed"), 700.0);
    assert!(f.next.contains("page cleaner"), "{}", f.next);
    assert!(!said(&v).contains("PostgreSQL"), "{}", said(&v));
}

/// Measured beside `diagnose::maria_read_bound`: 23 writes/s (not the sessions') queued
/// 498 µs for 909 µs in the device while the sessions spent 75% of DB time reading. No
/// session waited on those writes: no queue finding. The same queue under commits that
/// wait for the log is one, weighted by their share of DB time.
#[test]
fn a_db_run_s_write_queue_counts_as_far_as_its_sessions_waited_on_writes() {
    let mut readers = maria(&[("innodb_data_file read", 2.07), ("CPU", 0.68)]);
    db_write_stages(&mut readers, "vda", 23.5, 498.0, 909.0);
    let v = of(readers);
    assert!(v.iter().all(|f| f.layer != Layer::OsQueue), "{v:#?}");
    let mut writers = maria(&[("Commit", 3.0), ("CPU", 1.0)]);
    db_write_stages(&mut writers, "vda", 23.5, 498.0, 909.0);
    let v = of(writers);
    let q = find(&v, Layer::OsQueue);
    assert!(
        close(q.impact, 498.0 / (498.0 + 909.0) * 0.75),
        "{}",
        q.impact
    );
}
