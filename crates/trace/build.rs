//! Compiles `src/bpf/layers.bpf.c`, `files.bpf.c` and `capture.bpf.c` to BPF objects with
//! clang when clang is there; without it, the objects committed beside them (`src/bpf/*.bpf.o`, built by
//! `scripts/bpf-objects` with the same flags: CO-RE, so portable across kernels) are used, so
//! that every build carries the tracer. `tests/objects.rs` fails when a source no longer
//! matches the committed object. Only when neither is there (a source tree without them) are
//! the objects left empty, and `Tracer::start` (or `FileProbe::attach`, `Capture::start`)
//! says so.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CLANG");
    // Where the objects came from, for `iogauge --version` and `iogauge doctor`: the least
    // of them ("none" over "committed" over "clang").
    let from = ["layers", "files", "capture"]
        .map(compile)
        .into_iter()
        .max_by_key(|f| ["clang", "committed", "none"].iter().position(|x| x == f))
        .expect("three objects");
    println!("cargo:rustc-env=IOGAUGE_BPF_OBJECTS={from}");
}

/// Builds object `name`; says where it came from: "clang", "committed" or "none".
fn compile(name: &str) -> &'static str {
    let src = format!("src/bpf/{name}.bpf.c");
    let committed = format!("src/bpf/{name}.bpf.o");
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed={committed}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let obj = out.join(format!("{name}.bpf.o"));
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    // The source directory mapped to `.` in the debug info: the object is then the same
    // wherever the tree is (scripts/bpf-objects uses the same flags).
    let built = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(format!("-fdebug-prefix-map={dir}=."))
        .args(["-c", &src, "-o"])
        .arg(&obj)
        .status();
    match built {
        Ok(s) if s.success() => "clang",
        Ok(s) => panic!("{clang} failed to compile {src} ({s})"),
        Err(_) if Path::new(&committed).exists() => {
            std::fs::copy(&committed, &obj).expect("OUT_DIR is writable");
            "committed"
        }
        Err(e) => {
            println!("cargo:warning=iogauge-trace: no {clang} ({e}) and no {committed}: the per-layer split will be unavailable");
            std::fs::write(&obj, b"").expect("OUT_DIR is writable");
            "none"
        }
    }
}
