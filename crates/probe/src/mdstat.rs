//! Software RAID (md) arrays as /proc/mdstat shows them, so that preflight can warn before a
//! calibration measures a degraded mirror (one disk) or competes with a resync.
//!
//! The format is whatever `md_seq_show()` and `status_resync()` in drivers/md/md.c print:
//!
//! ```text
//! Personalities : [raid1] [raid6] [raid5] [raid4]
//! md0 : active raid1 sdb1[1](F) sda1[0]
//!       1046528 blocks super 1.2 [2/1] [U_]
//!       [=>...................]  recovery =  8.1% (85120/1046528) finish=0.5min speed=28373K/sec
//!       bitmap: 0/1 pages [0KB], 65536KB chunk
//!
//! unused devices: <none>
//! ```
//!
//! A line the parser does not recognise is an error, never skipped: a new kernel format
//! should be noticed, not misread as "healthy".

use iogauge_model::preflight::{MdArray, MdMember, MdSync};
use std::io;

/// Where the kernel publishes md state.
pub const MDSTAT_PATH: &str = "/proc/mdstat";

/// Sync actions `status_resync()` can name.
const SYNC_ACTIONS: [&str; 5] = ["resync", "recovery", "reshape", "check", "repair"];

#[derive(Debug, thiserror::Error)]
pub enum MdstatError {
    #[error("cannot read {MDSTAT_PATH}: {0}")]
    Io(#[from] io::Error),
    #[error("{MDSTAT_PATH} line {line}: {reason}: {text:?}")]
    Parse {
        /// 1-based.
        line: usize,
        text: String,
        reason: &'static str,
    },
}

/// Reads and parses /proc/mdstat. A kernel without the md driver has no such file: no arrays.
pub fn read_mdstat() -> Result<Vec<MdArray>, MdstatError> {
    match std::fs::read_to_string(MDSTAT_PATH) {
        Ok(text) => parse_mdstat(&text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Parses the text of /proc/mdstat.
pub fn parse_mdstat(text: &str) -> Result<Vec<MdArray>, MdstatError> {
    let mut arrays: Vec<MdArray> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let err = |reason| MdstatError::Parse {
            line: i + 1,
            text: raw.to_string(),
            reason,
        };
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            let array = arrays
                .last_mut()
                .ok_or_else(|| err("indented line before any array"))?;
            parse_detail(line, array).map_err(err)?;
        } else if line.starts_with("Personalities :")
            || line.starts_with("unused devices:")
            || line.starts_with("read_ahead")
        {
            // Header, footer, and the read-ahead line of 2.4/2.6 kernels: nothing per array.
        } else {
            arrays.push(parse_header(line).map_err(err)?);
        }
    }
    for a in &mut arrays {
        a.degraded = matches!((a.raid_disks, a.active_disks), (Some(n), Some(m)) if m < n)
            || a.status.as_deref().is_some_and(|s| s.contains('_'))
            || a.members.iter().any(|m| m.faulty);
    }
    Ok(arrays)
}

/// `md0 : active (auto-read-only) raid1 sdb1[1](W) sda1[0]`.
fn parse_header(line: &str) -> Result<MdArray, &'static str> {
    let (name, rest) = line
        .split_once(" : ")
        .ok_or("expected `mdN : active|inactive ...`")?;
    let mut tokens = rest.split_whitespace().peekable();
    let active = match tokens.next() {
        Some("active") => true,
        Some("inactive") => false,
        _ => return Err("expected `active` or `inactive` after the array name"),
    };
    // `(read-only)` or `(auto-read-only)` follows `active`.
    tokens.next_if(|t| t.starts_with('(') && t.ends_with(')'));
    let level = tokens.next_if(|t| !t.contains('[')).map(str::to_string);
    let members = tokens.map(parse_member).collect::<Result<_, _>>()?;
    Ok(MdArray {
        name: name.trim().to_string(),
        active,
        level,
        members,
        raid_disks: None,
        active_disks: None,
        status: None,
        degraded: false,
        sync: None,
    })
}

/// `sdb1[1]`, `sdb1[1](F)`, `sdf1[1](W)(F)`.
fn parse_member(token: &str) -> Result<MdMember, &'static str> {
    let open = token.find('[').ok_or("member without `[index]`")?;
    let close = token.find(']').ok_or("member without `[index]`")?;
    let index = token
        .get(open + 1..close)
        .and_then(|s| s.parse().ok())
        .ok_or("member index is not a number")?;
    let mut m = MdMember {
        name: token[..open].to_string(),
        index,
        faulty: false,
        spare: false,
        write_mostly: false,
    };
    let mut flags = &token[close + 1..];
    while !flags.is_empty() {
        let flag = flags.get(..3).ok_or("malformed member flag")?;
        match flag {
            "(F)" => m.faulty = true,
            "(S)" => m.spare = true,
            "(W)" => m.write_mostly = true,
            // Replacement and journal devices: recognised, nothing preflight needs.
            "(R)" | "(J)" => {}
            _ => return Err("unknown member flag"),
        }
        flags = &flags[3..];
    }
    Ok(m)
}

