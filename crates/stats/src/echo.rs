//! A user's text echoed back. In a message, a value is quoted by a bounded prefix (a
//! 100,000-digit CSV field or flag is a mistake to name, not to print whole); on a terminal,
//! the characters that move or hide text are escapes: control characters (Unicode category
//! Cc), format characters (Cf: the bidi overrides and isolates such as U+202E, zero-width
//! ones) and the line and paragraph separators (Zl, Zp), which would reorder or break the
//! line a stored label or path is printed on.
//!
//! The categories come from `unicode-properties` (the Unicode tables, already built for
//! rust-postgres's SASLprep): `char::is_control` covers Cc only.

use std::borrow::Cow;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The most characters of a value a message quotes.
pub const QUOTED_CHARS: usize = 40;

/// A run of non-blank characters longer than this in a finished message is cut to its first
/// [`QUOTED_CHARS`] (longer than any file name, NAME_MAX being 255 bytes): the bound for
/// messages iogauge did not word itself (a parser's, clap's).
pub const LONG_RUN: usize = 256;

/// Whether `c` would move or hide text on a terminal (Cc, Cf, Zl, Zp).
pub fn is_unprintable(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// `s` with every [`is_unprintable`] character as its Rust escape (`\n`, `\u{202e}`).
pub fn printable(s: &str) -> Cow<'_, str> {
    printable_but(s, |_| false)
}

/// [`printable`] for text of many lines: line feeds stay.
pub fn printable_lines(s: &str) -> Cow<'_, str> {
    printable_but(s, |c| c == '\n')
}

