//! rtsoak is safe to run as root: nothing an ordinary user (uid 65534) plants makes root follow,
//! write or delete a path that user controls, and nothing foreign reaches root's terminal raw.
//! Each test is a real run: the user plants the trap, root runs rtsoak, and the test checks that
//! the target outside was not touched (content, mode, mtime). `fs.protected_symlinks` and
//! `fs.protected_hardlinks` are 0 while a test runs (the kernel default), restored after.
//!
//! These tests need root and `setpriv`-free uid switching; a missing precondition is a failure,
//! never a silent pass. Run serialised with the other soak tests:
//! `flock /tmp/rtsoak-soak-tests.lock cargo test --test security`.
//!
//! The second round's tests are in `security/` (inputs read once, programs executed, processes
//! confined, refusals before the run), sharing these helpers.

mod common;
#[path = "security/confined.rs"]
mod confined;
#[path = "security/executed.rs"]
mod executed;
#[path = "security/inputs.rs"]
mod inputs;
#[path = "security/refusals.rs"]
mod refusals;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{is_root, rtsoak_path};

const NOBODY: u32 = 65534;
const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// Every test here runs rtsoak on the same RT CPUs and may change sysctls: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The preconditions, or a failure saying which is missing.
fn require_root() {
    assert!(
        is_root(),
        "tests/security.rs runs rtsoak as root against traps planted by uid {NOBODY}: run it as \
         root (CI does)"
    );
}

/// `fs.protected_symlinks` and `fs.protected_hardlinks` set to 0 until dropped, then restored.
struct Unprotected {
    saved: Vec<(&'static str, String)>,
}

impl Unprotected {
    fn new() -> Unprotected {
        let mut saved = Vec::new();
        for key in ["protected_symlinks", "protected_hardlinks"] {
            let path = format!("/proc/sys/fs/{key}");
            let old =
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
            std::fs::write(&path, "0").unwrap_or_else(|e| panic!("setting {path} to 0: {e}"));
            saved.push((key, old));
        }
        let symlinks = std::fs::read_to_string("/proc/sys/fs/protected_symlinks").unwrap();
        assert_eq!(
            symlinks.trim(),
            "0",
            "fs.protected_symlinks could not be set to 0"
        );
        Unprotected { saved }
    }
}

impl Drop for Unprotected {
    fn drop(&mut self) {
        for (key, old) in &self.saved {
            let _ = std::fs::write(format!("/proc/sys/fs/{key}"), old.trim());
        }
    }
}

/// Everything a test needs: serialised, root, sysctls off, a root-owned scratch place.
struct Setup {
    _serial: MutexGuard<'static, ()>,
    _unprotected: Unprotected,
    base: tempfile::TempDir,
}

fn setup() -> Setup {
    let serial = serial();
    require_root();
    let unprotected = Unprotected::new();
    let base = tempfile::Builder::new()
        .prefix("rtsoak-security-")
        .tempdir()
        .unwrap();
    // Others may walk into it (to plant in the directories made for them), not write it.
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    Setup {
        _serial: serial,
        _unprotected: unprotected,
        base,
    }
}

impl Setup {
    fn path(&self, name: &str) -> PathBuf {
        self.base.path().join(name)
    }

    /// A directory owned by uid 65534.
    fn nobodys_dir(&self, name: &str) -> PathBuf {
        let dir = self.path(name);
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
        dir
    }

