//! Passwords never shown or stored: [`redact_secrets`] masks every password a text may
//! carry (a DSN's `user:password@`, with any scheme or none, `password=` key/values and
//! `?password=` parameters), [`redact_dsn`] one connection string. Every path that shows or
//! stores a DSN goes through here: argument echoes, errors, campaign plans and progress,
//! stored campaign files and arguments, reports.

/// The environment variable `--dsn` is read from when the flag is not given: how a campaign
/// hands its runs their real DSN, since a command line is readable by every local user
/// (`/proc/PID/cmdline`) and a process's environment only by its own user and root.
pub const DSN_ENV: &str = "IOGAUGE_DSN";

/// The DSN with any password replaced by `***`, in either syntax, and in any form a user
/// may have mistyped it (`garbage://u:pw@x`, `postgres:/u:pw@x/db`, `u:pw@host/db`): the
/// whole string is a connection string, so every `user:password@` in it is masked. A URL
/// (`scheme:/…`) is one word whatever it holds: its password may hold blanks, tabs and line
/// breaks, which a URL parser drops or encodes (`mysql://u:pa ss@h` connects as `pa%20ss`).
pub fn redact_dsn(dsn: &str) -> String {
    let d = mask_key_values(dsn.trim());
    if scheme_end(&d).is_some() {
        mask_word(&d, true)
    } else {
        mask_userinfo(&d, true)
    }
}

/// Where a URL's scheme ends (its `:`), when `w` starts with one followed by `/`.
fn scheme_end(w: &str) -> Option<usize> {
    let c = w.find(':')?;
    let scheme = &w[..c];
    let ok = w[c + 1..].starts_with('/')
        && scheme.starts_with(|ch: char| ch.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '+' | '.' | '-'));
    ok.then_some(c)
}

/// `text` with every password in it replaced by `***`: the one masking function for command
/// lines, campaign files, stored arguments, reports and error messages.
///
/// Masks, wherever they appear:
/// - URL userinfo after a scheme (`x://u:pw@h`, `postgres:/u:pw@h/db`), and in the value of a
///   DSN however it is written (`u:pw@h/db` after `--dsn`, in `--dsn=…`, or on a line
///   `dsn = …`): everything from the first `:` to the word's last `@`, so a password holding
///   `@`, `:` or `/` is covered too. Other `a:b@c` words are left alone: iogauge's own
///   syntax has them (`--dist hotspot:64m@0:4`);
/// - a key ending in `password` (any case, percent-encoded or not: `password`, `PASSWORD`,
///   `PGPASSWORD`, `?password=`, `db_password`) followed by `=` (or `:` after a quoted key,
///   as in JSON), with a bare, `'…'`, `"…"` or triple-quoted value; quotes are kept, so a
///   masked TOML file stays valid.
///
/// Hand-written: no crate masks secrets in free text, and URL parsers reject exactly the
/// malformed strings whose passwords must not leak.
pub fn redact_secrets(text: &str) -> String {
    mask_userinfo(&mask_key_values(text), false)
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'%')
}

