//! Everything rtsoak starts dies with the coordinator, however it dies: the external noise
//! command and every process it starts (in a session of its own, in the background), with the
//! coordinator SIGKILLed or given two SIGTERMs, run by root or by an ordinary user, and where
//! the kernel gives no PID namespace (refused here by a seccomp filter, as a sandbox would);
//! there, what a SIGKILLed init could not end is ended by the next run.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::common::rtsoak_path;
use super::executed::external_profile;
use super::{NOBODY, Setup, assert_measured, descendants, root_run, setup, stderr, wait_gone};

/// The live processes whose command line holds `text`.
fn processes_with(text: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'));
            !zombie
                && String::from_utf8_lossy(&cmdline)
                    .replace('\0', " ")
                    .contains(text)
        })
        .collect()
}

/// The external command's sleeps of `seconds` (their command line exactly `sleep SECONDS`).
fn sleeps(seconds: &str) -> Vec<u32> {
    processes_with(&format!("sleep {seconds}"))
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c == format!("sleep\0{seconds}\0").as_bytes())
        })
        .collect()
}

/// A number no other test's `sleep` uses.
fn unique_seconds(case: u32) -> String {
    format!("{}{case}", 700_000 + std::process::id() % 100_000)
}

/// The `ci` profile whose external command forks three sleeps of `seconds`: one in a session of
/// its own, one in the background, one the shell's own last command.
fn forking_profile(s: &Setup, seconds: &str) -> std::path::PathBuf {
    let script = format!("setsid sleep {seconds} & sleep {seconds} & sleep {seconds}");
    let profile = external_profile(
        s,
        &format!("forks-{seconds}.toml"),
        &format!("[\"sh\", \"-c\", \"{script}\"]"),
    );
    std::fs::set_permissions(
        &profile,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    profile
}

/// Start a 60-second run with `profile` into `out` (by `command`, rtsoak or a wrapper), and
/// wait until the external command's three sleeps run.
fn start_run(mut command: Command, profile: &Path, out: &Path, seconds: &str) -> Child {
    let child = command
        .args(["run", "-q", "-t", "eventfd", "--duration", "60s"])
        .args(["--no-explain", "--wait-for-cpus", "30m", "--profile"])
        .arg(profile)
        .arg("-o")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while sleeps(seconds).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the external command's sleeps never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// Everything the run started (the coordinator's tree, the external command's shell and sleeps
/// however they left it) is gone once the coordinator is.
fn assert_nothing_survives(family: &[u32], seconds: &str) {
    wait_gone(family);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with(&format!("sleep {seconds}")).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the external command's sleeps outlived the coordinator: {:?}",
            processes_with(&format!("sleep {seconds}"))
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(pid as i32), signal).unwrap();
}

#[test]
fn an_external_command_that_forks_dies_whole_with_a_killed_coordinator() {
    let s = setup();
    for (case, signals) in [
        (1, vec![Signal::SIGKILL]),
        (2, vec![Signal::SIGTERM, Signal::SIGTERM]),
    ] {
        let seconds = unique_seconds(case);
        let profile = forking_profile(&s, &seconds);
        let mut coordinator = start_run(
            Command::new(rtsoak_path()),
            &profile,
            &s.path(&format!("out-{case}")),
            &seconds,
        );
        let mut family = descendants(coordinator.id());
        family.extend(processes_with(&format!("sleep {seconds}")));
        for each in signals {
            signal(coordinator.id(), each);
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = coordinator.wait();
        assert_nothing_survives(&family, &seconds);
    }
}

#[test]
fn an_ordinary_users_external_command_dies_whole_with_its_coordinator() {
    let s = setup();
    let seconds = unique_seconds(3);
    let profile = forking_profile(&s, &seconds);
    let out = s.nobodys_dir("out");
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(rtsoak_path());
    let mut coordinator = start_run(command, &profile, &out.join("run"), &seconds);
    let sleeps = processes_with(&format!("sleep {seconds}"));
    let owner = std::fs::metadata(format!("/proc/{}", sleeps[0])).unwrap();
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&owner),
        NOBODY,
        "runs as the user"
    );
    let mut family = descendants(coordinator.id());
    family.extend(sleeps);
    signal(coordinator.id(), Signal::SIGKILL);
    let _ = coordinator.wait();
    assert_nothing_survives(&family, &seconds);
}

