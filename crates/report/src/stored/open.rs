//! Opening what a command reads: a stored result by the id the user gave, and a campaign
//! ready to render (gathered from the store, its secrets masked).

use super::error::{usage, ReadError};
use super::gather::gather;
use iogauge_campaign::CampaignView;
use iogauge_model::secret::redact_secrets;
use iogauge_store::{Store, StoreError, StoredRun};
use std::path::Path;

/// Stored result `id`, or a usage error naming the store.
pub(super) fn stored_run(store: &Store, id: i64) -> Result<StoredRun, ReadError> {
    match store.get(id)? {
        Some(run) => Ok(run),
        None => usage(format!(
            "no run {id} in {}; `iogauge history` lists the stored runs",
            store.path().display()
        )),
    }
}

/// Campaign `name` from the store at `store` (`--store`, else the default), masked.
pub(super) fn open_view(store: Option<&Path>, name: &str) -> Result<CampaignView, ReadError> {
    let store = match Store::open_reader_resolved(store) {
        Err(StoreError::Missing { path }) => {
            return usage(format!(
                "no campaign {name:?}: the results store {} does not exist yet; run `iogauge campaign FILE` first or pass --store",
                path.display()
            ))
        }
        s => s?,
    };
    let mut view = gather(&store, name).map_err(|e| {
        if e.is_usage() {
            ReadError::Usage(e.to_string())
        } else {
            ReadError::Gather(e)
        }
    })?;
    // Campaigns are stored masked; one stored by an older iogauge may not be, and every
    // rendering (report, export, compare) goes through here. The one masking function.
    let mask = redact_secrets;
    view.file = mask(&view.file);
    for c in &mut view.cases {
        c.args.iter_mut().for_each(|a| *a = mask(a));
        c.vars.values_mut().for_each(|v| *v = mask(v));
    }
    Ok(view)
}
