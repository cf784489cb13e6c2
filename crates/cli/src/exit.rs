//! Exit codes and the one-line error: 2 when the command line cannot work as written,
//! 1 when the system failed while doing it, 130 when stopped by Ctrl-C.

use crate::options::UsageError;
use iogauge_engine::{EngineError, TargetError};
use iogauge_store::StoreError;
use std::process::ExitCode;

pub const USAGE: u8 = 2;
pub const RUNTIME: u8 = 1;
pub const INTERRUPTED: u8 = 130;

/// Prints `error: …` on one line and picks the exit code from the error's kind. A stderr
/// that cannot take the line (`2>/dev/full`) changes nothing: never a panic at the end.
///
/// The line goes through the one secret-masking function (a password that reached an error's
/// text is still never shown) and has its control characters escaped (a newline or a
/// terminal escape in a value must not cut the line or reach the terminal raw).
pub fn report(e: &anyhow::Error) -> ExitCode {
    use std::io::Write;
    let line = escape_controls(&iogauge_model::secret::redact_secrets(&format!("{e:#}")));
    let _ = writeln!(std::io::stderr(), "error: {line}");
    ExitCode::from(code_of(e))
}

/// Control characters as Rust escapes (`\n`, `\u{1b}`), everything else as is.
pub fn escape_controls(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A clap error as one line: "invalid value 'V' for 'ARG': why" when clap knows the value
/// (its own rendering may break the line inside a value), else its first line.
pub fn clap_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    if let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) {
        let why = std::error::Error::source(e).map_or(String::new(), |s| format!(": {s}"));
        return escape_controls(&iogauge_model::secret::redact_secrets(&format!(
            "error: invalid value '{value}' for '{arg}'{why}"
        )));
    }
    escape_controls(&iogauge_model::secret::redact_secrets(&one_line(
        &e.to_string(),
    )))
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
    if let Some(p) = e.downcast_ref::<iogauge_pg::PgError>() {
        return match p {
            p if p.is_interrupted() => INTERRUPTED,
            p if p.is_usage() => USAGE,
            _ => RUNTIME,
        };
    }
    if let Some(g) = e.downcast_ref::<crate::campaign::gather::GatherError>() {
        return if g.is_usage() { USAGE } else { RUNTIME };
    }
    if let Some(s) = e.downcast_ref::<StoreError>() {
        return if s.is_usage() { USAGE } else { RUNTIME };
    }
    if let Some(s) = e.downcast_ref::<iogauge_session::SessionError>() {
        return if s.is_usage() { USAGE } else { RUNTIME };
    }
    RUNTIME
}

/// clap's errors, shortened to their first line (help and version print as clap renders them).
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
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

/// clap's message on one line: the first line, and when it ends in a colon, the indented
/// lines that complete it ("…not provided: --steady [<CRITERION>]").
pub fn one_line(text: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines
        .next()
        .unwrap_or("error: invalid command line")
        .to_string();
    if out.ends_with(':') {
        let rest: Vec<&str> = lines
            .take_while(|l| l.starts_with("  "))
            .map(str::trim)
            .collect();
        if !rest.is_empty() {
            out = format!("{out} {}", rest.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_lists_join_the_line() {
        let t = "error: the following required arguments were not provided:\n  --steady [<CRITERION>]\n\nUsage: x\n";
        assert_eq!(
            super::one_line(t),
            "error: the following required arguments were not provided: --steady [<CRITERION>]"
        );
        assert_eq!(super::one_line("error: bad\n\nUsage"), "error: bad");
    }
}
