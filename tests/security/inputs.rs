//! Inputs read once, from one open file: a result, a baseline, a profile or a bench result given
//! by path is a regular file of bounded size, opened for reading once, never through another
//! user's symlink; `baseline promote` writes the very bytes it checked.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

use super::common::rtsoak_path;
use super::{NOBODY, as_nobody, plant_link, setup, stderr};

/// A saved real result (a comparison on a 2-CPU VM), as bytes another user could copy.
pub(crate) fn a_result() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/compare-vm-2cpu.json"),
    )
    .unwrap()
}

/// A file of uid 65534's holding `bytes`, mode 0644.
fn nobodys_file(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
}

/// uid 65534 running `script` in the background, in a process group of its own.
pub(crate) struct Trap(std::process::Child);

impl Trap {
    pub(crate) fn start(script: &str) -> Trap {
        Trap(
            Command::new("sh")
                .arg("-c")
                .arg(script)
                .uid(NOBODY)
                .gid(NOBODY)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Trap {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

/// `rtsoak promote RESULT --to DIR --force` as root (forced: the fixture's own fitness is not
/// what these tests look at).
fn promote(result: &Path, to: &Path) -> Output {
    Command::new(rtsoak_path())
        .args(["baseline", "promote"])
        .arg(result)
        .arg("--to")
        .arg(to)
        .arg("--force")
        .output()
        .unwrap()
}

/// Run `command` and give it `limit` to end, failing (after killing it) if it does not.
pub(crate) fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{command:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn promote_reads_the_result_once_so_nothing_swapped_in_reaches_the_baseline() {
    let s = setup();
    let secret = s.target("secret");
    let valid = a_result();
    let shared = s.nobodys_dir("shared");
    nobodys_file(&shared.join(".valid"), &valid);
    nobodys_file(&shared.join("result.json"), &valid);
    let to = s.roots_dir("baseline", 0o755);
    let baseline = to.join("result.json");

    // One open for reading (inotify counts opens; resolving the path by O_PATH opens none):
    // there is no second read for a swap to fall between.
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK).unwrap();
    inotify
        .add_watch(&shared.join("result.json"), AddWatchFlags::IN_OPEN)
        .unwrap();
    let out = promote(&shared.join("result.json"), &to);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let opens = inotify.read_events().unwrap_or_default();
    assert_eq!(opens.len(), 1, "opened for reading {} times", opens.len());
    assert_eq!(std::fs::read(&baseline).unwrap(), valid);

    // uid 65534's symlink to root's file, as the file or through the directory: refused.
    std::fs::remove_file(shared.join("result.json")).unwrap();
    plant_link(&secret.path, &shared.join("result.json"));
    for given in [shared.join("result.json"), shared.clone()] {
        let out = promote(&given, &to);
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("symlink owned by uid 65534"), "{text}");
    }
    assert_eq!(std::fs::read(&baseline).unwrap(), valid);

    // Swapped between the result and the symlink as fast as uid 65534 can while root promotes:
    // each promote refuses the link or copies the result, never root's file.
    let _swapper = Trap::start(&format!(
        "cd '{}' && while :; do ln -sf '{}' .l && mv -f .l result.json; cp .valid .f && \
         mv -f .f result.json; done",
        shared.display(),
        secret.path.display()
    ));
    for _ in 0..40 {
        let out = promote(&shared.join("result.json"), &to);
        let text = stderr(&out);
        match out.status.code() {
            Some(0) => {}
            Some(2) => assert!(
                text.contains("symlink owned by uid 65534") || text.contains("was replaced"),
                "{text}"
            ),
            code => panic!("exit {code:?}: {text}"),
        }
        assert_eq!(std::fs::read(&baseline).unwrap(), valid, "{text}");
        let meta = std::fs::metadata(&baseline).unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o644));
    }
    drop(_swapper);
    secret.assert_untouched();

    // A FIFO that hands every reader the result: refused at once, never read.
    let _ = std::fs::remove_file(shared.join("result.json"));
    as_nobody("mkfifo", &[shared.join("result.json").as_os_str()]);
    let _writer = Trap::start(&format!(
        "cd '{}' && while :; do cat .valid > result.json; done",
        shared.display()
    ));
    let out = output_within(
        Command::new(rtsoak_path())
            .args(["baseline", "promote", "--force", "--to"])
            .arg(&to)
            .arg(shared.join("result.json")),
        Duration::from_secs(20),
    );
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("a FIFO (named pipe), not a regular file"),
        "{text}"
    );
    assert_eq!(std::fs::read(&baseline).unwrap(), valid);
}

#[test]
fn a_fifo_a_device_or_a_huge_file_given_as_any_input_is_refused_at_once() {
    let s = setup();
    let dir = s.nobodys_dir("inputs");
    let fifo = dir.join("fifo.json");
    as_nobody("mkfifo", &[fifo.as_os_str()]);
    let huge = dir.join("huge.json");
    // Sparse: 64 GiB by its size, nothing on disk.
    as_nobody(
        "truncate",
        &["-s".as_ref(), "64G".as_ref(), huge.as_os_str()],
    );
    let result = s.path("result.json");
    std::fs::write(&result, a_result()).unwrap();
    let never = s.path("never");
    for (input, says) in [
        (fifo.clone(), "a FIFO (named pipe), not a regular file"),
        (
            PathBuf::from("/dev/zero"),
            "a character device, not a regular file",
        ),
        (huge.clone(), "larger than"),
    ] {
        let i = input.as_os_str();
        let cases: Vec<Vec<OsString>> = vec![
            vec!["report".into(), i.into()],
            vec!["diff".into(), i.into(), result.clone().into()],
            vec!["diff".into(), result.clone().into(), i.into()],
            vec![
                "baseline".into(),
                "promote".into(),
                i.into(),
                "--to".into(),
                never.clone().into(),
            ],
            vec![
                "run".into(),
                "-t".into(),
                "eventfd".into(),
                "--profile".into(),
                "ci".into(),
                "--baseline".into(),
                i.into(),
                "-o".into(),
                never.clone().into(),
            ],
            vec![
                "run".into(),
                "-t".into(),
                "eventfd".into(),
                "--profile".into(),
                i.into(),
                "-o".into(),
                never.clone().into(),
            ],
            vec!["probe".into(), "--profile".into(), i.into()],
            vec!["bench".into(), "compare".into(), i.into(), i.into()],
        ];
        for args in cases {
            // 2 GiB of address space: reading /dev/zero or the huge file whole could not fit.
            let out = output_within(
                Command::new("prlimit")
                    .arg("--as=2147483648")
                    .arg(rtsoak_path())
                    .args(&args),
                Duration::from_secs(20),
            );
            let text = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
            assert!(text.contains(says), "{args:?}: {text}");
            assert!(!text.contains("panicked"), "{args:?}: {text}");
        }
    }
    assert!(!never.exists(), "nothing ran, nothing was written");
}
