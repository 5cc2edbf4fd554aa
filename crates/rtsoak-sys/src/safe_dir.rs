//! Directories rtsoak writes into (the result directory, the textfile directory, a baseline or
//! report directory), held as an open directory fd so that nothing another user plants in them
//! is ever followed: every file is created under a fresh random name with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` and renamed onto its final name with `renameat` (which replaces a
//! planted symlink's *name*, never its target); scratch files have no name at all (`O_TMPFILE`).
//!
//! As root, a directory is reached component by component from `/` without following symlinks
//! another user owns, and refused (like ssh's StrictModes) when it is a symlink, when it or any
//! directory above it is owned by another non-root user, or writable by group or others without
//! the sticky bit: any of these would let that user swap what root writes into.
//! [`SafeDir::open_service_dir`] is the one relaxation, for a directory a service shares with
//! rtsoak (node_exporter's textfile directory, whose parent Debian gives to the `prometheus`
//! user): the directory itself must still be root's and closed to others, while the directories
//! above it may belong to anyone who cannot be group- or world-writing them. Their owner cannot
//! redirect a write: the walk holds each directory by fd and refuses their symlinks, so at most
//! they choose which root-owned directory rtsoak writes into.
//!
//! Owns: opening, creating and checking those directories, and creating files in them. Never
//! opens a name in them without `O_NOFOLLOW`, never truncates or chmods a file it did not
//! create.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, readlinkat, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// Symlinks followed on the way to a directory before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// A directory root must not write into: who controls it and why that matters.
#[derive(Debug, thiserror::Error)]
#[error(
    "refusing to write into {} as root: {why}, so another user could redirect or replace what \
     rtsoak writes there. Use a directory owned by root whose parents only root can write (or \
     are sticky, like /tmp), e.g. under /var/lib/rtsoak",
    path.display()
)]
pub struct Untrusted {
    /// The path found untrusted (the directory itself, or the component of it at fault).
    pub path: PathBuf,
    /// What is wrong with it.
    pub why: String,
}

/// What an entry of a directory is (by `lstat`: a symlink is a symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// Anything else (a fifo, a socket, a device).
    Other,
}

impl Kind {
    /// What the entry `stat` describes is.
    pub fn of(stat: &FileStat) -> Kind {
        match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
            SFlag::S_IFDIR => Kind::Dir,
            SFlag::S_IFREG => Kind::File,
            SFlag::S_IFLNK => Kind::Symlink,
            _ => Kind::Other,
        }
    }
}

/// The effective uid of this process.
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// An open directory that files are created in by fd, never by path.
#[derive(Debug)]
pub struct SafeDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl SafeDir {
    /// Open the existing directory `path` (checked as the module says when running as root).
    pub fn open(path: &Path) -> anyhow::Result<SafeDir> {
        walk(path, Missing::Fail, Ancestors::RootOnly, Named::Refuse)
    }

    /// Refuse `path` now if [`create`] would refuse it, creating nothing: its directories that
    /// exist are walked and checked as `create` walks them, and the walk stops, content, at the
    /// first that does not exist yet (`create` would make it under a checked parent). For a
    /// command that must refuse a bad directory before anything runs, but create it only later.
    ///
    /// [`create`]: SafeDir::create
    pub fn check_creatable(path: &Path) -> anyhow::Result<()> {
        walk(path, Missing::Stop, Ancestors::RootOnly, Named::Refuse).map(drop)
    }

    /// Open the existing directory `path` that a service shares with rtsoak: as [`open`], but
    /// the directories above it may be owned by another user (see the module's comment).
    ///
    /// [`open`]: SafeDir::open
    pub fn open_service_dir(path: &Path) -> anyhow::Result<SafeDir> {
        walk(path, Missing::Fail, Ancestors::AnyOwner, Named::Refuse)
    }

    /// Open the existing directory `path` as [`open`] does, but follow root's own symlink where
    /// `path` itself is one, as every symlink on the way is followed: for the directory root
    /// runs a program from, where merged-/usr's `/bin -> usr/bin` is as trustworthy as
    /// `/usr/bin`. Its [`path`](SafeDir::path) is where the links lead.
    ///
    /// [`open`]: SafeDir::open
    pub fn open_resolved(path: &Path) -> anyhow::Result<SafeDir> {
        walk(path, Missing::Fail, Ancestors::RootOnly, Named::Follow)
    }

