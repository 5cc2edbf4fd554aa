//! The one way into `/proc` and `/sys`: a root directory that is `/` on the live machine and a
//! fixture tree in tests, and the reads every reader makes through it.

use std::path::PathBuf;

/// Where `/proc` and `/sys` are: `/` on the live machine, a fixture directory in tests.
#[derive(Debug, Clone)]
pub(crate) struct SysRoot {
    root: PathBuf,
}

impl SysRoot {
    /// The running machine's own `/proc` and `/sys`.
    pub(crate) fn system() -> Self {
        Self::at("/")
    }

    /// A tree laid out like `/`, for example `tests/fixtures/sys/vm-2cpu`.
    pub(crate) fn at(root: impl Into<PathBuf>) -> Self {
        SysRoot { root: root.into() }
    }

    /// `path` is absolute as on the host (`/proc/cmdline`) and is joined under the root.
    pub(crate) fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The whole file as text.
    pub(crate) fn read(&self, path: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.path(path))
    }

    /// The whole file as bytes (`/sys/kernel/notes` is binary).
    pub(crate) fn read_bytes(&self, path: &str) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.path(path))
    }

    /// The file without surrounding whitespace or NUL bytes (device-tree strings end in one),
    /// on one line with every character a terminal acts on written visibly (a host name set to
    /// an escape sequence is shown, and recorded, as `\x1b...`); `None` if it is missing or
    /// unreadable. An empty file gives `Some("")`.
    pub(crate) fn read_trimmed(&self, path: &str) -> Option<String> {
        let text = self.read(path).ok()?;
        let trimmed = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        Some(rtsoak_record::text::visible(trimmed).into_owned())
    }

    /// The target of a symbolic link (`/proc/self` names our pid); `None` if it is not one.
    pub(crate) fn read_link(&self, path: &str) -> Option<PathBuf> {
        std::fs::read_link(self.path(path)).ok()
    }

    pub(crate) fn exists(&self, path: &str) -> bool {
        self.path(path).exists()
    }

    /// Entry names in `path`, sorted; empty if it is missing or not a directory.
    pub(crate) fn list_dir(&self, path: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(path))
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    /// A number in a file; `None` if missing or not a number.
    pub(crate) fn parsed<T: std::str::FromStr>(&self, path: &str) -> Option<T> {
        self.read_trimmed(path)?.parse().ok()
    }
}
