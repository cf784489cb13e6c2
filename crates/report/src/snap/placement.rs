//! The placement table of `iogauge compare CAL DB`: the captured calibration beside the
//! captured db run (both on vda); with other disks and `--disks`; and with a db run whose
//! disks are unknown.

use super::{calibration, db_run};
use crate::placement::placement;
use crate::text::placement::placement_text;
use insta::assert_snapshot;

#[test]
fn calibration_beside_db_run() {
    let (cal, db) = (calibration(), db_run());
    assert_snapshot!(
        "same_disks",
        placement_text(&placement((3, &cal), (4, &db)))
    );
}

/// The data on two other disks counted with --disks 2, then a server whose disks are
/// unknown (by DSN): the notes say so and the devices' rows are empty.
#[test]
fn other_disks_and_none() {
    let (mut cal, mut db) = (calibration(), db_run());
    cal.meta.label = Some("orion".into());
    db.meta.label = Some("slob".into());
    db.cache.as_mut().unwrap().disks = vec!["sdb".into(), "sdc".into()];
    db.num_disks = Some(2);
    let other = placement_text(&placement((3, &cal), (4, &db)));
    db.cache = None;
    db.num_disks = None;
    let unknown = placement_text(&placement((3, &cal), (4, &db)));
    assert_snapshot!("other_disks", format!("{other}---\n{unknown}"));
}

/// A MariaDB run beside the calibration: its rows and legend name MariaDB and InnoDB's
/// figures, not PostgreSQL's.
#[test]
fn a_mariadb_run_is_named_as_such() {
    let (cal, mut db) = (calibration(), db_run());
    db.server.engine = iogauge_model::db::engine::Engine::Mariadb;
    let text = placement_text(&placement((3, &cal), (4, &db)));
    assert!(
        text.contains("MariaDB reads/s: Innodb_data_reads"),
        "{text}"
    );
    assert!(text.contains("InnoDB's mean data file read time"), "{text}");
    assert!(!text.contains("PostgreSQL"), "{text}");
}
