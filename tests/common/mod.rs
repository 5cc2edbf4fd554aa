//! Shared helpers for the integration tests: the real binary, result loading, root detection.

#![allow(dead_code)]

pub(crate) mod process;

use std::path::Path;

use assert_cmd::Command;
use rtsoak_record::result::ResultDoc;

/// The rtsoak binary under test.
pub(crate) fn rtsoak() -> Command {
    Command::cargo_bin("rtsoak").expect("the rtsoak binary is built for integration tests")
}

/// Path of the binary, for tests that start it themselves.
pub(crate) fn rtsoak_path() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("rtsoak")
}

/// Load the result document of a result directory.
pub(crate) fn load(dir: &Path) -> ResultDoc {
    rtsoak::store::load(dir).expect("the result directory holds a valid result")
}

/// Run rtsoak with `args` and `-o` a new temporary directory, require it to pass or to be
/// starved ([`assert_passed_or_starved`]), and load the result it saved. The directory lives as
/// long as the returned guard.
pub(crate) fn saved_run(args: &[&str]) -> (tempfile::TempDir, ResultDoc) {
    let dir = tempfile::tempdir().unwrap();
    let output = rtsoak()
        .args(args)
        .arg("-o")
        .arg(dir.path())
        .output()
        .unwrap();
    let doc = load(dir.path());
    assert_passed_or_starved(&output, &doc);
    (dir, doc)
}

/// The run passed (exit 0), or its only shortcoming was periods the RT publisher missed (exit
/// 7, INCONCLUSIVE for missed periods alone): what a loaded 2-CPU machine can do to a real-time
/// publisher is not rtsoak's to control, and a test of anything else must not fail on it.
pub(crate) fn assert_passed_or_starved(output: &std::process::Output, doc: &ResultDoc) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_code_passed_or_starved(output.status.code(), doc, &stderr);
}

/// [`assert_passed_or_starved`] for a run whose exit code and stderr were already taken apart.
pub(crate) fn assert_code_passed_or_starved(code: Option<i32>, doc: &ResultDoc, stderr: &str) {
    use rtsoak_record::result::verdict::{InconclusiveKind, Status};
    let verdict = doc.verdict.as_ref().expect("the result has a verdict");
    let starved = verdict.status == Status::Inconclusive
        && verdict
            .inconclusive
            .iter()
            .all(|i| i.kind == InconclusiveKind::MissedPeriods);
    match code {
        Some(0) => assert_eq!(verdict.status, Status::Pass, "{stderr}"),
        Some(7) if starved => {}
        code => panic!(
            "exit {code:?}, verdict {:?}: {:#?}\n{stderr}",
            verdict.status, verdict.inconclusive
        ),
    }
}

/// True when running as root (CI does).
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Print why a check is skipped, so a skip is never silent; in CI (`RTSOAK_CI` set, as
/// `.ci/run` does) a skipped check is a failure. The one helper the unit tests use too.
// Not every test file that includes this module skips something.
#[allow(unused_imports)]
pub(crate) use rtsoak_testing::skip;

/// True if a process with this pid exists.
pub(crate) fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[allow(unused_imports)]
pub(crate) use process::group_members;

/// The soaks share the machine's two CPUs at real-time priority: a test holding this runs alone
/// among the tests of its binary, so that each sees the machine as a user would.
pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Run rtsoak with `args` as an ordinary user would (uid/gid 65534, no capabilities, the usual
/// 8 MiB `RLIMIT_MEMLOCK`) in a fresh home directory of theirs, where a relative `-o` lands.
/// Needs root (for `setpriv`); returns the output and the home directory.
pub(crate) fn as_ordinary_user(args: &str) -> (std::process::Output, tempfile::TempDir) {
    as_ordinary_user_locking(8192, args)
}

/// [`as_ordinary_user`] with an `RLIMIT_MEMLOCK` of `memlock_kib`.
pub(crate) fn as_ordinary_user_locking(
    memlock_kib: u64,
    args: &str,
) -> (std::process::Output, tempfile::TempDir) {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let script = format!(
        "ulimit -l {memlock_kib} && exec {} {args}",
        binary_for_others(home.path()).display()
    );
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

/// The rtsoak binary as another user can run it: where it was built when every directory on
/// the way lets others through (a checkout in a home directory, CI's), else a copy, with its
/// worker binary beside it, in `dir/bin` (a checkout in a private temporary directory, which
/// `mktemp -d` makes 0700).
fn binary_for_others(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let built = rtsoak_path();
    let others_pass = built
        .ancestors()
        .skip(1)
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0));
    if others_pass {
        return built;
    }
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    for name in ["rtsoak", "rtsoak-worker"] {
        std::fs::copy(built.with_file_name(name), bin.join(name)).unwrap();
    }
    bin.join("rtsoak")
}

/// The run was INCONCLUSIVE (exit 7) and nothing else: no failure, no breach, every reason of
/// one of `allowed` kinds (missed periods are always allowed: see [`assert_passed_or_starved`])
/// and each of `required` among them.
pub(crate) fn assert_inconclusive_for(
    output: &std::process::Output,
    doc: &ResultDoc,
    allowed: &[rtsoak_record::result::verdict::InconclusiveKind],
    required: &[rtsoak_record::result::verdict::InconclusiveKind],
) {
    use rtsoak_record::result::verdict::{InconclusiveKind, Status};
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(7), "{stderr}");
    let verdict = doc.verdict.as_ref().expect("the result has a verdict");
    assert_eq!(verdict.status, Status::Inconclusive, "{verdict:#?}");
    assert!(
        verdict.failures.is_empty() && verdict.breaches.is_empty(),
        "{verdict:#?}"
    );
    let kinds: Vec<InconclusiveKind> = verdict.inconclusive.iter().map(|i| i.kind).collect();
    for kind in &kinds {
        assert!(
            allowed.contains(kind) || *kind == InconclusiveKind::MissedPeriods,
            "unexpected {kind:?}: {:#?}",
            verdict.inconclusive
        );
    }
    for kind in required {
        assert!(
            kinds.contains(kind),
            "no {kind:?}: {:#?}",
            verdict.inconclusive
        );
    }
    assert!(
        stderr.contains("rtsoak verdict: INCONCLUSIVE"),
        "the verdict line says it: {stderr}"
    );
}

/// The `ci` profile's TOML with `keys` added to its `[verdict]` section (a profile may hold a
/// table once, so a test cannot append a section of its own).
pub(crate) fn ci_profile_with_verdict(keys: &str) -> String {
    let ci = include_str!("../../profiles/ci.toml");
    assert!(
        ci.contains("\n[verdict]\n"),
        "the ci profile has a [verdict] section"
    );
    ci.replacen("\n[verdict]\n", &format!("\n[verdict]\n{keys}\n"), 1)
}

/// Every word of every backquoted name on a Markdown page (`a.b[].c` gives `a`, `b` and `c`):
/// the field names a docs page documents.
pub(crate) fn documented_words(page: &str) -> std::collections::BTreeSet<String> {
    page.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|quoted| quoted.split(|c: char| ".[]{}, /=\"".contains(c)))
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}
