//! The end of `main`: the one-line error and the exit code picked from the error's kind
//! (2 when the command line cannot work as written, 1 when the system failed while doing it,
//! 130 when stopped by Ctrl-C). It looks into every crate's error type, so only `main` uses it.

use crate::exit_code::{INTERRUPTED, RUNTIME, USAGE};
use crate::usage::{clap_line, shown_line, UsageError};
use iogauge_engine::{EngineError, TargetError};
use iogauge_report::{GatherError, ReadError};
use iogauge_runner::RunnerError;
use iogauge_session::SessionError;
use iogauge_store::StoreError;
use std::process::ExitCode;

/// Prints `error: …` on one line and picks the exit code from the error's kind. A stderr
/// that cannot take the line (`2>/dev/full`) changes nothing: never a panic at the end.
///
/// The line goes through the one secret-masking function (a password that reached an error's
/// text is still never shown) and has its control characters escaped (a newline or a
/// terminal escape in a value must not cut the line or reach the terminal raw).
/// [`report`]'s line alone: how a library that must say an error itself (rank 0 of a job
/// over ranks, before every rank ends) says it.
pub fn say(e: &anyhow::Error) {
    let _ = report(e);
}

pub fn report(e: &anyhow::Error) -> ExitCode {
    use std::io::Write;
    if let Some(iogauge_session::ranks::Quiet(code)) = e.downcast_ref() {
        return ExitCode::from(*code);
    }
    let line = shown_line(&chain_line(e));
    let _ = writeln!(std::io::stderr(), "error: {line}");
    ExitCode::from(code_of(e))
}

/// An error and its causes joined by ": " (as anyhow's `{:#}`), each cause once: a cause
/// whose text the line already holds (an error type that also prints its source, a context
/// that quotes the OS error) or an empty one is left out, so a closed stdout reads "…: Broken
/// pipe (os error 32); …", not "…(os error 32): Broken pipe (os error 32)".
pub fn chain_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn code_of(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<UsageError>().is_some() {
        return USAGE;
    }
    if let Some(t) = e.downcast_ref::<TargetError>() {
        return match t {
            TargetError::Interrupted { .. } => INTERRUPTED,
            t if t.is_usage() => USAGE,
            _ => RUNTIME,
        };
    }
    if let Some(en) = e.downcast_ref::<EngineError>() {
        return if en.is_usage() { USAGE } else { RUNTIME };
    }
    if let Some(p) = e.downcast_ref::<iogauge_db::DbError>() {
        return match p {
            p if p.is_interrupted() => INTERRUPTED,
            p if p.is_usage() => USAGE,
            _ => RUNTIME,
        };
    }
    if let Some(r) = e.downcast_ref::<RunnerError>() {
        return if r.is_usage() { USAGE } else { RUNTIME };
    }
    if let Some(g) = e.downcast_ref::<GatherError>() {
        return if g.is_usage() { USAGE } else { RUNTIME };
    }
    // report, export, compare and a campaign's run lines.
    if let Some(r) = e.downcast_ref::<ReadError>() {
        return if r.is_usage() { USAGE } else { RUNTIME };
    }
    if let Some(s) = e.downcast_ref::<StoreError>() {
        return if s.is_usage() { USAGE } else { RUNTIME };
    }
    // The store as a measured session opens it (a --store in a missing directory).
    if let Some(s) = e.downcast_ref::<SessionError>() {
        return if s.is_usage() { USAGE } else { RUNTIME };
    }
    RUNTIME
}

/// clap's errors, shortened to their first line (help and version print as clap renders them).
/// Under a launcher only rank 0 prints (every rank parsed the same line).
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if iogauge_session::ranks::launched().is_some() && iogauge_session::ranks::other_rank() {
        let help = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
        if help {
            return ExitCode::SUCCESS;
        }
        iogauge_session::ranks::wait_for_lead();
        return ExitCode::from(USAGE);
    }
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(
                if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    USAGE
                } else {
                    0
                },
            )
        }
        _ => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{}", clap_line(&e));
            ExitCode::from(USAGE)
        }
    }
}

#[cfg(test)]
mod tests {
    /// Issue #25 row 11: a source the message already quotes is not printed again.
    #[test]
    fn each_cause_once() {
        let io = std::io::Error::from_raw_os_error(libc::EPIPE);
        let e = anyhow::Error::new(iogauge_session::SessionError::Output {
            id: 3,
            path: "/s.sqlite".into(),
            source: io,
        });
        let line = super::chain_line(&e);
        assert_eq!(line.matches("os error 32").count(), 1, "{line}");
        let e = anyhow::anyhow!("inner").context("").context("outer");
        assert_eq!(super::chain_line(&e), "outer: inner");
    }
}
