//! Parsers under fire (issue #14, "What to build": property tests that throw arbitrary strings
//! at every parser of user input, against the real binary): the suite is parsers/suite.rs and
//! the modules beside it.

mod suite;
