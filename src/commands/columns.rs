//! How wide the terminal that stdout goes to is, for the headline view.

use std::os::fd::AsFd;

/// `COLUMNS` where it is set to a width (as `ls` reads it: to ask for a width, or where the
/// terminal's size is not known, as on a serial console nobody ran `stty` on), else the width
/// of the terminal stdout is; `None` for a file or a pipe.
pub(super) fn stdout_columns() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|&columns| columns > 0)
        .or_else(|| rtsoak_sys::tty::columns(std::io::stdout().as_fd()))
}
