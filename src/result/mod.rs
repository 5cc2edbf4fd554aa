//! Where results are kept: the result directory's life ([`store`]). The document's types are
//! the records' (`rtsoak_record::result`).

#![forbid(unsafe_code)]

pub mod store;
