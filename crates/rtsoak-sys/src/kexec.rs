//! Loading the next kernel for kexec with `kexec_file_load(2)`: the kernel reads the image and
//! the initramfs from file descriptors, parses them itself and checks their signatures where it
//! is configured to (`CONFIG_KEXEC_SIG`, and always under lockdown), so nothing of the image
//! passes through user memory. `kexec_load(2)`, the older call that takes segments prepared by
//! user space, is never used: lockdown forbids it, and it checks no signature.
//!
//! Loading does not reboot. The reboot is systemd's (`systemctl kexec`): it stops every service
//! cleanly, unmounts the file systems, and only then calls `reboot(LINUX_REBOOT_CMD_KEXEC)`.
//!
//! Owns: the two calls (load, unload) and what their errors mean. Never reboots.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;

/// Why a kernel could not be loaded, in the kernel's words (errno) and rtsoak's: which of the
/// known causes it is, so the caller can say what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KexecError {
    /// `ENOSYS`: the running kernel has no `kexec_file_load` (built without
    /// `CONFIG_KEXEC_FILE`), or this architecture does not offer it.
    #[error("kexec_file_load is not in this kernel (ENOSYS: built without CONFIG_KEXEC_FILE)")]
    NotSupported,
    /// `EPERM`: no `CAP_SYS_BOOT`, `kernel.kexec_load_disabled` is 1, or lockdown refuses.
    #[error("kexec_file_load was refused (EPERM)")]
    Refused,
    /// `EKEYREJECTED`, `EKEYREVOKED`, `EBADMSG`, `ENOKEY`: the image's signature did not verify
    /// and the kernel requires one.
    #[error("the kernel image's signature was rejected ({0})")]
    Signature(Errno),
    /// `ENOEXEC`: the running kernel does not take this image format (arm64 before Linux 6.10
    /// loads only an uncompressed `Image`).
    #[error("the running kernel does not load this image format (ENOEXEC)")]
    Format,
    /// `EBUSY`: another load or a kexec is in progress.
    #[error("a kexec load is already in progress (EBUSY)")]
    Busy,
    /// Anything else.
    #[error("kexec_file_load failed: {0}")]
    Other(Errno),
}

impl KexecError {
    fn from_errno(errno: Errno) -> Self {
        match errno {
            Errno::ENOSYS => KexecError::NotSupported,
            Errno::EPERM => KexecError::Refused,
            Errno::EKEYREJECTED | Errno::EKEYREVOKED | Errno::EBADMSG | Errno::ENOKEY => {
                KexecError::Signature(errno)
            }
            Errno::ENOEXEC => KexecError::Format,
            Errno::EBUSY => KexecError::Busy,
            errno => KexecError::Other(errno),
        }
    }
}

/// Load `kernel` (and `initrd`, or none: `KEXEC_FILE_NO_INITRAMFS`) with `cmdline` as the image
/// the next `reboot(LINUX_REBOOT_CMD_KEXEC)` boots, replacing any image loaded before.
pub fn load(
    kernel: BorrowedFd<'_>,
    initrd: Option<BorrowedFd<'_>>,
    cmdline: &CStr,
) -> Result<(), KexecError> {
    let (initrd_fd, flags) = match initrd {
        Some(fd) => (fd.as_raw_fd(), 0),
        None => (-1, libc::KEXEC_FILE_NO_INITRAMFS),
    };
    let bytes = cmdline.to_bytes_with_nul();
    // SAFETY: both fds are open for the duration of the call (borrowed); the command line
    // pointer and its length (the terminating NUL included, as the kernel requires) come from
    // one live CStr; no memory is written by the kernel.
    let status = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            kernel.as_raw_fd(),
            initrd_fd,
            bytes.len() as libc::c_ulong,
            bytes.as_ptr(),
            flags as libc::c_ulong,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(KexecError::from_errno(Errno::last()))
    }
}

/// Unload whatever image is loaded (`KEXEC_FILE_UNLOAD`), so a reboot goes through the
/// firmware again.
pub fn unload() -> Result<(), KexecError> {
    let empty = c"";
    // SAFETY: with KEXEC_FILE_UNLOAD the kernel ignores the fds and the command line; the
    // pointer is to a live, NUL-terminated string of the length given.
    let status = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            -1,
            -1,
            0 as libc::c_ulong,
            empty.as_ptr(),
            libc::KEXEC_FILE_UNLOAD as libc::c_ulong,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(KexecError::from_errno(Errno::last()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_errno_the_call_documents_is_told_apart() {
        assert_eq!(
            KexecError::from_errno(Errno::ENOSYS),
            KexecError::NotSupported
        );
        assert_eq!(KexecError::from_errno(Errno::EPERM), KexecError::Refused);
        assert_eq!(
            KexecError::from_errno(Errno::EKEYREJECTED),
            KexecError::Signature(Errno::EKEYREJECTED)
        );
        assert_eq!(KexecError::from_errno(Errno::ENOEXEC), KexecError::Format);
        assert_eq!(
            KexecError::from_errno(Errno::EINVAL),
            KexecError::Other(Errno::EINVAL)
        );
    }

    #[test]
    fn loading_a_file_that_is_no_kernel_is_refused_and_never_loads_anything() {
        // Not root: EPERM. Root: the kernel parses the file and refuses it (ENOEXEC), or has no
        // kexec_file_load at all (ENOSYS). Never Ok: /dev/null holds no kernel.
        let null = std::fs::File::open("/dev/null").unwrap();
        use std::os::fd::AsFd;
        let result = load(null.as_fd(), None, c"console=ttyS0");
        assert!(result.is_err(), "{result:?}");
    }
}
