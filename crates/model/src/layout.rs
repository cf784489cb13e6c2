//! Option values of layouts: `--layout`, `--read-from` and `--failgroups`, parsed once from
//! strings into plain data; errors name the value and the accepted forms.

use iogauge_stats::units::{fmt_size, parse_size};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Smallest stripe unit, and the granularity of every unit: a 4 KiB page.
pub const MIN_UNIT: u64 = 4096;
/// Allocation unit of a bare `mirror:N`: ASM's default AU size.
pub const DEFAULT_AU: u64 = 1 << 20;

const USAGE: &str =
    "use concat, stripe:UNIT (e.g. stripe:1m) or mirror:2|3, combined as mirror:2,stripe:1m";

/// The `--layout` value: copies and stripe unit. `concat` is one copy and no unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutSpec {
    /// Copies of every block: 1 (concat, stripe), 2 or 3 (mirror).
    pub copies: u8,
    /// Stripe unit in bytes, as given; `None` for concat and a bare `mirror:N`.
    pub stripe: Option<u64>,
}

impl LayoutSpec {
    pub const CONCAT: LayoutSpec = LayoutSpec {
        copies: 1,
        stripe: None,
    };

    pub fn is_concat(&self) -> bool {
        *self == Self::CONCAT
    }

    /// The allocation unit placement works in; `None` for concat.
    pub fn unit(&self) -> Option<u64> {
        (!self.is_concat()).then(|| self.stripe.unwrap_or(DEFAULT_AU))
    }
}

impl Default for LayoutSpec {
    fn default() -> Self {
        Self::CONCAT
    }
}

impl FromStr for LayoutSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let twice = |what: &str| format!("layout '{s}' names {what} twice: {USAGE}");
        let (mut concat, mut copies, mut stripe) = (false, None, None);
        for part in s.split(',').map(str::trim) {
            if part == "concat" {
                if concat {
                    return Err(twice("concat"));
                }
                concat = true;
            } else if let Some(u) = part.strip_prefix("stripe:") {
                if stripe.is_some() {
                    return Err(twice("stripe"));
                }
                let unit = parse_size(u).map_err(|e| format!("layout '{s}': {e}"))?;
                if unit < MIN_UNIT || !unit.is_multiple_of(MIN_UNIT) {
                    return Err(format!(
                        "stripe unit '{u}' in layout '{s}' must be a multiple of 4 KiB: \
                         use e.g. stripe:1m (coarse, 1m–4m) or stripe:128k (fine)"
                    ));
                }
                stripe = Some(unit);
            } else if let Some(n) = part.strip_prefix("mirror:") {
                if copies.is_some() {
                    return Err(twice("mirror"));
                }
                copies = Some(match n {
                    "2" => 2,
                    "3" => 3,
                    _ => {
                        return Err(format!(
                            "'{part}' in layout '{s}': a mirror keeps 2 or 3 copies \
                             (mirror:2|3); for one copy use concat or stripe:UNIT"
                        ))
                    }
                });
            } else {
                return Err(format!("'{part}' in layout '{s}' is not a layout: {USAGE}"));
            }
        }
        if concat && (copies.is_some() || stripe.is_some()) {
            return Err(format!("layout '{s}': concat stands alone; {USAGE}"));
        }
        Ok(LayoutSpec {
            copies: copies.unwrap_or(1),
            stripe,
        })
    }
}

impl fmt::Display for LayoutSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.copies, self.stripe) {
            (1, None) => f.write_str("concat"),
            (1, Some(u)) => write!(f, "stripe:{}", fmt_size(u)),
            (n, None) => write!(f, "mirror:{n}"),
            (n, Some(u)) => write!(f, "mirror:{n},stripe:{}", fmt_size(u)),
        }
    }
}

/// `--read-from`: which copy a mirrored read goes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadFrom {
    /// The first live copy (ASM's default: read the primary extent).
    #[default]
    Primary,
    /// A live copy picked by the caller's token (random or round-robin).
    Balanced,
}