    /// A root-owned directory with mode `mode`.
    fn roots_dir(&self, name: &str, mode: u32) -> PathBuf {
        let dir = self.path(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        dir
    }

    /// A root-owned 0600 file that must not change, in a directory only root writes.
    fn target(&self, name: &str) -> Target {
        let path = self.path(name);
        std::fs::write(&path, "root's secret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Target::new(path)
    }
}

/// A file root owns, and what it was like before the trap.
struct Target {
    path: PathBuf,
    content: Vec<u8>,
    mode: u32,
    mtime: (i64, i64),
}

impl Target {
    fn new(path: PathBuf) -> Target {
        let meta = std::fs::metadata(&path).unwrap();
        Target {
            content: std::fs::read(&path).unwrap(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            path,
        }
    }

    fn assert_untouched(&self) {
        let meta = std::fs::metadata(&self.path).unwrap();
        assert_eq!(
            std::fs::read(&self.path).unwrap(),
            self.content,
            "{} was written",
            self.path.display()
        );
        assert_eq!(
            meta.mode(),
            self.mode,
            "{} had its mode changed",
            self.path.display()
        );
        assert_eq!(
            (meta.mtime(), meta.mtime_nsec()),
            self.mtime,
            "{} was modified",
            self.path.display()
        );
    }
}

/// Run `program args` as uid/gid 65534 with no supplementary groups, requiring success.
fn as_nobody(program: &str, args: &[&OsStr]) {
    let output = Command::new(program)
        .args(args)
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "as uid {NOBODY}: {program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// uid 65534 plants a symlink `link` -> `target`.
fn plant_link(target: &Path, link: &Path) {
    as_nobody("ln", &["-s".as_ref(), target.as_os_str(), link.as_os_str()]);
}

/// `rtsoak run -t eventfd --profile ci --duration 1s -q`, as root.
fn root_command() -> Command {
    let mut command = Command::new(rtsoak_path());
    command.args([
        "run",
        "-t",
        "eventfd",
        "--profile",
        "ci",
        "--duration",
        "1s",
        "-q",
    ]);
    command
}

/// A short real run as root ([`root_command`]) plus `extra`, queueing behind another rtsoak on
/// the same CPUs (another test binary's) rather than failing.
fn root_run(extra: &[&OsStr]) -> Output {
    root_command()
        .args(["--wait-for-cpus", "30m"])
        .args(extra)
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A run that measured (whatever the verdict: a loaded 2-CPU machine may miss periods).
fn assert_measured(output: &Output) {
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 7)),
        "exit {:?}: {}",
        output.status.code(),
        stderr(output)
    );
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_symlink_planted_as_the_old_lock_file_is_never_touched() {
    let s = setup();
    let target = s.target("shadow");
    let mut links = Vec::new();
    for cpu in 0..std::thread::available_parallelism().unwrap().get() {
        let link = PathBuf::from(format!("/run/lock/rtsoak-cpu{cpu}.lock"));
        let _ = std::fs::remove_file(&link);
        plant_link(&target.path, &link);
        links.push(link);
    }
    let output = root_run(&[
        "--no-noise".as_ref(),
        "-o".as_ref(),
        s.path("out").as_os_str(),
    ]);
    for link in &links {
        let _ = std::fs::remove_file(link);
    }
    assert_measured(&output);
    target.assert_untouched();
}

#[test]
fn a_symlinked_output_directory_is_refused_as_root() {
    let s = setup();
    let real = s.nobodys_dir("real");
    let link = s.nobodys_dir("links").join("out");
    plant_link(&real, &link);
    let output = root_run(&["--no-noise".as_ref(), "-o".as_ref(), link.as_os_str()]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("refusing to write into"), "{text}");
    assert!(
        names(&real).is_empty(),
        "nothing was written through the link"
    );
}

#[test]
fn an_output_directory_another_user_owns_is_refused_as_root() {
    let s = setup();
    let foreign = s.nobodys_dir("foreign");
    let output = root_run(&["--no-noise".as_ref(), "-o".as_ref(), foreign.as_os_str()]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("owned by uid 65534"),
        "says who owns it: {text}"
    );
    assert!(text.contains("/var/lib/rtsoak"), "says what to do: {text}");
    assert!(names(&foreign).is_empty());
}

#[test]
fn names_planted_in_a_sticky_result_directory_are_replaced_never_followed() {
    let s = setup();
    // Root's, world-writable and sticky like /tmp: allowed, and anyone may plant names in it.
    let out = s.roots_dir("out", 0o1777);
    let mut targets = Vec::new();
    let mut planted = vec!["result.json", "table.txt", "external-noise.log"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    // The scratch file names older versions used, for the next few hundred pids.
    let next = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .map(|t| t.trim().parse::<u32>().unwrap_or(0))
        .unwrap_or(0);
    planted.extend((next..next + 300).map(|pid| format!(".rtsoak-noise-{pid}-0.tmp")));
    for (i, name) in planted.iter().enumerate() {
        let target = if i < 3 {
            let t = s.target(&format!("target-{i}"));
            let path = t.path.clone();
            targets.push(t);
            path
        } else {
            targets[0].path.clone()
        };
        plant_link(&target, &out.join(name));
    }
    let profile = s.path("external.toml");
    let ci = Command::new(rtsoak_path())
        .args(["profiles", "--show", "ci"])
        .output()
        .unwrap();
    let text = String::from_utf8(ci.stdout)
        .unwrap()
        .replace("external = []", "external = [\"sleep\", \"60\"]");
    std::fs::write(&profile, text).unwrap();
    // umask 000: the log must still be 0644, not 0666.
    let output = Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec \"$@\"")
        .arg("sh")
        .arg(rtsoak_path())
        .args([
            "run",
            "-t",
            "eventfd",
            "--duration",
            "1s",
            "-q",
            "--export",
            "table",
        ])
        .arg("--profile")
        .arg(&profile)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_measured(&output);
    for target in &targets {
        target.assert_untouched();
    }
    for name in ["result.json", "table.txt", "external-noise.log"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is a file of its own");
        assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o644), "{name}");
    }
    common::load(&out);
}

#[test]
fn directories_named_in_the_future_do_not_displace_roots_results() {
    let s = setup();
    // Root's and sticky: anyone may add directories, nobody may remove root's.
    let results = s.roots_dir("results", 0o1777);
    let first = root_run(&[
        "--no-noise".as_ref(),
        "--results-dir".as_ref(),
        results.as_os_str(),
    ]);
    assert_measured(&first);
    let real: Vec<String> = names(&results)
        .into_iter()
        .filter(|n| n.ends_with("-run"))
        .collect();
    assert_eq!(real.len(), 1, "{real:?}");
    let copy = std::fs::read(results.join(&real[0]).join("result.json")).unwrap();
    let staged = s.nobodys_dir("staged");
    std::fs::write(staged.join("result.json"), &copy).unwrap();
    std::os::unix::fs::chown(staged.join("result.json"), Some(NOBODY), Some(NOBODY)).unwrap();
    for year in ["2097", "2098", "2099"] {
        let fake = results.join(format!("{year}0101T000000Z-run"));
        as_nobody("mkdir", &[fake.as_os_str()]);
        as_nobody(
            "cp",
            &[staged.join("result.json").as_os_str(), fake.as_os_str()],
        );
    }
    // And one of nobody's named like a past result, holding a symlink to root's file.
    let target = s.target("precious");
    let past = results.join("20000101T000000Z-run");
    as_nobody("mkdir", &[past.as_os_str()]);
    plant_link(&target.path, &past.join("result.json"));
    let second = root_run(&[
        "--no-noise".as_ref(),
        "--results-dir".as_ref(),
        results.as_os_str(),
        "--keep".as_ref(),
        "2".as_ref(),
    ]);
    assert_measured(&second);
    assert!(
        results.join(&real[0]).join("result.json").is_file(),
        "root's earlier result survived --keep 2: {:?}\n{}",
        names(&results),
        stderr(&second)
    );
    for year in ["2097", "2098", "2099"] {
        assert!(results.join(format!("{year}0101T000000Z-run")).is_dir());
    }
    assert!(past.is_dir(), "another user's directory is never removed");
    target.assert_untouched();
}

#[test]
fn an_empty_rtsoak_lock_dir_is_a_usage_error_naming_it() {
    let _s = setup();
    let output = Command::new(rtsoak_path())
        .env("RTSOAK_LOCK_DIR", "")
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "1s",
            "-q",
        ])
        .args(["--no-noise", "-o", "/nonexistent/never-made"])
        .output()
        .unwrap();
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("RTSOAK_LOCK_DIR") && text.contains("no longer used"),
        "{text}"
    );
}

