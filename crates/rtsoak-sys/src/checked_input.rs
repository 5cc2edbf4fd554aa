//! Opening a file root reads and acts on (a campaign plan, a kernel image it boots, an
//! initramfs) so that what is checked is what is used: the file is opened once, by name in its
//! directory's fd, without following a symlink (`O_NOFOLLOW`), and every check is made on the
//! open descriptor (`fstat`), never on the path again. The caller reads from, hashes, or hands
//! to the kernel that same descriptor.
//!
//! Refused, naming the file, what is wrong and what to do: a symlink (give the file it points
//! to), anything but a regular file, a file owned by anyone but root or this user, one that
//! another user could rewrite (writable by others, or, as root, by its group), one larger than
//! the caller's bound; and, as root, a file in a directory another user controls (the
//! directory is walked from `/` as [`SafeDir::open`] does).
//!
//! Owns: opening and checking. Never reads more than the bound, never writes.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;

use super::errno_of;
use super::safe_dir::{SafeDir, Untrusted, euid};

/// A file that passed every check, open for reading.
#[derive(Debug)]
pub struct CheckedFile {
    /// The open file: read it, hash it, or pass its fd on; never reopen the path.
    pub file: File,
    /// Its size when checked, bytes.
    size_bytes: u64,
}

/// Why a file was not opened.
#[derive(Debug, thiserror::Error)]
pub enum InputRefused {
    /// It, or a directory above it, is not one root may trust.
    #[error(
        "refusing {} as root's input: {why}; make it a regular file owned by root and writable \
         by no one else (chown root: and chmod go-w), in a directory only root can write",
        path.display()
    )]
    Untrusted {
        /// The file or directory at fault.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// It is larger than its kind of file can be.
    #[error("{} is {size_bytes} bytes, more than the {max_bytes} a {what} may be: check the path", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size_bytes: u64,
        /// The bound.
        max_bytes: u64,
        /// What kind of file it was meant to be (`kernel image`).
        what: &'static str,
    },
    /// Its directory could not be opened.
    #[error("cannot read {}: {message}; check the path", path.display())]
    Directory {
        /// The file.
        path: PathBuf,
        /// Why its directory did not open.
        message: String,
    },
    /// It could not be opened or read.
    #[error("cannot read {}: {errno}; check the path", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the kernel said.
        errno: Errno,
    },
}

/// Open `path` (a `what`, for messages) for reading if it passes every check of the module's
/// comment and is at most `max_bytes` long.
pub fn open(path: &Path, what: &'static str, max_bytes: u64) -> Result<CheckedFile, InputRefused> {
    let io = |errno: Errno| InputRefused::Io {
        path: path.to_path_buf(),
        errno,
    };
    let (Some(name), Some(parent)) = (path.file_name(), path.parent()) else {
        return Err(io(Errno::EISDIR));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let dir = SafeDir::open(parent).map_err(|error| match error.downcast::<Untrusted>() {
        Ok(untrusted) => InputRefused::Untrusted {
            path: untrusted.path,
            why: untrusted.why,
        },
        Err(other) => InputRefused::Directory {
            path: path.to_path_buf(),
            message: format!("{other:#}"),
        },
    })?;
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = openat(dir.fd(), name, flags, Mode::empty()).map_err(|errno| match errno {
        Errno::ELOOP => InputRefused::Untrusted {
            path: path.to_path_buf(),
            why: "it is a symlink (give the file it points to)".into(),
        },
        errno => io(errno),
    })?;
    let file = File::from(fd);
    let metadata = file.metadata().map_err(|e| io(errno_of(&e)))?;
    if let Some(why) = refusal(
        metadata.file_type().is_file(),
        metadata.uid(),
        metadata.mode(),
    ) {
        return Err(InputRefused::Untrusted {
            path: path.to_path_buf(),
            why,
        });
    }
    if metadata.size() > max_bytes {
        return Err(InputRefused::TooLarge {
            path: path.to_path_buf(),
            size_bytes: metadata.size(),
            max_bytes,
            what,
        });
    }
    Ok(CheckedFile {
        file,
        size_bytes: metadata.size(),
    })
}

/// The whole of `path` (see [`open`]), at most `max_bytes`.
pub fn read(path: &Path, what: &'static str, max_bytes: u64) -> Result<Vec<u8>, InputRefused> {
    let checked = open(path, what, max_bytes)?;
    let mut bytes = Vec::with_capacity(checked.size_bytes as usize);
    // `take`: a file that grew after the check is still read only up to the bound.
    (&checked.file)
        .take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|e| InputRefused::Io {
            path: path.to_path_buf(),
            errno: errno_of(&e),
        })?;
    Ok(bytes)
}

