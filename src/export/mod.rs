//! Renderings of a saved result: pure functions from a [`crate::result::ResultDoc`] to text, so
//! that every format is produced from the saved data alone and tested without I/O.

pub mod table;
