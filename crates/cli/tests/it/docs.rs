//! The documentation held to the code (issue #46): every shell block of the README and the
//! book runs as written unless it is marked as an excerpt, every relative link resolves to a
//! file and a heading, no page points outside the repository, and the JSON reference names
//! the fields a run's document has. See the book's "Testing" chapter.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The book's pages (`docs/src/**/*.md`), sorted.
fn book_pages() -> Vec<PathBuf> {
    fn scan(dir: &Path, found: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                scan(&p, found);
            } else if p.extension().is_some_and(|x| x == "md") {
                found.push(p);
            }
        }
    }
    let mut found = Vec::new();
    scan(&repo().join("docs/src"), &mut found);
    found.sort();
    assert!(found.len() >= 10, "the book's pages: {found:?}");
    found
}

/// The README, then the book's pages: the pages whose shell blocks run.
fn pages_with_snippets() -> Vec<PathBuf> {
    let mut pages = vec![repo().join("README.md")];
    pages.extend(book_pages());
    pages
}

/// Every page a user reads: the README, the architecture notes, the benchmarks, the book.
fn user_pages() -> Vec<PathBuf> {
    let mut pages = pages_with_snippets();
    pages.push(repo().join("ARCHITECTURE.md"));
    pages.push(repo().join("bench/README.md"));
    pages
}

/// A page's path from the repository's root, for messages.
fn shown(page: &Path) -> String {
    let root = repo().canonicalize().unwrap();
    let page = page.canonicalize().unwrap();
    page.strip_prefix(&root)
        .unwrap_or(&page)
        .display()
        .to_string()
}

/// One fenced code block of a page.
#[derive(Debug)]
struct Block {
    /// The line of its opening fence (1-based).
    line: usize,
    /// Its info string's first word (`sh`, `text`, `toml` …).
    lang: String,
    /// An excerpt: `excerpt` in its info string, or an HTML comment saying `excerpt` on the
    /// line before its fence.
    excerpt: bool,
    /// Its lines, the fence's indentation removed.
    body: String,
}

/// The fenced blocks of a Markdown text (fences of backticks, indented or not: a block in a
/// list item is indented).
fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let open = lines[i].trim_start();
        if let Some(info) = open.strip_prefix("```") {
            let indent = lines[i].len() - open.len();
            let before = i
                .checked_sub(1)
                .map(|p| lines[p].trim())
                .unwrap_or_default();
            let excerpt = info.contains("excerpt")
                || (before.starts_with("<!--") && before.contains("excerpt"));
            let mut body = Vec::new();
            let mut j = i + 1;
            while j < lines.len() && !lines[j].trim_start().starts_with("```") {
                body.push(lines[j].get(indent..).unwrap_or(lines[j].trim_start()));
                j += 1;
            }
            found.push(Block {
                line: i + 1,
                lang: info.split_whitespace().next().unwrap_or("").to_string(),
                excerpt,
                body: body.join("\n"),
            });
            i = j;
        }
        i += 1;
    }
    found
}

/// A block the shell runs.
fn is_shell(b: &Block) -> bool {
    matches!(b.lang.as_str(), "sh" | "bash" | "shell")
}

/// Copies a directory tree (the repository's `examples/` into a page's directory).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// What the blocks of one page did.
#[derive(Default)]
struct Tally {
    ran: usize,
    excerpts: usize,
    failures: Vec<String>,
}

/// Runs a page's shell blocks in order in one fresh directory with one results store.
fn run_page(page: &Path, tally: &mut Tally) {
    let text = std::fs::read_to_string(page).unwrap();
    let shell: Vec<Block> = blocks(&text).into_iter().filter(is_shell).collect();
    if shell.iter().all(|b| b.excerpt) {
        tally.excerpts += shell.len();
        return;
    }
    let dir = workdir();
    // World-searchable, as a home directory is: PostgreSQL's account must reach a cluster
    // a block makes here.
    sh(&format!("chmod 755 '{}'", dir.path().display()));
    copy_tree(&repo().join("examples"), &dir.path().join("examples"));
    let bin_dir = exe().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = Instant::now();
    for b in &shell {
        if b.excerpt {
            tally.excerpts += 1;
            continue;
        }
        tally.ran += 1;
        let out = Command::new("timeout")
            .args(["120", "bash", "-euo", "pipefail", "-c", &b.body])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("IOGAUGE_STORE", dir.path().join("results.sqlite"))
            .env_remove("IOGAUGE_DSN")
            .output()
            .expect("bash");
        if !out.status.success() {
            tally.failures.push(format!(
                "{}:{}: the block exited with {:?}\n--- block\n{}\n--- stdout\n{}\n--- stderr\n{}",
                shown(page),
                b.line,
                out.status.code(),
                b.body,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    eprintln!(
        "{}: {} blocks in {:.1} s",
        shown(page),
        shell.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn every_shell_block_of_the_readme_and_the_book_runs_as_written() {
    // Busy: the blocks start PostgreSQL, calibrate and run campaigns; they assert behaviour
    // (exit codes), not time.
    let _g = busy();
    require_root();
    let mut tally = Tally::default();
    for page in pages_with_snippets() {
        run_page(&page, &mut tally);
    }
    eprintln!("{} blocks ran, {} excerpts", tally.ran, tally.excerpts);
    assert!(
        tally.failures.is_empty(),
        "{} of {} blocks failed:\n\n{}",
        tally.failures.len(),
        tally.ran,
        tally.failures.join("\n\n")
    );
    // The parser still finds the blocks (a change of fence style must not make this pass
    // by running nothing).
    assert!(
        tally.ran >= 25 && tally.excerpts >= 10,
        "{} ran, {} excerpts",
        tally.ran,
        tally.excerpts
    );
}

/// A heading's anchor as GitHub and mdBook make it: lower case, inline markup and
/// punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// A page's text outside its fenced blocks, line by line with line numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut in_code = false;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            lines.push((n + 1, line));
        }
    }
    lines
}

/// The anchors of a page's headings (a repeated heading gets `-1`, `-2` … as on GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let heading = rest.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading);
        let mut id = base.clone();
        let mut n = 0;
        while found.contains(&id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        found.insert(id);
    }
    found
}

/// A line without its inline code spans (a link inside backticks is not a link).
fn without_code(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The targets of a line's inline links, `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut found = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        found.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    found
}

/// What is wrong with one link of `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if file.is_empty() {
        page.to_path_buf()
    } else {
        page.parent().unwrap().join(file)
    };
    if !file.exists() {
        return Some(format!("{target}: no file {}", file.display()));
    }
    if anchor.is_empty() {
        return None;
    }
    if file.extension().is_none_or(|x| x != "md") {
        return Some(format!(
            "{target}: an anchor into a file that is not Markdown"
        ));
    }
    let known = anchors(&std::fs::read_to_string(&file).unwrap());
    (!known.contains(anchor)).then(|| format!("{target}: no heading #{anchor} (it has {known:?})"))
}

