//! Sizes, durations, whole numbers and ranges as users type them (`8k`, `1.5g`, `500ms`,
//! `2h`, `32`, `0%..25%`), parsed once for every flag and campaign option that takes one, and
//! sizes formatted back the same way.
//! Hand-written: the accepted forms are fio's (binary units, bare numbers as bytes or
//! seconds), which no unit crate parses as written.

use crate::echo::bounded;
use std::time::Duration;

/// The longest duration any flag takes: a year. No measurement lasts longer, so a longer
/// value is a typo; and accepting one would let it reach clock arithmetic that panics
/// (`Instant + Duration` overflows past i64 seconds, a `Duration` sum past u64 seconds).
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Splits `12.5ms` into the number `12.5` and the unit `ms`.
pub fn split_unit(s: &str) -> (&str, &str) {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    t.split_at(split)
}

/// Parses a byte size with binary units, as fio does: `512`, `8k`, `1m`, `2G`, `4KiB`, `1t`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (num, unit) = split_unit(s);
    let shown = bounded(s);
    let bad =
        || format!("'{shown}' is not a size: use a number with an optional unit, as in 8k, 1m, 2G");
    let too_large = || format!("size '{shown}' is too large: the most is 16 EiB (2^64 bytes) - 1");
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    if num.is_empty() {
        return Err(bad());
    }
    let bytes = if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| bad())?;
        (v * mult as f64).round()
    } else {
        // Digits only (split_unit saw to that): a parse failure is an overflow.
        let v: u64 = num.parse().map_err(|_| too_large())?;
        return v.checked_mul(mult).ok_or_else(too_large);
    };
    if bytes >= u64::MAX as f64 {
        return Err(too_large());
    }
    Ok(bytes as u64)
}

/// Parses a duration: `30s`, `5m`, `1h`, `500ms`, `2.5s`; a bare number is seconds. At most
/// [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = split_unit(s);
    let shown = bounded(s);
    let bad = || format!("'{shown}' is not a duration: use a number with s, ms, m or h, as in 30s");
    let v: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1e3,
        "us" => v / 1e6,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(bad()),
    };
    let too_long =
        || format!("'{shown}' is longer than a year, the longest duration iogauge takes");
    let d = Duration::try_from_secs_f64(secs).map_err(|_| too_long())?;
    if d > MAX_DURATION {
        return Err(too_long());
    }
    Ok(d)
}

/// Parses a whole number written in plain decimal digits, from `lo` to `hi`. The message
/// says what is wrong and the accepted form without repeating the value (the caller names
/// the flag and the value): `1e1`, `0x10`, `2.5`, `-1` and a number past `hi` each get one.
/// The value is taken as given: a space or a newline in it is an error, as it was for Rust's
/// own parser.
pub fn parse_whole(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let t = s;
    let range = || format!("a whole number from {lo} to {hi}");
    if t.is_empty() {
        return Err(format!("empty; give {}", range()));
    }
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "not written in decimal digits (no sign, point, exponent or 0x); give {}",
            range()
        ));
    }
    // Digits only: a parse failure is a number past u64::MAX.
    match t.parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(v) if v < lo => Err(format!("below {lo}; give {}", range())),
        _ => Err(format!("above {hi}; give {}", range())),
    }
}

/// Splits a range `START..END` at its two dots: `None` without any, an error for three or
/// more dots in a row or a second `..` (`0%...50%` is a typo, not 0%..0.5%). `example` is a
/// well-formed range of the caller's kind, for the message.
pub fn split_range<'a>(s: &'a str, example: &str) -> Result<Option<(&'a str, &'a str)>, String> {
    let Some((a, b)) = s.split_once("..") else {
        return Ok(None);
    };
    if b.starts_with('.') || b.contains("..") {
        return Err(format!(
            "'{}' has more than two dots between its ends; write START..END, as in {example}",
            bounded(s)
        ));
    }
    Ok(Some((a, b)))
}

/// Formats a byte count with the largest binary unit that divides it: `8k`, `1m`, `3000`.
pub fn fmt_size(n: u64) -> String {
    for (shift, u) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{}{u}", n >> shift);
        }
    }
    n.to_string()
}

