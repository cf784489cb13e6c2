//! `iogauge watch`: timestamped plain lines, the device filter, following a run in progress
//! through its live file, and the full-screen view on a real pseudo-terminal.
//!
//! `watch` follows the newest run of its store (the live files beside it), so each test has a
//! store of its own: with the shared one, it would follow whatever another test is running.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// `iogauge watch --plain ARGS` on `store` (whose live runs it follows): its lines.
fn plain(store: &Path, args: &[&str]) -> Vec<String> {
    let out = bin()
        .env("IOGAUGE_STORE", store)
        .args(["watch", "--plain"])
        .args(args)
        .output()
        .expect("spawn iogauge watch");
    assert_ran(&out, &format!("watch {args:?}"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Device names in a plain line: the word before each " r/s ".
fn devices_in(line: &str) -> Vec<String> {
    line.split(" | ")
        .filter(|p| p.contains(" r/s "))
        .map(|p| p.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn plain_lines_are_timestamped_and_filtered() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    // Every whole disk with I/O since boot, idle or not: by default a line shows only the
    // devices that did I/O in its interval, and in a quiet 200 ms there may be none.
    let lines = plain(
        &store,
        &["--count", "3", "--interval", "200ms", "--devices", "all"],
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    for l in &lines {
        let ts = l.split(" | ").next().unwrap();
        assert!(
            ts.parse::<jiff::Timestamp>().is_ok(),
            "{ts:?} is not a timestamp"
        );
        assert!(l.contains("| cpu usr "), "{l}");
        for col in ["rMB/s", "rareq-sz", "aqu-sz", "r_await", "w_await", "util"] {
            assert!(l.contains(col), "{col} missing: {l}");
        }
    }
    let all = devices_in(&lines[0]);
    assert!(!all.is_empty(), "no device in {}", lines[0]);
    let one = &all[all.len() - 1];
    let lines = plain(
        &store,
        &["--count", "1", "--interval", "100ms", "--devices", one],
    );
    assert_eq!(devices_in(&lines[0]), vec![one.clone()]);

    let e = fails(
        &[
            "watch",
            "--plain",
            "--devices",
            "nosuchdisk9",
            "--count",
            "1",
        ],
        2,
    );
    assert!(e.contains("--devices") && e.contains("nosuchdisk9"), "{e}");
    let e = fails(&["watch", "--interval", "10ms", "--count", "1"], 2);
    assert!(e.contains("--interval"), "{e}");
}

#[test]
fn plain_follows_a_run_in_progress() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let p = t.to_str().unwrap();
    let store = d.path().join("s.sqlite");
    // Create and fill the file first, so the followed run starts at once.
    run_json(&["--target", p, "--size", "32m", "--ios", "10"]);
    let mut run = spawn_on(&store, &["run", "--target", p, "--qd", "4", "--time", "4s"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let lines = plain(&store, &["--count", "4", "--interval", "500ms"]);
    let tag = format!("| run {} ", run.id());
    let seen: Vec<&String> = lines.iter().filter(|l| l.contains(&tag)).collect();
    assert!(seen.len() >= 2, "run {} not followed: {lines:?}", run.id());
    assert!(seen
        .iter()
        .all(|l| l.contains(" read ") && l.contains(" IOPS ")));
    // The run's intervals go out with the sampler's figures for them: the block layer's
    // split of the busiest disk's time (the tracer runs by default).
    assert!(
        seen.iter()
            .any(|l| l.contains(" queue ") && l.contains(" ms device ")),
        "no queue/device split live: {seen:?}"
    );
    assert!(run.wait().unwrap().success());
    // The live file goes with the run: nothing left to follow.
    let after = plain(&store, &["--count", "1", "--interval", "100ms"]);
    assert!(!after[0].contains("| run "), "{}", after[0]);
}

/// What `watch EXTRA --count 2 --interval 200ms` draws on a 30×140 pseudo-terminal
/// (script(1)), on an empty store of its own.
fn full_screen(extra: &str) -> String {
    let d = workdir();
    let cmd = format!(
        "stty rows 30 cols 140; {} watch {extra} --count 2 --interval 200ms",
        exe().display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("IOGAUGE_STORE", d.path().join("s.sqlite"))
        .output()
        .expect("script(1) from bsdutils runs the view on a pseudo-terminal");
    assert_success(&out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn full_screen_view_draws_and_restores_the_terminal() {
    let _g = shared();
    let screen = full_screen("");
    for word in [
        "iogauge watch",
        "devices",
        "r_await",
        "%util",
        "CPU",
        "busy",
    ] {
        assert!(screen.contains(word), "{word} not drawn: {screen}");
    }
    // Entered and left the alternate screen, cursor shown again.
    let enter = screen
        .find("\x1b[?1049h")
        .expect("alternate screen entered");
    let leave = screen.rfind("\x1b[?1049l").expect("alternate screen left");
    assert!(leave > enter);
    assert!(screen[leave..].contains("\x1b[?25h"), "cursor not restored");
}

/// The whole disk (an entry of /sys/block) holding `path`.
fn disk_of(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).unwrap();
    // A partition's directory sits inside its disk's.
    let disk = if sys.join("partition").exists() {
        sys.parent().unwrap().to_path_buf()
    } else {
        sys
    };
    disk.file_name().unwrap().to_string_lossy().into_owned()
}

/// By default only devices that do I/O while watch runs are shown (an idle loop device stays
/// out); the disk under a run started meanwhile appears, and every device shown is one
/// `--devices all` lists.
#[test]
fn by_default_only_devices_doing_io_are_shown() {
    let (_g, d) = root_test(heavy);
    let store = d.path().join("s.sqlite");
    // An idle loop device: attached (its partition table read once), then left alone.
    let image = d.path().join("idle.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let idle = Loop::new(&image);
    let idle = idle.0.trim_start_matches("/dev/").to_string();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let target = d.path().join("busy");
    let mut run = Command::new(exe())
        .env("IOGAUGE_STORE", d.path().join("other.sqlite"))
        .args(["run", "--target", target.to_str().unwrap(), "--size", "32M"])
        .args(["--time", "4s", "--qd", "4"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = plain(&store, &["--count", "6", "--interval", "500ms"]);
    run.wait().unwrap();
    let all = devices_in(
        &plain(
            &store,
            &["--count", "1", "--interval", "100ms", "--devices", "all"],
        )[0],
    );
    let disk = disk_of(d.path());
    let last = devices_in(lines.last().unwrap());
    assert!(last.contains(&disk), "{disk} not in {last:?}: {lines:?}");
    assert!(!last.contains(&idle), "the idle {idle} is shown: {last:?}");
    assert!(
        all.contains(&idle),
        "--devices all leaves out {idle}: {all:?}"
    );
    for name in &last {
        assert!(
            all.contains(name),
            "{name} is not a device --devices all lists: {all:?}"
        );
    }
}

/// The N of each `cpuN` line of /proc/stat (the online CPUs), checked against the kernel's
/// count of online CPUs.
fn online_cpus() -> Vec<u32> {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let cpus: Vec<u32> = stat
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .strip_prefix("cpu")?
                .parse()
                .ok()
        })
        .collect();
    // SAFETY: sysconf only reads a system setting.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    assert_eq!(cpus.len() as i64, online as i64, "{stat}");
    cpus
}

/// `--cpu each`: after each interval's line, one line per CPU of this machine, stamped like
/// it, with percentages that add up to 100; the default `total` prints none; the interval's
/// line has the load average; a bad `--cpu` is one line naming the flag and its values.
#[test]
fn each_cpu_has_a_line_of_its_own() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let cpus = online_cpus();
    let lines = plain(
        &store,
        &["--cpu", "each", "--count", "2", "--interval", "200ms"],
    );
    assert_eq!(lines.len(), 2 * (1 + cpus.len()), "{lines:#?}");
    for block in lines.chunks(1 + cpus.len()) {
        let head = &block[0];
        assert!(
            head.contains("| cpu usr ") && head.contains("| load "),
            "{head}"
        );
        let ts = head.split(" | ").next().unwrap();
        let mut seen = Vec::new();
        for l in &block[1..] {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 12, "{l}");
            assert_eq!(w[0], ts, "{l}");
            let labels = [w[2], w[4], w[6], w[8], w[10]];
            assert_eq!(labels, ["usr", "sys", "iow", "steal", "idle"], "{l}");
            let sum: f64 = [w[3], w[5], w[7], w[9], w[11]]
                .iter()
                .map(|v| v.parse::<f64>().unwrap())
                .sum();
            // Five figures each rounded to a whole percent.
            assert!((sum - 100.0).abs() <= 3.0, "{l}");
            seen.push(w[1].strip_prefix("cpu").unwrap().parse::<u32>().unwrap());
        }
        assert_eq!(seen, cpus, "{block:#?}");
    }
    let lines = plain(&store, &["--count", "1", "--interval", "100ms"]);
    assert_eq!(lines.len(), 1, "--cpu total is the default: {lines:?}");

    let e = fails(&["watch", "--plain", "--cpu", "all", "--count", "1"], 2);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains("--cpu") && e.contains("total") && e.contains("each"),
        "{e}"
    );
}

/// The full-screen view with `--cpu each`: a cell for each CPU and the load average.
#[test]
fn full_screen_view_shows_each_cpu() {
    let _g = shared();
    let screen = full_screen("--cpu each");
    // The terminal skips blanks by moving the cursor: look for single words.
    let mut words = vec!["each".to_string(), "load".to_string()];
    words.extend(online_cpus().iter().map(|n| format!("cpu{n}")));
    for word in &words {
        assert!(screen.contains(word.as_str()), "{word} not drawn: {screen}");
    }
}

/// A run's stored samples (read back from its store) keep each CPU's counters, as compact
/// arrays `[N, user, nice, system, idle, iowait, irq, softirq, steal]`, and the load average.
#[test]
fn a_run_stores_each_cpu_and_the_load_average() {
    let _g = heavy();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let t = d.path().join("data");
    let run = bin()
        .env("IOGAUGE_STORE", &store)
        .args(["run", "--target", t.to_str().unwrap()])
        .args(["--size", "16m", "--time", "1s", "--qd", "4"])
        .output()
        .unwrap();
    assert_success(&run);
    let show = bin()
        .env("IOGAUGE_STORE", &store)
        .args(["show", "1", "--json"])
        .output()
        .unwrap();
    assert!(show.status.success());
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let samples = v["samples"].as_array().expect("samples stored");
    assert!(samples.len() >= 2, "{samples:?}");
    let cpus = online_cpus();
    for s in samples {
        let lines = s["cpus"]
            .as_array()
            .unwrap_or_else(|| panic!("no cpus: {s}"));
        let ns: Vec<u32> = lines
            .iter()
            .map(|l| l[0].as_u64().unwrap() as u32)
            .collect();
        assert_eq!(ns, cpus, "{s}");
        for l in lines {
            let a = l.as_array().unwrap();
            assert!(a.len() == 9 && a.iter().all(|x| x.is_u64()), "{l}");
            assert!(a[4].as_u64().unwrap() > 0, "idle ticks: {l}");
        }
        let load = &s["load"];
        for k in ["one", "five", "fifteen"] {
            assert!(load[k].as_f64().is_some_and(|x| x >= 0.0), "{load}");
        }
        assert!(load["tasks"].as_u64().is_some_and(|n| n > 0), "{load}");
    }
}
