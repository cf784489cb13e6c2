//! Each rule on hand-built documents: the finding it makes, its evidence and its impact, and
//! the figures just short of its thresholds that must not make it.

mod calib;
mod db;
mod layers;
mod run;
mod throttle;
mod typing;
mod when;
