//! Inside a LAVA test shell, a finished soak reports itself: each line of the `lava` export
//! is put on the console as that export's script would put it there: a test case as the signal
//! LAVA's own `lava-test-case` helper prints for it (`<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=futex.lost
//! RESULT=pass UNITS=messages MEASUREMENT=0>`), which is what the dispatcher reads from the
//! console to record a result, and the sentences between them (the caveats, each reason of the
//! verdict just before its case) as log lines. rtsoak prints them itself and executes nothing:
//! no helper is looked up on `PATH`, so no program another user placed there, or in the working
//! directory, ever runs as root.
//!
//! A test shell is told by `LAVA_RESULT_DIR`, which LAVA's `lava-test-shell` exports for the
//! test run (its value, a path, is never used). Where the job asked for `lava-signal: kmsg`
//! (`KMSG` set, as the helper reads it), the signals go to `/dev/kmsg` as `<0>SIGNAL`, as the
//! helper sends them, and the log lines stay on stdout, as the script's `printf` leaves them;
//! otherwise everything is on stdout. The helper's other effect, files under
//! `$LAVA_RESULT_DIR/results/`, is left out: LAVA reads results from the signals alone, and root
//! writes to no path taken from the environment. Outside a test shell nothing happens; a
//! failure is said on stderr and never fails the run.

use std::io::Write;

use rtsoak_record::result::ResultDoc;
use rtsoak_report::lava::{self, Line};

/// Set by LAVA's `lava-test-shell` for the test run it starts.
const IN_TEST_SHELL: &str = "LAVA_RESULT_DIR";
/// Set (non-empty) when the job sends signals through the kernel log, as the helper reads it.
const THROUGH_KMSG: &str = "KMSG";
/// The kernel log, where `lava-signal: kmsg` signals go.
const KMSG: &str = "/dev/kmsg";

/// Signal `doc`'s test cases, if this runs inside a LAVA test shell.
pub(super) fn report(doc: &ResultDoc) {
    if std::env::var_os(IN_TEST_SHELL).is_none_or(|dir| dir.is_empty()) {
        return;
    }
    let lines = lava::lines(doc);
    let mut through_kmsg = std::env::var_os(THROUGH_KMSG).is_some_and(|value| !value.is_empty());
    let mut stdout = std::io::stdout().lock();
    for line in &lines {
        if let (Line::Case(case), true) = (line, through_kmsg) {
            match to_kmsg(&case.signal()) {
                Ok(()) => continue,
                Err(error) => {
                    eprintln!(
                        "rtsoak: KMSG is set but {KMSG} cannot take LAVA's signals ({error}); \
                         they go to stdout instead"
                    );
                    through_kmsg = false;
                }
            }
        }
        let _ = writeln!(stdout, "{}", line.console());
    }
}

/// A signal as one kernel log record, `<0>` in front, written as the helper writes it: one
/// open of /dev/kmsg per signal, since the kernel rate-limits writes per open file (10 in 5 s
/// under the default `kernel.printk_devkmsg=ratelimit`) and would drop the rest of a run's.
fn to_kmsg(signal: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut kmsg = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(KMSG)?;
    if !kmsg.metadata()?.file_type().is_char_device() {
        return Err(std::io::Error::other("not the kernel's character device"));
    }
    // One write, one record.
    kmsg.write_all(format!("<0>{signal}\n").as_bytes())
}
