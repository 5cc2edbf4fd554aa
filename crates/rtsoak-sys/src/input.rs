//! Files rtsoak reads by a path it was given (a result, a baseline, a profile, a bench result),
//! each read once from one open file, so that what is checked is what is used: a caller that
//! copies a file (`baseline promote`) copies the very bytes it checked, and a file swapped
//! between two looks cannot be, since there is only one.
//!
//! The rules, the same for every input:
//!
//! - The path is resolved here, one component at a time (`O_PATH|O_NOFOLLOW` from `/` or the
//!   working directory). As root, a symlink another user owns is never followed, wherever it is
//!   on the path: that user could point it at root's files, or swap it between two looks. A
//!   symlink of root's own (`latest` in a results directory, `/var/run`) is followed; an
//!   ordinary user's runs follow every symlink, as any program does.
//! - What the path names must be a regular file, by `fstat` of the `O_PATH` fd, before it is
//!   opened for reading: a FIFO (which could block the open or the read forever, or answer
//!   differently to each reader), a device (`/dev/zero` never ends), a socket or a directory is
//!   refused, naming what it is.
//! - As root, a regular file with more than one name, in a directory another user may write
//!   to, is refused: one of its names could be a hard link planted there to root's files
//!   (where `fs.protected_hardlinks` is 0, as on minimal and embedded images), which reading
//!   it would reveal. A hard link root made in its own directories is read.
//! - It is then opened once, `O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC` by its directory's fd,
//!   checked to be the file resolved (same device and inode), and read from that fd up to the
//!   caller's limit: a larger file is refused naming the limit, before its bytes are read where
//!   its size says so, and after `limit + 1` bytes where it does not (a /proc file).
//!
//! Owns: opening, checking and reading those inputs. Never writes, never blocks on what it
//! opens, never reads past the limit.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, OFlag, openat, readlinkat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat};

use crate::SysError;
use crate::safe_dir::{euid, push_components};

/// Symlinks followed on the way to an input before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// An input that cannot be read: which path and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct InputError {
    /// The path given, or the file in the directory given (`DIR/result.json`).
    pub(crate) path: PathBuf,
    /// What is wrong with it.
    problem: Problem,
}

/// Why an input is refused.
#[derive(Debug, thiserror::Error)]
enum Problem {
    /// Nothing is there.
    #[error("there is no such file")]
    Missing,
    /// Something other than a regular file: what it is (`a FIFO (named pipe)`).
    #[error("it is {0}, not a regular file: give the file itself")]
    NotRegular(&'static str),
    /// Larger than the caller reads.
    #[error(
        "it is larger than {} MiB, the most rtsoak reads of one: check that it is the file you \
         meant",
        limit_bytes >> 20
    )]
    TooLarge {
        /// The limit, bytes.
        limit_bytes: u64,
    },
    /// As root: a symlink on the way that another user owns.
    #[error(
        "{} is a symlink owned by uid {uid}, and rtsoak, run by root, follows no symlink another \
         user owns (they could point it at root's files): give the path it points to",
        link.display()
    )]
    ForeignSymlink {
        /// The symlink.
        link: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// As root: a file with other names, in a directory another user may write to. A hard
    /// link to root's file (`/etc/shadow`) planted there would read as the file named.
    #[error(
        "it has {links} names and is in {}, a directory another user may write to: one of \
         them could be a hard link to root's files, and rtsoak, run by root, reads no such \
         file: give a copy in a directory only root may write",
        dir.display()
    )]
    ForeignHardLink {
        /// Its link count.
        links: u64,
        /// The directory.
        dir: PathBuf,
    },
    /// Replaced between being resolved and being opened.
    #[error("it was replaced while rtsoak opened it: give a file nobody is changing")]
    Replaced,
    /// More symlinks than the kernel itself follows.
    #[error("it leads through more than {MAX_SYMLINKS} symlinks")]
    TooManySymlinks,
    /// A system call failed (permission denied, not a directory on the way, ...).
    #[error(transparent)]
    Sys(#[from] SysError),
}

/// An input read whole: where it was read from, its bytes and what `fstat` said of it.
#[derive(Debug)]
pub struct Input {
    /// The path given, or the file in the directory given (`DIR/result.json`).
    pub path: PathBuf,
    /// Every byte, at most the limit.
    pub bytes: Vec<u8>,
    /// `fstat` of the fd the bytes were read from (owner and mode, for callers with rules of
    /// their own).
    pub stat: FileStat,
}