/// `command` under a seccomp filter that refuses every new PID or user namespace (EPERM), as a
/// sandbox forbidding namespaces does, and `clone3` (ENOSYS, so that glibc uses `clone`, whose
/// flags a filter can read).
fn without_namespaces(command: &mut Command) {
    // SAFETY: the hook runs between fork and exec and makes two system calls (prctl, seccomp)
    // on a filter program built before the fork.
    unsafe {
        command.pre_exec(|| {
            let filter = namespace_filter();
            let program = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0,
                    &raw const program,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The filter of [`without_namespaces`]: a fixed array, so the hook allocates nothing.
fn namespace_filter() -> [libc::sock_filter; 10] {
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xc000_00b7;
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let (ld, jeq, jset, ret) = (
        libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
        libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
        libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K,
        libc::BPF_RET | libc::BPF_K,
    );
    let namespaces = (libc::CLONE_NEWPID | libc::CLONE_NEWUSER) as u32;
    [
        // seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low half on these arches).
        stmt(ld, 4),
        jump(jeq, ARCH, 0, 7),
        stmt(ld, 0),
        jump(jeq, libc::SYS_clone3 as u32, 0, 1),
        stmt(ret, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        jump(jeq, libc::SYS_clone as u32, 0, 3),
        stmt(ld, 16),
        jump(jset, namespaces, 0, 1),
        stmt(ret, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
    ]
}

#[test]
fn without_a_pid_namespace_the_noise_init_ends_the_tree_and_the_next_run_what_it_could_not() {
    let s = setup();
    // The coordinator killed: its noise init, told by its death signal, kills the tree.
    let seconds = unique_seconds(4);
    let profile = forking_profile(&s, &seconds);
    let mut command = Command::new(rtsoak_path());
    without_namespaces(&mut command);
    let coordinator = start_run(command, &profile, &s.path("out-1"), &seconds);
    let mut family = descendants(coordinator.id());
    family.extend(processes_with(&format!("sleep {seconds}")));
    signal(coordinator.id(), Signal::SIGKILL);
    let output = coordinator.wait_with_output().unwrap();
    let text = stderr(&output);
    assert!(
        text.contains("refused the external noise command a PID namespace"),
        "the fallback was taken and said: {text}"
    );
    assert_nothing_survives(&family, &seconds);

    // The init SIGKILLed as well: the sleeps outlive both, until the next run ends them.
    let seconds = unique_seconds(5);
    let profile = forking_profile(&s, &seconds);
    let mut command = Command::new(rtsoak_path());
    without_namespaces(&mut command);
    let mut coordinator = start_run(command, &profile, &s.path("out-2"), &seconds);
    let init = descendants(coordinator.id())
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("external-init"))
        })
        .expect("the noise init runs");
    signal(init, Signal::SIGKILL);
    signal(coordinator.id(), Signal::SIGKILL);
    let _ = coordinator.wait();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        sleeps(&seconds).len(),
        3,
        "the scenario leaves the sleeps behind"
    );
    let left = processes_with(&format!("sleep {seconds}"));
    let next = root_run(&[
        "--no-noise".as_ref(),
        "-o".as_ref(),
        s.path("next").as_os_str(),
    ]);
    assert_measured(&next);
    let text = stderr(&next);
    assert!(
        text.contains("process(es) of an external noise command whose rtsoak was killed"),
        "{text}"
    );
    assert_nothing_survives(&left, &seconds);
}
