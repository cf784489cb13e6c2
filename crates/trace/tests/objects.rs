//! The committed BPF objects (`src/bpf/*.bpf.o`, what a build without clang carries) are
//! those of today's sources: their SHA-256 as recorded when they were built
//! (`scripts/bpf-objects`), and, with the clang that built them, the same bytes as a build of
//! the sources with build.rs's flags.

use std::path::Path;
use std::process::Command;

const NAMES: [&str; 3] = ["layers", "files", "capture"];

fn bpf_dir() -> &'static Path {
    Path::new("src/bpf")
}

#[test]
fn the_sources_are_those_the_objects_were_built_from() {
    let out = Command::new("sha256sum")
        .args(["--check", "--strict", "objects.sha256"])
        .current_dir(bpf_dir())
        .output()
        .expect("sha256sum (coreutils)");
    assert!(
        out.status.success(),
        "a BPF source changed since its committed object was built: run scripts/bpf-objects\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_objects_are_what_clang_builds_from_the_sources() {
    let recorded = std::fs::read_to_string(bpf_dir().join("objects.clang")).expect("objects.clang");
    let version = Command::new("clang")
        .arg("--version")
        .output()
        .expect("clang is installed where the tests run (scripts/test installs it)");
    let version = String::from_utf8_lossy(&version.stdout);
    let first = version.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        recorded.trim(),
        "the committed objects were built by another clang: run scripts/bpf-objects"
    );
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let here = std::env::current_dir().expect("the crate's directory");
    for name in NAMES {
        let obj = tmp.path().join(format!("{name}.bpf.o"));
        let ok = Command::new("clang")
            .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
            .arg(format!("-fdebug-prefix-map={}=.", here.display()))
            .args(["-c", &format!("src/bpf/{name}.bpf.c"), "-o"])
            .arg(&obj)
            .status()
            .expect("clang runs");
        assert!(ok.success(), "clang failed on {name}.bpf.c");
        let built = std::fs::read(&obj).expect("the object built");
        let committed = std::fs::read(bpf_dir().join(format!("{name}.bpf.o"))).expect("committed");
        assert!(
            built == committed,
            "src/bpf/{name}.bpf.o is not what its source builds to: run scripts/bpf-objects"
        );
    }
}
