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
