//! The lines of a campaign being run (`iogauge campaign` on stderr as it goes) and of a dry
//! run (the plan on stdout): made from the campaign and its plan, printed by the binary.

use iogauge_campaign::{Campaign, PlannedRun};
use std::fmt::Write as _;
use std::time::Duration;

/// A duration as a campaign's estimates show it: seconds, then minutes, then hours.
fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=99 => format!("{s} s"),
        100..=5999 => format!("{} min", s.div_ceil(60)),
        _ => format!("{:.1} h", s as f64 / 3600.0),
    }
}

/// Before the first run: `campaign NAME: 4 cases × 10 repetitions, 3 stored, 37 runs to go
/// and 4 warm-up (about 25 min)`.
pub fn campaign_plan_line(c: &Campaign, done: usize, plan: &[PlannedRun]) -> String {
    let measured = plan.iter().filter(|p| !p.warmup).count();
    let est: Duration = plan.iter().map(|p| c.estimate(p.case)).sum();
    format!(
        "campaign {}: {} cases × {} repetitions, {} stored, {} runs to go{} (about {})",
        c.name,
        c.cases.len(),
        c.repeat,
        done,
        measured,
        match plan.len() - measured {
            0 => String::new(),
            w => format!(" and {w} warm-up"),
        },
        fmt_duration(est)
    )
}

/// The label of `plan[i]`, at the head of its lines: `[3/40, ~25 min left] qd=32 rep 2/10`.
pub fn campaign_run_label(c: &Campaign, plan: &[PlannedRun], i: usize) -> String {
    let run = &plan[i];
    let left: Duration = plan[i..].iter().map(|p| c.estimate(p.case)).sum();
    format!(
        "[{}/{}, ~{} left] {} rep {}/{}{}",
        i + 1,
        plan.len(),
        fmt_duration(left),
        c.cases[run.case].name,
        run.rep,
        c.repeat,
        if run.warmup { " (warm-up)" } else { "" }
    )
}

/// The command line of case `case`, as a user would type it: `iogauge run --bs 8k …`; a
/// raw stand-in's ends with the run it replays.
pub fn campaign_command(c: &Campaign, case: usize) -> String {
    let case = &c.cases[case];
    let like = case
        .like
        .as_ref()
        .map(|l| format!(" --like <{l:?}'s run of this repetition>"))
        .unwrap_or_default();
    format!(
        "iogauge {} {}{like}",
        case.command(c.command),
        case.args.join(" ")
    )
}

/// `campaign --dry-run`: one line per run still to make with its estimated duration, then
/// the totals; `fresh_needed` when the store holds runs of this name made with another plan.
pub fn campaign_dry_run(
    c: &Campaign,
    plan: &[PlannedRun],
    done: usize,
    fresh_needed: bool,
) -> String {
    let mut total = Duration::ZERO;
    let mut out = format!(
        "{:>4}  {:<30} {:>5}  {:>8}  command\n",
        "#", "case", "rep", "about"
    );
    for (i, p) in plan.iter().enumerate() {
        let est = c.estimate(p.case);
        total += est;
        let _ = writeln!(
            out,
            "{:>4}  {:<30} {:>5}  {:>8}  {}{}",
            i + 1,
            c.cases[p.case].name,
            if p.warmup {
                "warm".to_string()
            } else {
                p.rep.to_string()
            },
            fmt_duration(est),
            campaign_command(c, p.case),
            if p.warmup {
                "   (warm-up, discarded)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        out,
        "campaign {}: {} cases × {} repetitions, {} already stored, {} runs to make, about {} (baseline {:?}, order {:?})",
        c.name,
        c.cases.len(),
        c.repeat,
        done,
        plan.len(),
        fmt_duration(total),
        c.baseline,
        c.order
    );
    if fresh_needed {
        let _ = writeln!(out, "note: the store holds runs of {} made with other cases or options; running it needs --fresh or --name", c.name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fmt_duration;
    use std::time::Duration;

    #[test]
    fn durations_by_size() {
        let s = |n| fmt_duration(Duration::from_secs(n));
        assert_eq!(s(99), "99 s");
        assert_eq!(s(100), "2 min");
        assert_eq!(s(5999), "100 min");
        assert_eq!(s(6000), "1.7 h");
    }
}
