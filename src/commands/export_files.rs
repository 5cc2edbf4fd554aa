//! Writing one rendered format to disk: a file atomically, or a directory format's files each
//! atomically in a directory created for them (by fd, as every directory rtsoak writes).

use std::path::Path;

use anyhow::Context;

use rtsoak_record::result::ResultDoc;
use rtsoak_report::{Format, Render};
use rtsoak_sys::safe_dir::SafeDir;

use crate::store::write_atomic;

/// Write `doc` as `format` to `path`: the file itself, or the directory that holds the
/// format's files. Returns what it wrote, for the user.
pub(super) fn write(format: &Format, doc: &ResultDoc, path: &Path) -> anyhow::Result<String> {
    match format.render {
        Render::File(render) => {
            write_atomic(path, &render(doc))?;
            Ok(path.display().to_string())
        }
        Render::Directory(render) => {
            let files = render(doc);
            let dir = SafeDir::create(path).with_context(|| {
                format!(
                    "creating the directory {} for the {} files: choose another place with \
                     --output",
                    path.display(),
                    format.name
                )
            })?;
            for file in &files {
                dir.write(file.name.as_ref(), &file.bytes, 0o644)
                    .with_context(|| {
                        format!(
                            "writing {}: choose a writable place with --output",
                            path.join(&file.name).display()
                        )
                    })?;
            }
            Ok(format!("{} ({} files)", path.display(), files.len()))
        }
    }
}
