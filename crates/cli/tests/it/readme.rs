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
