//! Which file is the results store, and whether a file is one, decided without SQLite: the
//! search order of `--store`, `$IOGAUGE_STORE` and the XDG data directory, and a reading of
//! the SQLite file header as plain bytes (SQLite itself can change a file it merely opens).

use super::schema::APPLICATION_ID;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where the store lives, and whether iogauge may create its directory (only its own default
/// location: a directory the user named but that is missing is more likely a typo).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Location {
    pub(super) path: PathBuf,
    pub(super) create_dir: bool,
}

impl Location {
    pub(super) fn find(
        flag: Option<&Path>,
        iogauge_store: Option<OsString>,
        xdg_data_home: Option<OsString>,
        home: Option<OsString>,
    ) -> Option<Location> {
        let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(p) = flag.map(Path::to_path_buf).or_else(|| set(iogauge_store)) {
            return Some(Location {
                path: p,
                create_dir: false,
            });
        }
        // The XDG Base Directory spec says to ignore a relative $XDG_DATA_HOME.
        let data = set(xdg_data_home)
            .filter(|p| p.is_absolute())
            .or_else(|| set(home).map(|h| h.join(".local/share")))?;
        Some(Location {
            path: data.join("iogauge/results.sqlite"),
            create_dir: true,
        })
    }

    /// [`Location::find`] with the process environment.
    pub(super) fn from_env(flag: Option<&Path>) -> Option<Location> {
        let env = std::env::var_os;
        Location::find(
            flag,
            env("IOGAUGE_STORE"),
            env("XDG_DATA_HOME"),
            env("HOME"),
        )
    }
}

/// What a file holds, judged from its header and schema.
#[derive(Debug, PartialEq)]
pub(super) enum Identity {
    Ours {
        version: i32,
    },
    /// A new or empty database: ours to claim.
    Empty,
    Foreign(String),
}

const ANOTHER_PROGRAMS: &str = "an SQLite database of another program";

impl Identity {
    /// A database with tables but no application_id (`app` 0), or another program's id.
    pub(super) fn foreign_app(app: i32) -> Identity {
        Identity::Foreign(match app {
            0 => ANOTHER_PROGRAMS.into(),
            _ => format!("{ANOTHER_PROGRAMS} (application_id {app:#010x})"),
        })
    }
}

/// How many bytes of a file [`identity_of_header`] looks at: the 100-byte database header and
/// the start of page 1's b-tree page header.
const HEADER_LEN: usize = 105;

/// Judges a file from its first [`HEADER_LEN`] bytes (fewer if it is shorter), without SQLite.
/// Offsets from "Database File Format" §1.3 and §1.6,
/// <https://www.sqlite.org/fileformat2.html#the_database_header>.
pub(super) fn identity_of_header(h: &[u8]) -> Identity {
    // SQLite treats an empty file as a new database.
    if h.is_empty() {
        return Identity::Empty;
    }
    if h.len() < HEADER_LEN || !h.starts_with(b"SQLite format 3\0") {
        return Identity::Foreign("not an SQLite database".into());
    }
    let be32 = |at: usize| i32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let (version, app) = (be32(60), be32(68));
    // A WAL database's newer pages may be in its log, but an older iogauge marked its store
    // before it switched to WAL, so the file's own header always carries the mark; a WAL
    // database without one is another program's.
    let wal = wal_header(h);
    // Page 1 is the schema table's root: a leaf table page (0x0d) with no cells means no tables.
    let no_tables = h[100] == 0x0d && h[103..105] == [0, 0];
    match app {
        APPLICATION_ID => Identity::Ours { version },
        0 if no_tables && !wal => Identity::Empty,
        other => Identity::foreign_app(other),
    }
}

/// Whether a header is a WAL database's (bytes 18 and 19, the file format write and read
/// versions, are 2): a store an older iogauge left in WAL mode.
pub(super) fn wal_header(h: &[u8]) -> bool {
    h.len() > 19 && (h[18] == 2 || h[19] == 2)
}

/// The first [`HEADER_LEN`] bytes of `path`, or `None` if there is no such file.
pub(super) fn read_header(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let file = match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        f => f?,
    };
    let mut h = Vec::with_capacity(HEADER_LEN);
    file.take(HEADER_LEN as u64).read_to_end(&mut h)?;
    Ok(Some(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_headers() {
        let db = |app: i32, version: i32, wal: bool, cells: u16| {
            let mut h = b"SQLite format 3\0".to_vec();
            h.resize(HEADER_LEN, 0);
            h[18..20].copy_from_slice(if wal { &[2, 2] } else { &[1, 1] });
            h[60..64].copy_from_slice(&version.to_be_bytes());
            h[68..72].copy_from_slice(&app.to_be_bytes());
            h[100] = 0x0d;
            h[103..105].copy_from_slice(&cells.to_be_bytes());
            h
        };
        let foreign = |s: &str| Identity::Foreign(s.into());
        let other = ANOTHER_PROGRAMS;
        let cases = [
            (vec![], Identity::Empty),
            (b"hello\n".to_vec(), foreign("not an SQLite database")),
            (
                b"SQLite format 3\0".to_vec(),
                foreign("not an SQLite database"),
            ),
            (db(0, 0, false, 0), Identity::Empty),
            (db(0, 0, false, 1), foreign(other)),
            (db(0, 0, true, 0), foreign(other)),
            (db(0, 7, false, 0), Identity::Empty),
            (
                db(APPLICATION_ID, 1, true, 3),
                Identity::Ours { version: 1 },
            ),
            (
                db(APPLICATION_ID, 2, false, 3),
                Identity::Ours { version: 2 },
            ),
            (
                db(0x1234, 0, false, 0),
                foreign(&format!("{other} (application_id 0x00001234)")),
            ),
        ];
        for (i, (header, want)) in cases.into_iter().enumerate() {
            assert_eq!(identity_of_header(&header), want, "case {i}");
        }
    }

    #[test]
    fn resolve_path_order() {
        const XDG: &str = "/xdg/iogauge/results.sqlite";
        const HOME: &str = "/home/u/.local/share/iogauge/results.sqlite";
        // (--store, $IOGAUGE_STORE, $XDG_DATA_HOME, $HOME) -> path
        #[rustfmt::skip]
        let cases = [
            ([Some("flag.sqlite"), Some("/env.sqlite"), Some("/xdg"), Some("/home/u")], Some("flag.sqlite")),
            ([None, Some("/env.sqlite"), Some("/xdg"), Some("/home/u")], Some("/env.sqlite")),
            ([None, Some(""), Some("/xdg"), Some("/home/u")], Some(XDG)),
            ([None, None, Some("/xdg"), Some("/home/u")], Some(XDG)),
            ([None, None, Some(""), Some("/home/u")], Some(HOME)),
            ([None, None, Some("rel/xdg"), Some("/home/u")], Some(HOME)),
            ([None, None, None, Some("/home/u")], Some(HOME)),
            ([None, None, None, Some("")], None),
            ([None, None, None, None], None),
        ];
        let os = |s: Option<&str>| s.map(OsString::from);
        for (i, ([flag, store, xdg, home], want)) in cases.into_iter().enumerate() {
            let got = Location::find(flag.map(Path::new), os(store), os(xdg), os(home));
            assert_eq!(got.map(|l| l.path), want.map(PathBuf::from), "case {i}");
        }
        let named = Location::find(None, os(Some("/env.sqlite")), None, None).unwrap();
        let default = Location::find(None, None, None, os(Some("/home/u"))).unwrap();
        assert_eq!((named.create_dir, default.create_dir), (false, true));
    }
}
