//! What an output format produces: one file, or a directory of files for a reader that takes
//! one thing per file (HdrHistogram's plotter reads a file as one distribution). Pure data: the
//! commands write it.

use rtsoak_record::result::ResultDoc;

/// How a format renders a document.
pub enum Render {
    /// One file, named by the format's `file_name`.
    File(fn(&ResultDoc) -> Vec<u8>),
    /// A directory, named by the format's `file_name`, of these files.
    Directory(fn(&ResultDoc) -> Vec<NamedFile>),
}

/// One file of a directory format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFile {
    /// A plain file name: no directory, only letters, digits, `.`, `-` and `_`.
    pub name: String,
    /// Its content.
    pub bytes: Vec<u8>,
}
