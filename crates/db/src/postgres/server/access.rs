//! Who may connect to the private cluster: iogauge's own account and the server's, through
//! the unix socket only.
//!
//! - No TCP: `listen_addresses = ''`, and pg_hba.conf has no `host` line, so even a socket
//!   opened by hand would refuse every TCP connection.
//! - `local all all peer map=iogauge`: the kernel tells the server who is on the other end of
//!   the socket (SO_PEERCRED), and pg_ident.conf maps only the account running iogauge (root,
//!   or the user who runs the server as itself) and the server's own account to the server's
//!   superuser. No password exists, so none can leak into output, the results store or a
//!   live file `iogauge watch` reads.
//! - The socket directory is 0700 and owned by the server's account, the socket 0700: other
//!   accounts cannot even reach the socket.
//!
//! [`secure`] runs before every start, so a cluster made by an older iogauge (trust for
//! everyone, a world-reachable socket) is closed in place at its next start, data kept.

use crate::error::DbError;
use crate::postgres::server::postmaster::{user_name, Owner};
use iogauge_trust::{chown_dir, replace_file};
use std::path::Path;

/// The ident map's name in pg_hba.conf and pg_ident.conf.
const MAP: &str = "iogauge";

/// The settings that go with it, appended after the user's (see `settings::MANAGED`).
pub fn settings(run_dir: &Path, port: u16) -> Vec<(String, String)> {
    [
        ("listen_addresses", String::new()),
        ("unix_socket_directories", run_dir.display().to_string()),
        ("unix_socket_permissions", "0700".into()),
        ("port", port.to_string()),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect()
}

/// pg_hba.conf: peer authentication through the ident map, on the unix socket only.
pub fn hba() -> String {
    format!(
        "# Written by iogauge before every start: the unix socket only, and only the \
         accounts in pg_ident.conf.\n\
         local all all peer map={MAP}\n"
    )
}

/// pg_ident.conf: the account running iogauge and the server's account may connect as the
/// server's superuser (which initdb named after the server's account).
pub fn ident(client_os_user: &str, owner: &str) -> String {
    let mut s = format!("# Written by iogauge before every start.\n{MAP} {owner} {owner}\n");
    if client_os_user != owner {
        s.push_str(&format!("{MAP} {client_os_user} {owner}\n"));
    }
    s
}

/// Writes pg_hba.conf and pg_ident.conf (0600, the server's) into `data`, and closes the
/// socket directory `run` to everyone but the server's account.
pub fn secure(owner: &Owner, data: &Path, run: &Path) -> Result<(), DbError> {
    // SAFETY: geteuid(2) cannot fail.
    let me = user_name(unsafe { libc::geteuid() }).ok_or_else(|| {
        DbError::Usage(
            "this process's user has no name in the user database; PostgreSQL's peer \
             authentication needs one"
                .into(),
        )
    })?;
    // data/ is the server account's: a file there may have been swapped for a link to
    // one of root's, so each is replaced, never written through.
    for (name, text) in [
        ("pg_hba.conf", hba()),
        ("pg_ident.conf", ident(&me, &owner.name)),
    ] {
        replace_file(&data.join(name), text.as_bytes(), 0o600, owner.ids())?;
    }
    Ok(chown_dir(run, owner.ids(), Some(0o700))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_peer_on_the_socket() {
        let h = hba();
        let rules: Vec<&str> = h.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(rules, ["local all all peer map=iogauge"]);
        assert!(!h.contains("trust") && !h.contains("host"));
    }

    #[test]
    fn ident_maps_iogauge_and_the_server_account() {
        assert_eq!(
            ident("root", "postgres"),
            "# Written by iogauge before every start.\n\
             iogauge postgres postgres\niogauge root postgres\n"
        );
        assert_eq!(
            ident("alice", "alice"),
            "# Written by iogauge before every start.\niogauge alice alice\n"
        );
    }

    #[test]
    fn managed_settings_close_tcp() {
        let s = settings(Path::new("/x/run"), 5432);
        assert!(s.contains(&("listen_addresses".into(), String::new())));
        assert!(s.contains(&("unix_socket_permissions".into(), "0700".into())));
        for (n, _) in &s {
            assert!(
                crate::postgres::server::settings::MANAGED.contains(&n.as_str()),
                "{n}"
            );
        }
    }
}
