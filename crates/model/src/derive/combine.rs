//! Consecutive intervals' figures as one (`show ID --interval` of a calibration, whose points
//! keep their derived figures but not the raw snapshots): every iostat figure is a count over
//! a duration or over a number of I/Os, so weighting each part by its duration, or by its
//! I/Os, gives the whole's figure exactly when the parts tile it.

use super::rates::{CpuRates, Derived, DiskRates, SwapRates};
use crate::sched::JobCpuRates;
use std::collections::BTreeMap;

/// Σ wᵢ·xᵢ / Σ wᵢ of (weight, value) pairs; `None` without weight.
pub(crate) fn weighted_mean(parts: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let (w, s) = parts.fold((0.0, 0.0), |(w, s), (wi, x)| (w + wi, s + wi * x));
    (w > 0.0).then(|| s / w)
}

/// [`weighted_mean`], 0 when the weights are.
fn weighted(parts: impl Iterator<Item = (f64, f64)>) -> f64 {
    weighted_mean(parts).unwrap_or(0.0)
}

impl DiskRates {
    /// `parts` (seconds, figures) as one interval.
    pub fn combine(parts: &[(f64, &DiskRates)]) -> DiskRates {
        let by_time = |f: fn(&DiskRates) -> f64| weighted(parts.iter().map(|(t, d)| (*t, f(d))));
        // A per-I/O figure is weighted by the I/Os behind it: rate × seconds.
        let by_ios = |n: fn(&DiskRates) -> f64, f: fn(&DiskRates) -> f64| {
            weighted(parts.iter().map(|(t, d)| (t * n(d), f(d))))
        };
        let opt = |f: fn(&DiskRates) -> Option<f64>| {
            parts
                .iter()
                .map(|(t, d)| Some((*t, f(d)?)))
                .collect::<Option<Vec<_>>>()
                .map(|v| weighted(v.into_iter()))
        };
        let pct = |merged: f64, issued: f64| {
            if merged + issued > 0.0 {
                merged / (merged + issued) * 100.0
            } else {
                0.0
            }
        };
        let (r_s, w_s) = (by_time(|d| d.r_s), by_time(|d| d.w_s));
        let (rrqm_s, wrqm_s) = (by_time(|d| d.rrqm_s), by_time(|d| d.wrqm_s));
        DiskRates {
            r_s,
            w_s,
            r_mb_s: by_time(|d| d.r_mb_s),
            w_mb_s: by_time(|d| d.w_mb_s),
            rrqm_s,
            wrqm_s,
            rrqm_pct: pct(rrqm_s, r_s),
            wrqm_pct: pct(wrqm_s, w_s),
            rareq_sz: by_ios(|d| d.r_s, |d| d.rareq_sz),
            wareq_sz: by_ios(|d| d.w_s, |d| d.wareq_sz),
            aqu_sz: by_time(|d| d.aqu_sz),
            r_await: by_ios(|d| d.r_s, |d| d.r_await),
            w_await: by_ios(|d| d.w_s, |d| d.w_await),
            util: by_time(|d| d.util),
            d_s: opt(|d| d.d_s),
            f_s: opt(|d| d.f_s),
        }
    }
}

impl Derived {
    /// `parts` (seconds, figures), consecutive, as one interval: devices present in every
    /// part, CPU and stall shares weighted by duration (ticks run at a constant rate),
    /// memory (a gauge) and anything else
    /// as of the last part. `None` without parts.
    pub fn combine(parts: &[(f64, &Derived)]) -> Option<Derived> {
        let (_, last) = parts.last()?;
        let mut out = (*last).clone();
        let mut disks = BTreeMap::new();
        for name in last.disks.keys() {
            let each: Option<Vec<(f64, &DiskRates)>> = parts
                .iter()
                .map(|(t, d)| Some((*t, d.disks.get(name)?)))
                .collect();
            if let Some(each) = each {
                disks.insert(name.clone(), DiskRates::combine(&each));
            }
        }
        out.disks = disks;
        // Stage quantiles do not add up from rates: a combined interval is traced anew from
        // the raw samples where a document keeps them (`regrid`), else shown without.
        out.layers = BTreeMap::new();
        out.ring = None;
        out.others = crate::layers::merge_origins(parts.iter().flat_map(|(_, d)| &d.others));
        let cpu = |f: fn(&CpuRates) -> f64| weighted(parts.iter().map(|(t, d)| (*t, f(&d.cpu))));
        out.cpu = CpuRates {
            user: cpu(|c| c.user),
            system: cpu(|c| c.system),
            iowait: cpu(|c| c.iowait),
            steal: cpu(|c| c.steal),
            idle: cpu(|c| c.idle),
        };
        out.psi_some_pct = parts
            .iter()
            .map(|(t, d)| Some((*t, d.psi_some_pct?)))
            .collect::<Option<Vec<_>>>()
            .map(|v| weighted(v.into_iter()));
        out.swap = parts
            .iter()
            .map(|(t, d)| Some((*t, d.swap?)))
            .collect::<Option<Vec<_>>>()
            .map(|v| SwapRates {
                in_s: weighted(v.iter().map(|(t, s)| (*t, s.in_s))),
                out_s: weighted(v.iter().map(|(t, s)| (*t, s.out_s))),
            });
        out.job = parts
            .iter()
            .map(|(t, d)| Some((*t, d.job?)))
            .collect::<Option<Vec<_>>>()
            .and_then(|v| JobCpuRates::combine(&v));
        out.psi_cpu_some_pct = parts
            .iter()
            .map(|(t, d)| Some((*t, d.psi_cpu_some_pct?)))
            .collect::<Option<Vec<_>>>()
            .map(|v| weighted(v.into_iter()));
        Some(out)
    }
}
