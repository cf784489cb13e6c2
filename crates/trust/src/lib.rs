//! The trust rule: which paths iogauge may act on when it runs as root, and the file
//! operations that keep to it. One implementation for every place root acts on a path another
//! user could have prepared: the database servers' directories (PostgreSQL's and MariaDB's),
//! the server binaries iogauge runs, campaign files and their hooks, and the files beside the
//! results store (`live/`, campaign locks).
//!
//! The rule is OpenSSH's StrictModes:
//!
//! - a path is owned by root or the user running iogauge (a database server's account may own
//!   what the server works in), and no group or other user may write to it;
//! - so is each directory above it, except that one with the sticky bit (`/tmp`) may be
//!   writable by others: they cannot rename or remove what is not theirs there;
//! - a path is judged where it really is: [`resolve`] follows the symlinks above it once,
//!   and the resolved path is used from then on; a symlink where iogauge keeps a directory
//!   or a file is refused, never followed;
//! - a file iogauge reads is a regular file read with a bound on its size ([`read_bounded`]):
//!   never a FIFO that blocks, a device that never ends, or a link to either.
//!
//! Writes never go through a link either: [`replace_file`] renames a new file over the old
//! one, [`create_in`] opens relative to a directory already checked, with `O_NOFOLLOW`, and
//! [`open_beside`] so too a file kept open in a directory others may write to if sticky.

mod error;
mod files;
mod path;
mod rule;
mod users;

pub use error::TrustError;
pub use files::{
    chown_dir, create_in, open_beside, open_dir, read_bounded, replace_file, trusted_dir,
};
pub use path::resolve;
pub use rule::{Kind, Trust};
pub use users::{name, user_name};

#[cfg(test)]
mod tests {
    /// The book's safety chapter states this rule where users look for it (issues #44, #46;
    /// the README links to it): its clauses and the places it applies, as this crate's
    /// documentation and its callers have them.
    #[test]
    fn the_safety_chapter_states_the_rule_this_crate_keeps() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/src/safety.md");
        let chapter = std::fs::read_to_string(path).unwrap();
        let at = chapter
            .find("**The trust rule**")
            .expect("the safety chapter states the rule");
        let end = chapter[at..]
            .find("\n## ")
            .map_or(chapter.len(), |e| at + e);
        let section = &chapter[at..end];
        for said in [
            "`crates/trust`",
            "owned by root or the user running iogauge",
            "no group or other user may write to it",
            "every directory above it, except a sticky one",
            "a symlink where iogauge\nkeeps a file or directory is refused, never followed",
            "read with a bound",
            "PostgreSQL's private clusters",
            "MariaDB's private servers",
            "Campaign files",
            "Files beside the results store",
            "`secure_file_priv`",
            "in use by another iogauge process",
        ] {
            assert!(
                section.contains(said),
                "the safety chapter's trust rule lacks {said:?}"
            );
        }
    }
}
