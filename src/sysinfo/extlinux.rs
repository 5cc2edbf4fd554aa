//! The bootloader's menu on an L4T board: `/boot/extlinux/extlinux.conf` (syslinux syntax,
//! which NVIDIA's UEFI launcher and U-Boot read), and the release each entry's kernel image
//! carries in its `Linux version` banner.
//!
//! Owns: reading and parsing them. Never judges which entry should boot, and never writes the
//! file: a fix is told, not applied.

use std::io::Read;

use super::SysRoot;
use rtsoak_record::{BootConfig, BootEntry};

/// Where L4T keeps its boot menu.
pub(crate) const EXTLINUX_CONF: &str = "/boot/extlinux/extlinux.conf";

/// How far into a kernel image its banner is looked for (an arm64 `Image` keeps it in its
/// read-only data, a few tens of MiB in).
const BANNER_SEARCH_BYTES: u64 = 96 << 20;
/// What the banner starts with (`init/version-timestamp.c`).
const BANNER: &[u8] = b"Linux version ";
/// The image is read this much at a time.
const BLOCK_BYTES: usize = 1 << 20;
/// A banner is shorter than this: the bytes kept from one block to the next.
const BANNER_TAIL_BYTES: usize = 512;

/// The boot menu under `root`, each entry's kernel release read from its image; `None` where
/// there is no `extlinux.conf`.
pub(crate) fn boot_config(root: &SysRoot) -> Option<BootConfig> {
    let text = root.read(EXTLINUX_CONF).ok()?;
    let mut config = parse(&text);
    for entry in &mut config.entries {
        if let Some(banner) = entry.kernel.as_deref().and_then(|k| banner(root, k)) {
            entry.kernel_preempt_rt = Some(banner.version.contains("PREEMPT_RT"));
            entry.kernel_release = Some(banner.release);
        }
    }
    Some(config)
}

/// The menu in `text`: `DEFAULT` and each `LABEL` with its `LINUX` and `APPEND` (keywords in any
/// case, `#` comments, indentation ignored; `KERNEL` is an older name of `LINUX`).
fn parse(text: &str) -> BootConfig {
    let mut config = BootConfig {
        path: EXTLINUX_CONF.to_string(),
        default_label: None,
        entries: Vec::new(),
    };
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        let (keyword, value) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(k, v)| (k, v.trim()));
        match keyword.to_ascii_uppercase().as_str() {
            "DEFAULT" => config.default_label = Some(value.to_string()),
            "LABEL" => config.entries.push(BootEntry {
                label: value.to_string(),
                kernel: None,
                append: None,
                kernel_release: None,
                kernel_preempt_rt: None,
            }),
            "LINUX" | "KERNEL" => set(&mut config, |e| e.kernel = Some(value.to_string())),
            "APPEND" => set(&mut config, |e| e.append = Some(value.to_string())),
            _ => {}
        }
    }
    config
}

/// Apply `change` to the entry being read (a keyword before any `LABEL` belongs to none).
fn set(config: &mut BootConfig, change: impl FnOnce(&mut BootEntry)) {
    if let Some(entry) = config.entries.last_mut() {
        change(entry);
    }
}

/// A kernel's `Linux version <release> (<builder>) (<compiler>) <version>` banner.
struct Banner {
    release: String,
    version: String,
}

/// The banner of the kernel image at `path` (relative paths are the config directory's), if
/// the image holds it uncompressed. Read a block at a time, each block overlapping the last by
/// a banner's length, so memory stays at one block whatever the image's size.
fn banner(root: &SysRoot, path: &str) -> Option<Banner> {
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/boot/extlinux/{path}")
    };
    let mut image = root.open(&path).ok()?.take(BANNER_SEARCH_BYTES);
    let mut block = vec![0u8; BLOCK_BYTES];
    let mut filled = 0;
    loop {
        let read = image.read(&mut block[filled..]).ok()?;
        filled += read;
        if let Some(text) = banner_text(&block[..filled]) {
            return parse_banner(&String::from_utf8_lossy(text));
        }
        if read == 0 {
            return None;
        }
        if filled == block.len() {
            // Keep the tail, where a banner may have started.
            block.copy_within(filled - BANNER_TAIL_BYTES.., 0);
            filled = BANNER_TAIL_BYTES;
        }
    }
}