impl FromStr for ReadFrom {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "primary" => Ok(ReadFrom::Primary),
            "balanced" => Ok(ReadFrom::Balanced),
            _ => Err(format!(
                "unknown read policy '{s}': use primary or balanced"
            )),
        }
    }
}

impl fmt::Display for ReadFrom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReadFrom::Primary => "primary",
            ReadFrom::Balanced => "balanced",
        })
    }
}

/// `--failgroups d1,d2/d3,d4`: groups separated by '/', members by ','; names as in `--target`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailGroups(pub Vec<Vec<String>>);

impl FromStr for FailGroups {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let groups: Vec<Vec<String>> = s
            .split('/')
            .map(|g| g.split(',').map(|m| m.trim().to_string()).collect())
            .collect();
        if groups.iter().flatten().any(String::is_empty) {
            return Err(format!(
                "'{s}' has an empty failure group or member: separate groups by '/' and \
                 members by ',', as in d1,d2/d3,d4 (name targets by their last path \
                 component, sdb for /dev/sdb)"
            ));
        }
        Ok(FailGroups(groups))
    }
}

impl FailGroups {
    /// Member indices per group, resolving each name with [`target_index`]. Whether every
    /// target appears once is checked by the engine's `Layout::new`. Errors name the flag:
    /// they surface only once the targets are open, far from the command line.
    pub fn resolve<S: AsRef<str>>(&self, targets: &[S]) -> Result<Vec<Vec<usize>>, String> {
        self.0
            .iter()
            .map(|g| g.iter().map(|m| target_index(targets, m)).collect())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("--failgroups {self}: {e}"))
    }
}

impl fmt::Display for FailGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let groups: Vec<String> = self.0.iter().map(|g| g.join(",")).collect();
        f.write_str(&groups.join("/"))
    }
}

