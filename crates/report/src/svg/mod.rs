//! The chart toolkit of every HTML report (a campaign's and stored results'): hand-written
//! SVG, inline, no script. From the bottom up: the page and its escaping (`page`), numbers
//! and scales (`scale`), drawing primitives (`draw`), then the charts both reports draw: a
//! line chart of named series (`line`), the matrix heat map (`heat_map`), latency percentile
//! curves (`latency`), a run's ramp and steady spans (`timeline`), average active
//! sessions by wait event (`aas`) and stacked bars over time (`stack`). Charts take figures and campaign digests, never a stored
//! document.

pub(crate) mod aas;
pub(crate) mod draw;
pub(crate) mod heat_map;
pub(crate) mod latency;
pub(crate) mod line;
pub(crate) mod page;
pub(crate) mod scale;
pub(crate) mod stack;
pub(crate) mod timeline;