/// Read the regular file `path`, at most `limit_bytes` of it (see the module's comment).
pub fn read(path: &Path, limit_bytes: u64) -> Result<Input, InputError> {
    read_file_or_in_dir(path, None, limit_bytes)
}

/// Read the regular file `path`, or where `path` is a directory, the file `name` in it (a
/// result directory's `result.json`), at most `limit_bytes` (see the module's comment).
pub fn read_file_or_in_dir(
    path: &Path,
    name: Option<&OsStr>,
    limit_bytes: u64,
) -> Result<Input, InputError> {
    let found = resolve(path, name)?;
    let fail = |problem: Problem| InputError {
        path: found.shown.clone(),
        problem,
    };
    if let Some(kind) = not_regular(&found.stat) {
        return Err(fail(Problem::NotRegular(kind)));
    }
    if size_of(&found.stat) > limit_bytes {
        return Err(fail(Problem::TooLarge { limit_bytes }));
    }
    let flags = OFlag::O_RDONLY
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let fd = openat(
        found.parent.as_fd(),
        found.name.as_os_str(),
        flags,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        // The walk found a regular file; a symlink there now was put in its place since.
        Errno::ELOOP => fail(Problem::Replaced),
        errno => fail(opened(errno, "open")),
    })?;
    let stat = fstat(&fd).map_err(|errno| fail(SysError::new("fstat", errno).into()))?;
    if (stat.st_dev, stat.st_ino) != (found.stat.st_dev, found.stat.st_ino) {
        return Err(fail(Problem::Replaced));
    }
    let mut bytes = Vec::with_capacity(size_of(&stat).min(limit_bytes) as usize);
    File::from(fd)
        .take(limit_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| fail(SysError::from_io("read", &error).into()))?;
    if bytes.len() as u64 > limit_bytes {
        return Err(fail(Problem::TooLarge { limit_bytes }));
    }
    Ok(Input {
        path: found.shown,
        bytes,
        stat,
    })
}

/// The file an input path names: its directory's fd, its name there, and `fstat` of it.
struct Resolved {
    parent: OwnedFd,
    name: OsString,
    stat: FileStat,
    shown: PathBuf,
}

/// Walk `path` one component at a time (then `name` inside it, if it is a directory), as the
/// module's comment says; the last component is not opened for reading here.
fn resolve(path: &Path, mut name: Option<&OsStr>) -> Result<Resolved, InputError> {
    let root = euid() == 0;
    let fail = |shown: &Path, problem: Problem| InputError {
        path: shown.to_path_buf(),
        problem,
    };
    let mut walk = Walk::start(path).map_err(|e| fail(path, e.into()))?;
    while let Some(component) = walk.todo.pop() {
        let at = walk.shown.join(&component);
        let fd = openat(
            walk.dir.as_fd(),
            component.as_os_str(),
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| {
            // A missing directory on the way: the path given is what the user knows.
            let named = if walk.todo.is_empty() { &at } else { path };
            fail(named, opened(errno, "open"))
        })?;
        let stat = fstat(&fd).map_err(|e| fail(&at, SysError::new("fstat", e).into()))?;
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFLNK {
            if root && stat.st_uid != 0 {
                let problem = Problem::ForeignSymlink {
                    link: at,
                    uid: stat.st_uid,
                };
                return Err(fail(path, problem));
            }
            walk.follow(&fd).map_err(|(about_link, problem)| {
                fail(if about_link { &at } else { path }, problem)
            })?;
            continue;
        }
        let last = walk.todo.is_empty();
        if kind == SFlag::S_IFDIR && (!last || name.is_some()) {
            if last && let Some(inside) = name.take() {
                walk.todo.push(inside.to_os_string());
            }
            walk.enter(fd, &component, at);
            continue;
        }
        if !last {
            return Err(fail(&at, SysError::new("open", Errno::ENOTDIR).into()));
        }
        if root && kind == SFlag::S_IFREG && stat.st_nlink > 1 {
            refuse_shared_hard_link(&walk, &stat).map_err(|problem| fail(&at, problem))?;
        }
        return Ok(Resolved {
            parent: walk.dir,
            name: component,
            stat,
            shown: at,
        });
    }
    unreachable!("the walk returns at its last component")
}

