//! The numbers behind the hand-written SVG: coordinates that never let NaN or infinity into
//! an attribute, linear and log scales with "nice" ticks and their labels. Drawing primitives
//! are in `draw.rs`, the page and its escaping in `page.rs`; nothing here knows what is drawn.

use std::fmt::{self, Write as _};

/// A coordinate: one decimal, trailing ".0" dropped, `0` when not finite, clamped to ±10⁶ px
/// so a wild value can never produce an exponent or a huge attribute.
#[derive(Clone, Copy)]
pub(crate) struct N(pub f64);

impl fmt::Display for N {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = if self.0.is_finite() {
            self.0.clamp(-1e6, 1e6)
        } else {
            0.0
        };
        let tenths = (x * 10.0).round() as i64;
        let (sign, t) = if tenths < 0 {
            ("-", -tenths)
        } else {
            ("", tenths)
        };
        match t % 10 {
            0 => write!(f, "{sign}{}", t / 10),
            d => write!(f, "{sign}{}.{d}", t / 10),
        }
    }
}

/// Maps data values to pixels, linearly or by log10. The domain is sanitised on creation:
/// non-finite or empty domains become a unit interval, so `at` is always finite for finite
/// input.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scale {
    lo: f64,
    hi: f64,
    a: f64,
    b: f64,
    log: bool,
}

impl Scale {
    /// `lo..hi` onto pixels `a..b` (`b < a` for a y axis that grows upwards).
    pub(crate) fn linear(lo: f64, hi: f64, a: f64, b: f64) -> Scale {
        let (lo, hi) = sane(lo, hi, 0.0);
        Scale {
            lo,
            hi,
            a,
            b,
            log: false,
        }
    }

    /// Log10 scale; `lo` and `hi` are data values (> 0), widened to whole decades.
    pub(crate) fn log(lo: f64, hi: f64, a: f64, b: f64) -> Scale {
        let l = if lo > 0.0 && lo.is_finite() {
            lo.log10().floor()
        } else {
            0.0
        };
        let h = if hi > 0.0 && hi.is_finite() {
            hi.log10().ceil()
        } else {
            l + 1.0
        };
        let (lo, hi) = sane(l, h.max(l + 1.0), l);
        Scale {
            lo,
            hi,
            a,
            b,
            log: true,
        }
    }

    /// Pixel of `v`; values outside the domain extrapolate, non-positive values on a log
    /// scale go to the domain's low end.
    pub(crate) fn at(&self, v: f64) -> f64 {
        let v = if self.log {
            if v > 0.0 {
                v.log10()
            } else {
                self.lo
            }
        } else {
            v
        };
        let t = (v - self.lo) / (self.hi - self.lo);
        let p = self.a + t * (self.b - self.a);
        if p.is_finite() {
            p
        } else {
            self.a
        }
    }

    /// About `target` round tick values within the domain (decades, with 2 and 5 between
    /// them when a log scale spans fewer than three decades), and the linear step.
    pub(crate) fn ticks(&self, target: usize) -> (Vec<f64>, f64) {
        if !self.log {
            return nice_ticks(self.lo, self.hi, target);
        }
        let few = self.hi - self.lo < 3.0;
        let mut v = Vec::new();
        let mut e = self.lo;
        while e <= self.hi + 1e-9 {
            let d = 10f64.powf(e);
            v.push(d);
            if few && e < self.hi {
                v.push(2.0 * d);
                v.push(5.0 * d);
            }
            e += 1.0;
        }
        (v, 0.0)
    }
}

/// A finite, non-empty interval; a degenerate one grows around its value.
fn sane(lo: f64, hi: f64, fallback: f64) -> (f64, f64) {
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) if hi > lo => (lo, hi),
        (true, _) => (lo, lo + if lo == 0.0 { 1.0 } else { lo.abs() }),
        _ => (fallback, fallback + 1.0),
    }
}

/// Round ticks (1, 2 or 5 × 10ᵏ apart) covering `lo..hi`, about `target` of them, and the
/// step (Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990).
pub(crate) fn nice_ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, f64) {
    let (lo, hi) = sane(lo, hi, 0.0);
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last.min(first + 50))
        .map(|k| k as f64 * step)
        .collect();
    (ticks, step)
}

/// A domain maximum with headroom: `max` plus 8 %, or 1 when there is nothing to show.
pub(crate) fn headroom(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.08
    } else {
        1.0
    }
}

/// How tick labels are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Fmt {
    /// Plain numbers with k / M / G suffixes.
    Si,
    /// Microseconds, shown as µs, ms or s.
    Micros,
    /// Percent, 0–100.
    Pct,
    /// Seconds.
    Secs,
    /// A ratio to the baseline: "1.2×".
    Times,
    /// Percentile on the nines scale: the tick value is −log10(1 − p/100).
    Nines,
}

/// Appends the label of tick `v` (the ticks being `step` apart; 0 for log ticks).
/// Decimals that show a step of `s` (up to 6).
fn dec(s: f64) -> usize {
    if s > 0.0 && s < 1.0 {
        ((-s.log10()).ceil() as usize).min(6)
    } else {
        0
    }
}

