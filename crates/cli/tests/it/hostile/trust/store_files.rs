//! The files beside the results store under attack (issue #44 H2): the store in a sticky
//! directory anyone may write to (as /tmp), where `nobody` makes `live/` first with links at
//! the names of the next PIDs, or a link at a campaign's lock. Root's run still runs and is
//! stored, without a live view and saying why; the campaign is refused in one line naming the
//! lock and the way out; the file of root's the links lead to is untouched.

use super::*;

/// Links at `dir/PID.jsonl` to `victim` for the next `n` PIDs, given to `nobody` as `nobody`
/// would make them (made here in bulk: the machine's other tests use PIDs fast).
fn links_at_next_pids(dir: &Path, victim: &Path, n: u32) {
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    for pid in last + 1..=last + n {
        std::os::unix::fs::symlink(victim, dir.join(format!("{pid}.jsonl"))).unwrap();
    }
    sh(&format!("chown -h -R nobody '{}'", dir.display()));
}

#[test]
fn h2_a_live_dir_another_user_made_is_never_written_through() {
    let (_g, w) = root_test(shared);
    let tmp = public_tmp(&w);
    let victim = roots_dir(&w.path().join("roots")).join("keep.txt");
    let live = tmp.join("live");
    as_nobody(&format!("mkdir '{}'", live.display()));
    links_at_next_pids(&live, &victim, 20_000);
    let store = tmp.join("s.sqlite");
    let t = w.path().join("t");
    let out = bin()
        .args(["run", "--store", s(&store), "--target", s(&t)])
        .args(["--size", "4m", "--ios", "200", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run still runs: {err}");
    let id = stored_id(&out.stderr);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("no live view for `iogauge watch`: ")
            && warnings.contains(&format!("{}: owned by nobody", live.display())),
        "{warnings}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
    assert_eq!(owner(&victim), 0);
    assert_eq!(
        names(&live).len(),
        20_000,
        "nobody's files are his to remove"
    );
    let shown = bin()
        .args(["show", &id.to_string(), "--json", "--store", s(&store)])
        .output()
        .unwrap();
    assert!(shown.status.success(), "stored");
}

#[test]
fn h2_a_campaign_lock_another_user_planted_is_refused() {
    let (_g, w) = root_test(shared);
    let tmp = public_tmp(&w);
    let victim = roots_dir(&w.path().join("roots")).join("keep.txt");
    let store = tmp.join("s.sqlite");
    let file = w.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            "command = \"run\"\nrepeat = 1\nwarmup = \"none\"\n[options]\ntarget = \"{}\"\nsize = \"4m\"\nios = 50\n",
            w.path().join("t").display()
        ),
    )
    .unwrap();
    let lock = tmp.join("s.sqlite.campaign-c.lock");
    let campaign = || {
        bin()
            .args(["campaign", s(&file), "--store", s(&store)])
            .output()
            .unwrap()
    };
    // A link to root's file, then a file of nobody's: each refused, exit 2, one line.
    for plant in [
        format!("ln -s '{}' '{}'", victim.display(), lock.display()),
        format!("rm '{l}' && echo 1 > '{l}'", l = lock.display()),
    ] {
        as_nobody(&plant);
        let out = campaign();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{plant}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "error: campaign c: its lock file {}: ",
                lock.display()
            )),
            "{err}"
        );
        assert!(
            err.contains("symbolic link") || err.contains("owned by nobody"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
    }
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        "1\n",
        "nobody's, as he left it"
    );
    // Its name free again, the campaign runs and its lock goes with it.
    std::fs::remove_file(&lock).unwrap();
    let out = campaign();
    assert_success(&out);
    assert!(!lock.exists());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
}
