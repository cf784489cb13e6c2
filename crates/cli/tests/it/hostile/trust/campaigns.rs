//! Issue #44, L8: campaign files under the trust rule. iogauge runs a campaign's command lines
//! and hooks as itself (root when it is root): a file another user owns or may write, or in a
//! directory such a user could change, is refused before any of it runs; hooks run with the
//! file's directory as IOGAUGE_CAMPAIGN_DIR, so with hooks that directory may not be a shared
//! one (sticky or not). A hook changed between runs is noticed on resume.

use super::*;

/// A one-run campaign at `file` whose `pre` hook runs `pre`, its target in `data`.
fn campaign(file: &Path, data: &Path, pre: Option<&str>) {
    let mut text = format!(
        "command = \"run\"\nrepeat = 1\nwarmup = \"none\"\n[options]\ntarget = \"{}\"\n\
         size = \"4m\"\ntime = \"1s\"\ninterval = \"250ms\"\n",
        data.display()
    );
    if let Some(p) = pre {
        text.push_str(&format!("[commands]\npre = \"{p}\"\n"));
    }
    std::fs::write(file, text).unwrap();
    chmod(file, 0o644);
}

fn campaign_on(store: &Path, file: &Path, extra: &[&str]) -> Output {
    bin()
        .env("IOGAUGE_STORE", store)
        .arg("campaign")
        .arg(file)
        .args(extra)
        .output()
        .unwrap()
}

// L8: a campaign file nobody owns, one every user may write, one in a directory of nobody's,
// and one with hooks in a sticky shared directory: each refused in one line, nothing run.
#[test]
fn l8_campaign_files_another_user_could_change_are_refused_unrun() {
    let (_g, w) = root_test(shared);
    let tmp = public_tmp(&w);
    let store = w.path().join("s.sqlite");
    let secret = w.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    let proof = secret.join("ran");
    let pre = format!("touch '{}'", proof.display());
    let data = w.path().join("data");
    let refused = |file: &Path, says: &str| {
        let e = fails(&["campaign", s(file)], 2);
        assert!(
            e.contains(&format!("campaign file {}", file.display())) && e.contains(says),
            "{e}"
        );
        assert!(!proof.exists(), "a hook of {} ran", file.display());
    };
    let nobodys = w.path().join("nobodys.toml");
    campaign(&nobodys, &data, Some(&pre));
    std::os::unix::fs::chown(&nobodys, Some(65534), None).unwrap();
    refused(&nobodys, "owned by nobody");
    let open = w.path().join("open.toml");
    campaign(&open, &data, Some(&pre));
    chmod(&open, 0o666);
    refused(&open, "writable by its group and every user (mode 0666)");
    let theirs = tmp.join("theirs");
    as_nobody(&format!("mkdir '{}'", theirs.display()));
    let inside = theirs.join("c.toml");
    campaign(&inside, &data, Some(&pre));
    refused(
        &inside,
        &format!(
            "the directory above it, {}, is owned by nobody",
            theirs.display()
        ),
    );
    let shared_file = tmp.join("hooked.toml");
    campaign(&shared_file, &data, Some(&pre));
    refused(
        &shared_file,
        &format!("IOGAUGE_CAMPAIGN_DIR={}, which is writable", tmp.display()),
    );
    // Without hooks, a file of root's in the sticky directory runs.
    let plain = tmp.join("plain.toml");
    campaign(&plain, &data, None);
    let out = campaign_on(&store, &plain, &[]);
    assert_success(&out);
}

// L8: a campaign resumed (rerun on the same store) after its `pre` hook changed is refused,
// naming the hook; put back it resumes, and --fresh starts it over with the new hook.
#[test]
fn l8_a_hook_changed_between_runs_is_noticed_on_resume() {
    let (_g, w) = root_test(shared);
    let store = w.path().join("s.sqlite");
    let data = w.path().join("data");
    let file = w.path().join("hooked.toml");
    campaign(&file, &data, Some("true"));
    let out = campaign_on(&store, &file, &[]);
    assert_success(&out);
    campaign(&file, &data, Some("echo changed"));
    let out = campaign_on(&store, &file, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("campaign hooked: commands.pre changed since the runs")
            && err.contains("--fresh"),
        "{err}"
    );
    campaign(&file, &data, Some("true"));
    let out = campaign_on(&store, &file, &[]);
    assert_success(&out);
    campaign(&file, &data, Some("echo changed"));
    let out = campaign_on(&store, &file, &["--fresh"]);
    assert_success(&out);
}
