//! Where a soak's result goes, and what happens when it cannot go there: the result directory
//! is created (0755) and tried for writing before anything runs, and a save that fails later
//! (disk full, directory made read-only) stops the comparison without losing what was
//! measured: the caller still prints the table, then the error. Never deletes or overwrites
//! anything but the result's own files.

use std::path::{Path, PathBuf};

use anyhow::Context;

use rtsoak_sys::safe_dir::SafeDir;

use super::{RESULT_FILE, save};
use rtsoak_record::result::ResultDoc;

/// Create `dir` (and its parents) with mode 0755 where it is new, each relative to its checked
/// parent's fd (root refuses a place another user controls, see [`SafeDir`]), and check a file
/// can be created in it, so an unwritable place is refused before the first run rather than
/// after. The check's file has no name, so it leaves nothing behind.
pub(crate) fn create_result_dir(dir: &Path) -> anyhow::Result<()> {
    let created = SafeDir::create(dir).with_context(|| {
        format!(
            "creating the result directory {}: choose another with --output",
            dir.display()
        )
    })?;
    created.tmpfile().with_context(|| {
        format!(
            "the result directory {} is not writable: choose another with --output",
            dir.display()
        )
    })?;
    Ok(())
}

/// The result directory of a new `command` invocation: `output` if the user named one, else a
/// new `<UTC time>-<command>` directory in `parent`; created and tried for writing.
pub(crate) fn new_result_dir(
    output: Option<&Path>,
    parent: &Path,
    command: &str,
) -> anyhow::Result<PathBuf> {
    let dir = match output {
        Some(dir) => dir.to_path_buf(),
        None => {
            let stamp = rtsoak_sys::clock::timestamp().replace([':', '-'], "");
            parent.join(format!("{stamp}-{command}"))
        }
    };
    create_result_dir(&dir)?;
    Ok(dir)
}

/// Saves the document after every run; remembers the first failure instead of returning it,
/// so the caller can still show everything that was measured.
pub(crate) struct Saver {
    path: PathBuf,
    failure: Option<anyhow::Error>,
}

impl Saver {
    /// Saving to `dir/result.json`.
    pub(crate) fn new(dir: &Path) -> Self {
        Saver {
            path: dir.join(RESULT_FILE),
            failure: None,
        }
    }

    /// Where the result goes.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Save `doc`; false once any save failed (later saves are not tried: a full disk or a
    /// read-only directory does not recover by itself, and the runs that follow could not be
    /// kept either).
    pub(crate) fn save(&mut self, doc: &ResultDoc) -> bool {
        if self.failure.is_none()
            && let Err(error) = save(doc, &self.path)
        {
            self.failure = Some(error.context(format!(
                "saving the result to {}: the table above holds every run measured; free some \
                 space or choose a writable place with --output, and run again",
                self.path.display()
            )));
        }
        self.failure.is_none()
    }

    /// Record a failure of something written next to the result (an export).
    pub(crate) fn fail(&mut self, error: anyhow::Error) {
        self.failure.get_or_insert(error);
    }

    /// The first failure, if any.
    pub(crate) fn failure(&self) -> Option<&anyhow::Error> {
        self.failure.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_result_directory_is_created_0755_whatever_the_umask() {
        let base = tempfile::tempdir().unwrap();
        use nix::sys::stat::{Mode, umask};
        let old = umask(Mode::from_bits_truncate(0o077));
        let created = create_result_dir(&base.path().join("a/b"));
        umask(old);
        created.unwrap();
        let mode = std::fs::metadata(base.path().join("a"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    #[test]
    fn a_bare_relative_name_is_created_in_the_working_directory() {
        // The working directory is shared by every unit test: a unique name in it, instead of
        // changing it.
        let name = format!("rtsoak-relative-{}", std::process::id());
        let result = create_result_dir(Path::new(&name));
        let created = Path::new(&name).is_dir();
        let _ = std::fs::remove_dir_all(&name);
        result.unwrap();
        assert!(
            created,
            "`{name}` was created relative to the working directory"
        );
    }

    #[test]
    fn a_path_that_cannot_be_a_directory_is_refused_naming_it_and_the_flag() {
        let base = tempfile::tempdir().unwrap();
        let file = base.path().join("file");
        std::fs::write(&file, "").unwrap();
        let error = format!("{:#}", create_result_dir(&file.join("sub")).unwrap_err());
        assert!(error.contains("creating the result directory"), "{error}");
        assert!(error.contains("--output"), "{error}");
    }

    #[test]
    fn a_failed_save_is_kept_and_stops_later_saves() {
        let base = tempfile::tempdir().unwrap();
        let mut saver = Saver::new(&base.path().join("missing-dir"));
        let doc = rtsoak_testing::fixture::one_run_doc();
        assert!(!saver.save(&doc));
        assert!(!saver.save(&doc));
        let error = format!("{:#}", saver.failure().unwrap());
        assert!(
            error.contains("the table above holds every run measured"),
            "{error}"
        );
    }
}
