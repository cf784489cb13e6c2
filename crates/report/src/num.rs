//! How a figure is written where its size varies (the result report, `compare`, a campaign's
//! lines), and a ratio.

/// A figure with the decimals its size needs: none from 100, two from 1, else four (the
/// figures of `compare` and a campaign's lines too). Never a negative zero: `-0.0`, or a
/// figure a hair below 0, reads `0.0000`.
pub fn fmt_num(x: f64) -> String {
    let s = if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    };
    unsigned_zero(s)
}

/// `s` without its `-` when all its digits are 0 (`-0.0000` is `0.0000`).
pub fn unsigned_zero(s: String) -> String {
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// A ratio with three decimals, or in exponent form below 0.001 (what a page cache makes of
/// the disks' share), so it never reads as 0.
pub fn fmt_ratio(x: f64) -> String {
    if x.abs() >= 1e-3 || x == 0.0 {
        unsigned_zero(format!("{x:.3}"))
    } else {
        format!("{x:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #44 row 8: `compare` printed `-0.0000`.
    #[test]
    fn no_figure_is_a_negative_zero() {
        for (x, want) in [
            (-0.0, "0.0000"),
            (-0.00001, "0.0000"),
            (-0.4, "-0.4000"),
            (-0.001, "-0.0010"),
            (-1e-9, "0.0000"),
            (-150.2, "-150"),
            (-0.3, "-0.3000"),
        ] {
            assert_eq!(fmt_num(x), want, "{x}");
        }
        assert_eq!(fmt_ratio(-0.0), "0.000");
        assert_eq!(fmt_ratio(-0.0004), "-4.0e-4");
    }
}
