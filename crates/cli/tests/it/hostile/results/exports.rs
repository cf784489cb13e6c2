//! Exports under attack (issue #44, row 5): a campaign's Markdown wrote its case names raw,
//! so a viewer ran a `<script>` and made a link of `[x](http://evil)`, and a `|` split a
//! table row.

use super::*;

#[test]
fn markdown_writes_case_names_as_text() {
    let _g = busy();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let file = w.path().join("names.toml");
    let t = w.path().join("t").display().to_string();
    let text = format!(
        r#"
command = "run"
repeat = 1
warmup = "none"
[[case]]
name = "<script>alert(1)</script>"
[[case]]
name = "[x](http://evil) | ![i](http://evil/i.png)"
[options]
target = "{t}"
size = "4m"
ios = "200"
"#
    );
    std::fs::write(&file, text).unwrap();
    let out = iog(&store).arg("campaign").arg(&file).output().unwrap();
    assert_success(&out);
    let out = iog(&store)
        .args(["export", "--campaign", "names", "--format", "md"])
        .output()
        .unwrap();
    assert_success(&out);
    let md = String::from_utf8(out.stdout).unwrap();
    // Outside the campaign file's fenced block, which shows the file as written.
    let md = md.split("### Campaign file").next().unwrap();
    assert!(!md.contains("<script>") && !md.contains("[x]"), "{md}");
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{md}");
    assert!(md.contains("\\[x\\](http://evil) \\| !\\[i\\]"), "{md}");
    let mut header = None;
    for line in md.lines() {
        let bars = line.replace("\\|", "").matches('|').count();
        match (line.starts_with('|'), header) {
            (true, None) => header = Some(bars),
            (true, Some(n)) => assert_eq!(bars, n, "a row split: {line}"),
            (false, _) => header = None,
        }
    }
}
