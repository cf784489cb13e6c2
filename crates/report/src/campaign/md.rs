//! Text a user wrote (case names and variables, the campaign's name, targets, command lines),
//! and sentences made of it, as the Markdown exports write it: read as the text it is, never
//! as markup. A case named `<script>alert(1)</script>` or `[x](http://evil)` was written raw,
//! so a Markdown viewer ran the HTML or made the link.
//!
//! CommonMark takes a backslash before any ASCII punctuation as that character itself; HTML
//! is written as entities instead (some renderers pass `\<` through). Hand-written: no crate
//! escapes Markdown, and the rules fit in a table.

use iogauge_model::echo::printable;

/// `t` as literal inline text, also inside a table cell: `\`, `` ` ``, `*`, `_`, `[`, `]`,
/// `|`, `~` and `#` backslash-escaped; `&`, `<` and `>` as entities; a line break as a blank
/// (a table row is one line); characters that would reorder the line as escapes
/// (`echo::printable`).
pub(crate) fn text(t: &str) -> String {
    let t = t.replace(['\n', '\r'], " ");
    let t = printable(&t);
    let mut out = String::with_capacity(t.len() + 8);
    for c in t.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// `t` as inline code (a command line); empty stays empty. Inside code nothing is markup,
/// but a backtick would end it (shown as `'`), a `|` the table cell and a line break the row.
pub(crate) fn code(t: &str) -> String {
    if t.is_empty() {
        return String::new();
    }
    let t = printable(t).replace('`', "'").replace('|', "\\|");
    format!("`{t}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_is_never_markup() {
        for (t, want) in [
            (
                "<script>alert(1)</script>",
                "&lt;script&gt;alert(1)&lt;/script&gt;",
            ),
            ("[x](http://evil)", "\\[x\\](http://evil)"),
            ("![i](http://evil/i.png)", "!\\[i\\](http://evil/i.png)"),
            ("a|b", "a\\|b"),
            (
                "*bold* _em_ `code` ~~s~~",
                "\\*bold\\* \\_em\\_ \\`code\\` \\~\\~s\\~\\~",
            ),
            ("a\nb\r", "a b "),
            ("qd=32, fs=ext4", "qd=32, fs=ext4"),
            ("a&amp;", "a&amp;amp;"),
            ("back\\slash", "back\\\\slash"),
            ("rtl\u{202e}x", "rtl\\\\u{202e}x"),
        ] {
            assert_eq!(text(t), want, "{t:?}");
        }
        assert_eq!(code("--dsn a|b `x`"), "`--dsn a\\|b 'x'`");
        assert_eq!(code(""), "");
    }
}
