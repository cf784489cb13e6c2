//! The full-screen view of `iogauge watch`: the load average in the title, the device table
//! in iostat -x columns, a CPU bar (with `--cpu each` a grid of one bar per CPU), and the
//! followed run's IOPS and p99 latency as sparklines, with a database panel for a database
//! run. Drawn into a ratatui frame the caller's terminal gives.

use super::line::{db_rates_line, live_split, load_text, ranks_part};
use iogauge_model::derive::{Derived, PerCpuRates};
use iogauge_model::live::{DbNow, LiveHeader, LiveInterval};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Gauge, Paragraph, Row, Sparkline, Table};
use ratatui::Frame;
use std::time::Duration;

/// What one refresh shows.
pub struct WatchScreen<'a> {
    pub timestamp: &'a str,
    pub every: Duration,
    pub system: &'a Derived,
    /// `--cpu each`: each CPU's figures (`None` with `--cpu total`).
    pub cpus: Option<&'a [PerCpuRates]>,
    pub devices: &'a [String],
    pub live: Option<LiveRun<'a>>,
}

/// The run in progress being followed: what it is, its intervals so far, and for a database
/// run its server as of the last look (or why it cannot be looked at).
#[derive(Clone, Copy)]
pub struct LiveRun<'a> {
    pub header: &'a LiveHeader,
    pub history: &'a [LiveInterval],
    pub db_now: Option<&'a DbNow>,
    pub db_error: Option<&'a str>,
}

/// Draws one refresh over the whole frame.
pub fn watch_screen(f: &mut Frame, fr: &WatchScreen) {
    let table_h = fr.devices.len() as u16 + 3;
    // With --cpu each: as many cells a row as fit inside the borders.
    let per_row = (f.area().width.saturating_sub(2) / CPU_CELL).max(1) as usize;
    let cpu_h = match fr.cpus {
        Some(c) => c.len().div_ceil(per_row).max(1) as u16 + 2,
        None => 3,
    };
    let [title, table, cpu, work] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(table_h),
        Constraint::Length(cpu_h),
        Constraint::Min(6),
    ])
    .areas(f.area());
    let load = fr
        .system
        .load
        .as_ref()
        .map_or(String::new(), |l| format!("  {}", load_text(l)));
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("iogauge watch", Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(format!(
                "  {}  every {:?}{load}  (q quits)",
                fr.timestamp, fr.every
            )),
        ])),
        title,
    );
    f.render_widget(device_table(fr), table);
    let c = &fr.system.cpu;
    let busy = c.busy();
    let total = format!(
        "busy {busy:.0}%  usr {:.0}  sys {:.0}  iowait {:.0}  steal {:.0}",
        c.user, c.system, c.iowait, c.steal
    );
    match fr.cpus {
        Some(cpus) => f.render_widget(cpu_grid(cpus, per_row, &total), cpu),
        None => f.render_widget(
            Gauge::default()
                .block(Block::default().borders(Borders::ALL).title("CPU"))
                .gauge_style(Style::new().fg(Color::Cyan))
                .ratio(busy / 100.0)
                .label(total),
            cpu,
        ),
    }
    match fr
        .live
        .filter(|l| l.db_now.is_some() || l.db_error.is_some())
    {
        Some(live) => {
            let [w, db] = Layout::vertical([Constraint::Min(6), Constraint::Length(4)]).areas(work);
            workload(f, fr, w);
            database(f, &live, db);
        }
        None => workload(f, fr, work),
    }
}

/// The database panel of a `db run` in progress: load profile rates and active sessions.
fn database(f: &mut Frame, live: &LiveRun, area: Rect) {
    let mut lines = Vec::new();
    match (live.db_now, live.db_error) {
        (Some(now), _) => {
            lines.push(Line::from(match &now.rates {
                Some(r) => db_rates_line(r),
                None => "first look: rates from the next interval".to_string(),
            }));
            let mut active: Vec<(&String, &u32)> = now.active.iter().collect();
            active.sort_by(|a, b| b.1.cmp(a.1));
            let parts: Vec<String> = active.iter().map(|(e, n)| format!("{e} {n}")).collect();
            lines.push(Line::from(format!(
                "active sessions: {}",
                if parts.is_empty() {
                    "none".to_string()
                } else {
                    parts.join("  ")
                }
            )));
        }
        (None, Some(e)) => lines.push(Line::from(format!("database not reachable: {e}"))),
        (None, None) => {}
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title("database")),
        area,
    );
}

/// Width of one CPU's cell in the `--cpu each` grid, separating spaces included.
const CPU_CELL: u16 = 46;

