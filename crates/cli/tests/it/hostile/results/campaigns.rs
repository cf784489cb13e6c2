//! Campaigns under attack: a killed runner (row 4), a password in the file (row 5) and on
//! its runs' command lines (issue #44, M2), a huge cross product (row 11), two runners at
//! once (row 12), a bad file path (row 15), `-o -` (row 20), and long store and campaign
//! names (issue #44 L6).

use super::*;
use std::io::{BufRead, BufReader};
use std::process::Child;

/// A campaign of one case and one repetition on `target`, its run `time` long, a `pre` hook
/// that sleeps 5 s while the file `slow` exists in `dir`.
fn one_run_campaign(dir: &Path, name: &str, time: &str) -> PathBuf {
    let file = dir.join(format!("{name}.toml"));
    let text = format!(
        r#"
command = "run"
repeat = 1
warmup = "none"
[options]
target = "{t}"
size = "16m"
time = "{time}"
interval = "250ms"
[commands]
pre = "if [ -f '{d}/slow' ]; then sleep 5; fi"
"#,
        t = dir.join("data").display(),
        d = dir.display()
    );
    std::fs::write(&file, text).unwrap();
    file
}

/// Starts `iogauge campaign FILE` on `store`; returns once its stderr shows `marker`, the
/// rest of its stderr drained in the background.
fn start_campaign(store: &Path, file: &Path, marker: &str) -> Child {
    let mut child = command()
        .env("IOGAUGE_STORE", store)
        .arg("campaign")
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let line = lines.next().expect("campaign ended early").unwrap();
        if line.contains(marker) {
            break;
        }
        assert!(Instant::now() < deadline, "no {marker:?} within 60 s");
    }
    std::thread::spawn(move || for _ in lines {});
    child
}

fn sigkill(child: &mut Child) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
}

// Row 4: the runner killed mid-run; its child is interrupted by the parent-death signal and
// its run stored, marked interrupted and linked to its campaign.
#[test]
fn a_killed_campaign_runner_keeps_its_childs_run_marked_interrupted() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let file = one_run_campaign(w.path(), "killed", "20s");
    let mut runner = start_campaign(&store, &file, "rep 1/1:");
    std::thread::sleep(Duration::from_millis(1500));
    sigkill(&mut runner);
    wait_gone(store.to_str().unwrap());
    let runs = history(&store);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "interrupted", "{runs:?}");
    let out = iog(&store)
        .args(["export", "--campaign", "killed", "--format", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 interrupted run(s)"), "{text}");
}

// Row 12: a second runner of the same campaign on the same store is refused at once, naming
// the first one's PID; a lock left by a killed runner is taken over.
#[test]
fn a_second_runner_of_a_campaign_is_refused_and_a_stale_lock_taken_over() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let file = one_run_campaign(w.path(), "twice", "300ms");
    std::fs::write(w.path().join("slow"), "").unwrap();
    let mut first = start_campaign(&store, &file, "rep 1/1:");
    let started = Instant::now();
    let (code, err) = run_to(&store, &["campaign", file.to_str().unwrap()], Stdio::null());
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: campaign twice: another `iogauge campaign` (PID ")
            && err.contains(&format!("PID {})", first.id())),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "not at once");
    sigkill(&mut first);
    let lock = store.with_file_name("s.sqlite.campaign-twice.lock");
    let held = std::fs::read_to_string(&lock).expect("a killed runner leaves its lock file");
    assert_eq!(held.trim(), first.id().to_string());
    std::fs::remove_file(w.path().join("slow")).unwrap();
    wait_gone(&format!("{}/slow", w.path().display()));
    wait_closed(&lock);
    let out = iog(&store).arg("campaign").arg(&file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the stale lock was not taken over: {err}"
    );
    assert!(!lock.exists(), "the lock outlived its runner");
}

// Issue #44 L6: a long store name and a long campaign name made the lock's file name longer
// than Linux allows ("File name too long").
#[test]
fn long_store_and_campaign_names_still_lock() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join(format!("{}.sqlite", "s".repeat(240)));
    // The longest campaign name there is.
    let file = one_run_campaign(w.path(), &"c".repeat(100), "300ms");
    let out = iog(&store).arg("campaign").arg(&file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(history(&store).len(), 1);
    let locks: Vec<_> = std::fs::read_dir(w.path())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert!(locks.is_empty(), "the lock went with its runner: {locks:?}");
}

