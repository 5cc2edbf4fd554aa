//! The microbenchmarks' arithmetic: one series of rounds summarised ([`summary`]), and two or
//! three saved results set against each other (A/B/A, [`compare`]).

pub mod compare;
pub mod summary;
