//! The full-screen view (ratatui on crossterm): the load average in the title, device table
//! in iostat -x columns, a CPU bar (with `--cpu each` a grid of one bar per CPU), and the
//! followed run's IOPS and p99 latency as sparklines. `q`, Esc or Ctrl-C quits.

use super::follow::{look, timestamp, Follow, Frame, Shown};
use super::options::WatchOptions;
use anyhow::Context;
use iogauge_model::derive::PerCpuRates;
use iogauge_model::system::Snapshot;
use iogauge_probe::Sampler;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Gauge, Paragraph, Row, Sparkline, Table};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub(super) fn run(
    w: &WatchOptions,
    sampler: &Sampler,
    t0: Instant,
    prev: Snapshot,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let mut terminal = ratatui::try_init()
        .context("starting the full-screen view (use --plain on this terminal)")?;
    let result = event_loop(&mut terminal, w, sampler, t0, prev, stop);
    let restored = ratatui::try_restore().context("restoring the terminal");
    result.and_then(|code| restored.map(|_| code))
}

/// Waits for the next tick, handling keys; true when the user quits.
fn wait_tick(at: Instant, stop: &AtomicBool) -> anyhow::Result<bool> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let now = Instant::now();
        if now >= at {
            return Ok(false);
        }
        let left = (at - now).min(Duration::from_millis(100));
        if event::poll(left).context("reading the keyboard")? {
            if let Event::Key(k) = event::read().context("reading the keyboard")? {
                let ctrl_c =
                    k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                if k.kind == KeyEventKind::Press
                    && (ctrl_c || matches!(k.code, KeyCode::Char('q') | KeyCode::Esc))
                {
                    return Ok(true);
                }
            }
        }
    }
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    w: &WatchOptions,
    sampler: &Sampler,
    t0: Instant,
    mut prev: Snapshot,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let mut follow: Option<Follow> = None;
    let mut shown = Shown::default();
    for k in 1u64.. {
        if wait_tick(t0 + w.every * k as u32, stop)? {
            break;
        }
        let seen = look(w, sampler, t0, &mut prev, &mut follow)?;
        let devices = shown.names(w, &seen.system);
        let frame = Frame {
            timestamp: timestamp(),
            every: w.every,
            system: &seen.system,
            cpus: seen.cpus.as_deref(),
            devices: &devices,
            live: follow.as_ref(),
        };
        terminal
            .draw(|f| draw(f, &frame))
            .context("drawing the view")?;
        if w.count.is_some_and(|c| k >= c) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn draw(f: &mut ratatui::Frame, fr: &Frame) {
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
    let load = fr.system.load.as_ref().map_or(String::new(), |l| {
        format!("  {}", iogauge_report::load_text(l))
    });
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
            database(f, live, db);
        }
        None => workload(f, fr, work),
    }
}

/// The database panel of a `db run` in progress: load profile rates and active sessions.
fn database(f: &mut ratatui::Frame, live: &Follow, area: Rect) {
    let mut lines = Vec::new();
    match (&live.db_now, &live.db_error) {
        (Some(now), _) => {
            lines.push(Line::from(match &now.rates {
                Some(r) => iogauge_report::db_rates_line(r),
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

fn device_table(fr: &Frame) -> Table<'static> {
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

fn workload(f: &mut ratatui::Frame, fr: &Frame, area: Rect) {
    let Some(live) = fr.live else {
        f.render_widget(
            Paragraph::new("no run in progress: start `iogauge run` and it appears here")
                .block(Block::default().borders(Borders::ALL).title("workload")),
            area,
        );
        return;
    };
    let h = live.header();
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
            )
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
