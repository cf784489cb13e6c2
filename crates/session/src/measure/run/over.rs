//! What a rank's part of a job over ranks is, beside its targets.

use iogauge_model::spec::Region;

/// What a rank's part of a job over ranks is, beside its targets.
#[derive(Clone, Copy, Debug, Default)]
pub struct Over {
    /// Its slice of a shared target's region, from `place`.
    pub region: Option<Region>,
    /// `--keep-rank-series`: its own series kept in the job's document.
    pub keep_series: bool,
}
