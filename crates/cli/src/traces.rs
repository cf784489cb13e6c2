//! `iogauge traces`: the stored traces (captures, imports) listed, shown, exported for fio or
//! blktrace's tools, imported from them, removed.

pub mod args;

use crate::session::print_stdout;
use crate::usage::UsageError;
use anyhow::Context;
use args::{ExportFormat, TracesArgs, TracesCommand};
use iogauge_session::traces::{self as tr, Trace, TraceSource};
use iogauge_store::Store;
use std::io::BufWriter;
use std::path::Path;
use std::process::ExitCode;

pub fn traces(a: TracesArgs) -> anyhow::Result<ExitCode> {
    match a.command {
        TracesCommand::List { store } => list(store.store.as_deref()),
        TracesCommand::Show { id, store, json } => show(id, store.store.as_deref(), json),
        TracesCommand::Export {
            id,
            format,
            output,
            store,
        } => export(id, format, &output, store.store.as_deref()),
        TracesCommand::Import { file, store } => import(&file, store.store.as_deref()),
        TracesCommand::Rm { id, store } => rm(id, store.store.as_deref()),
    }
}

fn list(store: Option<&Path>) -> anyhow::Result<ExitCode> {
    let s = Store::open_reader_resolved(store)?;
    let mut out = format!(
        "{:>4}  {:<24} {:>9} {:>10} {:>9} {:>6}  {}\n",
        "id", "started", "seconds", "requests", "IOPS", "reads", "source"
    );
    for row in s.traces()? {
        let (secs, n, iops, reads) = match tr::listed(row.summary.as_deref()) {
            Some((d, n, iops, r)) => (
                format!("{d:.1}"),
                n.to_string(),
                iops.map_or("-".into(), |i| format!("{i:.0}")),
                r.map_or("-".into(), |r| format!("{:.0}%", r * 100.0)),
            ),
            None => ("cut short".into(), "-".into(), "-".into(), "-".into()),
        };
        let run = row
            .run_id
            .map_or(String::new(), |r| format!(" (db run {r})"));
        out += &format!(
            "{:>4}  {:<24} {secs:>9} {n:>10} {iops:>9} {reads:>6}  {}{run}\n",
            row.id, row.started_at, row.source
        );
    }
    print_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Trace `id` of the store, opened (read through), with its trailer.
fn stored(
    id: i64,
    store: Option<&Path>,
) -> anyhow::Result<(Trace, Option<iogauge_session::traces::Trailer>)> {
    let s = Store::open_reader_resolved(store)?;
    if s.trace(id)?.is_none() {
        return Err(UsageError(format!(
            "no trace {id} in {}; `iogauge traces list` lists them",
            s.path().display()
        ))
        .into());
    }
    let trailer = tr::stored_trailer(&s, id)?;
    let trace = Trace::open(TraceSource::Stored {
        store: s.path().to_path_buf(),
        id,
    })?;
    Ok((trace, trailer))
}

fn show(id: i64, store: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let (t, trailer) = stored(id, store)?;
    let text = if json {
        let v = serde_json::json!({
            "id": id,
            "header": t.header,
            "trailer": trailer,
            "summary": t.summary,
        });
        format!("{}\n", serde_json::to_string_pretty(&v)?)
    } else {
        iogauge_report::trace_text(&t.name(), &t.header, trailer.as_ref(), &t.summary)
    };
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn export(
    id: i64,
    format: ExportFormat,
    output: &Path,
    store: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let (t, trailer) = stored(id, store)?;
    let f = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(output)
        .map_err(|e| UsageError(format!("--output {}: {e}", output.display())))?;
    let format = match format {
        ExportFormat::Fio => tr::ExportFormat::Fio,
        ExportFormat::Blktrace => tr::ExportFormat::Blktrace,
        ExportFormat::Iogauge => tr::ExportFormat::Iogauge,
    };
    tr::export(&t, trailer.as_ref(), format, &mut BufWriter::new(f))
        .with_context(|| format!("writing {}", output.display()))?;
    eprintln!(
        "wrote trace {id} ({} requests) to {}",
        t.summary.requests,
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn import(file: &Path, store: Option<&Path>) -> anyhow::Result<ExitCode> {
    if !file.is_file() {
        return Err(UsageError(format!("{}: no such file", file.display())).into());
    }
    let s = Store::open_resolved(store)?;
    let path = s.path().to_path_buf();
    let (id, n) = tr::import(file, s).with_context(|| file.display().to_string())?;
    eprintln!(
        "stored {} ({n} requests) as trace {id} in {}",
        file.display(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn rm(id: i64, store: Option<&Path>) -> anyhow::Result<ExitCode> {
    let mut s = Store::open_resolved(store)?;
    if !s.delete_trace(id)? {
        return Err(UsageError(format!(
            "no trace {id} in {}; `iogauge traces list` lists them",
            s.path().display()
        ))
        .into());
    }
    eprintln!("removed trace {id} from {}", s.path().display());
    Ok(ExitCode::SUCCESS)
}