fn printable_but(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unprintable(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unprintable(c) && !keep(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` whole up to [`QUOTED_CHARS`] characters, else its first ones and how long it was:
/// `1234…7890… (100000 characters)`.
pub fn bounded(s: &str) -> Cow<'_, str> {
    match cut(s) {
        None => Cow::Borrowed(s),
        Some((head, n)) => Cow::Owned(format!("{head}… ({n} characters)")),
    }
}

/// `s` in double quotes with Rust's escapes (as `{:?}`), bounded as [`bounded`]:
/// `"abc"`, or `"1234…"… (100000 characters)`.
pub fn quoted(s: &str) -> String {
    match cut(s) {
        None => format!("{s:?}"),
        Some((head, n)) => format!("{head:?}… ({n} characters)"),
    }
}

/// The first [`QUOTED_CHARS`] characters and the count, when `s` has more.
fn cut(s: &str) -> Option<(&str, usize)> {
    let (end, _) = s.char_indices().nth(QUOTED_CHARS)?;
    Some((&s[..end], s.chars().count()))
}

/// A finished message with every run of non-blank characters longer than [`LONG_RUN`] cut
/// as [`bounded`] cuts a value.
pub fn bound_runs(msg: &str) -> Cow<'_, str> {
    if !msg
        .split_whitespace()
        .any(|w| w.len() > LONG_RUN && w.chars().count() > LONG_RUN)
    {
        return Cow::Borrowed(msg);
    }
    let mut out = String::with_capacity(msg.len().min(4096));
    let mut rest = msg;
    while !rest.is_empty() {
        let blank = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, after) = rest.split_at(blank);
        if word.chars().count() > LONG_RUN {
            out.push_str(&bounded(word));
        } else {
            out.push_str(word);
        }
        let non_blank = after
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(after.len());
        out.push_str(&after[..non_blank]);
        rest = &after[non_blank..];
    }
    Cow::Owned(out)
}

/// A finished message with every double-quoted value longer than [`QUOTED_CHARS`] cut as
/// [`quoted`] cuts one (`"1234…"… (100000 characters)`): the bound for values a parser or
/// a `{:?}` quoted (a TOML type error quotes the whole string it found). A `\` escapes the
/// next character; a quote left open is left as it is.
pub fn bound_quoted(msg: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut rest = msg.char_indices();
    while let Some((open, c)) = rest.next() {
        if c != '"' {
            continue;
        }
        let (mut n, mut escaped, mut close) = (0usize, false, None);
        for (i, c) in rest.by_ref() {
            match (escaped, c) {
                (false, '"') => {
                    close = Some(i);
                    break;
                }
                (false, '\\') => escaped = true,
                _ => escaped = false,
            }
            n += usize::from(!escaped);
        }
        let Some(close) = close else { break };
        if n > QUOTED_CHARS {
            let inner = &msg[open + 1..close];
            // Cut after QUOTED_CHARS characters, not inside an escape.
            let mut end = inner.len();
            let (mut seen, mut esc) = (0, false);
            for (i, c) in inner.char_indices() {
                if seen == QUOTED_CHARS && !esc {
                    end = i;
                    break;
                }
                esc = !esc && c == '\\';
                seen += usize::from(!esc);
            }
            out.push_str(&msg[copied..open]);
            out.push_str(&format!("\"{}\"… ({n} characters)", &inner[..end]));
            copied = close + 1;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(msg);
    }
    out.push_str(&msg[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unprintable_characters_are_escapes() {
        for (c, unprintable) in [
            ('\u{202e}', true), // right-to-left override (Cf)
            ('\u{2066}', true), // left-to-right isolate (Cf)
            ('\u{200b}', true), // zero-width space (Cf)
            ('\u{2028}', true), // line separator (Zl)
            ('\u{2029}', true), // paragraph separator (Zp)
            ('\u{1b}', true),
            ('\n', true),
            ('\u{85}', true), // NEL (Cc)
            ('a', false),
            (' ', false),
            ('é', false),
            ('✓', false),
            ('\u{5d0}', false), // Hebrew alef: right-to-left text itself is text
        ] {
            assert_eq!(is_unprintable(c), unprintable, "{c:?}");
        }
        assert_eq!(printable("a\u{202e}b\u{2028}c"), "a\\u{202e}b\\u{2028}c");
        assert!(matches!(printable("plain ✓"), Cow::Borrowed(_)));
        assert_eq!(printable_lines("a\u{202e}\nb\t"), "a\\u{202e}\nb\\t");
    }

    #[test]
    fn values_are_quoted_to_a_bound() {
        let long = "9".repeat(100_000);
        let q = quoted(&long);
        assert_eq!(q, format!("\"{}\"… (100000 characters)", "9".repeat(40)));
        assert_eq!(
            bounded(&long),
            format!("{}… (100000 characters)", "9".repeat(40))
        );
        let forty = "é".repeat(40);
        assert_eq!(
            bounded(&forty),
            forty,
            "40 characters, not bytes, are whole"
        );
        assert_eq!(quoted("x\"y"), "\"x\\\"y\"");
        let msg = format!("invalid value '{long}' for '--qd <QD>'");
        let b = bound_runs(&msg);
        assert!(
            b.len() < 120 && b.ends_with("characters) for '--qd <QD>'"),
            "{b}"
        );
        let path = format!("/{}", "d/".repeat(100));
        assert_eq!(bound_runs(&path), path, "201 characters stay");
        assert!(matches!(bound_runs("a  b\tc"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_quoted_values_in_a_message_are_cut() {
        let long = "a b ".repeat(25_000);
        let msg = format!("line 3: invalid type: string {long:?}, expected an integer");
        let got = bound_quoted(&msg);
        let want = format!(
            "line 3: invalid type: string \"{}\"… (100000 characters), expected an integer",
            &long[..40]
        );
        assert_eq!(got, want);
        // Escapes count as the character they stand for, and are never cut in two.
        let esc = format!("{:?}", "\"".repeat(50));
        let got = bound_quoted(&esc);
        assert_eq!(got, format!("\"{}\"… (50 characters)", "\\\"".repeat(40)));
        for kept in ["no quotes", "\"short\" and \"also short\"", "open \"quote"] {
            assert!(matches!(bound_quoted(kept), Cow::Borrowed(_)), "{kept}");
        }
    }
}