#[test]
fn an_escape_sequence_in_the_lock_holders_command_line_is_shown_escaped() {
    let s = setup();
    let dir = s.nobodys_dir("holder");
    let evil = format!("{}/\x1b[2J\x1b]0;owned\x07evil", dir.display());
    // uid 65534 holds the RT CPUs with a real rtsoak run whose -o carries the escape sequence.
    let mut holder = Command::new(rtsoak_path())
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "30s",
            "-q",
        ])
        .args(["--no-noise", "--no-explain", "-o", &evil])
        .uid(NOBODY)
        .gid(NOBODY)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let deadline = Instant::now() + Duration::from_secs(20);
    let held = || {
        (0..cpus).any(|cpu| {
            matches!(
                rtsoak_sys::cpu_lock::listener_of(&format!("rtsoak-cpu{cpu}")),
                Ok(Some((pid, _))) if pid == holder.id()
            )
        })
    };
    while !held() {
        assert!(
            Instant::now() < deadline,
            "uid 65534's run never took the CPU locks"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = root_command()
        .args(["--no-noise", "-o"])
        .arg(s.path("out"))
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(6), "{text}");
    assert!(text.contains(&format!("uid {NOBODY}")), "{text}");
    assert!(
        text.contains("\\x1b[2J\\x1b]0;owned\\x07evil"),
        "shown escaped: {text}"
    );
    assert!(
        !text.contains('\x1b') && !text.contains('\x07'),
        "nothing raw: {text:?}"
    );
}

