//! ORION's matrix as a heat map: one cell per (column, row) level pair, shaded by its figure.

use super::draw::{no_data, open, text, Frame, LEFT, W};
use super::page::esc;
use super::scale::{tick_label, Fmt, N};
use std::fmt::Write as _;

/// Height of a row of cells.
const CELL_H: f64 = 26.0;

/// The distinct values of one coordinate of `cells`, increasing.
fn levels(cells: &[(u32, u32, f64)], of: fn(&(u32, u32, f64)) -> u32) -> Vec<u32> {
    let mut v: Vec<u32> = cells.iter().map(of).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A heat map of `cells` (column value, row value, figure): columns and rows in increasing
/// order, each cell shaded from white to blue by its figure and labelled with it.
pub(crate) fn heat_map(
    out: &mut String,
    key: &str,
    aria: &str,
    (x_title, y_title): (&str, &str),
    fmt: Fmt,
    cells: &[(u32, u32, f64)],
) {
    let (cols, rows) = (levels(cells, |c| c.0), levels(cells, |c| c.1));
    let h = 40.0 + CELL_H * rows.len().max(1) as f64 + 46.0;
    let f = Frame::new(W, h, LEFT, 24.0, 40.0, 46.0);
    open(out, "heatmap", key, W, h, aria);
    text(out, f.x0, 16.0, "at", "start", aria);
    if cells.is_empty() {
        no_data(out, &f, "no matrix cells");
        out.push_str("</svg>");
        return;
    }
    let cw = (f.x1 - f.x0) / cols.len() as f64;
    shade(out, &f, cells, (&cols, &rows), cw, fmt);
    axes(out, &f, (&cols, &rows), cw, (x_title, y_title));
}

/// Each cell shaded from white to blue by its share of the largest figure, and labelled.
fn shade(
    out: &mut String,
    f: &Frame,
    cells: &[(u32, u32, f64)],
    (cols, rows): (&[u32], &[u32]),
    cw: f64,
    fmt: Fmt,
) {
    let max = cells
        .iter()
        .map(|c| c.2)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut label = String::new();
    for c in cells {
        let (Some(i), Some(j)) = (
            cols.iter().position(|v| *v == c.0),
            rows.iter().position(|v| *v == c.1),
        ) else {
            continue;
        };
        let t = if max > 0.0 && c.2.is_finite() {
            (c.2 / max).clamp(0.0, 1.0)
        } else {
            0.0
        };
        // White to #4e79a7 (78, 121, 167).
        let mix = |to: f64| (255.0 + (to - 255.0) * t).round() as u8;
        let (x, y) = (f.x0 + cw * i as f64, f.y1 - CELL_H * (j + 1) as f64);
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},{})\" stroke=\"#fff\"/>",
            N(x),
            N(y),
            N(cw),
            N(CELL_H),
            mix(78.0),
            mix(121.0),
            mix(167.0)
        );
        label.clear();
        tick_label(&mut label, c.2, 0.0, fmt);
        let class = if t > 0.55 { "in" } else { "" };
        text(
            out,
            x + cw / 2.0,
            y + CELL_H / 2.0 + 4.0,
            class,
            "middle",
            &label,
        );
    }
}

/// The levels along both axes and the axes' titles.
fn axes(
    out: &mut String,
    f: &Frame,
    (cols, rows): (&[u32], &[u32]),
    cw: f64,
    (x_title, y_title): (&str, &str),
) {
    out.push_str("<g class=\"ax\">");
    for (i, v) in cols.iter().enumerate() {
        let x = f.x0 + cw * (i as f64 + 0.5);
        text(out, x, f.y1 + 15.0, "", "middle", &v.to_string());
    }
    for (j, v) in rows.iter().enumerate() {
        let y = f.y1 - CELL_H * (j as f64 + 0.5) + 4.0;
        text(out, f.x0 - 6.0, y, "", "end", &v.to_string());
    }
    text(
        out,
        (f.x0 + f.x1) / 2.0,
        f.y1 + 32.0,
        "at",
        "middle",
        x_title,
    );
    let ym = (f.y0 + f.y1) / 2.0;
    let _ = write!(
        out,
        "<text class=\"at\" x=\"12\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {})\">",
        N(ym),
        N(ym)
    );
    esc(out, y_title);
    out.push_str("</text></g></svg>");
}
