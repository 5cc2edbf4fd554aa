//! Shared helpers for the integration tests: the real binary, result loading, root detection.

#![allow(dead_code)]

use std::path::Path;

use assert_cmd::Command;
use rtsoak::result::ResultDoc;

/// The rtsoak binary under test.
pub fn rtsoak() -> Command {
    Command::cargo_bin("rtsoak").expect("the rtsoak binary is built for integration tests")
}

/// Path of the binary, for tests that start it themselves.
pub fn rtsoak_path() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("rtsoak")
}

/// Load the result document of a result directory.
pub fn load(dir: &Path) -> ResultDoc {
    rtsoak::result::store::load(dir).expect("the result directory holds a valid result")
}

/// Run rtsoak with `args` and `-o` a new temporary directory, require it to succeed, and load
/// the result it saved. The directory lives as long as the returned guard.
pub fn saved_run(args: &[&str]) -> (tempfile::TempDir, ResultDoc) {
    let dir = tempfile::tempdir().unwrap();
    rtsoak()
        .args(args)
        .arg("-o")
        .arg(dir.path())
        .assert()
        .success();
    let doc = load(dir.path());
    (dir, doc)
}

/// True when running as root (CI does).
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Print why a check is skipped, so a skip is never silent; in CI (`RTSOAK_CI` set, as
/// `.ci/run` does) a skipped check is a failure. The one helper the unit tests use too.
// Not every test file that includes this module skips something.
#[allow(unused_imports)]
pub use rtsoak::sys::testing::skip;

/// True if a process with this pid exists.
pub fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The pids of every live (not yet dead: zombies excluded) process in process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
                    (fields.first() != Some(&"Z")).then(|| fields.get(2)?.parse::<i32>().ok())?
                })
                == Some(pgid)
        })
        .collect()
}

/// The soaks share the machine's two CPUs at real-time priority: a test holding this runs alone
/// among the tests of its binary, so that each sees the machine as a user would.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Run rtsoak with `args` as an ordinary user would (uid/gid 65534, no capabilities, the usual
/// 8 MiB `RLIMIT_MEMLOCK`) in a fresh home directory of theirs, where a relative `-o` lands.
/// Needs root (for `setpriv`); returns the output and the home directory.
pub fn as_ordinary_user(args: &str) -> (std::process::Output, tempfile::TempDir) {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let script = format!("ulimit -l 8192 && exec {} {args}", rtsoak_path().display());
    let output = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "sh",
            "-c",
        ])
        .arg(&script)
        .current_dir(home.path())
        .output()
        .unwrap();
    (output, home)
}
