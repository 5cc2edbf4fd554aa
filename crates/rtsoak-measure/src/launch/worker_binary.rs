//! The worker binary: `rtsoak-worker`, a program of its own installed beside `rtsoak`
//! (`src/bin/rtsoak-worker.rs` says why), found and checked once.
//!
//! The rule: the worker of a coordinator binary named `NAME` is `NAME-worker` in the directory
//! the running coordinator binary is in (`current_exe`, so a symlink to rtsoak leads to the
//! directory of the file itself), or, where there is none and that directory is a prefix's
//! `bin`, `<prefix>/libexec/rtsoak/NAME-worker` (the Debian package puts it there: a program
//! only rtsoak starts is no command for `PATH`). `rtsoak` starts `rtsoak-worker`; a build of
//! the crate under another name (tests/new_transport.rs builds `rtsoak-new-transport`) starts
//! its own worker (`rtsoak-new-transport-worker`), never another build's.
//!
//! Trust: rtsoak runs as root, and must never execute a file another user could have planted or
//! could replace. The worker must be a regular file (by `lstat`: never a symlink), owned by root
//! or by this process's user, writable by no one else (as root, nor by its group); as root, its
//! directory must also be one [`SafeDir::open`] accepts (owned by root, it and every directory above it
//! writable by no one else unless sticky). Anything else is refused with an error naming the
//! file, what is wrong and what to do, never passed over (an untrusted one beside the binary is
//! refused, not skipped for the one in `libexec`). Only a missing one is replaced: by this
//! binary itself, the one already running ([`worker_executable`]).
//!
//! Owns: where the worker binary is and whether it may be run. Never executes it (`spawn` does).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rtsoak_sys::safe_dir::{self, Kind, SafeDir, Untrusted};

/// What is appended to the coordinator binary's name to name its worker binary.
pub(crate) const WORKER_SUFFIX: &str = "-worker";

/// The worker binary cannot be used: which file, what is wrong, what to do.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot start workers from {}: {why}. Install {} beside {} (or in <prefix>/libexec/rtsoak/ \
     for a binary in <prefix>/bin), owned by root and writable by no one else: `cargo build \
     --release` builds both, and scripts/install and the .deb install both",
    path.display(),
    name.display(),
    coordinator.display()
)]
pub(crate) struct WorkerBinaryError {
    /// The worker binary looked for.
    pub(crate) path: PathBuf,
    /// Its file name (`rtsoak-worker`).
    pub(crate) name: PathBuf,
    /// The coordinator binary's file name (`rtsoak`).
    pub(crate) coordinator: PathBuf,
    /// What is wrong with it.
    pub(crate) why: String,
    /// Whether it is simply not there (which `worker_executable` and the `libexec` search
    /// pass over), rather than there and refused.
    pub(crate) missing: bool,
}

/// The argument that makes `rtsoak` itself a worker, where no worker binary is beside it.
pub const WORKER_ARG: &str = "worker";

/// What a missing worker binary is said to be ([`checked`]).
const NO_SUCH_FILE: &str = "there is no such file";

