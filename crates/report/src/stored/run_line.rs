//! The line `iogauge campaign` prints when a run of it is stored: its headline figures and
//! its id, read back from the store as the report will read it.

use super::error::ReadError;
use crate::campaign::verdicts::headline;
use iogauge_campaign::digest::digest;
use iogauge_model::history::RunStatus;
use iogauge_store::{CampaignTag, Store};

/// One line on a stored campaign run: its headline figures and its id.
pub fn run_line(store: &Store, tag: &CampaignTag) -> Result<String, ReadError> {
    let runs = store.campaign_runs(&tag.campaign, tag.generation)?;
    let Some(link) = runs.iter().rev().find(|r| {
        r.case == tag.case && r.rep == tag.rep && !r.warmup && r.status == RunStatus::Complete
    }) else {
        return Err(ReadError::NotStored(format!(
            "campaign {}: the run of case {:?} repetition {} finished but is not in the store",
            tag.campaign, tag.case, tag.rep
        )));
    };
    let Some(run) = store.get(link.run_id)? else {
        return Err(ReadError::NotStored(
            "a campaign run vanished from the store".into(),
        ));
    };
    let d = digest(link.run_id, link.rep, &run.document, &run.histograms)?;
    Ok(format!("{} (run {})", headline(&d.metrics), link.run_id))
}