/// Durations in JSON: seconds as a float.
pub mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// Optional durations in JSON: seconds as a float, or null.
pub mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|v| Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_table() {
        for (s, v) in [
            ("512", 512),
            ("8k", 8192),
            ("8K", 8192),
            ("4KiB", 4096),
            ("1m", 1 << 20),
            ("2G", 2 << 30),
            ("1.5g", 3 << 29),
            ("1t", 1 << 40),
            (" 8k ", 8192),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_size(s), Ok(v), "{s}");
        }
        for bad in [
            "", "k", "8x", "-1", "1..2k", "NaN", "1e308", "٣", "８k", "8 k",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("is not a size"), "{bad}: {e}");
        }
        for huge in [
            "99999999999999t",
            "18446744073709551616",
            "99999999999999999999999999",
            "16777216t",
            "16777216.0t",
        ] {
            let e = parse_size(huge).unwrap_err();
            assert!(e.contains("too large"), "{huge}: {e}");
        }
    }

    #[test]
    fn durations_table() {
        for (s, ms) in [
            ("30s", 30_000),
            ("30", 30_000),
            ("500ms", 500),
            ("5m", 300_000),
            ("1h", 3_600_000),
            ("2.5s", 2_500),
            ("8760h", 31_536_000_000),
        ] {
            assert_eq!(parse_duration(s).unwrap(), Duration::from_millis(ms), "{s}");
        }
        for bad in ["", "s", "10x", "-5s", "NaN", "inf", "1e9s", "5µs"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.contains("is not a duration"), "{bad}: {e}");
        }
        // Past a year, and past what `Instant + Duration` can hold (that used to panic in
        // the driver: `iogauge run --time 10000000000000000000s`).
        for long in [
            "8761h",
            "31536001",
            "10000000000000000000s",
            "18446744073709551616",
            "99999999999999999999999999999h",
        ] {
            let e = parse_duration(long).unwrap_err();
            assert!(e.contains("longer than a year"), "{long}: {e}");
        }
    }

    #[test]
    fn whole_numbers_table() {
        assert_eq!(parse_whole("32", 1, 4096), Ok(32));
        assert!(parse_whole(" 7", 0, 9).is_err());
        assert!(parse_whole("\n1", 0, 9).is_err());
        assert_eq!(
            parse_whole("18446744073709551615", 0, u64::MAX),
            Ok(u64::MAX)
        );
        for (bad, why) in [
            ("", "empty"),
            ("1e1", "decimal digits"),
            ("0x10", "decimal digits"),
            ("2.5", "decimal digits"),
            ("-1", "decimal digits"),
            ("+1", "decimal digits"),
            ("٣", "decimal digits"),
            ("0", "below 1"),
            ("4097", "above 4096"),
            ("18446744073709551616", "above 4096"),
            ("99999999999999999999999", "above 4096"),
        ] {
            let e = parse_whole(bad, 1, 4096).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.ends_with("a whole number from 1 to 4096"), "{bad}: {e}");
        }
    }

    #[test]
    fn ranges_split_at_two_dots_only() {
        assert_eq!(split_range("0%..25%", ""), Ok(Some(("0%", "25%"))));
        assert_eq!(split_range("0.5..1.5", ""), Ok(Some(("0.5", "1.5"))));
        assert_eq!(split_range(".5ms..1ms", ""), Ok(Some((".5ms", "1ms"))));
        assert_eq!(split_range("2ms", ""), Ok(None));
        for bad in ["0%...50%", "1ms...5ms", "1....2", "1..2..3"] {
            let e = split_range(bad, "1..2").unwrap_err();
            assert!(
                e.ends_with("more than two dots between its ends; write START..END, as in 1..2"),
                "{bad}: {e}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Anything at all: a value or a message, never a panic; an accepted size prints
        /// back to itself.
        #[test]
        fn sizes_parse_or_explain(s in "[0-9.kKmMgGtTiIbB% -]{0,24}|\\PC{0,12}") {
            if let Ok(n) = parse_size(&s) {
                prop_assert_eq!(parse_size(&fmt_size(n)), Ok(n));
            }
        }

        #[test]
        fn durations_parse_within_a_year(s in "[0-9.smhinu ]{0,30}|\\PC{0,12}") {
            if let Ok(d) = parse_duration(&s) {
                prop_assert!(d <= MAX_DURATION);
            }
        }
    }
}