/// The program workers are started from, and its arguments: the worker binary beside this
/// one, checked once (queue noise starts several workers a second; a binary found trusted
/// stays so, since only root or this user may change it). Where there is none, as after
/// `cargo build --bin rtsoak`, which builds only `rtsoak`, this binary itself as `rtsoak worker`, said on
/// stderr: the workers then carry all of rtsoak resident (9.6 MiB instead of 4.6 on x86_64).
/// One that is there but untrusted is refused, never passed over.
pub fn worker_executable() -> anyhow::Result<(&'static Path, &'static [&'static str])> {
    static WORKER: OnceLock<(PathBuf, bool)> = OnceLock::new();
    let (path, itself) = match WORKER.get() {
        Some(worker) => worker,
        None => {
            let exe = std::env::current_exe().map_err(|e| {
                anyhow::anyhow!("finding the running rtsoak binary to start workers: {e}")
            })?;
            let worker = match checked(&exe) {
                Ok(worker) => (worker, false),
                Err(error) if error.missing => {
                    eprintln!(
                        "rtsoak: no {} beside this binary{}: the workers run from {} itself, \
                         with all of it resident (`cargo build --release` builds the small \
                         worker binary; scripts/install and the .deb install it)",
                        error.path.display(),
                        match worker_paths(&exe).get(1) {
                            Some(libexec) => format!(" nor {}", libexec.display()),
                            None => String::new(),
                        },
                        exe.display()
                    );
                    (exe, true)
                }
                Err(error) => return Err(error.into()),
            };
            WORKER.get_or_init(|| worker)
        }
    };
    Ok((path, if *itself { &[WORKER_ARG] } else { &[] }))
}

/// The worker binary's path beside the coordinator binary `exe` (`/usr/bin/rtsoak` gives
/// `/usr/bin/rtsoak-worker`). A binary replaced while it runs reads as `PATH (deleted)` in
/// `/proc/self/exe`: the name is the one before that.
pub(crate) fn worker_path(exe: &Path) -> Option<PathBuf> {
    let name = exe.file_name()?.as_bytes();
    let name = name.strip_suffix(b" (deleted)").unwrap_or(name);
    let mut worker = OsString::from(OsStr::from_bytes(name));
    worker.push(WORKER_SUFFIX);
    Some(exe.parent()?.join(worker))
}

/// Where the worker binary of `exe` may be, in the order looked at: beside it, then, for a
/// binary in `<prefix>/bin`, `<prefix>/libexec/rtsoak/` (`/usr/bin/rtsoak` gives
/// `/usr/bin/rtsoak-worker` and `/usr/libexec/rtsoak/rtsoak-worker`).
fn worker_paths(exe: &Path) -> Vec<PathBuf> {
    let Some(beside) = worker_path(exe) else {
        return Vec::new();
    };
    let libexec = beside
        .parent()
        .filter(|dir| dir.file_name() == Some(OsStr::new("bin")))
        .and_then(Path::parent)
        .zip(beside.file_name())
        .map(|(prefix, name)| prefix.join("libexec/rtsoak").join(name));
    std::iter::once(beside).chain(libexec).collect()
}

/// The worker binary of `exe`, if it may be run: the first of [`worker_paths`] that is there
/// (see the module's comment). Where none is, the error names the one beside `exe`.
pub(crate) fn checked(exe: &Path) -> Result<PathBuf, WorkerBinaryError> {
    let paths = worker_paths(exe);
    let Some(beside) = paths.first() else {
        return Err(WorkerBinaryError {
            path: exe.to_path_buf(),
            name: PathBuf::from(format!("rtsoak{WORKER_SUFFIX}")),
            coordinator: PathBuf::from("rtsoak"),
            why: "the running binary's path has no directory and file name".into(),
            missing: false,
        });
    };
    for path in &paths {
        match checked_at(exe, path) {
            Err(error) if error.missing => continue,
            found => return found,
        }
    }
    checked_at(exe, beside)
}

/// The worker binary at `path`, if it may be run.
fn checked_at(exe: &Path, path: &Path) -> Result<PathBuf, WorkerBinaryError> {
    let path = path.to_path_buf();
    let refuse_as = |why: String, missing: bool| WorkerBinaryError {
        path: path.clone(),
        name: path.file_name().map(PathBuf::from).unwrap_or_default(),
        coordinator: exe
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("rtsoak")),
        why,
        missing,
    };
    let refuse = |why: String| refuse_as(why, false);
    let dir = path.parent().unwrap_or(Path::new("/"));
    let dir = SafeDir::open(dir).map_err(|error| match error.downcast_ref::<Untrusted>() {
        Some(untrusted) => refuse(format!(
            "its directory is not one root may run a program from: {} ({})",
            untrusted.path.display(),
            untrusted.why
        )),
        None => refuse(format!("{error:#}")),
    })?;
    let name = path.file_name().unwrap_or_default();
    let stat = dir.stat_entry(name).map_err(|errno| match errno {
        nix::errno::Errno::ENOENT => refuse_as(NO_SUCH_FILE.into(), true),
        errno => refuse(format!("lstat: {errno}")),
    })?;
    match refusal(Kind::of(&stat), stat.st_uid, stat.st_mode) {
        Some(why) => Err(refuse(why)),
        None => Ok(path),
    }
}

