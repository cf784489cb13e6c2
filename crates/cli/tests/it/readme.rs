//! The README as a whole: each section once. (An edit once pasted a second copy of its second
//! half into the middle, 959 lines, and nothing failed.)

use crate::common::*;
use std::collections::BTreeMap;
use std::path::Path;

#[test]
fn every_readme_section_is_there_once() {
    let _g = shared();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    // Headings outside code blocks (a TOML or shell comment starts with `#` too).
    let mut in_code = false;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with("## ") {
            *seen.entry(line).or_default() += 1;
        }
    }
    assert!(seen.len() >= 8, "sections: {seen:?}");
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "README sections more than once: {twice:?}"
    );
}

/// Issue #44, L10: the README said documents were schema 2 after iogauge wrote 3. Every
/// `"schema": N` it states is the code's: the campaign view's where it speaks of that view
/// (`export --format json`), the documents' everywhere else.
#[test]
fn the_schema_numbers_the_readme_states_are_the_code_s() {
    let _g = shared();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut documents, mut views) = (0, 0);
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
        if before.contains("whole view as JSON") {
            assert_eq!(
                n,
                iogauge_campaign::SCHEMA,
                "README line {line}: the campaign view's"
            );
            views += 1;
        } else {
            assert_eq!(
                n,
                iogauge_model::SCHEMA,
                "README line {line}: the documents'"
            );
            documents += 1;
        }
    }
    // The statements this test knows of are all there (a rewording must keep it honest).
    assert!(
        documents >= 3 && views >= 1,
        "{documents} and {views} found"
    );
    let stated = format!("documents are JSON schema {} (", iogauge_model::SCHEMA);
    assert!(text.contains(&stated), "no {stated:?}");
}
