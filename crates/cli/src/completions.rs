//! `iogauge completions SHELL` and `iogauge man`: a shell's completion script (clap_complete)
//! and the manual page (clap_mangen), both made from the clap definition that parses the
//! command line, so they never drift from it. `main` hands in that definition.

use anyhow::Context;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, ValueEnum};
use clap_complete::aot::Shell;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL", value_parser = ShellParser)]
    pub shell: Shell,
}

/// Writes `shell`'s completion script for `cmd` to stdout.
pub fn completions(shell: Shell, mut cmd: clap::Command) -> anyhow::Result<ExitCode> {
    // Rendered whole first: clap_complete panics on a failed write, and a stdout that
    // cannot take the script must be an error line like any other.
    let mut script = Vec::new();
    let name = cmd.get_name().to_string();
    clap_complete::aot::generate(shell, &mut cmd, name, &mut script);
    print(&script)
}

/// Writes the manual page of `cmd` (roff, section 1) to stdout: one page with a section for
/// every subcommand (and `db`'s own), so every flag is in it.
pub fn man(cmd: clap::Command) -> anyhow::Result<ExitCode> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let top = page(&cmd)?;
    // The subcommands' sections go after the list of them, before VERSION.
    let at = top.find("\n.SH VERSION\n").map_or(top.len(), |i| i + 1);
    let mut out = top[..at].to_string();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        subcommand_sections(sub, &mut out)?;
    }
    out.push_str(&top[at..]);
    print(out.as_bytes())
}

/// clap_mangen's page of `cmd`, its list of subcommands naming sections of this page rather
/// than pages of their own (`iogauge\-run(1)` becomes **iogauge run**).
fn page(cmd: &clap::Command) -> anyhow::Result<String> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut roff)
        .context("rendering the manual page")?;
    let mut text = String::from_utf8(roff).context("rendering the manual page")?;
    let display = cmd.get_display_name().unwrap_or(cmd.get_name());
    let bin = cmd.get_bin_name().unwrap_or(cmd.get_name());
    for sub in cmd.get_subcommands() {
        let reference = format!("{}\\-{}(1)\n", display.replace('-', "\\-"), sub.get_name());
        let section = format!("\\fB{bin} {}\\fR\n", sub.get_name());
        text = text.replace(&reference, &section);
    }
    Ok(text)
}

/// `sub`'s page as a section of the whole: its own sections one level down, then its
/// subcommands'.
fn subcommand_sections(sub: &clap::Command, out: &mut String) -> anyhow::Result<()> {
    let bin = sub.get_bin_name().unwrap_or(sub.get_name());
    out.push_str(&format!(".SH \"{}\"\n", bin.to_uppercase()));
    let text = page(sub)?;
    // After the title: the preamble before it is the top page's already.
    for line in text.lines().skip_while(|l| !l.starts_with(".TH ")).skip(1) {
        match line.strip_prefix(".SH ") {
            Some(heading) => out.push_str(&format!(".SS {heading}\n")),
            None => out.push_str(&format!("{line}\n")),
        }
    }
    for s in sub.get_subcommands().filter(|s| !s.is_hide_set()) {
        subcommand_sections(s, out)?;
    }
    Ok(())
}

fn print(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// A shell by name, with the names offered in `--help` and in completions, and an error
/// that names the way out ("'x' is not a shell iogauge completes: use bash, …").
#[derive(Clone)]
struct ShellParser;

impl TypedValueParser for ShellParser {
    type Value = Shell;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Shell, clap::Error> {
        shell.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Shell::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

fn shell(s: &str) -> Result<Shell, String> {
    <Shell as ValueEnum>::from_str(s, false).map_err(|_| {
        let names: Vec<String> = Shell::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect();
        format!(
            "'{s}' is not a shell iogauge completes: use {}",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use clap_complete::aot::Shell;

    #[test]
    fn shells_by_name() {
        assert_eq!(super::shell("bash"), Ok(Shell::Bash));
        assert_eq!(super::shell("powershell"), Ok(Shell::PowerShell));
        let e = super::shell("tcsh").unwrap_err();
        assert!(e.contains("'tcsh'") && e.contains("zsh"), "{e}");
    }
}