// Row 5: a password in a campaign's DSN is masked everywhere it could show or be stored; the
// runs themselves get the real one (they connect and measure).
#[test]
fn a_campaign_password_is_never_printed_or_stored() {
    let _g = busy();
    let w = workdir();
    let pg = Postgres::start(w.path());
    let store = w.path().join("s.sqlite");
    load_schemas(&store, &pg.dsn());
    let file = w.path().join("secret.toml");
    let text = format!(
        r#"
command = "db run"
repeat = 2
warmup = "none"
[vars]
readers = [1, 2]
[options]
dsn = "{}"
readers = "${{readers}}"
time = "1s"
interval = "500ms"
"#,
        pg.dsn()
    );
    std::fs::write(&file, text).unwrap();
    let mut seen = String::new();
    for extra in [&["--dry-run"][..], &[]] {
        let out = iog(&store)
            .arg("campaign")
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        let all = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
        assert!(out.status.success(), "campaign {extra:?}: {all}");
        assert!(all.contains("postgres:***@127.0.0.1"), "{all}");
        seen += &all;
    }
    assert!(
        seen.contains("runs to go"),
        "the runs did not start: {seen}"
    );
    let runs = history(&store);
    assert_eq!(runs.len(), 4, "{runs:?}");
    for cmd in [
        vec!["report", "--campaign", "secret", "-o", "-"],
        vec!["export", "--campaign", "secret", "--format", "json"],
        vec!["export", "--campaign", "secret", "--format", "csv"],
        vec!["export", "--campaign", "secret", "--format", "md"],
        vec!["history", "--json"],
        vec!["show", "1", "--json"],
        vec!["compare", "readers=1", "readers=2", "--campaign", "secret"],
    ] {
        let out = iog(&store).args(&cmd).output().unwrap();
        assert!(out.status.success(), "{cmd:?}");
        seen = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
        assert!(!seen.contains(SECRET), "{cmd:?} shows the password");
    }
    assert!(seen.contains("readers"), "compare printed nothing");
    // The store's own bytes: the database, its WAL and shared memory, and any lock file.
    for e in std::fs::read_dir(w.path()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("s.sqlite") {
            let bytes = std::fs::read(e.path()).unwrap();
            let found = bytes.windows(SECRET.len()).any(|b| b == SECRET.as_bytes());
            assert!(!found, "{name} holds the password");
        }
    }
}