/// The text of the first whole banner in `bytes` (up to its newline or NUL). One cut off at
/// the end of a block is found again in the next, which starts with this block's tail.
fn banner_text(bytes: &[u8]) -> Option<&[u8]> {
    let mut from = 0;
    while let Some(at) = bytes[from..]
        .windows(BANNER.len())
        .position(|window| window == BANNER)
    {
        let rest = &bytes[from + at + BANNER.len()..];
        let line = &rest[..rest.len().min(BANNER_TAIL_BYTES - BANNER.len())];
        let end = line.iter().position(|&b| b == b'\n' || b == 0);
        if let (Some(end), true) = (end, line.first().is_some_and(u8::is_ascii_digit)) {
            return Some(&line[..end]);
        }
        from += at + 1;
    }
    None
}

/// Release and version of a banner's text after `Linux version `: the release is its first
/// word, the version what follows the compiler's closing `) ` (it starts with `#`).
fn parse_banner(text: &str) -> Option<Banner> {
    let release = text.split_whitespace().next()?.to_string();
    let version = text
        .rfind(") #")
        .map(|at| text[at + 2..].trim().to_string())
        .unwrap_or_default();
    Some(Banner { release, version })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JETSON: &str = "TIMEOUT 30\nDEFAULT primary\n\nMENU TITLE L4T boot options\n\n\
        LABEL primary\n      MENU LABEL primary kernel\n      LINUX /boot/Image\n      \
        INITRD /boot/initrd\n      APPEND ${cbootargs} root=/dev/nvme0n1p1 rw rootwait\n\n\
        # LABEL backup\n#    LINUX /boot/Image.backup\n\n\
        label real-time\n      menu label real-time kernel\n      linux /boot/Image.rt\n      \
        append ${cbootargs} root=/dev/nvme0n1p1 rw rootwait isolcpus=4-5\n";

    #[test]
    fn entries_keep_their_kernel_and_command_line_and_comments_are_skipped() {
        let config = parse(JETSON);
        assert_eq!(config.default_label.as_deref(), Some("primary"));
        let labels: Vec<&str> = config.entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["primary", "real-time"]);
        let rt = &config.entries[1];
        assert_eq!(rt.kernel.as_deref(), Some("/boot/Image.rt"));
        assert_eq!(
            rt.append.as_deref(),
            Some("${cbootargs} root=/dev/nvme0n1p1 rw rootwait isolcpus=4-5")
        );
        assert_eq!(config.default_entry().unwrap().label, "primary");
    }

    #[test]
    fn a_banner_cut_by_a_block_boundary_is_found_and_a_format_string_is_not_a_banner() {
        let dir = tempfile::tempdir().unwrap();
        // The format string `%s version %s` is no banner; the banner starts 6 bytes before the
        // end of the first block.
        let mut image = b"\0Linux version %s (%s)\0".to_vec();
        image.resize(BLOCK_BYTES - 6, 7);
        image.extend_from_slice(b"Linux version 6.1.0-rt (me@host) (gcc) #1 SMP PREEMPT_RT\n\0");
        image.extend(vec![9u8; 5000]);
        std::fs::create_dir(dir.path().join("boot")).unwrap();
        std::fs::write(dir.path().join("boot/Image"), &image).unwrap();
        let root = SysRoot::at(dir.path());
        let found = banner(&root, "/boot/Image").unwrap();
        assert_eq!(found.release, "6.1.0-rt");
        assert_eq!(found.version, "#1 SMP PREEMPT_RT");
        std::fs::write(
            dir.path().join("boot/Image.gz"),
            b"\x1f\x8b Linux version %s",
        )
        .unwrap();
        assert!(
            banner(&root, "/boot/Image.gz").is_none(),
            "compressed: no banner to read"
        );
        assert!(banner(&root, "/boot/missing").is_none());
    }

    #[test]
    fn a_banner_gives_the_release_and_the_version_after_the_compiler() {
        let banner = parse_banner(
            "5.15.148-rt-tegra (buildbrain@mobile-u64-6354-d8000) (aarch64-buildroot-linux-gnu-gcc.br_real \
             (Buildroot 2022.08) 11.3.0, GNU ld (GNU Binutils) 2.38) #1 SMP PREEMPT_RT Fri Sep 13 \
             04:33:41 PDT 2024",
        )
        .unwrap();
        assert_eq!(banner.release, "5.15.148-rt-tegra");
        assert!(banner.version.starts_with("#1 SMP PREEMPT_RT"));
    }
}
