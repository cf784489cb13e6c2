//! The hostile test (issue #14): each defect a hostile user found, as a test against the real
//! binary, plus property tests that throw arbitrary strings at every parser. One module per
//! area; each test names the row of the table it keeps fixed.

mod db;
mod inputs;
mod lifecycle;
mod maria;
mod parsers;
mod pg;
mod results;
mod secrets;
mod settings;
mod targets;
mod trust;
