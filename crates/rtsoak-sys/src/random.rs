//! Names nobody can guess ahead: temporary file names, trace instance tokens.
//!
//! Owns: reading the kernel's entropy pool. Never used for anything but names.

/// 16 random lowercase hex digits (64 bits from `getrandom`; the clock and pid where the pool
/// cannot be read, as a name only has to be unpredictable enough that `O_EXCL` or `bind` rarely
/// has to try again).
pub fn hex_token() -> String {
    let mut bytes = [0u8; 8];
    // SAFETY: the buffer is valid and writable for its whole length; getrandom writes at most
    // that many bytes and the result is checked.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (now ^ (u64::from(std::process::id()) << 40)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