/// `v` in the first unit of `units` (at least, divisor, suffix) that its magnitude (or the
/// step's) reaches, else in `base`, with the decimals the step needs.
fn scaled(out: &mut String, v: f64, step: f64, units: &[(f64, f64, &str)], base: &str) {
    let a = v.abs().max(step);
    let (div, suf) = units
        .iter()
        .find(|(at, _, _)| a >= *at)
        .map_or((1.0, base), |(_, d, s)| (*d, *s));
    let step = if step > 0.0 { step } else { v.abs() };
    if v == 0.0 {
        out.push('0');
    } else {
        let _ = write!(out, "{:.*}{suf}", dec(step / div), v / div);
    }
}

/// Appends the label of tick `v` (the ticks being `step` apart; 0 for log ticks).
pub(crate) fn tick_label(out: &mut String, v: f64, step: f64, fmt: Fmt) {
    match fmt {
        Fmt::Si => scaled(
            out,
            v,
            step,
            &[(1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")],
            "",
        ),
        Fmt::Micros => scaled(out, v, step, &[(1e6, 1e6, " s"), (1e3, 1e3, " ms")], " µs"),
        Fmt::Pct => {
            let _ = write!(out, "{:.*}%", dec(step), v);
        }
        Fmt::Secs => {
            let _ = write!(out, "{:.*} s", dec(step), v);
        }
        Fmt::Times => {
            let _ = write!(out, "{:.*}×", dec(step).max(1), v);
        }
        Fmt::Nines => {
            // p = 100 (1 − 10^−v): 0 → 0, 0.301 → 50, 1 → 90, 2 → 99, 3 → 99.9 …
            let p = 100.0 * (1.0 - 10f64.powf(-v));
            let d = if v > 2.0 {
                (v - 2.0).round() as usize
            } else {
                0
            };
            let _ = write!(out, "p{p:.d$}");
        }
    }
}

/// Appends `v` with three significant digits and a k / M / G suffix (`45.2k`, `1.23`,
/// `0.0123`); a dash when not finite. For value labels and tooltips.
pub(crate) fn compact(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push('—');
        return;
    }
    let a = v.abs();
    let (div, suf) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / div;
    let ax = x.abs();
    let d = if ax == 0.0 || ax >= 100.0 {
        0
    } else if ax >= 10.0 {
        1
    } else if ax >= 1.0 {
        2
    } else {
        ((-ax.log10()).floor() as usize + 3).min(8)
    };
    let _ = write!(out, "{x:.d$}{suf}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_short_and_always_finite() {
        let cases = [
            (0.0, "0"),
            (1.25, "1.3"),
            (-0.04, "0"),
            (-0.5, "-0.5"),
            (12.0, "12"),
            (f64::NAN, "0"),
            (f64::INFINITY, "0"),
            (1e300, "1000000"),
        ];
        for (x, want) in cases {
            assert_eq!(N(x).to_string(), want, "{x}");
        }
    }

    #[test]
    fn nice_ticks_are_round() {
        assert_eq!(
            nice_ticks(0.0, 100.0, 5),
            (vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0], 20.0)
        );
        assert_eq!(nice_ticks(0.0, 0.9, 5).1, 0.2);
        assert_eq!(nice_ticks(0.0, 0.9, 4).1, 0.5);
        let (t, _) = nice_ticks(f64::NAN, f64::INFINITY, 5);
        assert!(!t.is_empty() && t.iter().all(|x| x.is_finite()));
        assert!(!nice_ticks(5.0, 5.0, 5).0.is_empty());
    }

    #[test]
    fn scales_map_degenerate_domains_to_finite_pixels() {
        for s in [
            Scale::linear(3.0, 3.0, 0.0, 100.0),
            Scale::linear(f64::NAN, f64::NAN, 0.0, 100.0),
            Scale::log(0.0, -1.0, 100.0, 0.0),
        ] {
            for v in [0.0, 3.0, -1.0, 1e9] {
                assert!(s.at(v).is_finite(), "{s:?} at {v}");
            }
        }
        // Widened to whole decades: 1 .. 1000.
        let l = Scale::log(3.0, 700.0, 0.0, 300.0);
        assert_eq!((l.at(1.0), l.at(10.0), l.at(1000.0)), (0.0, 100.0, 300.0));
    }

    #[test]
    fn tick_labels_carry_units() {
        let label = |v, step, fmt| {
            let mut s = String::new();
            tick_label(&mut s, v, step, fmt);
            s
        };
        assert_eq!(label(20000.0, 10000.0, Fmt::Si), "20k");
        assert_eq!(label(2500.0, 500.0, Fmt::Micros), "2.5 ms");
        assert_eq!(label(500.0, 500.0, Fmt::Micros), "500 µs");
        assert_eq!(label(1000.0, 0.0, Fmt::Micros), "1 ms");
        assert_eq!(label(50.0, 25.0, Fmt::Pct), "50%");
        assert_eq!(label(1.0, 0.5, Fmt::Times), "1.0×");
        assert_eq!(label(2.0, 1.0, Fmt::Nines), "p99");
        assert_eq!(label(3.0, 1.0, Fmt::Nines), "p99.9");
        assert_eq!(label(4.0, 1.0, Fmt::Nines), "p99.99");
    }

    #[test]
    fn compact_values_have_three_significant_digits() {
        for (v, want) in [
            (45231.0, "45.2k"),
            (1234.0, "1234"),
            (1.2345, "1.23"),
            (0.012345, "0.0123"),
            (0.0, "0"),
            (2.5e6, "2.50M"),
            (f64::NAN, "—"),
        ] {
            let mut s = String::new();
            compact(&mut s, v);
            assert_eq!(s, want, "{v}");
        }
    }
}
