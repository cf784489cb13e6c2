//! One module per rule. A rule reads a whole result ([`Whole`]) and returns its findings
//! (usually none or one). Each module's doc states the rule's source, its thresholds, the
//! formula of its impact and the ground-truth scenario that built its bottleneck for real.

use crate::view::Whole;
use iogauge_model::finding::Finding;
use iogauge_model::Document;

pub mod cache;
pub mod cpu;
pub mod db;
pub mod device;
pub mod layout;
pub mod members;
pub mod neighbours;
pub mod queue;
pub mod ranks;
pub mod readahead;
pub mod span;
pub mod throttle;
pub mod writecache;

/// A rule: a whole document (and its [`Whole`] view) to findings.
pub type Rule = fn(&Document, &Whole) -> Vec<Finding>;

/// Every rule, in stack order.
pub const RULES: [Rule; 13] = [
    cpu::check,
    cache::check,
    readahead::check,
    throttle::check,
    queue::check,
    device::check,
    neighbours::check,
    writecache::check,
    layout::check,
    members::check,
    span::check,
    ranks::check,
    db::check,
];
