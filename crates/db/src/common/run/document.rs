//! A finished `db run` as the results model records it: the data set against the memory that
//! could cache it, the document built from the sessions' outcome, and the operations'
//! latency histograms.

use iogauge_model::db::engine::Engine;
use iogauge_model::db::outcome::{DbInterval, DbOutcome};
use iogauge_model::db::regrid::OPS;
use iogauge_model::db::report::{DataSet, DbContext, DbReport, Setting};
use iogauge_model::regrid::{groups, named_interval_label};
use iogauge_model::Histograms;
use iogauge_stats::{HistError, Phase};

/// The data set of `schemas` × `blocks` rows, one page of `engine`'s each, against
/// `ram_bytes` and the database's cache (shared_buffers, InnoDB's buffer pool); with the
/// warning a DBA needs when it fits in RAM and nothing keeps the OS from caching it.
pub fn data_set(
    engine: Engine,
    schemas: u32,
    blocks: u64,
    settings: &[Setting],
    ram_bytes: u64,
    cache_limited: bool,
) -> (DataSet, Option<String>) {
    let d = DataSet {
        schemas,
        blocks_per_schema: blocks,
        bytes: u64::from(schemas) * blocks * engine.page_bytes(),
        ram_bytes,
        shared_buffers_bytes: shared_buffers(settings),
    };
    let direct = crate::common::run::preflight::reads_direct(settings);
    let warning = (!cache_limited && !direct && d.bytes < d.ram_bytes).then(|| {
        format!(
            "the data set ({} MiB) fits in RAM ({} MiB): the OS page cache can serve reads {} counts as physical; use --cache-limit (root) or a larger --scale",
            d.bytes >> 20,
            d.ram_bytes >> 20,
            engine.product()
        )
    });
    (d, warning)
}

/// The database's own cache in bytes from the settings read back (`setting` in `unit`s, e.g.
/// 8kB): shared_buffers, or InnoDB's buffer pool.
pub fn shared_buffers(settings: &[Setting]) -> Option<u64> {
    let s = settings
        .iter()
        .find(|s| s.name == "shared_buffers" || s.name == "innodb_buffer_pool_size")?;
    let n: u64 = s.setting.parse().ok()?;
    let unit = match s.unit.as_deref() {
        Some("8kB") => 8192,
        Some("kB") => 1024,
        Some("MB") => 1 << 20,
        Some("B") | None => 1,
        Some(_) => return None,
    };
    Some(n * unit)
}

/// The document of a finished (or interrupted, or failed) run, with `warnings` from before
/// it, and its operations' histograms over the measured window.
pub fn db_document(
    outcome: &DbOutcome,
    ctx: DbContext,
    warnings: Vec<String>,
) -> Result<(DbReport, Histograms), HistError> {
    let mut r = DbReport::build(outcome, ctx);
    r.warnings.extend(warnings);
    if outcome.interrupted && outcome.error.is_none() {
        r.warnings
            .push("interrupted: the summary covers only the part that ran".into());
    }
    let m = outcome.measured();
    let mut histograms = vec![
        ("read".to_string(), m.sessions.read_lat.encode()?),
        ("update".to_string(), m.sessions.update_lat.encode()?),
    ];
    // Each interval's too, for `show ID --interval` (exact percentiles of coarser ones).
    let phase = |iv: &DbInterval| if iv.ramp { Phase::Ramp } else { Phase::Measure };
    for (_, members) in groups(outcome.intervals.iter().map(phase), 1) {
        for (i, index) in members {
            let iv = &outcome.intervals[i];
            for (name, h) in OPS
                .iter()
                .zip([&iv.sessions.read_lat, &iv.sessions.update_lat])
            {
                if !h.is_empty() {
                    histograms.push((named_interval_label(phase(iv), index, name), h.encode()?));
                }
            }
        }
    }
    Ok((r, histograms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(value: &str, unit: Option<&str>) -> Vec<Setting> {
        vec![Setting {
            name: "shared_buffers".into(),
            setting: value.into(),
            unit: unit.map(Into::into),
        }]
    }

    #[test]
    fn shared_buffers_in_its_units() {
        assert_eq!(
            shared_buffers(&setting("2048", Some("8kB"))),
            Some(16 << 20)
        );
        assert_eq!(shared_buffers(&setting("16", Some("MB"))), Some(16 << 20));
        assert_eq!(shared_buffers(&setting("16", Some("GB"))), None);
        assert_eq!(shared_buffers(&[]), None);
    }

    #[test]
    fn a_data_set_that_fits_in_ram_is_said_unless_the_cache_is_limited() {
        let (d, w) = data_set(
            Engine::Postgres,
            4,
            8192,
            &setting("2048", Some("8kB")),
            1 << 30,
            false,
        );
        assert_eq!(
            (d.bytes, d.shared_buffers_bytes),
            (256 << 20, Some(16 << 20))
        );
        assert!(w
            .unwrap()
            .starts_with("the data set (256 MiB) fits in RAM (1024 MiB)"));
        assert!(data_set(Engine::Postgres, 4, 8192, &[], 1 << 30, true)
            .1
            .is_none());
        assert!(data_set(Engine::Postgres, 4, 8192, &[], 1 << 20, false)
            .1
            .is_none());
    }
}