/// The key lower-cased with `%XX` escapes decoded (libpq decodes URI parameter names).
fn decode_key(key: &[u8]) -> String {
    let mut out = Vec::with_capacity(key.len());
    let mut i = 0;
    while i < key.len() {
        let hex = key
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (key[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).to_ascii_lowercase()
}

/// Masks the values of password keys (see [`redact_secrets`]).
fn mask_key_values(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let (mut copied, mut i) = (0, 0);
    while i < b.len() {
        if !is_key_byte(b[i]) || (i > 0 && is_key_byte(b[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_key_byte(b[i]) {
            i += 1;
        }
        if !decode_key(&b[start..i]).ends_with("password") {
            continue;
        }
        let quoted_key = start > 0 && matches!(b[start - 1], b'"' | b'\'');
        let mut j = i;
        if quoted_key && j < b.len() && b[j] == b[start - 1] {
            j += 1;
        }
        j = skip_blanks(b, j);
        let sep = b.get(j).copied();
        if !(sep == Some(b'=') || (quoted_key && sep == Some(b':'))) {
            continue;
        }
        let v = skip_blanks(b, j + 1);
        let in_query = start > 0 && matches!(b[start - 1], b'?' | b'&');
        let (open, close) = value_span(b, v, in_query);
        out.push_str(&s[copied..v]);
        out.push_str(&s[v..v + open]);
        out.push_str("***");
        out.push_str(&s[close..close + open.min(b.len() - close)]);
        copied = (close + open).min(b.len());
        i = copied;
    }
    out.push_str(&s[copied..]);
    out
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// The value starting at `v`: (length of its opening quote, end of its content). A quoted
/// value runs to its closing quote (`\` escapes one character) or the end of the text; a
/// bare one to whitespace, a quote, or in a URL query `&`.
fn value_span(b: &[u8], v: usize, in_query: bool) -> (usize, usize) {
    let rest = &b[v..];
    for q in [&b"\"\"\""[..], b"'''"] {
        if rest.starts_with(q) {
            let end = rest[3..]
                .windows(3)
                .position(|w| w == q)
                .map_or(b.len(), |p| v + 3 + p);
            return (3, end);
        }
    }
    if let Some(&q) = rest.first().filter(|&&q| q == b'"' || q == b'\'') {
        let mut k = v + 1;
        while k < b.len() && b[k] != q {
            k += if b[k] == b'\\' { 2 } else { 1 };
        }
        return (1, k.min(b.len()));
    }
    let end = rest
        .iter()
        .position(|&c| {
            c.is_ascii_whitespace() || c == b'"' || c == b'\'' || (in_query && c == b'&')
        })
        .map_or(b.len(), |p| v + p);
    (0, end)
}

/// Masks URL userinfo in every word (see [`redact_secrets`]); with `always`, in every word
/// that has the shape, scheme or not. Words end at whitespace and at the quotes and brackets
/// that wrap a URL in TOML, JSON or prose.
fn mask_userinfo(s: &str, always: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut dsn = DsnContext::default();
    let mut word = String::new();
    for (i, c) in s.char_indices() {
        if c.is_whitespace() || is_wrapper(c) {
            if c.is_whitespace() && userinfo_goes_on(&word, &s[i..], always, &dsn) {
                word.push(c);
                continue;
            }
            out.push_str(&dsn.mask(&word, always));
            word.clear();
            if c == '\n' {
                dsn = DsnContext::default();
            }
            out.push(c);
        } else {
            word.push(c);
        }
    }
    out.push_str(&dsn.mask(&word, always));
    out
}

/// The quotes and brackets that wrap a URL in TOML, JSON or prose: a word ends there.
fn is_wrapper(c: char) -> bool {
    matches!(c, '"' | '\'' | '`' | '<' | '>' | '(' | ')' | '{' | '}')
}

/// Whether the blank at the start of `rest` is inside a password that `word` began: `word`
/// opened a URL's userinfo (`scheme://user:` and no `@`, `/`, `?` or `#` after the `://`) or,
/// where the text is a DSN (`always`, `dsn`'s context, `--dsn=…`), any `user:` (but a port)
/// without an `@` yet; and an `@` follows before a quote or bracket closes the value, on the same line
/// but in one DSN value (`always`, the word after `--dsn`, `--dsn=…`), which may hold line
/// breaks. So `mysql://u:pa ss@h` (which a URL parser takes, the blank encoded) is one word,
/// and so is `u:pa ss@h` after `--dsn`, while prose (`postgres://h:5432 is down`, `at 17:03
/// by bench@h`) is not.
fn userinfo_goes_on(word: &str, rest: &str, always: bool, dsn: &DsnContext) -> bool {
    // `--dsn=VALUE`: the value is a DSN.
    let (key, value) = match word.split_once('=') {
        Some((k, v)) if is_dsn_key(k) => (true, v),
        _ => (false, word),
    };
    let in_dsn = always || key || dsn.at_value();
    let one_value = always || key || dsn.next;
    let after = match value.find("://") {
        Some(p) if scheme_end(value) == Some(p) => &value[p + 3..],
        _ if in_dsn => value,
        _ => return false,
    };
    // `host:5432` (`host:5432/db`) is a port, not the start of a password, but in a text that
    // is one DSN, where an `@` after it can only end a userinfo. (So in other text a password
    // of digits and then a blank, `--dsn u:12 34@h`, shows its pieces.)
    let port = !always
        && after.split_once(':').is_some_and(|(_, p)| {
            let p = p.split('/').next().unwrap_or_default();
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
        });
    // In prose, a path or query ends a URL's authority; a DSN's password may hold `/`.
    let ended = after.contains('@') || (!in_dsn && after.contains(['/', '?', '#']));
    let opens = after.contains(':') && !ended && !port;
    opens
        && rest
            .find(|c: char| c == '@' || (c == '\n' && !one_value) || is_wrapper(c))
            .is_some_and(|p| rest[p..].starts_with('@'))
}

/// Where a DSN value is: after a `--dsn` word (the next word), or after `dsn =` (the rest of
/// the line: a TOML string or array).
#[derive(Default)]
struct DsnContext {
    /// The previous word was a DSN key without `=` yet.
    key: bool,
    /// The next word is a DSN (`--dsn VALUE`).
    next: bool,
    /// The rest of the line is (`dsn = "…"`, `dsn = ["…", "…"]`).
    line: bool,
}

fn is_dsn_key(k: &str) -> bool {
    k.trim_start_matches('-')
        .to_ascii_lowercase()
        .ends_with("dsn")
}

impl DsnContext {
    /// Whether the next word is (part of) a DSN's value.
    fn at_value(&self) -> bool {
        self.next || self.line
    }

    /// `w` masked, and the context moved past it.
    fn mask(&mut self, w: &str, always: bool) -> String {
        if w.is_empty() {
            return String::new();
        }
        if let Some((k, v)) = w.split_once('=').filter(|(k, _)| is_dsn_key(k)) {
            // `--dsn=VALUE` or `dsn=` (its value follows, quoted).
            self.line |= v.is_empty();
            self.key = false;
            return format!("{k}={}", mask_word(v, true));
        }
        let any = always || self.line || self.next;
        self.next = false;
        if self.key {
            self.key = false;
            if w == "=" {
                self.line = true;
                return w.to_string();
            }
        }
        if is_dsn_key(w) {
            self.key = true;
            self.next = w.starts_with("--");
            return w.to_string();
        }
        mask_word(w, any)
    }
}

/// One word: the userinfo runs from after `://` (or, without one, from the word's start: a
/// password may hold `/`) to the last `@`; what follows its first `:` is the password. A word
/// without a scheme (`name:/` or `name://`) is masked only when `any` says it is a DSN.
fn mask_word(w: &str, any: bool) -> String {
    let Some(last_at) = w.rfind('@') else {
        return w.to_string();
    };
    let scheme = scheme_end(w).is_some();
    if !scheme && !any {
        return w.to_string();
    }
    let start = w.find("://").filter(|&p| p < last_at).map_or(0, |p| p + 3);
    match w[start..last_at].find(':') {
        Some(c) => format!("{}***{}", &w[..start + c + 1], &w[last_at..]),
        // A DSN whose "scheme" is no database's and whose userinfo has no password may be
        // `user:password@host` with a password that starts with `//` (`bench://pw@h/db`):
        // masked from its first `:`.
        None if any && start > 0 && !is_db_scheme(&w[..start - 3]) => {
            let c = w.find(':').unwrap_or(0);
            format!("{}***{}", &w[..c + 1], &w[last_at..])
        }
        None => w.to_string(),
    }
}

/// The URI schemes iogauge takes (any case): libpq's, and MySQL's and MariaDB's.
fn is_db_scheme(s: &str) -> bool {
    ["postgres", "postgresql", "mysql", "mariadb"]
        .iter()
        .any(|k| s.eq_ignore_ascii_case(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_table() {
        for (dsn, want) in [
            (
                "postgres://bench:s3cret@dbhost:5433/bench",
                "postgres://bench:***@dbhost:5433/bench",
            ),
            (
                "postgresql://bench@dbhost/bench",
                "postgresql://bench@dbhost/bench",
            ),
            (
                "postgres://u:s3cret@h/db?sslmode=disable&password=s3cret",
                "postgres://u:***@h/db?sslmode=disable&password=***",
            ),
            (
                "postgres://h/db?password=s3cret&sslmode=disable",
                "postgres://h/db?password=***&sslmode=disable",
            ),
            (
                "postgres://h/db?pass%77ord=s3cret",
                "postgres://h/db?pass%77ord=***",
            ),
            ("postgres://u:s3cret@h", "postgres://u:***@h"),
            ("garbage://u:s3cret@x", "garbage://u:***@x"),
            ("postgres:/u:s3cret@x/db", "postgres:***@x/db"),
            ("bench:a/b:s3cret@h", "bench:***@h"),
            ("u:s3cret@host/db", "u:***@host/db"),
            ("postgres://u:p@s3cret@h/db", "postgres://u:***@h/db"),
            ("postgres://u:s3/cret@h/db", "postgres://u:***@h/db"),
            (
                "host=dbhost user=bench password=s3cret dbname=bench",
                "host=dbhost user=bench password=*** dbname=bench",
            ),
            ("PASSWORD=s3cret host=h", "PASSWORD=*** host=h"),
            (
                "host=h password='a s3cret\\' c' dbname=d",
                "host=h password='***' dbname=d",
            ),
            ("password = s3cret host=h", "password = *** host=h"),
            ("password= s3cret", "password= ***"),
            ("host=/run/pg", "host=/run/pg"),
            (
                "host=h password='unterminated s3cret",
                "host=h password='***",
            ),
        ] {
            let got = redact_dsn(dsn);
            assert_eq!(got, want, "{dsn}");
            assert!(!got.contains("s3cret"), "{dsn}");
        }
    }

    #[test]
    fn secrets_in_free_text_table() {
        for (text, want) in [
            (
                "iogauge db run --dsn postgres://u:s3cret@h/db --time 1s",
                "iogauge db run --dsn postgres://u:***@h/db --time 1s",
            ),
            ("--dsn=u:s3cret@h", "--dsn=u:***@h"),
            (
                "[options]\ndsn = \"postgres://u:s3cret@h/db\"\n",
                "[options]\ndsn = \"postgres://u:***@h/db\"\n",
            ),
            (
                "dsn = 'host=h password=s3cret'",
                "dsn = 'host=h password=***'",
            ),
            ("db_password = \"s3cret\"", "db_password = \"***\""),
            (
                "PGPASSWORD=s3cret iogauge db run",
                "PGPASSWORD=*** iogauge db run",
            ),
            (
                "password = \"\"\"s3\ncret\"\"\"\nx = 1",
                "password = \"\"\"***\"\"\"\nx = 1",
            ),
            ("{\"password\": \"s3cret\"}", "{\"password\": \"***\"}"),
            (
                "cannot connect (postgres://u:s3cret@h:1/db): refused",
                "cannot connect (postgres://u:***@h:1/db): refused",
            ),
            // Left alone: no password in them.
            ("bench@dbhost:5433/bench", "bench@dbhost:5433/bench"),
            (
                "password authentication failed for user \"u\"",
                "password authentication failed for user \"u\"",
            ),
            (
                "password_encryption=scram-sha-256",
                "password_encryption=scram-sha-256",
            ),
            ("at 17:03:40.723 GMT", "at 17:03:40.723 GMT"),
            ("--dsn naïve:s3cret@h", "--dsn naïve:***@h"),
            // iogauge's own a:b@c syntax is not a password.
            ("--dist hotspot:64m@63m:4", "--dist hotspot:64m@63m:4"),
            (
                "--dsn u:s3cret@h/db --dist hotspot:64m@0:4",
                "--dsn u:***@h/db --dist hotspot:64m@0:4",
            ),
            (
                "dist = \"hotspot:64m@0:4\"\ndsn = [\"a:s3cret@h/db\", \"b:s3cret@h/db\"]\n",
                "dist = \"hotspot:64m@0:4\"\ndsn = [\"a:***@h/db\", \"b:***@h/db\"]\n",
            ),
            ("PGDSN=u:s3cret@h", "PGDSN=u:***@h"),
            // A password that starts with `//` reads as a scheme: masked all the same.
            ("--dsn bench://s3cret@h/db", "--dsn bench:***@h/db"),
            ("--dsn postgres://bench@h/db", "--dsn postgres://bench@h/db"),
        ] {
            let got = redact_secrets(text);
            assert_eq!(got, want, "{text}");
            assert!(!got.contains("s3cret"), "{text}");
        }
    }

    /// Issue #44, M3: a URL parser drops TAB, CR and LF from a URL and encodes a blank, so a
    /// password holding them connects; its pieces between the blanks were left in the clear.
    #[test]
    fn passwords_of_any_characters_are_masked() {
        let pws = [
            "pa\tss",
            "pa\rss",
            "pa\nss",
            "pa ss",
            " lead",
            "p@ss",
            "p:ss",
            "p/ss",
            "p%20ss",
            "pässwörd✓",
            "a \t\r\n@:/%b",
        ];
        for pw in pws {
            for scheme in ["postgres", "postgresql", "mysql", "mariadb"] {
                let dsn = format!("{scheme}://bench:{pw}@db1:3307/bench");
                let want = format!("{scheme}://bench:***@db1:3307/bench");
                assert_eq!(redact_dsn(&dsn), want, "{dsn:?}");
                // A TOML string holds no line break (`\n` is written so).
                let toml = format!("dsn = \"{}\"\n", dsn.replace('\n', ""));
                for text in [
                    format!("--dsn {dsn} --readers 1"),
                    toml,
                    format!("--dsn={dsn}"),
                ] {
                    let got = redact_secrets(&text);
                    assert!(got.contains(&want), "{text:?}: {got:?}");
                    assert!(
                        !got.contains("ss@") && !got.contains("pa"),
                        "{text:?}: {got:?}"
                    );
                }
            }
            let kv = format!("host=h password='{}' dbname=d", pw.replace('\'', ""));
            assert_eq!(redact_dsn(&kv), "host=h password='***' dbname=d", "{kv:?}");
            // Without a scheme, where the text says it is a DSN.
            let bare = format!("--dsn bench:{pw}@h/db");
            assert_eq!(redact_secrets(&bare), "--dsn bench:***@h/db", "{bare:?}");
        }
        // Prose keeps its words: a port is no password, and a line or a quote ends a URL.
        for text in [
            "postgres://h:5432 is down; ask bench@h",
            "cannot reach mysql://u@h:3306 (as bench@h)",
            "mysql://h:x\nuser@host",
        ] {
            assert_eq!(redact_secrets(text), text);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_masked_without_panic(text in "\\PC{0,80}") {
            let _ = redact_secrets(&text);
        }

        #[test]
        fn generated_passwords_never_survive(
            pw in "[A-Za-z0-9!$%^*@/:;,.~=-]{8,24}",
            form in 0usize..6,
        ) {
            let text = match form {
                0 => format!("postgres://bench:{pw}@db.example:5433/bench"),
                1 => format!("x://bench:{pw}@h"),
                2 => format!("--dsn bench:{pw}@h/db"),
                3 => format!("host=h password='{pw}' dbname=d"),
                4 => format!("dsn = \"postgres://h/db?password={}\"", pw.replace('&', "")),
                _ => format!("PASSWORD={pw} host=h"),
            };
            let got = redact_secrets(&text);
            let pw = if form == 4 { pw.replace('&', "") } else { pw };
            proptest::prop_assert!(!got.contains(&pw), "{} -> {}", text, got);
        }

        #[test]
        fn no_piece_of_a_url_password_survives(
            pw in "[ \t\r\nA-Za-z0-9@:/%ä✓]{1,24}",
            scheme in "(postgres|mysql|mariadb)",
        ) {
            let dsn = format!("{scheme}://bench:{pw}@db1:3307/bench");
            let got = redact_dsn(&dsn);
            proptest::prop_assert_eq!(&got, &format!("{scheme}://bench:***@db1:3307/bench"));
            // In free text a word ends at a blank once it has its `@`, and a port-like start
            // (digits, then a blank) is read as a port: passwords with neither.
            let first = pw.split(char::is_whitespace).next().unwrap_or_default();
            let port = first.split('/').next().unwrap_or_default();
            let port_like = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
            if !port_like && !pw.contains('@') {
                let got = redact_secrets(&format!("--dsn {dsn}"));
                proptest::prop_assert!(got.ends_with(":***@db1:3307/bench"), "{:?}", got);
            }
        }
    }
}