/// Why a file of this kind, owner and mode is not one to trust, if it is not.
fn refusal(regular: bool, uid: u32, mode: u32) -> Option<String> {
    if !regular {
        return Some("it is not a regular file".into());
    }
    let me = euid();
    if uid != 0 && uid != me {
        return Some(format!(
            "it is owned by uid {uid}, neither root nor this user ({me})"
        ));
    }
    // As root, its group may not write it either; an ordinary user's own files are often
    // group-writable (umask 002, a group of their own), and only that user is affected.
    let writers = if me == 0 { 0o022 } else { 0o002 };
    if mode & writers != 0 {
        let who = if mode & 0o002 != 0 {
            "everyone"
        } else {
            "its group"
        };
        return Some(format!(
            "it is writable by {who} (mode {:04o})",
            mode & 0o7777
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file_with(mode: u32, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().join("plan.toml");
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        (dir, path)
    }

    #[test]
    fn a_file_of_this_user_that_no_one_else_may_write_is_read_whole() {
        let (_dir, path) = file_with(0o644, "order = []\n");
        assert_eq!(read(&path, "plan", 100).unwrap(), b"order = []\n");
    }

    #[test]
    fn a_file_everyone_may_write_is_refused_naming_its_mode() {
        let (_dir, path) = file_with(0o646, "x");
        let text = read(&path, "plan", 100).unwrap_err().to_string();
        assert!(text.contains("writable by everyone (mode 0646)"), "{text}");
        assert!(text.contains("plan.toml"), "{text}");
    }

    #[test]
    fn a_symlink_is_refused_and_never_followed() {
        let (dir, path) = file_with(0o644, "x");
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let text = read(&link, "plan", 100).unwrap_err().to_string();
        assert!(text.contains("it is a symlink"), "{text}");
    }

    #[test]
    fn a_directory_or_a_fifo_is_not_a_regular_file() {
        let (dir, _) = file_with(0o644, "x");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        let text = read(&sub, "plan", 100).unwrap_err().to_string();
        assert!(text.contains("not a regular file"), "{text}");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o644)).unwrap();
        let text = read(&fifo, "plan", 100).unwrap_err().to_string();
        assert!(text.contains("not a regular file"), "{text}");
    }

    #[test]
    fn a_file_over_its_bound_is_refused_with_both_sizes() {
        let (_dir, path) = file_with(0o644, "0123456789");
        let text = read(&path, "plan", 4).unwrap_err().to_string();
        assert!(
            text.contains("is 10 bytes, more than the 4 a plan may be"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_file_names_the_path_and_the_errno() {
        let text = read(Path::new("/nonexistent-rtsoak/plan.toml"), "plan", 4)
            .unwrap_err()
            .to_string();
        assert!(text.contains("/nonexistent-rtsoak"), "{text}");
    }

    #[test]
    fn only_root_or_this_user_may_own_an_input() {
        let me = euid();
        assert_eq!(refusal(true, 0, 0o100644), None);
        assert_eq!(refusal(true, me, 0o100600), None);
        if me != 4242 {
            let why = refusal(true, 4242, 0o100644).unwrap();
            assert!(why.contains("owned by uid 4242"), "{why}");
        }
        assert_eq!(refusal(true, me, 0o100664).is_some(), me == 0);
    }
}