/// Where a walk has reached: the directory open, how the path to it is shown, the components
/// still to open (the next one last) and how many symlinks it followed.
struct Walk {
    dir: OwnedFd,
    shown: PathBuf,
    todo: Vec<OsString>,
    hops: usize,
}

impl Walk {
    /// A walk of `path` from `/` or the working directory.
    fn start(path: &Path) -> Result<Walk, SysError> {
        let mut todo = Vec::new();
        push_components(&mut todo, path);
        if todo.is_empty() {
            todo.push(OsString::from("."));
        }
        let shown = if path.is_absolute() {
            PathBuf::from("/")
        } else {
            PathBuf::new()
        };
        Ok(Walk {
            dir: start(path.is_absolute())?,
            shown,
            todo,
            hops: 0,
        })
    }

    /// Step into the directory `fd`, reached as `component` and shown as `at`.
    fn enter(&mut self, fd: OwnedFd, component: &OsStr, at: PathBuf) {
        self.dir = fd;
        if component == ".." {
            self.shown.pop();
        } else {
            self.shown = at;
        }
    }

    /// Go on through the symlink `link` (an `O_PATH` fd of it, already checked): its target
    /// is read through the fd, so swapping the name now changes nothing. An error says whether
    /// it is about the link itself (`true`) or the path as given (`false`).
    fn follow(&mut self, link: &OwnedFd) -> Result<(), (bool, Problem)> {
        self.hops += 1;
        if self.hops > MAX_SYMLINKS {
            return Err((false, Problem::TooManySymlinks));
        }
        let target = readlinkat(link.as_fd(), "")
            .map_err(|e| (true, SysError::new("readlinkat", e).into()))?;
        let target = Path::new(&target);
        if target.is_absolute() {
            self.dir = start(true).map_err(|e| (true, e.into()))?;
            self.shown = PathBuf::from("/");
        }
        push_components(&mut self.todo, target);
        Ok(())
    }
}

/// As root, a file with other names (`stat` of it) in a directory another user may write to
/// is refused: a planted hard link to root's file would otherwise read as the input named.
fn refuse_shared_hard_link(walk: &Walk, stat: &FileStat) -> Result<(), Problem> {
    let parent = fstat(&walk.dir).map_err(|e| SysError::new("fstat", e))?;
    if others_may_write(&parent) {
        // st_nlink is u64 on x86_64 and u32 on arm64.
        #[allow(clippy::useless_conversion)]
        let links = u64::from(stat.st_nlink);
        return Err(Problem::ForeignHardLink {
            links,
            dir: walk.shown.clone(),
        });
    }
    Ok(())
}

/// Whether a user other than root may create names in the directory `stat` describes: it is
/// another user's, or its group or others may write to it (a sticky `/tmp` included: anyone
/// may link a file there).
fn others_may_write(stat: &FileStat) -> bool {
    stat.st_uid != 0 || stat.st_mode & 0o022 != 0
}

/// Where a walk starts: `/`, or the working directory.
fn start(absolute: bool) -> Result<OwnedFd, SysError> {
    let from = if absolute { "/" } else { "." };
    openat(
        AT_FDCWD,
        from,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| SysError::new("open", e))
}

/// The problem of an open that failed with `errno`.
fn opened(errno: Errno, call: &'static str) -> Problem {
    match errno {
        Errno::ENOENT => Problem::Missing,
        errno => SysError::new(call, errno).into(),
    }
}

/// What `stat` describes, where it is not a regular file.
fn not_regular(stat: &FileStat) -> Option<&'static str> {
    match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFREG => None,
        SFlag::S_IFDIR => Some("a directory"),
        SFlag::S_IFIFO => Some("a FIFO (named pipe)"),
        SFlag::S_IFCHR => Some("a character device"),
        SFlag::S_IFBLK => Some("a block device"),
        SFlag::S_IFSOCK => Some("a socket"),
        _ => Some("not a file rtsoak knows"),
    }
}

fn size_of(stat: &FileStat) -> u64 {
    u64::try_from(stat.st_size).unwrap_or(0)
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
