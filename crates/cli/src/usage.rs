//! A command line that cannot work as written (exit code 2): the error, the checks more than
//! one subcommand makes, and clap's own errors as one line. A leaf: it imports nothing else
//! from this crate, so every module can use it without an import circle.

use iogauge_model::echo;
use std::time::Duration;

/// A command line that cannot work as written (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// `Err(UsageError(msg))`, for the early returns of the options' checks.
pub fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

/// `--interval`: one step of a time series (or of `watch`'s refresh), 100ms to 1h.
pub fn check_interval(every: Duration) -> Result<Duration, UsageError> {
    if every < Duration::from_millis(100) || every > Duration::from_secs(3600) {
        return usage("--interval must be between 100ms and 1h");
    }
    Ok(every)
}

/// `--time`: a measured time, above 0.
pub fn check_time(time: Duration) -> Result<Duration, UsageError> {
    if time.is_zero() {
        return usage("--time must be above 0, as in --time 30s");
    }
    Ok(time)
}

/// An error line as printed: passwords masked, each overlong run of characters cut (a
/// 100,000-digit value is named by its start and length; values a message quotes are cut
/// where it is worded, `echo::quoted`), and the characters that would
/// move or hide text on a terminal (controls, bidi overrides, line separators) as escapes.
pub fn shown_line(line: &str) -> String {
    let masked = iogauge_model::secret::redact_secrets(line);
    echo::printable(&echo::bound_runs(&masked)).into_owned()
}

/// A clap error as one line: "invalid value 'V' for 'ARG': why" when clap knows the value
/// (its own rendering may break the line inside a value; "why" lists the accepted values
/// where there is a list), "FLAG: why" for an empty or missing one, else its first line.
pub fn clap_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    if let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) {
        let source = std::error::Error::source(e).map(ToString::to_string);
        // A value_enum's (or a list's) accepted values, as clap's own rendering lists them.
        let valid = match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(v)) if !v.is_empty() => Some(v.join(", ")),
            _ => None,
        };
        let line = if value.is_empty() {
            format!("error: {}", empty_value(arg, source, valid))
        } else {
            let why = match (valid, source) {
                (Some(v), _) => format!(": accepted values are {v}"),
                (None, Some(s)) => format!(": {s}"),
                (None, None) => String::new(),
            };
            format!(
                "error: invalid value '{}' for '{arg}'{why}",
                echo::bounded(value)
            )
        };
        return shown_line(&line);
    }
    if e.kind() == clap::error::ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) {
            let flag = arg.split('=').next().unwrap_or(arg);
            if let Some(ours) = fio_spelling(flag) {
                return shown_line(&format!(
                    "error: {flag} is fio's name: iogauge calls it {ours}"
                ));
            }
            // clap's "a similar argument exists" is on a line of its own: kept.
            if let Some(ContextValue::String(like)) = e.get(ContextKind::SuggestedArg) {
                return shown_line(&format!(
                    "error: unexpected argument '{}'; did you mean '{like}'?",
                    echo::bounded(arg)
                ));
            }
        }
    }
    let mut line = one_line(&e.to_string());
    if e.kind() == clap::error::ErrorKind::ArgumentConflict
        && line.contains("'--dsn <DSN>'")
        && std::env::var_os(iogauge_model::secret::DSN_ENV).is_some()
    {
        // --dsn may not have been typed at all: say where it came from.
        line.push_str(&format!(
            "; {} in the environment gives --dsn where the flag is not typed: unset it, or drop the other flag",
            iogauge_model::secret::DSN_ENV
        ));
    }
    shown_line(&line)
}

/// Why an empty value (`--csv ''`, an empty item of `--target A,`) or a missing one (`--label`
/// followed by another flag) is refused, naming the flag (`--target`, from clap's `--target
/// <PATH>`) and what it takes: clap's own "accepted values are " listed nothing.
fn empty_value(arg: &str, source: Option<String>, valid: Option<String>) -> String {
    let (flag, placeholder) = arg.split_once(' ').unwrap_or((arg, arg));
    let placeholder = placeholder.trim_matches(|c| c == '<' || c == '>');
    match (source, valid) {
        (Some(why), _) => format!("{flag}: {why}"),
        (None, Some(v)) => format!("{flag}: no value; give one of {v}"),
        (None, None) if flag.starts_with('-') => format!(
            "{flag}: no value; give {placeholder} (a value that starts with '-' goes as {flag}=VALUE)"
        ),
        (None, None) => format!("{flag}: no value; give {placeholder}"),
    }
}

/// clap's message on one line: the first line, and when it ends in a colon, the indented
/// lines that complete it ("…not provided: `--steady [<CRITERION>]`").
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

/// fio's options that iogauge spells otherwise, and what iogauge calls them (a fio user's
/// `--iodepth 32` is refused with the iogauge spelling, not a bare "unexpected argument").
const FIO: [(&str, &str); 18] = [
    ("--iodepth", "--qd"),
    ("--numjobs", "--workers"),
    ("--runtime", "--time, with a unit (--time 60s)"),
    ("--filename", "--target"),
    ("--directory", "--target (a file in the directory)"),
    (
        "--direct",
        "nothing: O_DIRECT is the default (--buffered goes through the page cache)",
    ),
    ("--ioengine", "--engine (io_uring or psync)"),
    ("--rate_iops", "--rate-iops"),
    ("--blocksize", "--bs"),
    ("--readwrite", "--rw"),
    ("--rwmixread", "--read-pct"),
    ("--ramp_time", "--ramp"),
    ("--name", "--label"),
    ("--output-format", "--json, for JSON"),
    ("--number_ios", "--ios"),
    ("--randseed", "--seed"),
    ("--offset", "--region (as in --region 10%:60%)"),
    ("--iodepth_batch_submit", "--submit-batch"),
];

/// What iogauge calls fio's option `flag`, when it spells it otherwise.
fn fio_spelling(flag: &str) -> Option<&'static str> {
    FIO.iter().find(|(f, _)| *f == flag).map(|(_, ours)| *ours)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn clap_lists_join_the_line() {
        let t = "error: the following required arguments were not provided:\n  --steady [<CRITERION>]\n\nUsage: x\n";
        assert_eq!(
            super::one_line(t),
            "error: the following required arguments were not provided: --steady [<CRITERION>]"
        );
        assert_eq!(super::one_line("error: bad\n\nUsage"), "error: bad");
    }

    /// Issue #25 row 12: clap's empty value ended in "accepted values are " and nothing.
    #[test]
    fn empty_values_name_the_flag() {
        assert_eq!(
            super::empty_value("--csv <DIR>", None, None),
            "--csv: no value; give DIR (a value that starts with '-' goes as --csv=VALUE)"
        );
        assert_eq!(
            super::empty_value("--target <PATH>", Some("empty path".into()), None),
            "--target: empty path"
        );
        assert_eq!(
            super::empty_value("--format <FORMAT>", None, Some("csv, md".into())),
            "--format: no value; give one of csv, md"
        );
        assert_eq!(
            super::empty_value("<FILE>", None, None),
            "<FILE>: no value; give FILE"
        );
    }

    #[test]
    fn interval_and_time_bounds() {
        let ms = Duration::from_millis;
        for (every, ok) in [(ms(99), false), (ms(100), true), (ms(3_600_000), true)] {
            assert_eq!(super::check_interval(every).is_ok(), ok, "{every:?}");
        }
        assert!(super::check_interval(ms(3_600_001)).is_err());
        assert!(super::check_time(Duration::ZERO).is_err());
        assert_eq!(super::check_time(ms(1)).unwrap(), ms(1));
    }
}