/// The index of target `name` (for `--failgroups` and `--degraded`): the exact `--target`
/// value, or else the unique target whose last path component is `name` (`sdb` for /dev/sdb).
pub fn target_index<S: AsRef<str>>(targets: &[S], name: &str) -> Result<usize, String> {
    let names = || {
        targets
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(i) = targets.iter().position(|t| t.as_ref() == name) {
        return Ok(i);
    }
    let base = |t: &str| t.rsplit('/').next().unwrap_or(t).to_string();
    let hits: Vec<usize> = (0..targets.len())
        .filter(|&i| base(targets[i].as_ref()) == name)
        .collect();
    match hits.as_slice() {
        [i] => Ok(*i),
        [] => Err(format!("'{name}' is not a target: use one of {}", names())),
        _ => Err(format!(
            "'{name}' names several targets: use the full path, one of {}",
            names()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1 << 10;
    const M: u64 = 1 << 20;

    fn spec(s: &str) -> LayoutSpec {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn layout_specs_table() {
        for (s, copies, stripe, shown) in [
            ("concat", 1, None, "concat"),
            ("stripe:1m", 1, Some(M), "stripe:1m"),
            ("stripe:128k", 1, Some(128 * K), "stripe:128k"),
            ("stripe:4MiB", 1, Some(4 * M), "stripe:4m"),
            ("stripe:12k", 1, Some(12 * K), "stripe:12k"),
            ("mirror:2", 2, None, "mirror:2"),
            ("mirror:3", 3, None, "mirror:3"),
            ("mirror:2,stripe:1m", 2, Some(M), "mirror:2,stripe:1m"),
            ("stripe:4m, mirror:3", 3, Some(4 * M), "mirror:3,stripe:4m"),
        ] {
            let l = spec(s);
            assert_eq!(l, LayoutSpec { copies, stripe }, "{s}");
            assert_eq!(l.to_string(), shown);
            assert_eq!(shown.parse::<LayoutSpec>(), Ok(l));
        }
        assert_eq!(spec("concat").unit(), None);
        assert_eq!(spec("mirror:2").unit(), Some(DEFAULT_AU));
        assert_eq!(spec("mirror:2,stripe:128k").unit(), Some(128 * K));
        for (bad, says) in [
            ("", "use concat, stripe:UNIT (e.g. stripe:1m) or mirror:2|3"),
            ("raid5", "is not a layout"),
            ("stripe", "is not a layout"),
            ("stripe:", "is not a size"),
            ("stripe:0", "must be a multiple of 4 KiB"),
            ("stripe:2k", "must be a multiple of 4 KiB"),
            ("stripe:6k", "must be a multiple of 4 KiB"),
            ("stripe:1000", "must be a multiple of 4 KiB"),
            ("mirror:1", "2 or 3 copies"),
            ("mirror:4", "2 or 3 copies"),
            ("mirror", "is not a layout"),
            ("concat,stripe:1m", "concat stands alone"),
            ("mirror:2,concat", "concat stands alone"),
            ("concat,concat", "names concat twice"),
            ("mirror:2,mirror:3", "names mirror twice"),
            ("stripe:1m,stripe:2m", "names stripe twice"),
            ("mirror:2,", "is not a layout"),
        ] {
            let e = bad.parse::<LayoutSpec>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(
                e.contains(&format!("'{bad}'")),
                "{bad}: the error names the value: {e}"
            );
        }
    }

    #[test]
    fn read_policies_and_failgroups_parse() {
        assert_eq!("primary".parse(), Ok(ReadFrom::Primary));
        assert_eq!("balanced".parse(), Ok(ReadFrom::Balanced));
        assert_eq!(ReadFrom::Balanced.to_string(), "balanced");
        assert!("random"
            .parse::<ReadFrom>()
            .unwrap_err()
            .contains("use primary or balanced"));

        let names = |s: &str| s.parse::<FailGroups>().unwrap().0;
        assert_eq!(names("d1,d2/d3,d4"), [vec!["d1", "d2"], vec!["d3", "d4"]]);
        assert_eq!(names("d1 / d2/d3"), [vec!["d1"], vec!["d2"], vec!["d3"]]);
        for bad in ["", "d1,/d2", "d1//d2", "/d1", "d1,d2/"] {
            let e = bad.parse::<FailGroups>().unwrap_err();
            assert!(
                e.contains("as in d1,d2/d3,d4") && e.contains(&format!("'{bad}'")),
                "{e}"
            );
        }

        let targets = ["/dev/sdb", "/dev/sdc", "d3", "/mnt/a/d3"];
        // '/' separates groups, so paths cannot name members; their last components can.
        let e = "/dev/sdb,/dev/sdc/d3".parse::<FailGroups>().unwrap_err();
        assert!(e.contains("sdb for /dev/sdb"), "{e}");
        let g: FailGroups = "sdb/sdc,d3".parse().unwrap();
        assert_eq!(
            g.resolve(&targets),
            Ok(vec![vec![0], vec![1, 2]]),
            "exact name beats basename"
        );
        assert!(target_index(&targets, "sdx")
            .unwrap_err()
            .contains("use one of /dev/sdb"));
        let twins = ["/a/d1", "/b/d1"];
        assert!(target_index(&twins, "d1")
            .unwrap_err()
            .contains("several targets"));
    }

    /// An unknown member is reported under --failgroups, not only under --layout (the
    /// engine's prefix), so the user knows which flag to fix (issue #14 parser tests).
    #[test]
    fn failgroup_errors_name_the_flag() {
        let g: FailGroups = "d1,d2/zz".parse().unwrap();
        assert_eq!(g.to_string(), "d1,d2/zz");
        let e = g.resolve(&["/x/d1", "/x/d2"]).unwrap_err();
        assert!(
            e.starts_with("--failgroups d1,d2/zz: 'zz' is not a target"),
            "{e}"
        );
    }
}
