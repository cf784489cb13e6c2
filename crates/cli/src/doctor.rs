//! `iogauge doctor`: what this machine gives iogauge, one line a piece, and for each piece
//! missing what it costs and how to get it. It reads the kernel's settings, opens one
//! unnamed file (`O_TMPFILE`, gone when closed) in the target directory, and loads and
//! detaches the tracer's BPF programs; it creates, mounts and changes nothing.

pub mod args;
mod checks;

use args::DoctorArgs;
use checks::{Check, Status};
use std::process::ExitCode;
use std::sync::LazyLock;

/// The version line of `iogauge --version` (and `-V`): the version and the build's
/// features, the tracer's BPF objects (and where they came from) and MPI.
pub fn version() -> &'static str {
    static LINE: LazyLock<String> = LazyLock::new(|| {
        let tracer = match iogauge_trace::OBJECTS_FROM {
            "none" => "tracer not built in: no BPF objects".to_string(),
            from => format!("tracer built in: BPF objects {}", objects_from(from)),
        };
        let mpi = if cfg!(feature = "mpi") {
            "mpi built in"
        } else {
            "mpi not built in"
        };
        format!("{} ({tracer}; {mpi})", env!("CARGO_PKG_VERSION"))
    });
    LINE.as_str()
}

fn objects_from(from: &str) -> &'static str {
    match from {
        "clang" => "compiled by clang",
        _ => "committed in the source tree",
    }
}

pub fn doctor(a: DoctorArgs) -> anyhow::Result<ExitCode> {
    let dir = args::target_dir(a.target.as_deref())?;
    let checks = checks::all(&dir);
    if a.json {
        let doc = serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "tracer_objects": iogauge_trace::OBJECTS_FROM,
            "mpi": cfg!(feature = "mpi"),
            "checks": checks.iter().map(Check::json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!("iogauge {}", version());
        for c in &checks {
            println!("{}", c.line());
        }
        let missing = checks
            .iter()
            .filter(|c| matches!(c.status, Status::Missing | Status::Limited))
            .count();
        println!(
            "{}",
            match missing {
                0 => "everything iogauge uses is here".to_string(),
                n => format!("{n} piece(s) missing or limited: each line above says what it costs and the fix"),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