// Issue #44, M2: a campaign's runs (and its `reset = "db"`) got the real DSN on their
// command lines, which every local user reads in /proc/PID/cmdline; they get it in their
// environment, which only their own user (and root) reads.
#[test]
fn a_campaign_s_runs_get_the_password_off_their_command_lines() {
    let _g = busy();
    let w = workdir();
    let pg = Postgres::start(w.path());
    let store = w.path().join("s.sqlite");
    load_schemas(&store, &pg.dsn());
    let file = w.path().join("argv.toml");
    let text = format!(
        "command = \"db run\"\nrepeat = 2\nwarmup = \"none\"\n[options]\ndsn = \"{}\"\n\
         readers = \"1\"\ntime = \"2s\"\ninterval = \"500ms\"\n[commands]\nreset = \"db\"\n",
        pg.dsn()
    );
    std::fs::write(&file, text).unwrap();
    let mut campaign = command()
        .env("IOGAUGE_STORE", &store)
        .arg("campaign")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command line of every process the runner starts, while the campaign lasts; the
    // environment of a `db run` child, as root and as another user.
    let runner = campaign.id().to_string();
    let (mut seen, mut environ_read, mut refused_to_nobody) = (Vec::new(), false, false);
    while campaign.try_wait().unwrap().is_none() {
        for p in processes_where(|p| {
            // /proc/PID/stat: "PID (COMM) STATE PPID …", COMM in parentheses.
            let stat = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
            let after = stat.rsplit_once(") ").map_or("", |(_, r)| r);
            after.split_whitespace().nth(1) == Some(runner.as_str())
        }) {
            let pid = p.split_whitespace().next().unwrap().to_string();
            if p.contains(" db run ") && !environ_read {
                let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                if !env.is_empty() {
                    let env = String::from_utf8_lossy(&env);
                    assert!(env.contains(&format!("IOGAUGE_DSN={}", pg.dsn())), "{p}");
                    environ_read = true;
                    let other = as_os_user(Some("nobody"), "cat")
                        .arg(format!("/proc/{pid}/environ"))
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status()
                        .unwrap();
                    let alive = Path::new(&format!("/proc/{pid}")).exists();
                    refused_to_nobody = !other.success() && alive;
                }
            }
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = campaign.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "campaign: {err}");
    assert_eq!(
        history(&store).len(),
        2,
        "the runs reached the server: {err}"
    );
    let argv = seen.join("\n");
    assert!(
        !argv.contains(SECRET),
        "a command line shows the password:\n{argv}"
    );
    for child in [" db run ", " db reset"] {
        assert!(argv.contains(child), "no {child:?} seen:\n{argv}");
    }
    assert!(environ_read, "no db run's environment read");
    assert!(refused_to_nobody, "another user read a run's environment");
}

/// A campaign file of `vars` (name, values) for `run`, as text.
fn vars_campaign(vars: &[(&str, usize)]) -> String {
    let mut s = String::from("command = \"run\"\nrepeat = 1\n[vars]\n");
    for (name, n) in vars {
        let values: Vec<String> = (1..=*n).map(|i| i.to_string()).collect();
        s += &format!("{name} = [{}]\n", values.join(", "));
    }
    s += "[options]\ntarget = \"./data\"\nqd = \"${a}\"\nsize = \"${b}m\"\ntime = \"1s\"\n";
    s
}

// Row 11: 1000 × 256 × 1000 values is refused before the cross product is built.
#[test]
fn a_huge_campaign_is_refused_before_it_is_built() {
    let _g = shared();
    let w = workdir();
    let file = w.path().join("huge.toml");
    std::fs::write(
        &file,
        vars_campaign(&[("a", 1000), ("b", 256), ("c", 1000)]),
    )
    .unwrap();
    let started = Instant::now();
    let e = fails(&["campaign", "--dry-run", file.to_str().unwrap()], 2);
    assert!(
        e.contains("256000000 cases") && e.contains("at most 10000"),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

// Row 11: planning is linear: 10,000 cases plan (and are each checked) in well under a
// second of CPU (the quadratic name check and a parser built per case took seconds).
#[test]
// The child is reaped by wait4(2), which also gives its own CPU time; std's wait cannot.
#[allow(clippy::zombie_processes)]
fn ten_thousand_cases_plan_in_well_under_a_second() {
    let _g = shared();
    let w = workdir();
    let file = w.path().join("wide.toml");
    std::fs::write(&file, vars_campaign(&[("a", 100), ("b", 100)])).unwrap();
    let child = command()
        .current_dir(w.path())
        .env("IOGAUGE_STORE", w.path().join("s.sqlite"))
        .args(["campaign", "--dry-run"])
        .arg(&file)
        .stdout(std::fs::File::create(w.path().join("plan.txt")).unwrap())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    // CPU time of this child alone (wait4), so a busy machine does not fail the test.
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4(2) reaps our own child and fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `status` and `usage` are ours and outlive the call.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    let cpu = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let secs = cpu(usage.ru_utime) + cpu(usage.ru_stime);
    assert!(secs < 1.0, "planning 10,000 cases took {secs:.2} s of CPU");
    let plan = std::fs::read_to_string(w.path().join("plan.txt")).unwrap();
    assert!(plan.contains("10000 cases × 1 repetitions"), "{plan}");
    // One repetition and its warm-up per case.
    assert_eq!(plan.lines().count(), 20_002);
}

// Row 15 (campaign part): a directory, or a path that is not UTF-8, is one usage line.
#[test]
fn a_campaign_path_that_is_a_directory_or_not_text_is_a_usage_error() {
    let _g = shared();
    use std::os::unix::ffi::OsStrExt;
    let w = workdir();
    let e = fails(&["campaign", w.path().to_str().unwrap()], 2);
    assert!(e.contains("is a directory"), "{e}");
    let odd = w.path().join(std::ffi::OsStr::from_bytes(b"c\xff.toml"));
    std::fs::write(&odd, "command = \"run\"\n[options]\ntarget = \"./x\"\n").unwrap();
    let out = bin()
        .arg("campaign")
        .arg("--dry-run")
        .arg(&odd)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("not valid UTF-8"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1);
    let bytes = w.path().join("bytes.toml");
    std::fs::write(&bytes, b"command = \"run\"\n# \xff\xfe\n").unwrap();
    let e = fails(&["campaign", bytes.to_str().unwrap()], 2);
    assert!(e.contains("not UTF-8 text"), "{e}");
}

// Row 20: `-o -` is stdout, not a file named `-`.
#[test]
fn report_and_export_to_dash_write_stdout() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let file = one_run_campaign(w.path(), "dash", "300ms");
    let out = iog(&store).arg("campaign").arg(&file).output().unwrap();
    assert_success(&out);
    for (cmd, start) in [
        (
            vec!["report", "--campaign", "dash", "-o", "-"],
            "<!DOCTYPE html>",
        ),
        (
            vec![
                "export",
                "--campaign",
                "dash",
                "--format",
                "json",
                "-o",
                "-",
            ],
            "{",
        ),
    ] {
        let out = iog(&store)
            .current_dir(w.path())
            .args(&cmd)
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.trim_start().starts_with(start), "{cmd:?}: {text:.80}");
        assert!(!w.path().join("-").exists(), "{cmd:?} wrote a file named -");
    }
}

// The `[commands]` note of issue #14: `${var}` is pasted raw into `sh -c` (by design), and
// every variable is also in the environment as IOGAUGE_VAR_<NAME>, which a hook can quote:
// a value holding `;` and `$(…)` stays data.
#[test]
fn hook_variables_are_in_the_environment_to_quote() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let file = w.path().join("quote.toml");
    let text = format!(
        r#"
command = "run"
repeat = 1
warmup = "none"
[vars]
label = "a; touch pwned $(touch pwned2)"
[options]
target = "{t}"
size = "16m"
time = "300ms"
[commands]
pre = "printf '%s\n' \"$IOGAUGE_VAR_LABEL\" >> hooks.log"
"#,
        t = w.path().join("data").display()
    );
    std::fs::write(&file, text).unwrap();
    let out = iog(&store)
        .current_dir(w.path())
        .arg("campaign")
        .arg(&file)
        .output()
        .unwrap();
    assert_success(&out);
    let log = std::fs::read_to_string(w.path().join("hooks.log")).unwrap();
    assert_eq!(log, "a; touch pwned $(touch pwned2)\n");
    assert!(!w.path().join("pwned").exists() && !w.path().join("pwned2").exists());
}