    /// Open `path`, creating it and any missing parent with mode 0755 (whatever the umask),
    /// each relative to the fd of its checked parent.
    pub fn create(path: &Path) -> anyhow::Result<SafeDir> {
        walk(path, Missing::Create, Ancestors::RootOnly, Named::Refuse)
    }

    /// The path it was opened by (for messages: the fd is what is written through).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory's fd.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Write `bytes` to `name` atomically with `mode` (a new file under a random name, synced,
    /// then renamed onto `name`): a reader or a crash sees the old file or the new, never half.
    pub fn write(&self, name: &OsStr, bytes: &[u8], mode: u32) -> std::io::Result<()> {
        let (mut file, temp) = self.create_temp(mode)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .and_then(|()| self.rename(&temp, name));
        if written.is_err() {
            let _ = unlinkat(self.fd(), temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
        written
    }

    /// A new file `name` with `mode`, to be written as it goes (a log): created under a random
    /// name and renamed onto `name` at once, so an existing `name` (a planted link) is replaced,
    /// never written through.
    pub fn create_file(&self, name: &OsStr, mode: u32) -> std::io::Result<File> {
        let (file, temp) = self.create_temp(mode)?;
        if let Err(error) = self.rename(&temp, name) {
            let _ = unlinkat(self.fd(), temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
            return Err(error);
        }
        Ok(file)
    }

    /// A scratch file without a name (`O_TMPFILE`, mode 0600), gone when closed or when the
    /// process dies however it dies; where the file system has no `O_TMPFILE`, a randomly named
    /// file unlinked as soon as it is open.
    pub fn tmpfile(&self) -> std::io::Result<File> {
        let flags = OFlag::O_TMPFILE | OFlag::O_RDWR | OFlag::O_CLOEXEC;
        match openat(self.fd(), ".", flags, Mode::from_bits_truncate(0o600)) {
            Ok(fd) => Ok(File::from(fd)),
            Err(Errno::EOPNOTSUPP | Errno::EISDIR | Errno::EINVAL) => {
                let (file, temp) = self.create_temp(0o600)?;
                unlinkat(self.fd(), temp.as_os_str(), UnlinkatFlags::NoRemoveDir)?;
                Ok(file)
            }
            Err(errno) => Err(errno.into()),
        }
    }

    /// `lstat` of `name` in this directory (never following a symlink).
    pub fn stat_entry(&self, name: &OsStr) -> nix::Result<FileStat> {
        fstatat(self.fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW)
    }

    /// What `name` is and who owns it (by `lstat`), if it exists.
    pub fn entry(&self, name: &OsStr) -> Option<(Kind, u32)> {
        self.stat_entry(name)
            .ok()
            .map(|stat| (Kind::of(&stat), stat.st_uid))
    }

    /// The bytes of `name`, if it is a regular file owned by this process's user (opened with
    /// `O_NOFOLLOW`, checked on the fd) and at most `max_bytes` long.
    pub fn read_own_file(&self, name: &OsStr, max_bytes: u64) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(self.fd(), name, flags, Mode::empty())?;
        let stat = fstat(&fd)?;
        if Kind::of(&stat) != Kind::File || stat.st_uid != euid() || stat.st_size as u64 > max_bytes
        {
            return Err(std::io::Error::other("not a file of this user's"));
        }
        let mut bytes = Vec::new();
        File::from(fd).take(max_bytes).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The sub-directory `name`, opened without following a symlink.
    pub fn open_entry(&self, name: &OsStr) -> nix::Result<SafeDir> {
        let fd = open_dir_nofollow(self.fd(), name)?;
        Ok(SafeDir {
            fd,
            path: self.path.join(name),
        })
    }

    /// Remove `name` and everything under it, through fds opened without following symlinks
    /// (a symlink inside is removed as a name, its target never touched).
    pub fn remove_tree(&self, name: &OsStr) -> nix::Result<()> {
        let stat = self.stat_entry(name)?;
        if Kind::of(&stat) == Kind::Dir {
            let sub = self.open_entry(name)?;
            for entry in sub.entries()? {
                sub.remove_tree(&entry)?;
            }
            unlinkat(self.fd(), name, UnlinkatFlags::RemoveDir)
        } else {
            unlinkat(self.fd(), name, UnlinkatFlags::NoRemoveDir)
        }
    }

    /// The names in this directory, `.` and `..` left out.
    pub fn entries(&self) -> nix::Result<Vec<OsString>> {
        let fd = openat(
            self.fd(),
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let mut dir = nix::dir::Dir::from_fd(fd)?;
        Ok(dir
            .iter()
            .filter_map(Result::ok)
            .map(|entry| OsStr::from_bytes(entry.file_name().to_bytes()).to_os_string())
            .filter(|name| name != "." && name != "..")
            .collect())
    }

    /// Replace `name` with a symlink to `target`, atomically (made under a random name, then
    /// renamed onto it).
    pub fn replace_symlink(&self, target: &OsStr, name: &OsStr) -> std::io::Result<()> {
        let temp = temp_name();
        nix::unistd::symlinkat(target, self.fd(), temp.as_os_str())?;
        if let Err(error) = self.rename(&temp, name) {
            let _ = unlinkat(self.fd(), temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
            return Err(error);
        }
        Ok(())
    }

    /// A new file under a random name, `O_EXCL|O_NOFOLLOW` (nobody's file or link is ever
    /// opened), set to `mode` on the fd, as the umask may have narrowed it.
    fn create_temp(&self, mode: u32) -> std::io::Result<(File, OsString)> {
        let flags =
            OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_WRONLY | OFlag::O_CLOEXEC;
        loop {
            let temp = temp_name();
            match openat(
                self.fd(),
                temp.as_os_str(),
                flags,
                Mode::from_bits_truncate(0o600),
            ) {
                Ok(fd) => {
                    fchmod(&fd, Mode::from_bits_truncate(mode))?;
                    return Ok((File::from(fd), temp));
                }
                Err(Errno::EEXIST) => continue,
                Err(errno) => return Err(errno.into()),
            }
        }
    }

    fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        // One name in this directory: `a/b` would be resolved through `a` by path, following
        // whatever `a` is.
        let bytes = to.as_bytes();
        if bytes.is_empty() || bytes.contains(&b'/') || bytes == b"." || bytes == b".." {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a plain file name", Path::new(to).display()),
            ));
        }
        Ok(renameat(self.fd(), from, self.fd(), to)?)
    }
}

/// `.rtsoak-<16 random hex digits>.tmp`: a name nobody can guess ahead.
fn temp_name() -> OsString {
    OsString::from(format!(".rtsoak-{}.tmp", crate::random::hex_token()))
}

/// The directory `name` in `parent`, never through a symlink. `O_PATH`: a directory one may
/// only search (mode 0711) can still be walked through and written into, as by path.
fn open_dir_nofollow(parent: BorrowedFd<'_>, name: &OsStr) -> nix::Result<OwnedFd> {
    openat(
        parent,
        name,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Whom root lets own the directories above the one it writes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ancestors {
    /// Root only (the result directory, a report, a baseline).
    RootOnly,
    /// Anyone, as long as group and others cannot write them (a service's directory).
    AnyOwner,
}

/// What a walk does with a directory that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// Fail, naming it.
    Fail,
    /// Make it (mode 0755) under its checked parent.
    Create,
    /// Stop there: everything that exists was checked.
    Stop,
}

/// What a walk does, as root, where the directory it was asked for is itself a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    /// Refuse it: root writes into the directory named, never into where a link points.
    Refuse,
    /// Follow it as any symlink on the way (root's own only), and name the directory by where
    /// the links lead.
    Follow,
}

/// Walk `path` from `/` one component at a time (making what is missing, or stopping there, as
/// `missing` says), checking each directory when running as root.
fn walk(
    path: &Path,
    missing: Missing,
    ancestors: Ancestors,
    named: Named,
) -> anyhow::Result<SafeDir> {
    let root = euid() == 0;
    let absolute = std::path::absolute(path)
        .map_err(|e| anyhow::anyhow!("resolving {}: {e}", path.display()))?;
    let fail = |shown: &Path, errno: Errno| {
        anyhow::anyhow!("opening the directory {}: {errno}", shown.display())
    };
    // Components still to walk, in reverse (so a symlink's target can be pushed in front).
    let mut todo: Vec<OsString> = Vec::new();
    push_components(&mut todo, &absolute);
    let mut shown = PathBuf::from("/");
    let mut fd = open_dir_nofollow_root()?;
    check(root, ancestors, &shown, &fstat(&fd)?, todo.is_empty())?;
    let mut hops = 0;
    while let Some(name) = todo.pop() {
        let last = todo.is_empty();
        let next = match open_dir_nofollow(fd.as_fd(), &name) {
            Err(Errno::ENOENT) if missing == Missing::Stop => {
                return Ok(SafeDir { fd, path: shown });
            }
            Err(Errno::ENOENT) if missing == Missing::Create => {
                make_dir(fd.as_fd(), &name).map_err(|e| fail(&shown.join(&name), e))?
            }
            Err(Errno::ELOOP | Errno::ENOTDIR) => {
                let stat = fstatat(fd.as_fd(), name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
                    .map_err(|e| fail(&shown.join(&name), e))?;
                if Kind::of(&stat) != Kind::Symlink {
                    return Err(fail(&shown.join(&name), Errno::ENOTDIR));
                }
                let at = shown.join(&name);
                if root && last && named == Named::Refuse {
                    return Err(Untrusted {
                        path: at,
                        why: "it is a symlink (give the directory it points to instead)".into(),
                    }
                    .into());
                }
                if root && stat.st_uid != 0 {
                    return Err(Untrusted {
                        path: at,
                        why: format!("it is a symlink owned by uid {}", stat.st_uid),
                    }
                    .into());
                }
                hops += 1;
                if hops > MAX_SYMLINKS {
                    return Err(fail(&at, Errno::ELOOP));
                }
                let target = readlinkat(fd.as_fd(), name.as_os_str())?;
                let target = Path::new(&target);
                if target.is_absolute() {
                    shown = PathBuf::from("/");
                    fd = open_dir_nofollow_root()?;
                }
                push_components(&mut todo, target);
                continue;
            }
            Err(errno) => return Err(fail(&shown.join(&name), errno)),
            Ok(next) => next,
        };
        if name == ".." {
            shown.pop();
        } else {
            shown.push(&name);
        }
        fd = next;
        check(root, ancestors, &shown, &fstat(&fd)?, todo.is_empty())?;
    }
    let path = match named {
        Named::Refuse => absolute,
        Named::Follow => shown,
    };
    Ok(SafeDir { fd, path })
}

/// Make the directory `name` in `parent` (mode 0755; one made meanwhile by someone else is
/// taken as found, and checked as every other is) and open it.
fn make_dir(parent: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Errno> {
    match mkdirat(parent, name, Mode::from_bits_truncate(0o755)) {
        Ok(()) | Err(Errno::EEXIST) => {}
        Err(errno) => return Err(errno),
    }
    // Opened for reading, not O_PATH: fchmod needs a real fd. Its owner made it (whatever the
    // umask, the owner may read it).
    let created = openat(
        parent,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    // Ours only if its owner is us: then its mode is ours to set.
    if fstat(&created)?.st_uid == euid() {
        fchmod(&created, Mode::from_bits_truncate(0o755))?;
    }
    Ok(created)
}

fn open_dir_nofollow_root() -> anyhow::Result<OwnedFd> {
    Ok(openat(
        nix::fcntl::AT_FDCWD,
        "/",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?)
}

/// Push the components of `path` onto `todo` so that the first is popped first (the walks of
/// `SafeDir` and `input` alike).
pub(crate) fn push_components(todo: &mut Vec<OsString>, path: &Path) {
    let names: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    todo.extend(names.into_iter().rev());
}

/// As root: refuse a directory another non-root user owns, or one that group or others may
/// write without the sticky bit (they could rename what is in it and put their own there).
fn check(
    root: bool,
    ancestors: Ancestors,
    path: &Path,
    stat: &FileStat,
    last: bool,
) -> Result<(), Untrusted> {
    if !root {
        return Ok(());
    }
    let what = if last { "it" } else { "a directory above it" };
    if stat.st_uid != 0 && (last || ancestors == Ancestors::RootOnly) {
        return Err(Untrusted {
            path: path.to_path_buf(),
            why: format!("{what} is owned by uid {}, not root", stat.st_uid),
        });
    }
    let mode = stat.st_mode;
    if mode & 0o022 != 0 && mode & libc::S_ISVTX == 0 {
        return Err(Untrusted {
            path: path.to_path_buf(),
            why: format!(
                "{what} is writable by {} (mode {:04o}) and not sticky",
                if mode & 0o002 != 0 {
                    "everyone"
                } else {
                    "its group"
                },
                mode & 0o7777
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "safe_dir_tests.rs"]
mod tests;
