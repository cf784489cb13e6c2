//! Compiles `src/bpf/layers.bpf.c` and `src/bpf/files.bpf.c` to BPF objects with clang when
//! clang is there. Without it the objects are left empty: the crate still builds, and
//! `Tracer::start` (or `FileProbe::attach`) says that this iogauge was built without clang
//! (the per-layer split, or a file's write times, are then unavailable).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CLANG");
    for name in ["layers", "files"] {
        compile(name);
    }
}

fn compile(name: &str) {
    let src = format!("src/bpf/{name}.bpf.c");
    println!("cargo:rerun-if-changed={src}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let obj = out.join(format!("{name}.bpf.o"));
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let built = Command::new(&clang)
        .args([
            "-O2", "-g", "-target", "bpf", "-Wall", "-Werror", "-c", &src, "-o",
        ])
        .arg(&obj)
        .status();
    match built {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("{clang} failed to compile {src} ({s})"),
        Err(e) => {
            println!("cargo:warning=iogauge-trace: no {clang} ({e}): the per-layer split will be unavailable");
            std::fs::write(&obj, b"").expect("OUT_DIR is writable");
        }
    }
}