/// One indented line under an array header.
fn parse_detail(line: &str, a: &mut MdArray) -> Result<(), &'static str> {
    if line.contains(" blocks") {
        parse_blocks_line(line, a)
    } else if line.starts_with("bitmap:") {
        Ok(())
    } else if let Some(sync) = parse_sync(line)? {
        a.sync = Some(sync);
        Ok(())
    } else {
        Err("unrecognised line")
    }
}

/// `1046528 blocks super 1.2 [2/1] [U_]`; raid5 puts `level 5, 512k chunk, algorithm 2`
/// before the brackets, raid0 and linear have none.
fn parse_blocks_line(line: &str, a: &mut MdArray) -> Result<(), &'static str> {
    for token in line.split_whitespace() {
        let Some(inner) = token.strip_prefix('[').and_then(|t| t.strip_suffix(']')) else {
            continue;
        };
        if let Some((n, m)) = inner.split_once('/') {
            let n = n.parse().map_err(|_| "bad `[n/m]` disk count")?;
            let m = m.parse().map_err(|_| "bad `[n/m]` disk count")?;
            a.raid_disks = Some(n);
            a.active_disks = Some(m);
        } else if !inner.is_empty() && inner.chars().all(|c| c == 'U' || c == '_') {
            a.status = Some(inner.to_string());
        } else {
            return Err("unknown bracketed field");
        }
    }
    Ok(())
}

/// `[=>....]  resync =  8.1% (85120/1046528) finish=0.5min speed=28373K/sec`, or
/// `resync=DELAYED` / `resync=PENDING` / `resync=REMOTE`. `Ok(None)`: not a sync line.
fn parse_sync(line: &str) -> Result<Option<MdSync>, &'static str> {
    // Drop the progress bar, which may contain `=`.
    let rest = match line.strip_prefix('[') {
        Some(r) => r.split_once(']').ok_or("unterminated progress bar")?.1,
        None => line,
    };
    let Some((action, value)) = rest.split_once('=') else {
        return Ok(None);
    };
    let action = action.trim();
    if !SYNC_ACTIONS.contains(&action) {
        return Ok(None);
    }
    let value = value.trim_start();
    let (percent, waiting) = match value.split_whitespace().next() {
        Some("DELAYED" | "PENDING" | "REMOTE") => (None, true),
        Some(p) => {
            let p = p.strip_suffix('%').ok_or("sync progress without `%`")?;
            (
                Some(p.parse().map_err(|_| "sync progress is not a number")?),
                false,
            )
        }
        None => return Err("sync line without progress"),
    };
    Ok(Some(MdSync {
        action: action.to_string(),
        percent,
        delayed_or_pending: waiting,
    }))
}

#[cfg(test)]
mod tests;
