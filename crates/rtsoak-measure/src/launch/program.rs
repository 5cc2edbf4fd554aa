//! The external noise command's program (`noise.load.external`'s first word): the one program
//! rtsoak runs that it did not build, found once, before anything runs, and run by the path
//! found (the noise init executes that file, never searching).
//!
//! How it is found. A word with a `/` is that path. A bare name is looked up as `execvp` would,
//! but where depends on who runs rtsoak:
//! - an ordinary user: in `$PATH`, their own environment naming their own programs;
//! - root: never in `$PATH` (a directory there that another user can write, or an empty entry,
//!   which means the working directory, would let that user choose what root runs), only in
//!   the system's directories, [`SYSTEM_DIRS`] (systemd's default `PATH`).
//!
//! Trust, as root: the file found, through symlinks only root owns, must be a regular
//! executable file owned by root and writable by no one else, in a directory that root alone
//! controls, as for the worker binary (`worker_binary::refusal`, `SafeDir::open`). A file that
//! fails is refused, naming what is wrong, never passed over for the next directory.
//!
//! Owns: finding and checking that program. Never executes it.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::worker_binary::refusal;
use rtsoak_sys::safe_dir::{self, Kind, SafeDir, Untrusted};

/// Where root looks for a bare program name: systemd's default `PATH`.
pub(crate) const SYSTEM_DIRS: [&str; 6] = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Symlinks followed to a program before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// The program `name` names, found and checked (see the module's comment), or why it may not
/// be run. Found once per name and invocation: every run of a comparison starts the same file.
pub fn external_program(name: &str) -> Result<PathBuf, String> {
    static FOUND: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let mut found = FOUND
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, path)) = found.iter().find(|(n, _)| n == name) {
        return Ok(path.clone());
    }
    let path = find(name, safe_dir::euid() == 0)?;
    found.push((name.to_string(), path.clone()));
    Ok(path)
}

/// [`external_program`], as root (`root`) or not, without the memory.
fn find(name: &str, root: bool) -> Result<PathBuf, String> {
    if name.contains('/') {
        let path = Path::new(name);
        return if root {
            trusted(path)
        } else if is_executable_file(path) {
            Ok(path.to_path_buf())
        } else {
            Err(format!("`{name}` is not an executable file"))
        };
    }
    if root {
        let found = SYSTEM_DIRS
            .iter()
            .map(|dir| Path::new(dir).join(name))
            .find(|candidate| std::fs::symlink_metadata(candidate).is_ok());
        return match found {
            Some(candidate) => trusted(&candidate),
            None => Err(format!(
                "`{name}` is in none of {}, where root looks for a program named without a path \
                 (never in $PATH); install it there or give its full path",
                SYSTEM_DIRS.join(" ")
            )),
        };
    }
    let paths = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable_file(candidate))
        .ok_or_else(|| format!("`{name}` is not in PATH; install it, or give its full path"))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `path` followed through root's own symlinks to a file root may run, as the module says.
fn trusted(path: &Path) -> Result<PathBuf, String> {
    let mut path = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for _ in 0..MAX_SYMLINKS {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(format!("{} names no file", path.display()));
        };
        let name = name.to_os_string();
        let dir = program_dir(parent).map_err(|why| format!("{}: {why}", path.display()))?;
        // Checked, and run, by the path without symlinked directories.
        path = dir.path().join(&name);
        let stat = dir
            .stat_entry(&name)
            .map_err(|errno| format!("{}: {errno}", path.display()))?;
        let kind = Kind::of(&stat);
        if kind == Kind::Symlink {
            if stat.st_uid != 0 {
                return Err(format!(
                    "{}: it is a symlink owned by uid {}, and root follows only its own",
                    path.display(),
                    stat.st_uid
                ));
            }
            let target = nix::fcntl::readlinkat(dir.fd(), name.as_os_str())
                .map_err(|errno| format!("{}: {errno}", path.display()))?;
            path = dir.path().join(OsStr::new(&target));
            continue;
        }
        return match refusal(kind, stat.st_uid, stat.st_mode) {
            Some(why) => Err(format!("{}: {why}", path.display())),
            None => Ok(path),
        };
    }
    Err(format!(
        "{}: more than {MAX_SYMLINKS} symlinks",
        path.display()
    ))
}

/// The directory `dir`, opened through root's own symlinks (merged-/usr's `/bin -> usr/bin`;
/// another user's link is refused) and checked as one root may run a program from.
fn program_dir(dir: &Path) -> Result<SafeDir, String> {
    SafeDir::open_resolved(dir).map_err(|error| match error.downcast_ref::<Untrusted>() {
        Some(untrusted) => format!(
            "its directory is not one root may run a program from: {} ({})",
            untrusted.path.display(),
            untrusted.why
        ),
        None => format!("{error:#}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_finds_a_bare_name_in_the_system_directories_never_in_path() {
        let sh = find("sh", true).expect("sh is in a system directory");
        assert!(SYSTEM_DIRS.iter().any(|dir| sh.starts_with(dir)), "{sh:?}");
        let error = find("no-such-program-rtsoak", true).unwrap_err();
        assert!(error.contains("never in $PATH"), "{error}");
    }

    #[test]
    fn root_follows_its_own_symlinks_to_a_regular_file_it_may_run() {
        if safe_dir::euid() != 0 {
            rtsoak_testing::skip("another user's file needs root to make");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let program = dir.path().join("load");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("load", dir.path().join("link")).unwrap();
        assert_eq!(trusted(&dir.path().join("link")).unwrap(), program);
        std::os::unix::fs::lchown(dir.path().join("link"), Some(65534), Some(65534)).unwrap();
        let error = trusted(&dir.path().join("link")).unwrap_err();
        assert!(error.contains("symlink owned by uid 65534"), "{error}");
        std::os::unix::fs::chown(&program, Some(65534), Some(65534)).unwrap();
        let error = trusted(&program).unwrap_err();
        assert!(error.contains("owned by uid 65534"), "{error}");
        std::os::unix::fs::chown(&program, Some(0), Some(0)).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o775)).unwrap();
        let error = trusted(&program).unwrap_err();
        assert!(error.contains("writable by its group"), "{error}");
    }

    #[test]
    fn root_follows_its_own_symlinked_directory_as_merged_usr_has_and_refuses_another_users() {
        if safe_dir::euid() != 0 {
            rtsoak_testing::skip("another user's symlink needs root to make");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let real = dir.path().join("usr-bin");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        let program = real.join("load");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        // `bin -> usr-bin`, relative, as merged-/usr's `/bin -> usr/bin`.
        let bin = dir.path().join("bin");
        std::os::unix::fs::symlink("usr-bin", &bin).unwrap();
        assert_eq!(trusted(&bin.join("load")).unwrap(), program);
        std::os::unix::fs::lchown(&bin, Some(65534), Some(65534)).unwrap();
        let error = trusted(&bin.join("load")).unwrap_err();
        assert!(error.contains("symlink owned by uid 65534"), "{error}");
    }

    #[test]
    fn a_system_program_named_through_a_symlinked_directory_is_found() {
        // `/bin/sh` wherever the system has it: on a merged-/usr system `/bin` is root's
        // symlink to `usr/bin`, which used to be refused as a symlinked directory.
        if safe_dir::euid() != 0 {
            rtsoak_testing::skip("the check runs only as root");
            return;
        }
        let sh = trusted(Path::new("/bin/sh")).expect("/bin/sh is root's");
        assert!(
            sh.is_absolute() && std::fs::symlink_metadata(&sh).unwrap().is_file(),
            "{sh:?}"
        );
    }
}
