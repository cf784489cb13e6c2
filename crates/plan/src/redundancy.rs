//! Redundancy levels and their write penalty: how many disk I/Os one application write costs.
//! A read costs one disk I/O at every level (any copy, or the data strip, serves it).
//!
//! The penalties are the standard small random write figures found in every RAID sizing guide:
//! a mirror writes each copy (2, or 3 for a three-way mirror); RAID 5 reads the old data and
//! parity and writes both back (4); RAID 6 does the same with two parities (6). Oracle ASM
//! normal redundancy keeps two copies of each extent and high redundancy three, so they size
//! as two- and three-way mirrors.

use std::fmt;
use std::str::FromStr;

/// A redundancy level, or a custom write penalty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Redundancy {
    /// No redundancy (RAID 0, ASM external): penalty 1.
    None,
    /// Two copies (RAID 1, RAID 10, ASM normal): penalty 2.
    Mirror,
    /// Three copies (three-way mirror, ASM high): penalty 3.
    ThreeWay,
    /// Single parity: read data and parity, write both: penalty 4.
    Raid5,
    /// Double parity: read data and two parities, write all three: penalty 6.
    Raid6,
    /// A penalty given as a number (`--write-penalty`).
    Custom(f64),
}

/// The accepted names, for error messages and help.
pub const REDUNDANCY_NAMES: &str =
    "none, raid0, raid1, raid10, mirror, normal, 3-way, high, raid5, raid6";

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("unknown redundancy {0:?}; use one of {REDUNDANCY_NAMES}")]
pub struct UnknownRedundancy(pub String);

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("a write penalty must be a number from 1 to 100 (got {0})")]
pub struct BadPenalty(pub f64);

impl Redundancy {
    /// A custom penalty: disk I/Os per application write, 1 to 100 ([`crate::limits`]).
    pub fn custom(penalty: f64) -> Result<Redundancy, BadPenalty> {
        if crate::limits::WRITE_PENALTY.holds(penalty) {
            Ok(Redundancy::Custom(penalty))
        } else {
            Err(BadPenalty(penalty))
        }
    }

    /// Disk I/Os per application write.
    pub fn write_penalty(self) -> f64 {
        match self {
            Redundancy::None => 1.0,
            Redundancy::Mirror => 2.0,
            Redundancy::ThreeWay => 3.0,
            Redundancy::Raid5 => 4.0,
            Redundancy::Raid6 => 6.0,
            Redundancy::Custom(p) => p,
        }
    }

    /// The level in words, with the names it goes by.
    pub fn describe(self) -> &'static str {
        match self {
            Redundancy::None => "none (RAID 0, ASM external)",
            Redundancy::Mirror => "2-way mirror (RAID 1/10, ASM normal)",
            Redundancy::ThreeWay => "3-way mirror (ASM high)",
            Redundancy::Raid5 => "RAID 5",
            Redundancy::Raid6 => "RAID 6",
            Redundancy::Custom(_) => "custom write penalty",
        }
    }
}

impl fmt::Display for Redundancy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Redundancy::None => "none",
            Redundancy::Mirror => "mirror",
            Redundancy::ThreeWay => "3-way",
            Redundancy::Raid5 => "raid5",
            Redundancy::Raid6 => "raid6",
            Redundancy::Custom(_) => "custom",
        })
    }
}

impl FromStr for Redundancy {
    type Err = UnknownRedundancy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "none" | "raid0" | "external" => Redundancy::None,
            "raid1" | "raid10" | "mirror" | "normal" | "asm-normal" | "2-way" => Redundancy::Mirror,
            "3-way" | "3way" | "three-way" | "high" | "asm-high" => Redundancy::ThreeWay,
            "raid5" => Redundancy::Raid5,
            "raid6" => Redundancy::Raid6,
            _ => return Err(UnknownRedundancy(s.into())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn penalties_by_name() {
        let table = [
            ("none", 1.0),
            ("raid0", 1.0),
            ("raid1", 2.0),
            ("raid10", 2.0),
            ("mirror", 2.0),
            ("normal", 2.0),
            ("NORMAL", 2.0),
            ("3-way", 3.0),
            ("high", 3.0),
            ("raid5", 4.0),
            ("raid6", 6.0),
        ];
        for (name, penalty) in table {
            let r: Redundancy = name.parse().unwrap();
            assert_eq!(r.write_penalty(), penalty, "{name}");
        }
    }

    #[test]
    fn unknown_names_and_bad_penalties_are_refused() {
        let e = "raid7".parse::<Redundancy>().unwrap_err();
        assert!(e.to_string().contains("raid7") && e.to_string().contains("raid6"));
        assert_eq!(Redundancy::custom(2.5).unwrap().write_penalty(), 2.5);
        for bad in [0.5, 0.0, -1.0, 101.0, 1e308, f64::NAN, f64::INFINITY] {
            assert!(Redundancy::custom(bad).is_err(), "{bad}");
        }
    }
}
