//! The line `iogauge campaign` prints when a run of it is stored: its headline figures and
//! its id, read back from the store as the report will read it.

use super::error::ReadError;
use crate::campaign::verdicts::headline;
use crate::text::findings::{layer_phrase, HEALTHY};
use iogauge_campaign::digest::digest;
use iogauge_model::finding::{Finding, Layer};
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
    Ok(format!(
        "{}{} (run {})",
        headline(&d.metrics),
        limit_part(d.finding.as_ref()),
        link.run_id
    ))
}

/// `, limited by the OS queue` (or `, no limit found below the load offered`) from the run's
/// top finding; nothing without findings.
fn limit_part(f: Option<&Finding>) -> String {
    match f.map(|f| f.layer) {
        None => String::new(),
        Some(Layer::None) => format!(", {HEALTHY}"),
        Some(l) => format!(", limited by {}", layer_phrase(l)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::findings::tests::finding;

    #[test]
    fn the_limit_in_a_few_words() {
        assert_eq!(limit_part(None), "");
        let q = finding(Layer::OsQueue, 0.4, "q");
        assert_eq!(limit_part(Some(&q)), ", limited by the OS queue");
        let ok = finding(Layer::None, 0.0, "");
        assert_eq!(limit_part(Some(&ok)), format!(", {HEALTHY}"));
    }
}
