//! The devices `watch` shows, kept in place from one refresh to the next.

use iogauge_model::derive::Derived;
use std::collections::BTreeSet;

/// The devices to show: those asked for; with `--devices all` every device of the latest
/// sample; by default those that have done I/O since watch started (kept once seen, so a
/// device going idle stays in its place and one that disappears shows as gone).
#[derive(Default)]
pub(crate) struct Shown {
    seen: BTreeSet<String>,
}

impl Shown {
    /// `devices` and `all` as [`crate::Scope`] holds them.
    pub fn names(&mut self, devices: Option<&[String]>, all: bool, s: &Derived) -> Vec<String> {
        match devices {
            Some(d) => d.to_vec(),
            None if all => s.disks.keys().cloned().collect(),
            None => {
                for (name, r) in &s.disks {
                    let busy = r.r_s + r.w_s + r.d_s.unwrap_or(0.0) + r.f_s.unwrap_or(0.0) > 0.0;
                    if busy {
                        self.seen.insert(name.clone());
                    }
                }
                self.seen.iter().cloned().collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Shown;
    use iogauge_model::derive::{Derived, DiskRates};

    fn sample(busy: &[(&str, f64)]) -> Derived {
        let mut d = Derived::default();
        for (name, r_s) in busy {
            let rates = DiskRates {
                r_s: *r_s,
                ..DiskRates::default()
            };
            d.disks.insert(name.to_string(), rates);
        }
        d
    }

    /// By default a device shows from its first I/O on and keeps its place when idle or gone;
    /// `--devices all` shows every device of the sample; a list shows as given.
    #[test]
    fn seen_devices_stay_in_place() {
        let mut s = Shown::default();
        let first = sample(&[("vda", 0.0), ("vdb", 5.0)]);
        assert_eq!(s.names(None, false, &first), ["vdb"]);
        let later = sample(&[("vda", 3.0)]);
        assert_eq!(s.names(None, false, &later), ["vda", "vdb"]);
        assert_eq!(s.names(None, true, &first), ["vda", "vdb"]);
        let asked = ["sdz".to_string()];
        assert_eq!(s.names(Some(&asked), false, &later), ["sdz"]);
    }
}
