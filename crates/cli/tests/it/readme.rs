//! The README and the book as a whole: each section once per page. (An edit once pasted a
//! second copy of the README's second half into its middle, 959 lines, and nothing failed.)
//! And the schema numbers they state are the code's.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The README, the architecture notes and the book's pages: where the manual now lives.
fn manual() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut dirs = vec![root.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    pages.sort();
    pages
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

#[test]
fn every_section_of_the_readme_and_the_book_is_there_once() {
    let _g = shared();
    let mut sections = 0;
    for (page, text) in manual() {
        // Headings outside code blocks (a TOML or shell comment starts with `#` too).
        let mut in_code = false;
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            } else if !in_code && (line.starts_with("# ") || line.starts_with("## ")) {
                *seen.entry(line).or_default() += 1;
            }
        }
        sections += seen.len();
        let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "{}: sections more than once: {twice:?}",
            page.display()
        );
    }
    assert!(sections >= 60, "{sections} sections in all");
}

/// Issue #44, L10: the README said documents were schema 2 after iogauge wrote 3. Every
/// `"schema": N` the README, the architecture notes and the book state is the code's: the
/// campaign view's where they speak of that view (`export --format json`), the documents'
/// everywhere else.
#[test]
fn the_schema_numbers_the_docs_state_are_the_code_s() {
    let _g = shared();
    let (mut documents, mut views) = (0, 0);
    let mut all = String::new();
    for (page, text) in manual() {
        for (at, _) in text.match_indices("\"schema\": ") {
            let digits: String = text[at + 10..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let Ok(n) = digits.parse::<u32>() else {
                continue;
            };
            let before = &text[at.saturating_sub(40)..at];
            let line = text[..at].lines().count() + 1;
            let page = page.display();
            if before.contains("whole view as JSON") {
                assert_eq!(
                    n,
                    iogauge_campaign::SCHEMA,
                    "{page} line {line}: the campaign view's"
                );
                views += 1;
            } else {
                assert_eq!(
                    n,
                    iogauge_model::SCHEMA,
                    "{page} line {line}: the documents'"
                );
                documents += 1;
            }
        }
        all.push_str(&text);
    }
    // The statements this test knows of are all there (a rewording must keep it honest).
    assert!(
        documents >= 3 && views >= 1,
        "{documents} and {views} found"
    );
    let stated = format!("documents are JSON schema {} (", iogauge_model::SCHEMA);
    assert!(all.contains(&stated), "no {stated:?}");
}
