//! How a figure is written where its size varies (the result report, `compare`, a campaign's
//! lines), and a ratio.

/// A figure with the decimals its size needs: none from 100, two from 1, else four (the
/// figures of `compare` and a campaign's lines too).
pub fn fmt_num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// A ratio with three decimals, or in exponent form below 0.001 (what a page cache makes of
/// the disks' share), so it never reads as 0.
pub fn fmt_ratio(x: f64) -> String {
    if x.abs() >= 1e-3 || x == 0.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.1e}")
    }
}