/// `--cpu each`: one cell a CPU, row by row, `cpu3  ██████████ us   0 sy 100 wa   0 id   0`,
/// the bar showing the busy share (red from 90%, so a saturated core stands out).
fn cpu_grid(cpus: &[PerCpuRates], per_row: usize, total: &str) -> Paragraph<'static> {
    const BAR: usize = 10;
    let lines: Vec<Line> = cpus
        .chunks(per_row)
        .map(|row| {
            let mut spans = Vec::new();
            for c in row {
                let r = &c.rates;
                let busy = r.busy();
                let filled = ((busy / 100.0 * BAR as f64).round() as usize).min(BAR);
                let colour = if busy >= 90.0 {
                    Color::Red
                } else {
                    Color::Cyan
                };
                spans.push(Span::raw(format!("{:<6}", format!("cpu{}", c.cpu))));
                spans.push(Span::styled("█".repeat(filled), Style::new().fg(colour)));
                spans.push(Span::styled(
                    "·".repeat(BAR - filled),
                    Style::new().fg(Color::DarkGray),
                ));
                spans.push(Span::raw(format!(
                    " us{:>4.0} sy{:>4.0} wa{:>4.0} id{:>4.0}  ",
                    r.user, r.system, r.iowait, r.idle
                )));
            }
            Line::from(spans)
        })
        .collect();
    Paragraph::new(lines).block(
        Block::default()
            .borders(Borders::ALL)
            .title(format!("CPU each ({total})")),
    )
}

fn device_table(fr: &WatchScreen) -> Table<'static> {
    let header = [
        "device", "r/s", "w/s", "rMB/s", "wMB/s", "rrqm/s", "wrqm/s", "%rrqm", "%wrqm", "rareq-sz",
        "wareq-sz", "aqu-sz", "r_await", "w_await", "%util",
    ];
    let rows = fr
        .devices
        .iter()
        .map(|name| match fr.system.disks.get(name) {
            Some(x) => Row::new(vec![
                Cell::from(name.clone()),
                Cell::from(format!("{:.0}", x.r_s)),
                Cell::from(format!("{:.0}", x.w_s)),
                Cell::from(format!("{:.1}", x.r_mb_s)),
                Cell::from(format!("{:.1}", x.w_mb_s)),
                Cell::from(format!("{:.0}", x.rrqm_s)),
                Cell::from(format!("{:.0}", x.wrqm_s)),
                Cell::from(format!("{:.1}", x.rrqm_pct)),
                Cell::from(format!("{:.1}", x.wrqm_pct)),
                Cell::from(format!("{:.1}", x.rareq_sz)),
                Cell::from(format!("{:.1}", x.wareq_sz)),
                Cell::from(format!("{:.2}", x.aqu_sz)),
                Cell::from(format!("{:.2}", x.r_await)),
                Cell::from(format!("{:.2}", x.w_await)),
                Cell::from(format!("{:.1}", x.util)),
            ]),
            None => Row::new(vec![Cell::from(name.clone()), Cell::from("gone")]),
        });
    let widths = [Constraint::Length(12)]
        .into_iter()
        .chain(std::iter::repeat_n(Constraint::Length(9), 14));
    Table::new(rows.collect::<Vec<_>>(), widths)
        .header(Row::new(header).style(Style::new().add_modifier(Modifier::BOLD)))
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(if fr.devices.is_empty() {
                    "devices: none has done I/O since watch started (--devices all lists every one)"
                } else {
                    "devices"
                }),
        )
}

fn workload(f: &mut Frame, fr: &WatchScreen, area: Rect) {
    let Some(live) = &fr.live else {
        f.render_widget(
            Paragraph::new("no run in progress: start `iogauge run` and it appears here")
                .block(Block::default().borders(Borders::ALL).title("workload")),
            area,
        );
        return;
    };
    let h = live.header;
    let last = live.history.last();
    let now = last.map_or_else(
        || "waiting for its first interval".to_string(),
        |iv| {
            let i = &iv.interval;
            format!(
                "{:.0} s{}: read {:.0} IOPS p99 {:.0} us, write {:.0} IOPS p99 {:.0} us",
                iv.elapsed_s,
                if i.phase == iogauge_stats::Phase::Ramp {
                    " (ramp)"
                } else {
                    ""
                },
                i.read.iops,
                i.read.lat_us.p99,
                i.write.iops,
                i.write.lat_us.p99
            ) + &live_split(i).map_or(String::new(), |s| format!("; {s}"))
                + &iv
                    .ranks
                    .map_or(String::new(), |r| format!("; {}", ranks_part(&r)))
        },
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!("{} {}: {}", h.kind, h.pid, h.what));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [line, iops, lat] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(50),
        Constraint::Percentage(50),
    ])
    .areas(inner);
    f.render_widget(Paragraph::new(now), line);
    let width = iops.width as usize;
    let recent = &live.history[live.history.len().saturating_sub(width)..];
    let iops_data: Vec<u64> = recent
        .iter()
        .map(|iv| (iv.interval.read.iops + iv.interval.write.iops) as u64)
        .collect();
    let p99_data: Vec<u64> = recent
        .iter()
        .map(|iv| {
            iv.interval
                .read
                .lat_us
                .p99
                .max(iv.interval.write.lat_us.p99) as u64
        })
        .collect();
    f.render_widget(
        Sparkline::default()
            .block(Block::default().title("IOPS"))
            .data(&iops_data)
            .style(Style::new().fg(Color::Green)),
        iops,
    );
    f.render_widget(
        Sparkline::default()
            .block(Block::default().title("p99 latency (us)"))
            .data(&p99_data)
            .style(Style::new().fg(Color::Yellow)),
        lat,
    );
}