/// Why a directory entry of `kind`, owner `uid` and `mode` is not a worker binary to run, if
/// it is not.
pub fn refusal(kind: Kind, uid: u32, mode: u32) -> Option<String> {
    match kind {
        Kind::File => {}
        Kind::Symlink => {
            return Some(
                "it is a symlink, and only a regular file is run (a link's target can be \
                 anything)"
                    .into(),
            );
        }
        _ => return Some("it is not a regular file".into()),
    }
    let euid = safe_dir::euid();
    if uid != 0 && uid != euid {
        return Some(format!(
            "it is owned by uid {uid}, neither root nor this user ({euid})"
        ));
    }
    // Root runs nothing its group could rewrite. An ordinary user's build is group-writable
    // under the umask 002 many distributions give users (a group of their own): what that
    // user runs, the group could already rewrite, so only everyone's write is refused there.
    let untrusted_writers = if euid == 0 { 0o022 } else { 0o002 };
    if mode & untrusted_writers != 0 {
        let who = if mode & 0o002 != 0 {
            "everyone"
        } else {
            "its group"
        };
        return Some(format!(
            "it is writable by {who} (mode {:04o}), who could replace what runs",
            mode & 0o7777
        ));
    }
    if mode & 0o100 == 0 {
        return Some(format!("it is not executable (mode {:04o})", mode & 0o7777));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_is_named_after_the_running_binary_beside_it() {
        let at = |exe: &str| worker_path(Path::new(exe)).unwrap();
        assert_eq!(at("/usr/bin/rtsoak"), Path::new("/usr/bin/rtsoak-worker"));
        assert_eq!(
            at("/t/debug/rtsoak-new-transport"),
            Path::new("/t/debug/rtsoak-new-transport-worker")
        );
        assert_eq!(
            at("/t/release/rtsoak (deleted)"),
            Path::new("/t/release/rtsoak-worker")
        );
    }

    #[test]
    fn a_binary_in_a_prefixs_bin_also_finds_its_worker_in_the_prefixs_libexec() {
        let paths = |exe: &str| worker_paths(Path::new(exe));
        assert_eq!(
            paths("/usr/bin/rtsoak"),
            [
                Path::new("/usr/bin/rtsoak-worker"),
                Path::new("/usr/libexec/rtsoak/rtsoak-worker")
            ]
        );
        assert_eq!(
            paths("/usr/local/bin/rtsoak (deleted)"),
            [
                Path::new("/usr/local/bin/rtsoak-worker"),
                Path::new("/usr/local/libexec/rtsoak/rtsoak-worker")
            ]
        );
        // A build directory is no prefix: its worker is beside it or nowhere.
        assert_eq!(
            paths("/src/target/release/rtsoak"),
            [Path::new("/src/target/release/rtsoak-worker")]
        );
    }

    #[test]
    fn only_a_regular_executable_file_of_root_or_this_user_that_no_one_else_may_write_runs() {
        let me = safe_dir::euid();
        assert_eq!(refusal(Kind::File, 0, 0o100755), None);
        assert_eq!(refusal(Kind::File, me, 0o100700), None);
        for (kind, uid, mode, why) in [
            (Kind::Symlink, 0, 0o120777, "symlink"),
            (Kind::Dir, 0, 0o040755, "not a regular file"),
            (Kind::Other, 0, 0o010644, "not a regular file"),
            (Kind::File, 0, 0o100757, "writable by everyone"),
            (Kind::File, 0, 0o100644, "not executable"),
        ] {
            let refused = refusal(kind, uid, mode).expect(why);
            assert!(refused.contains(why), "{refused}");
        }
        // Group-writable: refused to root, run by an ordinary user (umask 002).
        assert_eq!(
            refusal(Kind::File, me, 0o100775).is_some(),
            me == 0,
            "a group-writable worker as uid {me}"
        );
        if me != 12345 {
            let refused = refusal(Kind::File, 12345, 0o100755).unwrap();
            assert!(refused.contains("owned by uid 12345"), "{refused}");
        }
    }
}