#[test]
fn non_utf8_paths_in_every_path_flag_never_panic() {
    let s = setup();
    let raw = |name: &str| {
        let mut bytes = s.base.path().as_os_str().as_bytes().to_vec();
        bytes.extend_from_slice(b"/x\xff");
        bytes.extend_from_slice(name.as_bytes());
        PathBuf::from(OsStr::from_bytes(&bytes))
    };
    let textfile = raw("textfile");
    std::fs::create_dir(&textfile).unwrap();
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        vec![
            "run".into(),
            "-t".into(),
            "eventfd".into(),
            "--profile".into(),
            "ci".into(),
            "--duration".into(),
            "1s".into(),
            "-q".into(),
            "--no-noise".into(),
            "-o".into(),
            raw("out").into(),
            "--textfile-dir".into(),
            textfile.clone().into(),
            "--baseline".into(),
            raw("baseline").into(),
        ],
        vec![
            "run".into(),
            "-t".into(),
            "eventfd".into(),
            "--profile".into(),
            "ci".into(),
            "--duration".into(),
            "1s".into(),
            "-q".into(),
            "--no-noise".into(),
            "--results-dir".into(),
            raw("results").into(),
            "--keep".into(),
            "1".into(),
        ],
        vec![
            "run".into(),
            "-t".into(),
            "eventfd".into(),
            "--profile".into(),
            raw("p.toml").into(),
        ],
        vec![
            "report".into(),
            raw("out").into(),
            "-o".into(),
            raw("report.txt").into(),
        ],
        vec!["diff".into(), raw("out").into(), raw("missing").into()],
        vec![
            "baseline".into(),
            "promote".into(),
            raw("out").into(),
            "--to".into(),
            raw("base").into(),
        ],
        vec!["man".into(), "--dir".into(), raw("man").into()],
        vec![
            "bench".into(),
            "eventfd".into(),
            "--warmup-rounds".into(),
            "0".into(),
            "--rounds".into(),
            "1".into(),
            "--cycles".into(),
            "8".into(),
            "-o".into(),
            raw("bench").into(),
        ],
        vec![
            "bench".into(),
            "compare".into(),
            raw("bench").into(),
            raw("bench").into(),
        ],
        vec![
            "explain-check".into(),
            "--rounds".into(),
            "1".into(),
            "--keep-trace".into(),
            raw("trace.txt").into(),
        ],
    ];
    for args in cases {
        let output = Command::new(rtsoak_path()).args(&args).output().unwrap();
        let text = stderr(&output);
        assert_ne!(output.status.code(), Some(101), "{args:?}: {text}");
        assert!(
            output.status.code().is_some(),
            "{args:?} died of a signal: {text}"
        );
        assert!(!text.contains("panicked"), "{args:?}: {text}");
    }
    assert!(
        raw("out").join("result.json").is_file(),
        "the run wrote its result"
    );
}

