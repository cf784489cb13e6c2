//! `iogauge report` (HTML), `iogauge export` (CSV, Markdown, JSON) and `iogauge compare`
//! (two runs, or two cases of a campaign): the output path checked, the library's function
//! called with the flags as plain options, its text written whole.

use super::args::{CompareArgs, ExportArgs, Output, ReportArgs};
use crate::usage::UsageError;
use anyhow::Context;
use iogauge_report::{CompareOptions, Format, Subject};
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// `iogauge report ID [ID…]` or `iogauge report --campaign NAME`.
pub fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let subject = match &a.campaign {
        Some(name) => Subject::Campaign {
            name,
            relative: a.relative,
        },
        None if a.relative => {
            return Err(UsageError(
                "--relative needs --campaign NAME: figures are relative to a campaign's baseline case, and stored results by id have none".into(),
            )
            .into())
        }
        None => Subject::Results(&a.ids),
    };
    let out = output_path(&a.out)?;
    let r = iogauge_report::report(a.store.store.as_deref(), subject)?;
    write_output(out, &r.html)?;
    if let Some(p) = out {
        let mb = r.html.len() as f64 / 1e6;
        eprintln!("wrote {} ({}, {mb:.1} MB)", p.display(), r.contents);
    }
    Ok(ExitCode::SUCCESS)
}

/// `iogauge export --campaign NAME --format F`.
pub fn export(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let out = output_path(&a.out.out)?;
    let format = match a.format.as_str() {
        "csv" => Format::Csv,
        "md" => Format::Markdown,
        _ => Format::Json,
    };
    let text = iogauge_report::export(
        a.out.store.store.as_deref(),
        &a.out.campaign,
        format,
        a.relative,
    )?;
    write_output(out, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// `iogauge compare A B [--campaign NAME]`.
pub fn compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    let o = CompareOptions {
        a: &a.a,
        b: &a.b,
        campaign: a.campaign.as_deref(),
        json: a.json,
    };
    let text = iogauge_report::compare(a.store.store.as_deref(), &o, &mut |w| {
        let _ = writeln!(
            std::io::stderr(),
            "warning: {}",
            crate::usage::shown_line(w)
        );
    })?;
    let text = match a.json {
        true => text,
        false => crate::history::on_terminal(&text),
    };
    write_output(None, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// The output file, checked (`None`: stdout; `-o -` is stdout, as for every Unix tool, not
/// a file named `-`).
fn output_path(o: &Output) -> Result<Option<&Path>, UsageError> {
    let out = o.output.as_deref().filter(|p| *p != Path::new("-"));
    check_output(out, o.force)?;
    Ok(out)
}

/// Refuses an output path that cannot be written as asked, before any work is done.
fn check_output(path: Option<&Path>, force: bool) -> Result<(), UsageError> {
    let Some(p) = path else { return Ok(()) };
    if p.is_dir() {
        return Err(UsageError(format!(
            "-o {}: is a directory; give a file name",
            p.display()
        )));
    }
    if p.exists() && !force {
        return Err(UsageError(format!(
            "-o {}: exists; choose another name or pass --force to replace it",
            p.display()
        )));
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "-o {}: directory {} does not exist; create it first",
            p.display(),
            dir.display()
        )));
    }
    crate::paths::check_output_dir("-o", p, dir)
}

/// Writes whole or not at all: a temporary file beside the target, then a rename.
fn write_output(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    let Some(p) = path else {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .context("writing to stdout");
    };
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("report");
    let tmp = p.with_file_name(format!(".{name}.iogauge-{}", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, p));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("-o {}: writing", p.display()))
}
