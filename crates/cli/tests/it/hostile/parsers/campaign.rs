//! Campaign files under fire: `iogauge campaign FILE --dry-run` with mutated examples, TOML
//! soup, raw bytes and hostile file names. The answer is the plan (exit 0) or one line that
//! names the file (exit 2); and a dry run runs nothing: no hook, no store, no target.

use super::*;

/// The shipped examples, with their `[commands]` (loop devices, mkdir) replaced by hooks that
/// only leave a mark in the work directory: a dry run must never run them.
const EXAMPLES: [&str; 6] = [
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/queue-depth.toml"
    )),
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/placement.toml"
    )),
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/redundancy.toml"
    )),
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/filesystems.toml"
    )),
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/filesystems-io.toml"
    )),
    r#"command = "calibrate"
repeat = 2
[vars]
bs = ["8k", "16k"]
[options]
block = "${bs}"
"#,
];
const HOOKS: &str = r#"[commands]
start = "touch {wd}/HOOK-RAN"
pre = "touch {wd}/HOOK-RAN"
post = "touch {wd}/HOOK-RAN"
end = "touch {wd}/HOOK-RAN"
"#;

fn example(i: usize) -> String {
    let e = EXAMPLES[i % EXAMPLES.len()];
    let body = e.find("[commands]").map_or(e, |at| &e[..at]);
    format!("{body}\n{HOOKS}")
}

/// Values a key may get instead of its own.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "1000",
    "1001",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "nan",
    "inf",
    "-inf",
    "true",
    "\"\"",
    "\"${qd}\"",
    "\"${nope}\"",
    "\"${qd\"",
    "[]",
    "[1, \"a\"]",
    "[[]]",
    "{}",
    "{ fs = \"raw\" }",
    "{ nope = \"x\" }",
    "\"x\\ny\"",
    "'lit'",
    "\"\"\"two\nlines\"\"\"",
    "1979-05-27T07:32:00Z",
    "\"🦀\"",
    "\"--time\"",
    "\"1s --rw write\"",
    "\"$(touch {wd}/HOOK-RAN)\"",
    "\"/dev/vda\"",
    "\"{wd}/t\"",
    "[\"a\", \"a\"]",
];

/// Lines that may appear anywhere.
const LINES: &[&str] = &[
    "[vars]",
    "[options]",
    "[[case]]",
    "[smoke]",
    "[commands]",
    "[smoke.vars]",
    "name = \"x\"",
    "name = \"\"",
    "repeat = 3",
    "command = \"calibrate\"",
    "command = \"db run\"",
    "command = \"watch\"",
    "x = [1, 2]",
    "qd = [1, 1]",
    "target = \"{wd}/t\"",
    "reset = \"db\"",
    "baseline = \"nope\"",
    "baseline = { qd = \"1\" }",
    "order = \"random\"",
    "warmup = \"run\"",
    "seed = -1",
    "time = \"${qd}\"",
    "\"${qd}\" = 1",
    "[vars.x]",
    "a.b.c = 1",
    "= 1",
    "",
    "#",
    "dsn = \"postgres://u:pw@h/db\"",
    "allow_overwrite = true",
];

/// A mutated example: lines deleted, doubled, given other values, inserted; characters
/// changed.
fn mutated_toml() -> BoxedStrategy<String> {
    let edit = (
        0..5u8,
        any::<usize>(),
        select(VALUES),
        select(LINES),
        select(NUMS),
    );
    (any::<usize>(), prop::collection::vec(edit, 1..5))
        .prop_map(|(which, edits)| {
            let mut lines: Vec<String> = example(which).lines().map(String::from).collect();
            for (op, at, value, line, piece) in edits {
                let i = at % (lines.len() + 1);
                match op {
                    0 if i < lines.len() => drop(lines.remove(i)),
                    1 if i < lines.len() => lines.insert(i, lines[i].clone()),
                    2 if i < lines.len() => {
                        if let Some((k, _)) = lines[i].split_once('=') {
                            lines[i] = format!("{k}= {value}");
                        }
                    }
                    3 => lines.insert(i, line.to_string()),
                    _ if i < lines.len() => lines[i] = mutate(&lines[i], &[(at >> 8, piece, 0)]),
                    _ => {}
                }
            }
            lines.join("\n")
        })
        .boxed()
}

