//! File I/O: write 64 KiB and `fsync`, again and again, to a scratch file in the result
//! directory (never elsewhere), starting over every 16 MiB. The file has no name (`O_TMPFILE`,
//! or unlinked at once where that is missing), so nobody can plant a link for it and a killed
//! worker leaves nothing behind.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use rtsoak_sys::region::Region;

const CHUNK: usize = 64 * 1024;
const WRAP_BYTES: u64 = 16 << 20;

/// One writer; returns bytes written and synced.
pub(super) fn run(region: &Region, scratch: &Path, _index: usize) -> u64 {
    let Ok(mut file) =
        rtsoak_sys::safe_dir::SafeDir::open(scratch).and_then(|dir| Ok(dir.tmpfile()?))
    else {
        return 0;
    };
    let chunk = vec![0x3cu8; CHUNK];
    let mut bytes = 0u64;
    let mut offset = 0u64;
    while !region.stopping() {
        if file.write_all(&chunk).is_err() || file.sync_data().is_err() {
            break;
        }
        bytes += CHUNK as u64;
        offset += CHUNK as u64;
        if offset >= WRAP_BYTES {
            offset = 0;
            let _ = file.set_len(0);
            let _ = file.seek(SeekFrom::Start(0));
        }
    }
    bytes
}
