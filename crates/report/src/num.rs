//! How a figure is written where its size varies (the result report, `compare`, a campaign's
//! lines).

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
