//! Inside a LAVA test shell (`lava-test-case` on `PATH`), a finished soak reports itself: every
//! line of the `lava` export becomes a call of `lava-test-case` with that line's arguments,
//! which is how a test shell records a result (LAVA reads the signals the helper prints, not
//! rtsoak's stdout). Outside one, nothing happens. Never fails the run: a helper that cannot be
//! started or exits non-zero is reported on stderr.

use std::path::{Path, PathBuf};
use std::process::Command;

use rtsoak_record::result::ResultDoc;
use rtsoak_report::lava;

/// The helper LAVA puts on a test shell's `PATH`.
const HELPER: &str = "lava-test-case";

/// Report `doc`'s test cases through `lava-test-case`, if it is on `PATH`.
pub(super) fn report(doc: &ResultDoc) {
    let Some(helper) = find_on_path(HELPER, std::env::var_os("PATH").as_deref()) else {
        return;
    };
    for args in lava::arguments(&lava::render(doc)) {
        match Command::new(&helper).args(&args).status() {
            Ok(status) if status.success() => {}
            Ok(status) => eprintln!("rtsoak: {HELPER} {} exited with {status}", args.join(" ")),
            Err(error) => {
                eprintln!("rtsoak: could not run {}: {error}", helper.display());
                return;
            }
        }
    }
}

/// The first executable file called `name` in the directories of `path`.
fn find_on_path(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate).unwrap_or(false))
        .filter(|found| {
            found
                .metadata()
                .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
        })
}

fn is_executable(path: &Path) -> Option<bool> {
    use std::os::unix::fs::PermissionsExt;
    let meta = path.metadata().ok()?;
    Some(meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
