//! One rtsoak per RT CPU: two soaks on the same RT CPUs (two nightly timers firing in the same
//! window, a hand run beside a scheduled one) would each measure the other. Before anything runs,
//! `run` and `compare` take an exclusive `flock` on one file per RT CPU
//! (`/run/lock/rtsoak-cpu4.lock`) and hold it until they exit; the kernel drops it when the
//! process ends, however it ends. A second rtsoak refuses at once, naming the holder, or waits
//! up to a limit.
//!
//! Owns: the lock files and their holder note. Never deletes a lock file (another rtsoak may
//! have it open) and never blocks without a limit.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// Environment variable that moves the lock files (default `/run/lock`, else the temp dir).
pub const LOCK_DIR_ENV: &str = "RTSOAK_LOCK_DIR";

/// Another rtsoak holds one of the RT CPUs.
#[derive(Debug, thiserror::Error)]
#[error(
    "CPU {cpu} is already the RT CPU of another rtsoak run ({holder}); two soaks on the same RT \
     CPUs would measure each other. Wait for it to finish, queue behind it with \
     --wait-for-cpus DURATION, or choose other CPUs with --rt-cpus (lock file {})",
    path.display()
)]
pub struct CpusBusy {
    /// The CPU found locked.
    pub cpu: usize,
    /// What its lock file says about the holder.
    pub holder: String,
    /// The lock file.
    pub path: PathBuf,
}

/// The locks on the RT CPUs, held until dropped.
#[derive(Debug)]
pub struct CpuLocks {
    _held: Vec<Flock<File>>,
}

/// Where the lock files live: `$RTSOAK_LOCK_DIR`, else `/run/lock`, else the temp dir.
pub fn lock_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(LOCK_DIR_ENV) {
        return PathBuf::from(dir);
    }
    let run_lock = Path::new("/run/lock");
    if run_lock.is_dir() {
        run_lock.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Lock every CPU of `cpus` in `dir`, all or none. With `wait`, keep trying (once every
/// `poll`) until it runs out; `note` is written into each file for whoever finds it locked.
pub fn lock(
    dir: &Path,
    cpus: &[usize],
    wait: Duration,
    note: &str,
    mut waiting: impl FnMut(&CpusBusy),
) -> anyhow::Result<CpuLocks> {
    const POLL: Duration = Duration::from_millis(250);
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    let deadline = Instant::now() + wait;
    let mut told = false;
    loop {
        match try_lock_all(dir, &cpus, note)? {
            Ok(held) => return Ok(CpuLocks { _held: held }),
            Err(busy) if Instant::now() < deadline => {
                if !told {
                    waiting(&busy);
                    told = true;
                }
                std::thread::sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
            }
            Err(busy) => return Err(busy.into()),
        }
    }
}

/// One attempt: every lock, or none held and the first busy CPU.
fn try_lock_all(
    dir: &Path,
    cpus: &[usize],
    note: &str,
) -> anyhow::Result<Result<Vec<Flock<File>>, CpusBusy>> {
    let mut held = Vec::with_capacity(cpus.len());
    for &cpu in cpus {
        let path = dir.join(format!("rtsoak-cpu{cpu}.lock"));
        let file = open(&path)?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut locked) => {
                // The note is for people; a lock file we may only read keeps the old one.
                let _ = locked
                    .set_len(0)
                    .and_then(|()| locked.write_all(note.as_bytes()));
                held.push(locked);
            }
            Err((_, Errno::EWOULDBLOCK)) => {
                let holder = std::fs::read_to_string(&path)
                    .ok()
                    .map(|text| text.trim().replace('\n', ", "))
                    .filter(|text| !text.is_empty())
                    .unwrap_or_else(|| "holder unknown".to_string());
                return Ok(Err(CpusBusy { cpu, holder, path }));
            }
            Err((_, errno)) => {
                anyhow::bail!(
                    "locking {} failed: {errno}; set {LOCK_DIR_ENV} to a writable directory",
                    path.display()
                )
            }
        }
    }
    Ok(Ok(held))
}

/// Open (creating, readable and writable by every user, so a root run and a user's run lock the
/// same file) or, when it belongs to someone else and is not writable, open it read-only:
/// `flock` works on either.
fn open(path: &Path) -> anyhow::Result<File> {
    let created = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o666)
        .open(path);
    match created {
        Ok(file) => {
            // The umask may have narrowed the mode; only the owner can widen it again.
            let _ = file.set_permissions(std::fs::Permissions::from_mode(0o666));
            Ok(file)
        }
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied && path.exists() => {
            File::open(path).map_err(|e| lock_error(path, &e))
        }
        Err(error) => Err(lock_error(path, &error)),
    }
}

fn lock_error(path: &Path, error: &std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "opening the RT CPU lock {}: {error}; set {LOCK_DIR_ENV} to a directory every rtsoak \
         user can write",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_a_shared_cpu_is_refused_naming_the_holder_and_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path(), &[5, 4], Duration::ZERO, "pid 1\nrun A", |_| {}).unwrap();
        let error = lock(dir.path(), &[3, 4], Duration::ZERO, "pid 2", |_| {}).unwrap_err();
        let busy = error.downcast_ref::<CpusBusy>().expect("typed");
        assert_eq!(busy.cpu, 4);
        assert_eq!(busy.holder, "pid 1, run A");
        let text = error.to_string();
        assert!(text.contains("--wait-for-cpus"), "{text}");
        assert!(text.contains("--rt-cpus"), "{text}");
        // All or none: CPU 3 was not kept locked by the failed attempt.
        drop(lock(dir.path(), &[3], Duration::ZERO, "pid 3", |_| {}).unwrap());
        drop(first);
        drop(lock(dir.path(), &[3, 4], Duration::ZERO, "pid 2", |_| {}).unwrap());
    }

    #[test]
    fn a_waiting_lock_is_told_once_and_taken_when_the_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path(), &[1], Duration::ZERO, "pid 1", |_| {}).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(600));
            drop(first);
        });
        let mut told = 0;
        let second = lock(dir.path(), &[1], Duration::from_secs(30), "pid 2", |_| {
            told += 1
        });
        release.join().unwrap();
        assert!(second.is_ok());
        assert_eq!(told, 1);
        let note = std::fs::read_to_string(dir.path().join("rtsoak-cpu1.lock")).unwrap();
        assert_eq!(note, "pid 2", "the new holder's note replaced the old one");
    }

    #[test]
    fn a_wait_that_runs_out_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = lock(dir.path(), &[1], Duration::ZERO, "pid 1", |_| {}).unwrap();
        let started = Instant::now();
        let error = lock(
            dir.path(),
            &[1],
            Duration::from_millis(300),
            "pid 2",
            |_| {},
        );
        assert!(error.unwrap_err().downcast_ref::<CpusBusy>().is_some());
        assert!(started.elapsed() >= Duration::from_millis(300));
    }
}