#[test]
fn every_relative_link_of_the_docs_resolves_to_a_file_and_a_heading() {
    let _g = shared();
    let mut bad = Vec::new();
    let mut links = 0;
    for page in user_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in prose(&text) {
            for target in link_targets(line) {
                links += 1;
                if let Some(why) = broken(&page, &target) {
                    bad.push(format!("{}:{n}: {why}", shown(&page)));
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
    assert!(links >= 50, "only {links} links found");
}

#[test]
fn the_readme_links_to_the_three_pages_newcomers_look_for() {
    let _g = shared();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for link in [
        "(docs/src/safety.md#testing-a-raw-device-safely)",
        "(docs/src/findings.md)",
        "(docs/src/json.md)",
    ] {
        assert!(readme.contains(link), "the README has no link {link}");
    }
    let lines = readme.lines().count();
    assert!(
        lines < 400,
        "the README has {lines} lines: it is the front door"
    );
}

#[test]
fn no_page_points_into_the_shared_folder_outside_the_repository() {
    let _g = shared();
    let mut files = user_pages();
    files.push(repo().join("docs/book.toml"));
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            assert!(
                !line.contains("../shared"),
                "{}:{}: a clone has no ../shared: {line}",
                shown(&f),
                n + 1
            );
        }
    }
}

/// The run document's fields as the JSON reference's table names them: each path, and
/// whether every run has it ("always").
fn fields_the_reference_names() -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(repo().join("docs/src/json.md")).unwrap();
    let at = text
        .find("\n## The run document")
        .expect("json.md has a section `## The run document`");
    let end = text[at + 1..]
        .find("\n## ")
        .map_or(text.len(), |e| at + 1 + e);
    text[at..end]
        .lines()
        .filter_map(|l| {
            let mut cells = l.strip_prefix("| `")?.split('|');
            let path = cells.next()?.trim().trim_end_matches('`').to_string();
            let when = cells.next()?.trim();
            Some((path, when == "always"))
        })
        .collect()
}

/// The value at a reference path (`intervals[].read`: the first element's).
fn at_path<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    let mut v = doc;
    for part in path.split('.') {
        let (key, array) = match part.strip_suffix("[]") {
            Some(k) => (k, true),
            None => (part, false),
        };
        v = v.get(key)?;
        if array {
            v = v.as_array()?.first()?;
        }
    }
    Some(v)
}

/// A document's field paths to the second level, as the reference writes them.
fn document_paths(doc: &Value) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    for (k, v) in doc.as_object().expect("a document is an object") {
        paths.insert(k.clone());
        match v {
            Value::Object(m) => paths.extend(m.keys().map(|c| format!("{k}.{c}"))),
            Value::Array(items) => paths.extend(
                items
                    .iter()
                    .filter_map(Value::as_object)
                    .flat_map(|m| m.keys().map(move |c| format!("{k}[].{c}"))),
            ),
            _ => {}
        }
    }
    paths
}

#[test]
fn the_json_reference_names_every_field_of_a_run() {
    // Busy: its run's I/O must not pass for a neighbour of a timing-sensitive test.
    let _g = busy();
    let dir = workdir();
    let target = dir.path().join("data");
    let doc = run_on(
        &target,
        "64m",
        &["--time", "1s", "--label", "json-reference"],
    );
    assert_eq!(doc["schema"], iogauge_model::SCHEMA);
    let named = fields_the_reference_names();
    assert!(named.len() >= 50, "the table: {named:?}");
    let missing: Vec<_> = named
        .iter()
        .filter(|(p, always)| *always && at_path(&doc, p).is_none())
        .map(|(p, _)| p)
        .collect();
    assert!(
        missing.is_empty(),
        "json.md says every run has these, this one has not: {missing:?}"
    );
    let names: BTreeSet<&str> = named.iter().map(|(p, _)| p.as_str()).collect();
    let unnamed: Vec<_> = document_paths(&doc)
        .into_iter()
        .filter(|p| !names.contains(p.as_str()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "the run document has fields json.md does not name: {unnamed:?}"
    );
}
