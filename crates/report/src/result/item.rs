//! What every section of the result report draws from: a stored result with its colour and
//! digest ([`Item`]), and the results of one kind on shared axes, each with its typed
//! document ([`Group`]), so a section never asks a document what it is.

use crate::svg::draw::short;
use crate::svg::line::{Axis, Chart, Series};
use crate::svg::page::{colour, PALETTE};
use crate::svg::scale::Fmt;
use crate::svg::timeline::{run_end, spans};
use iogauge_campaign::RunDigest;
use iogauge_model::{Document, Kind};

/// One stored result: its id, document and stored histograms.
pub struct Stored<'a> {
    pub id: i64,
    pub document: &'a Document,
    pub histograms: &'a [(String, Vec<u8>)],
}

/// A result with what every chart needs: its colour and the digest campaigns use.
pub(super) struct Item<'a> {
    pub s: &'a Stored<'a>,
    /// Position among the results: picks the colour.
    pub index: usize,
    pub digest: RunDigest,
}

impl Item<'_> {
    /// `run 12` (with the label when there is one).
    pub fn name(&self) -> String {
        let kind = match self.s.document.kind() {
            Kind::Run => "run",
            Kind::Calibrate => "calibration",
            Kind::DbRun => "db run",
        };
        match &self.s.document.meta().label {
            Some(l) => format!("{kind} {} [{l}]", self.s.id),
            None => format!("{kind} {}", self.s.id),
        }
    }

    /// `12` or `12 [label]`, short enough for a legend.
    fn short_name(&self) -> String {
        match &self.s.document.meta().label {
            Some(l) => format!("{} [{}]", self.s.id, short(l, 16)),
            None => self.s.id.to_string(),
        }
    }
}

/// The results of one kind drawn on shared axes: each item with its document of kind `T`
/// (`RunReport`, `CalibrationReport`, `DbReport`), in the order given.
pub(super) struct Group<'a, T> {
    pub items: Vec<(&'a Item<'a>, &'a T)>,
}

impl<T> Group<'_, T> {
    pub fn new() -> Self {
        Group { items: Vec::new() }
    }

    /// A series of result `it`: with one result each series takes its own colour
    /// (`k`-th of the chart); with several, the result's colour and the `k`-th dash pattern.
    pub fn series(&self, it: &Item, k: usize, what: &str, pts: Vec<(f64, Option<f64>)>) -> Series {
        let one = self.items.len() == 1;
        Series {
            name: if one {
                what.to_string()
            } else {
                format!("{} {what}", it.short_name())
            },
            colour: if one {
                PALETTE[k % PALETTE.len()]
            } else {
                colour(it.index)
            },
            dash: if one { 0 } else { k },
            dots: false,
            pts,
        }
    }

    /// Ramp and steady spans, drawn only when one result is shown (several would overlap).
    fn spans(&self) -> Vec<(f64, f64, &'static str)> {
        match self.items.as_slice() {
            [(one, _)] => spans(&one.digest, run_end(&one.digest)),
            _ => Vec::new(),
        }
    }

    pub fn ids(&self) -> String {
        self.items
            .iter()
            .map(|(i, _)| i.s.id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A time chart of these results.
    pub fn time_chart(&self, key: &str, what: &str, y: Axis, series: Vec<Series>) -> Chart {
        Chart {
            kind: "series",
            key: key.to_string(),
            aria: format!("{what} over time, results {}", self.ids()),
            x: Axis::linear("time since start", Fmt::Secs),
            y,
            series,
            spans: self.spans(),
            cap: None,
        }
    }
}
