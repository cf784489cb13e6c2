//! The storage facts every result records and prints (#28): the mount's options, the
//! device's write cache, and how fragmented the target's files are; `compare` names the facts
//! that differ between two results. Each is made for real on loop devices: ext4 mounted with
//! `data=journal` on a device whose write cache is switched off, btrfs with `nodatacow`, and a
//! file written into the free space a fragmenting writer left.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A loop device over a sparse image of `mib` MiB with `mkfs` on it, mounted at `dir/mnt`
/// with `opts`; unmounted, then detached, when dropped (fields drop in order).
struct Fs {
    mount: Mount,
    dev: Loop,
}

impl Fs {
    fn new(dir: &Path, name: &str, mib: u32, mkfs: &str, opts: &str) -> Fs {
        let img = dir.join(format!("{name}.img"));
        sh(&format!("truncate -s {mib}m '{}'", img.display()));
        let dev = Loop::new(&img);
        sh(&format!("{mkfs} {}", dev.0));
        let mnt = dir.join(name);
        std::fs::create_dir_all(&mnt).unwrap();
        sh(&format!("mount -o {opts} {} '{}'", dev.0, mnt.display()));
        Fs {
            mount: Mount(mnt),
            dev,
        }
    }

    fn dir(&self) -> &Path {
        &self.mount.0
    }

    fn device(&self) -> &str {
        self.dev.0.trim_start_matches("/dev/")
    }
}

impl Drop for Fs {
    /// The write cache back on: the next test given this loop device finds it as it was.
    fn drop(&mut self) {
        let wc = format!("/sys/block/{}/queue/write_cache", self.device());
        let _ = std::fs::write(wc, "write back");
    }
}

/// `iogauge run` of a few reads on `target`: its JSON and stored id.
fn run_on(target: &Path, size: &str) -> (Value, i64) {
    let t = target.to_str().unwrap();
    let out = succeeds(&[
        "run", "--target", t, "--size", size, "--ios", "200", "--json",
    ]);
    (
        serde_json::from_slice(&out.stdout).expect("JSON"),
        stored_id(&out.stderr),
    )
}

fn options(v: &Value) -> Vec<String> {
    v["preflight"]["targets"][0]["mount"]["options"]
        .as_array()
        .expect("the mount's options are stored")
        .iter()
        .map(|o| o.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn mount_options_and_write_cache_are_recorded_and_compared() {
    let (_g, d) = root_test(busy);
    let journal = Fs::new(d.path(), "j", 128, "mkfs.ext4 -q -F", "data=journal");
    let wc = format!("/sys/block/{}/queue/write_cache", journal.device());
    sh(&format!("echo 'write through' > {wc}"));
    let cow = Fs::new(d.path(), "b", 256, "mkfs.btrfs -q -f", "nodatacow");
    // A loop device keeps its queue settings from one attachment to the next: set both.
    let wb = format!("/sys/block/{}/queue/write_cache", cow.device());
    sh(&format!("echo 'write back' > {wb}"));

    let (j, jid) = run_on(&journal.dir().join("f"), "16m");
    assert!(
        options(&j).contains(&"data=journal".into()),
        "{:?}",
        options(&j)
    );
    let dev = &j["preflight"]["targets"][0]["device"];
    assert_eq!(dev["name"], journal.device());
    assert_eq!(dev["queue"]["write_cache"], "write through");
    assert!(dev["queue"]["logical_block"].as_u64().is_some(), "{dev}");

    let (b, bid) = run_on(&cow.dir().join("f"), "16m");
    assert!(
        options(&b).contains(&"nodatacow".into()),
        "{:?}",
        options(&b)
    );

    // Printed with the target, as `show` gives it back.
    let text = text_of(&["show", &jid.to_string()]);
    assert!(
        text.contains("(ext4): ") && text.contains("data=journal"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}: write cache write through", journal.device())),
        "{text}"
    );

    // compare names what moved besides the storage.
    let c = text_of(&["compare", &jid.to_string(), &bid.to_string()]);
    let facts: Vec<&str> = c
        .lines()
        .skip_while(|l| !l.starts_with("storage facts that differ"))
        .skip(1)
        .collect();
    assert!(
        facts.contains(&"  target: filesystem differs: ext4 → btrfs"),
        "{c}"
    );
    let opts = facts
        .iter()
        .find(|l| l.starts_with("  target: mount options differ: "))
        .unwrap_or_else(|| panic!("{c}"));
    assert!(
        opts.contains("+nodatacow") && opts.contains("-data=journal"),
        "{opts}"
    );
    assert!(
        facts.contains(&"  target: write cache differs: write through → write back"),
        "{c}"
    );
    let cj = json_of(&["compare", &jid.to_string(), &bid.to_string(), "--json"]);
    assert_eq!(cj["facts_differ"].as_array().unwrap().len(), facts.len());
    let same = json_of(&["compare", &jid.to_string(), &jid.to_string(), "--json"]);
    assert_eq!(same["facts_differ"], serde_json::json!([]));
}

/// The fragmenting writer: 64 KiB files until the filesystem is full, then every other one
/// deleted, so the free space is 64 KiB holes; the run's target file, created and pre-filled
/// into them, is hundreds of extents, and the run says so. A file made on the same
/// filesystem type with room is a few extents per GiB and draws nothing.
#[test]
fn a_fragmented_file_is_detected() {
    let (_g, d) = root_test(busy);
    let fs = Fs::new(d.path(), "frag", 160, "mkfs.ext4 -q -F -b 4096", "noatime");
    let fill = fs.dir().join("fill");
    std::fs::create_dir_all(&fill).unwrap();
    let piece = vec![0x3c_u8; 64 << 10];
    let mut n = 0;
    while std::fs::write(fill.join(n.to_string()), &piece).is_ok() {
        n += 1;
    }
    assert!(n > 1000, "only {n} pieces fit");
    for i in (0..n).step_by(2) {
        std::fs::remove_file(fill.join(i.to_string())).unwrap();
    }
    sh("sync");

    let (v, _) = run_on(&fs.dir().join("data"), "40m");
    let layout = &v["preflight"]["targets"][0]["layout"];
    let (extents, bytes) = (u(&layout["extents"]), u(&layout["bytes"]));
    assert_eq!(bytes, 40 << 20, "{layout}");
    assert!(extents > 160, "40 MiB in 64 KiB holes: {layout}");
    let warned: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("is fragmented"))
        .collect();
    assert_eq!(warned.len(), 1, "{}", v["warnings"]);
    assert!(warned[0].contains("extents per GiB"), "{}", warned[0]);

    let roomy = workdir();
    let (v, _) = run_on(&roomy.path().join("data"), "40m");
    let layout = &v["preflight"]["targets"][0]["layout"];
    assert!(u(&layout["extents"]) < 10, "{layout}");
    assert!(
        !v["warnings"].to_string().contains("fragmented"),
        "{}",
        v["warnings"]
    );
}
