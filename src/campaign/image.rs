//! What a kernel image or initramfs is, read once through its checked descriptor: its SHA-256
//! (recorded when the campaign starts, and checked again before every load, so a file changed
//! in between is never booted as the same point) and, for a kernel, the release it says it is:
//! an x86 bzImage names it in its setup header (the `kernel_version` field at offset 0x20e,
//! valid since boot protocol 2.00), and an uncompressed image (arm64's `Image`) holds the
//! banner `Linux version <release> (...)` in its read-only data. A compressed arm64 image names
//! none; the plan's `release` and the first boot then decide.
//!
//! Owns: hashing and those two readings; the record is `rtsoak-analysis`'s
//! (`campaign::image`), re-exported here. Never opens a path (the caller hands it the checked
//! file) and never loads anything.

use std::io::{Read, Seek, SeekFrom};

use sha2::{Digest, Sha256};

pub(crate) use rtsoak_analysis::campaign::image::{ImageFacts, ReleaseSource};

/// Chunk read at a time.
const CHUNK_BYTES: usize = 1 << 20;
/// The banner's prefix in an uncompressed image.
const BANNER: &[u8] = b"Linux version ";
/// The x86 setup code's largest size (64 sectors of 512 bytes), where the header's version
/// string lies.
const HEAD_BYTES: usize = 0x10000;
/// Bytes kept from one chunk to the next so a banner across the boundary is still found.
const OVERLAP_BYTES: usize = 256;

/// SHA-256 of `bytes`, hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hash `file` from its start and read its release (`kernel`: look for one at all).
pub(crate) fn inspect(file: &mut std::fs::File, kernel: bool) -> std::io::Result<ImageFacts> {
    file.seek(SeekFrom::Start(0))?;
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut head: Vec<u8> = Vec::new();
    let mut tail: Vec<u8> = Vec::new();
    let mut banner = None;
    let mut size_bytes = 0u64;
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        hasher.update(&chunk[..n]);
        size_bytes += n as u64;
        if head.len() < HEAD_BYTES {
            head.extend_from_slice(&chunk[..n.min(HEAD_BYTES - head.len())]);
        }
        if kernel && banner.is_none() {
            tail.extend_from_slice(&chunk[..n]);
            banner = banner_release(&tail);
            let keep = tail.len().saturating_sub(OVERLAP_BYTES);
            tail.drain(..keep);
        }
    }
    let from_header = kernel.then(|| setup_header_release(&head)).flatten();
    let (release, release_source) = match (from_header, banner) {
        (Some(r), _) => (Some(r), Some(ReleaseSource::SetupHeader)),
        (None, Some(r)) => (Some(r), Some(ReleaseSource::Banner)),
        (None, None) => (None, None),
    };
    file.seek(SeekFrom::Start(0))?;
    Ok(ImageFacts {
        sha256: hex(&hasher.finalize()),
        size_bytes,
        release,
        release_source,
    })
}

/// The release in an x86 bzImage's setup header: magic `HdrS` at 0x202, the offset of a
/// NUL-terminated version string (less 0x200) at 0x20e; its first word is the release.
fn setup_header_release(head: &[u8]) -> Option<String> {
    if head.get(0x202..0x206)? != b"HdrS" {
        return None;
    }
    let pointer = u16::from_le_bytes(head.get(0x20e..0x210)?.try_into().ok()?) as usize;
    if pointer == 0 {
        return None;
    }
    let text = head.get(pointer + 0x200..)?;
    let end = text.iter().position(|b| *b == 0)?;
    release_word(&text[..end])
}

/// The release in the first `Linux version <release> (` banner of `bytes`.
fn banner_release(bytes: &[u8]) -> Option<String> {
    let at = bytes
        .windows(BANNER.len())
        .position(|window| window == BANNER)?;
    let rest = &bytes[at + BANNER.len()..];
    let end = rest.iter().position(|b| *b == b' ')?;
    (rest.get(end + 1) == Some(&b'(')).then(|| release_word(&rest[..end]))?
}

/// The first word of `bytes`, if it is a plausible release (printable, at most 64 bytes).
fn release_word(bytes: &[u8]) -> Option<String> {
    let word = bytes.split(|b| *b == b' ').next()?;
    (!word.is_empty() && word.len() <= 64 && word.iter().all(u8::is_ascii_graphic))
        .then(|| String::from_utf8_lossy(word).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn bzimage(version: &str) -> Vec<u8> {
        let mut image = vec![0u8; 0x3000];
        image[0x202..0x206].copy_from_slice(b"HdrS");
        let at = 0x1000usize;
        image[0x20e..0x210].copy_from_slice(&((at - 0x200) as u16).to_le_bytes());
        image[at..at + version.len()].copy_from_slice(version.as_bytes());
        image
    }

    fn file_of(bytes: &[u8]) -> std::fs::File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        file
    }

    #[test]
    fn a_bzimage_names_its_release_in_its_setup_header() {
        let image = bzimage(
            "6.12.117+deb13-rt-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_RT Debian",
        );
        let facts = inspect(&mut file_of(&image), true).unwrap();
        assert_eq!(facts.release.as_deref(), Some("6.12.117+deb13-rt-amd64"));
        assert_eq!(facts.release_source, Some(ReleaseSource::SetupHeader));
        assert_eq!(facts.size_bytes, 0x3000);
    }

    #[test]
    fn an_uncompressed_image_names_it_in_its_banner_even_across_a_chunk_boundary() {
        let mut image = vec![7u8; CHUNK_BYTES - 10];
        image.extend_from_slice(
            b"Linux version 5.15.148-tegra (buildbrain@nvidia) #1 SMP PREEMPT_RT\0",
        );
        image.extend(vec![0u8; 100]);
        let facts = inspect(&mut file_of(&image), true).unwrap();
        assert_eq!(facts.release.as_deref(), Some("5.15.148-tegra"));
        assert_eq!(facts.release_source, Some(ReleaseSource::Banner));
    }

    #[test]
    fn an_image_that_names_nothing_has_no_release_and_its_hash_is_sha256() {
        let facts = inspect(&mut file_of(b"abc"), true).unwrap();
        assert_eq!(facts.release, None);
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(
            facts.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_damaged_header_gives_no_release_rather_than_garbage() {
        let mut image = bzimage("6.1.0-50-rt-amd64 (x)");
        image[0x20e..0x210].copy_from_slice(&0xfff0u16.to_le_bytes());
        assert_eq!(setup_header_release(&image), None);
        assert_eq!(setup_header_release(b"short"), None);
        assert_eq!(banner_release(b"Linux version  (x"), None);
        assert_eq!(banner_release(b"Linux version 6.1 is great"), None);
    }
}