/// TOML soup: lines of the pieces above and hostile marks, in any order.
fn soup_toml() -> BoxedStrategy<String> {
    let piece = select([VALUES, LINES, MARKS, &["=", "[", "]", "{", "}", "\"", "\n"]].concat());
    prop::collection::vec(piece, 0..24)
        .prop_map(|p| p.concat())
        .boxed()
}

/// Runs `campaign FILE --dry-run` on each generated file and judges it.
fn dry_runs(files: BoxedStrategy<Vec<u8>>, name: &str) {
    let wd = workdir();
    let dir = wd.path().display().to_string();
    let path = wd.path().join(name);
    let store = wd.path().join("s.sqlite").display().to_string();
    let clean = Clean {
        names: &["campaign file"],
        went_on: None,
        also: &[0],
        secret: None,
    };
    let result = runner(CASES * 2).run(&files, |bytes| {
        let text = String::from_utf8_lossy(&bytes).replace("{wd}", &dir);
        let bytes = if std::str::from_utf8(&bytes).is_ok() {
            text.into_bytes()
        } else {
            bytes
        };
        std::fs::write(&path, &bytes).expect("write the campaign file");
        let args = [
            "campaign".into(),
            path.display().to_string(),
            "--dry-run".into(),
            "--store".into(),
            store.clone(),
        ];
        clean.check(&call(wd.path(), &args))?;
        let left = listing(wd.path());
        prop_assert_eq!(
            &left,
            &vec![name.to_string()],
            "a dry run left files behind"
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Mutated examples: the plan or one line naming the file; nothing run, nothing stored
/// (issue #14 rows 5 and 11, property tests).
#[test]
fn mutated_campaign_files_dry_run_cleanly_and_run_nothing() {
    let _g = shared();
    dry_runs(
        mutated_toml().prop_map(String::into_bytes).boxed(),
        "c.toml",
    );
}

/// TOML soup and raw bytes (not all UTF-8): refused naming the file, or planned (issue #14
/// row 15, property tests).
#[test]
fn campaign_soup_and_bytes_dry_run_cleanly() {
    let _g = shared();
    let files = prop_oneof![
        3 => soup_toml().prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..64),
    ];
    dry_runs(files.boxed(), "c.toml");
}

/// Hostile file names and --name values (each becomes the campaign's name): the plan, or one
/// line naming the file or the flag (issue #14 row 15, property tests).
#[test]
fn campaign_file_names_and_name_flags_dry_run_cleanly() {
    let _g = shared();
    let wd = workdir();
    let store = wd.path().join("s.sqlite").display().to_string();
    let names = hostile(&["queue-depth", "a b", ".hidden", "x.y"], &[".toml", "."])
        .prop_filter("a file name", |n| {
            !n.is_empty() && !n.contains('/') && n != "." && n != ".." && n.len() < 200
        });
    let clean = Clean {
        names: &["campaign file"],
        went_on: None,
        also: &[0],
        secret: None,
    };
    let result = runner(CASES).run(&names, |n| {
        let path = wd.path().join(format!("{n}.toml"));
        std::fs::write(
            &path,
            example(0).replace("{wd}", &wd.path().display().to_string()),
        )
        .expect("write the campaign file");
        let args = [
            "campaign".into(),
            path.display().to_string(),
            "--dry-run".into(),
            "--store".into(),
            store.clone(),
        ];
        let c = call(wd.path(), &args);
        std::fs::remove_file(&path).expect("remove the campaign file");
        clean.check(&c)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(listing(wd.path()).is_empty(), "a dry run left files behind");

    // --name: the name the campaign is stored under.
    let path = wd.path().join("c.toml");
    std::fs::write(
        &path,
        example(0).replace("{wd}", &wd.path().display().to_string()),
    )
    .expect("write the campaign file");
    let dry = ["--dry-run".to_string(), "--store".into(), store];
    let name = [Flag {
        cmd: &["campaign"],
        context: &[],
        flag: "--name",
        valid: &["queue-depth", "a.b_c-1", "x"],
        words: &[".", "-", "_"],
    }];
    let mut extra = vec![path.display().to_string()];
    extra.extend(dry);
    fire(&name, CASES, wd.path(), &extra, None, &[0]);
    assert_eq!(
        listing(wd.path()),
        ["c.toml"],
        "a dry run left files behind"
    );
}
