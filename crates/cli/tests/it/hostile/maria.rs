//! The private MariaDB's own under attack: other servers' temporary files are left alone.
//! What it shares with the private PostgreSQL (other users, a killed run, Ctrl-C in setup,
//! DSN passwords) is `hostile/db.rs`'s. Debian's MariaDB; as root.

use crate::common::*;

/// A starting MariaDB deletes every `#sql*` file in its tmpdir (temporary tables a crash
/// left). With /tmp as its tmpdir a private server deleted other servers' temporary tables,
/// and two ranks' servers bootstrapping at once each other's (`mariadb-install-db` failed with
/// "Can't find file: '/tmp/#sql-temptable-…'" in 2 of 6 tries): its tmpdir is its own.
#[test]
fn a_private_mariadb_leaves_other_servers_temporary_files_alone() {
    let (_g, w) = db_test(Engine::Mariadb, busy);
    let other = std::env::temp_dir().join(format!(
        "#sql-temptable-iogauge-test-{}.MAI",
        std::process::id()
    ));
    std::fs::write(&other, "another server's temporary table").unwrap();
    let db = Db::new(&w, Engine::Mariadb);
    db.setup_small();
    let run = db.run_in_background("3s");
    let (ok, tmpdir) = maria_client(None, "root", &db.socket(), "SELECT @@tmpdir");
    let out = finish(run, 60);
    let kept = other.exists();
    let _ = std::fs::remove_file(&other);
    assert!(
        kept,
        "setting up and starting the server deleted {}",
        other.display()
    );
    assert!(
        ok && std::path::Path::new(tmpdir.trim()).starts_with(&db.dir),
        "the server's tmpdir is not in its directory: {tmpdir}"
    );
    assert_success(&out);
    db.drop_it();
}
