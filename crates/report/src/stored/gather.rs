//! From the store to a [`CampaignView`]: the campaign's stored definition, its measured runs
//! per case (warm-ups and interrupted runs left out), each digested, and the statistics.
//! (`campaign` stays pure: reading the store is done here, beside the renderers.)

use iogauge_campaign::analysis;
use iogauge_campaign::digest::{self, DigestError};
use iogauge_campaign::view::{CampaignView, CaseView, Definition};
use iogauge_model::history::RunStatus;
use iogauge_model::Document;
use iogauge_store::{Store, StoreError};
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    #[error("no campaign {name:?} in the results store {store}{known}; run `iogauge campaign FILE` first or pass --store", known = if .known.is_empty() { String::new() } else { format!(" (it has: {})", .known.join(", ")) })]
    NotFound {
        name: String,
        store: String,
        known: Vec<String>,
    },
    #[error("campaign {name:?}: its stored definition does not read ({why}); it was made by another iogauge version")]
    Definition { name: String, why: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Digest(#[from] DigestError),
}

impl GatherError {
    /// Whether the user named something that is not there (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            GatherError::NotFound { .. } => true,
            GatherError::Store(s) => s.is_usage(),
            _ => false,
        }
    }
}

/// The stored definition of campaign `name` and its generation.
fn definition(store: &Store, name: &str) -> Result<(Definition, i64), GatherError> {
    let Some(row) = store.campaign(name)? else {
        return Err(GatherError::NotFound {
            name: name.into(),
            store: store.path().display().to_string(),
            known: store.campaign_names()?,
        });
    };
    let def: Definition =
        serde_json::from_str(&row.definition).map_err(|e| GatherError::Definition {
            name: name.into(),
            why: e.to_string(),
        })?;
    Ok((def, row.generation))
}

/// The whole campaign, ready to render.
pub fn gather(store: &Store, name: &str) -> Result<CampaignView, GatherError> {
    let (def, generation) = definition(store, name)?;
    let file = store.campaign(name)?.map(|r| r.file).unwrap_or_default();
    let links = store.campaign_runs(name, generation)?;
    let mut environment = def.environment.clone();
    let mut targets = BTreeSet::new();
    let mut devices = BTreeSet::new();
    let mut starts = Vec::new();
    let mut interrupted = 0;
    let mut cases = Vec::with_capacity(def.campaign.cases.len());
    let baselines = def
        .campaign
        .baselines()
        .map_err(|e| GatherError::Definition {
            name: name.into(),
            why: e.to_string(),
        })?;
    // Measured links by case, grouped once: linear in cases and runs.
    let mut by_case: HashMap<&str, Vec<_>> = HashMap::new();
    for l in links.iter().filter(|l| !l.warmup) {
        by_case.entry(l.case.as_str()).or_default().push(l);
    }
    for (case, base) in def.campaign.cases.iter().zip(&baselines) {
        let mut mine = by_case.remove(case.name.as_str()).unwrap_or_default();
        interrupted += mine
            .iter()
            .filter(|l| l.status == RunStatus::Interrupted)
            .count();
        mine.retain(|l| l.status == RunStatus::Complete);
        mine.sort_by_key(|l| l.rep);
        let mut runs = Vec::with_capacity(mine.len());
        let mut hists = Vec::with_capacity(mine.len());
        for l in mine {
            let Some(stored) = store.get(l.run_id)? else {
                continue;
            };
            note_environment(&stored.document, &mut targets, &mut devices);
            starts.push(stored.row.started_at.clone());
            runs.push(digest::digest(
                l.run_id,
                l.rep,
                &stored.document,
                &stored.histograms,
            )?);
            hists.push(stored.histograms);
        }
        let refs: Vec<&[(String, Vec<u8>)]> = hists.iter().map(Vec::as_slice).collect();
        cases.push(CaseView {
            name: case.name.clone(),
            vars: case.vars_map(),
            args: case.args.clone(),
            runs,
            lat_curves: digest::lat_curves(&refs)?,
            baseline: base.map(|b| def.campaign.cases[b].name.clone()),
        });
    }
    starts.sort();
    environment.targets = targets.into_iter().collect();
    environment.devices = devices.into_iter().collect();
    environment.first_run = starts.first().cloned();
    environment.last_run = starts.last().cloned();
    let metrics = analysis::metrics_per_case(&cases, def.campaign.statistic);
    let mut warnings = analysis::warnings(&cases, def.campaign.repeat);
    if interrupted > 0 {
        warnings.push(format!(
            "{interrupted} interrupted run(s) are left out of the figures (their repetitions were run again or are still to run)"
        ));
    }
    Ok(CampaignView {
        schema: iogauge_campaign::SCHEMA,
        name: def.campaign.name.clone(),
        file,
        command: def.campaign.command.to_string(),
        baseline: def.campaign.baseline.clone(),
        statistic: def.campaign.statistic,
        smoke: def.campaign.smoke,
        repeat: def.campaign.repeat,
        environment,
        cases,
        metrics,
        warnings,
    })
}

/// Targets and disks named in a run's document (`run`, `calibrate` or `db run`).
fn note_environment(
    doc: &Document,
    targets: &mut BTreeSet<String>,
    devices: &mut BTreeSet<String>,
) {
    let (infos, disks): (&[_], &[String]) = match doc {
        Document::Run(r) => (&r.targets, r.hardware.as_ref().map_or(&[], |h| &h.disks)),
        Document::Calibration(c) => (&c.targets, &[]),
        Document::DbRun(d) => {
            let s = &d.server;
            targets.insert(format!(
                "{} {} at {}",
                s.engine.product(),
                s.version,
                s.location
            ));
            (&[], d.cache.as_ref().map_or(&[], |c| &c.disks))
        }
    };
    for t in infos {
        let or_unknown = |s: &Option<String>| s.clone().unwrap_or_else(|| "?".into());
        targets.insert(format!(
            "{}: {} on {} ({}, {:.1} GiB)",
            t.path.display(),
            or_unknown(&t.fs),
            or_unknown(&t.device),
            match t.kind {
                iogauge_model::target::TargetKind::File => "file",
                iogauge_model::target::TargetKind::Block => "block",
            },
            t.size as f64 / f64::from(1u32 << 30)
        ));
    }
    devices.extend(disks.iter().cloned());
}
