//! The width of the terminal a file descriptor writes to, for output that fits it.
//!
//! Owns: asking the kernel (`TIOCGWINSZ`). Never decides what a width means for the output.

use std::os::fd::{AsRawFd, BorrowedFd};

/// The columns of the terminal `fd` is, or `None` where it is no terminal (a file, a pipe) or
/// the terminal does not say (a serial line whose size nobody set reads as 0).
pub fn columns(fd: BorrowedFd<'_>) -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: `size` is a valid, writable `winsize` for the whole call, the one TIOCGWINSZ
    // fills; `fd` is open for the borrow's lifetime.
    let status = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) };
    (status == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_file_is_no_terminal() {
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        assert_eq!(columns(file.as_fd()), None);
    }
}