/// The pids of `pid` and every process below it.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(parent) && !found.contains(&child) {
                found.push(child);
            }
        }
        i += 1;
    }
    found
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The first process below `pid` named `name`, waited for (the run may first queue behind
/// another rtsoak's for its CPUs).
fn wait_for_process(pid: u32, name: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(found) = descendants(pid).into_iter().find(|&p| comm(p) == name) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no {name} process appeared below {pid}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while pids.iter().any(|p| common::alive(*p as i32)) {
        assert!(
            Instant::now() < deadline,
            "processes {pids:?} outlived the kill"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn rtsoak_instances() -> Vec<String> {
    std::fs::read_dir(INSTANCES)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("rtsoak-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Nothing but what a result directory should hold.
fn assert_no_debris(dir: &Path) {
    let names = names(dir);
    assert!(
        names
            .iter()
            .all(|n| ["result.json", "table.txt"].contains(&n.as_str())),
        "left in {}: {names:?}",
        dir.display()
    );
}

#[test]
fn a_killed_coordinator_leaves_nothing_the_next_run_does_not_clean() {
    let s = setup();
    // rtsoak mounts tracefs where it traces; this test looks at the instances directly, so it
    // mounts it itself where no earlier run has (a fresh machine, this test run alone).
    if !Path::new(INSTANCES).is_dir() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .status();
    }
    assert!(
        Path::new(INSTANCES).is_dir(),
        "tracefs is not mounted at /sys/kernel/tracing and could not be: this test needs it to \
         check instances"
    );
    // A leftover of an older version, made inside a PID namespace: never a live pid here.
    let legacy = Path::new(INSTANCES).join("rtsoak-1");
    let _ = std::fs::create_dir(&legacy);
    let out = s.path("killed");
    let mut coordinator = Command::new(rtsoak_path())
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "30s",
            "-q",
        ])
        .args(["--explain", "--wait-for-cpus", "30m", "-o"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_process(coordinator.id(), "rtsoak-load");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !rtsoak_instances().iter().any(|n| n.starts_with("rtsoak-t")) {
        assert!(Instant::now() < deadline, "the run made no trace instance");
        std::thread::sleep(Duration::from_millis(50));
    }
    let family = descendants(coordinator.id());
    coordinator.kill().unwrap();
    let _ = coordinator.wait();
    wait_gone(&family);
    assert_no_debris(&out);

    let next = root_run(&[
        "--no-noise".as_ref(),
        "--no-explain".as_ref(),
        "-o".as_ref(),
        s.path("next").as_os_str(),
    ]);
    assert_measured(&next);
    assert_eq!(
        rtsoak_instances(),
        Vec::<String>::new(),
        "the next run, not explaining, removed the stale instances"
    );
}

#[test]
fn a_killed_load_worker_leaves_no_scratch_file() {
    let s = setup();
    let out = s.path("load");
    let run = Command::new(rtsoak_path())
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "4s",
            "-q",
        ])
        .args(["--no-explain", "--wait-for-cpus", "30m", "-o"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let load = wait_for_process(run.id(), "rtsoak-load");
    // Give the file writer time to open its scratch file and write.
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(load as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let output = run.wait_with_output().unwrap();
    let text = stderr(&output);
    assert_ne!(output.status.code(), Some(101), "{text}");
    assert_no_debris(&out);
}

/// rtsoak, hard-linked into `dir` (same inode: never chmod or chown it), started as root for a
/// short run into `dir/out`.
fn run_linked_rtsoak(dir: &Path) -> Output {
    let linked = dir.join("rtsoak");
    std::fs::hard_link(rtsoak_path(), &linked).unwrap();
    let output = Command::new(&linked)
        .args([
            "run",
            "-q",
            "-t",
            "eventfd",
            "--no-noise",
            "--duration",
            "1s",
        ])
        .arg("-o")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    std::fs::remove_file(&linked).unwrap();
    output
}

/// A worker binary that, if it ever ran, would leave `marker` behind.
fn plant_worker(path: &Path, marker: &Path, mode: u32) {
    std::fs::write(
        path,
        format!("#!/bin/sh\necho ran >'{}'\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The run was refused before anything ran, saying which worker binary, what is wrong and what
/// to do, without a panic, and the planted worker never ran.
fn assert_refused(output: &Output, worker: &Path, why: &str, marker: &Path) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot start workers from {}", worker.display())),
        "{stderr}"
    );
    assert!(stderr.contains(why), "{why}: {stderr}");
    assert!(
        stderr.contains("Install rtsoak-worker beside rtsoak")
            && stderr.contains("`cargo build --release` builds both"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the refused worker binary ran");
}

#[test]
fn a_worker_binary_another_user_could_plant_is_never_run_and_a_missing_one_is_said() {
    let setup = setup();
    let marker = setup.path("worker-ran");

    // Missing (as after `cargo run`, which builds rtsoak alone): the workers run from rtsoak
    // itself, and stderr says so.
    let dir = setup.roots_dir("missing", 0o755);
    let output = run_linked_rtsoak(&dir);
    let said = stderr(&output);
    assert!(
        matches!(output.status.code(), Some(0 | 7)) && dir.join("out/result.json").is_file(),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "no {} beside this binary",
            dir.join("rtsoak-worker").display()
        )),
        "{said}"
    );

    // A symlink, even to the real worker binary.
    let dir = setup.roots_dir("symlink", 0o755);
    let worker = dir.join("rtsoak-worker");
    std::os::unix::fs::symlink(rtsoak_path().with_file_name("rtsoak-worker"), &worker).unwrap();
    assert_refused(&run_linked_rtsoak(&dir), &worker, "is a symlink", &marker);

    // Writable by its group, or by everyone.
    for (mode, why) in [
        (0o775, "writable by its group"),
        (0o757, "writable by everyone"),
    ] {
        let dir = setup.roots_dir(&format!("mode-{mode:o}"), 0o755);
        let worker = dir.join("rtsoak-worker");
        plant_worker(&worker, &marker, mode);
        assert_refused(&run_linked_rtsoak(&dir), &worker, why, &marker);
    }

    // Owned by another user.
    let dir = setup.roots_dir("owned", 0o755);
    let worker = dir.join("rtsoak-worker");
    plant_worker(&worker, &marker, 0o755);
    std::os::unix::fs::chown(&worker, Some(NOBODY), Some(NOBODY)).unwrap();
    assert_refused(
        &run_linked_rtsoak(&dir),
        &worker,
        &format!("owned by uid {NOBODY}"),
        &marker,
    );

    // Root's own file, in a directory another user owns (who could swap it).
    let dir = setup.nobodys_dir("nobodys");
    let worker = dir.join("rtsoak-worker");
    plant_worker(&worker, &marker, 0o755);
    assert_refused(
        &run_linked_rtsoak(&dir),
        &worker,
        "its directory is not one root may run a program from",
        &marker,
    );
}
