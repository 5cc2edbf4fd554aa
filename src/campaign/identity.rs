//! Which kernel is running, as a campaign checks it after every boot: its release
//! (`/proc/sys/kernel/osrelease`), its build id (the GNU build-id note the kernel exports in
//! `/sys/kernel/notes`, the same bytes for every boot of one build), its command line
//! (`/proc/cmdline`) and the boot's id (`/proc/sys/kernel/random/boot_id`, new at every boot).
//!
//! The command line also says whether this is a boot rtsoak loaded: every point's command line
//! carries a token (`rtsoak.campaign=<campaign>.<boot>.<attempt>`), which a boot through the
//! firmware (a panic with `panic=N`, a watchdog, a person) never has.
//!
//! Owns: reading those facts (through [`SysRoot`]) and comparing command lines by their words.
//! Never judges a boot: that is `advance`.

use serde::{Deserialize, Serialize};

use super::plan::TOKEN_KEY;
use crate::sysinfo::SysRoot;

/// The facts of the running boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootFacts {
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// `uname -r`.
    pub release: String,
    /// The GNU build id of the running kernel, hex; absent where the kernel exports none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// `/proc/cmdline`.
    pub cmdline: String,
}

impl BootFacts {
    /// Read the running boot's facts under `root`; `None` for a fact `/proc` does not have.
    pub fn read(root: &SysRoot) -> BootFacts {
        let text = |path: &str| root.read_trimmed(path).unwrap_or_default();
        BootFacts {
            boot_id: text("/proc/sys/kernel/random/boot_id"),
            release: text("/proc/sys/kernel/osrelease"),
            build_id: root
                .read_bytes("/sys/kernel/notes")
                .ok()
                .and_then(|notes| build_id(&notes)),
            cmdline: text("/proc/cmdline"),
        }
    }

    /// The token of the boot rtsoak loaded this one as, if it is one.
    pub fn token(&self) -> Option<&str> {
        self.cmdline
            .split_whitespace()
            .find_map(|word| word.strip_prefix(TOKEN_KEY))
    }
}

/// `NT_GNU_BUILD_ID`.
const NT_GNU_BUILD_ID: u32 = 3;

/// The GNU build id in a sequence of ELF notes (`/sys/kernel/notes`: each a header of three
/// native-endian words, name size, descriptor size and type, then the name and the descriptor,
/// each padded to 4 bytes), as lowercase hex.
fn build_id(notes: &[u8]) -> Option<String> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(notes.get(at..at + 4)?.try_into().ok()?))
    };
    let padded = |n: u32| (n as usize).div_ceil(4) * 4;
    let mut at = 0;
    while at + 12 <= notes.len() {
        let (name_size, desc_size, kind) = (word(at)?, word(at + 4)?, word(at + 8)?);
        let name_at = at + 12;
        let desc_at = name_at.checked_add(padded(name_size))?;
        let end = desc_at.checked_add(padded(desc_size))?;
        let name = notes.get(name_at..name_at + name_size as usize)?;
        if kind == NT_GNU_BUILD_ID && name == b"GNU\0" {
            let desc = notes.get(desc_at..desc_at + desc_size as usize)?;
            return Some(desc.iter().map(|b| format!("{b:02x}")).collect());
        }
        at = end;
    }
    None
}

/// The words of a command line that say what to boot, for comparing two: every word but the
/// boot loader's bookkeeping (`BOOT_IMAGE=`, `initrd=`) and rtsoak's token.
pub fn meaningful_words(cmdline: &str) -> Vec<&str> {
    cmdline
        .split_whitespace()
        .filter(|word| {
            !word.starts_with("BOOT_IMAGE=")
                && !word.starts_with("initrd=")
                && !word.starts_with(TOKEN_KEY)
        })
        .collect()
}

/// The words `expected` has that `found` lacks (each counted as often as it appears), in order.
pub fn missing_words<'a>(expected: &'a str, found: &str) -> Vec<&'a str> {
    let mut left = meaningful_words(found);
    let mut missing = Vec::new();
    for word in meaningful_words(expected) {
        match left.iter().position(|w| *w == word) {
            Some(at) => {
                left.remove(at);
            }
            None => missing.push(word),
        }
    }
    missing
}

/// The parameter names (`nohz_full` of `nohz_full=2,3`, or a flag's whole word) on which two
/// command lines differ: a campaign that varies them compares the rest of the command line
/// only.
pub fn varied_parameters(a: &str, b: &str) -> Vec<String> {
    let mut names: Vec<String> = missing_words(a, b)
        .into_iter()
        .chain(missing_words(b, a))
        .map(|word| parameter_name(word).to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `nohz_full` of `nohz_full=2,3`; the word itself for a flag.
pub fn parameter_name(word: &str) -> &str {
    word.split('=').next().unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend((name.len() as u32).to_ne_bytes());
        bytes.extend((desc.len() as u32).to_ne_bytes());
        bytes.extend(kind.to_ne_bytes());
        bytes.extend(name);
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
        bytes.extend(desc);
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
        bytes
    }

    #[test]
    fn the_gnu_build_id_is_found_after_other_notes() {
        // The kernel's notes hold Xen and Linux notes beside the build id.
        let mut notes = note(b"Xen\0", 6, b"abcde");
        notes.extend(note(b"Linux\0", 3, &[1, 2, 3]));
        notes.extend(note(b"GNU\0", NT_GNU_BUILD_ID, &[0xde, 0xad, 0x01, 0xf0]));
        assert_eq!(build_id(&notes).as_deref(), Some("dead01f0"));
    }

    #[test]
    fn truncated_or_absent_notes_give_no_build_id() {
        let notes = note(b"GNU\0", NT_GNU_BUILD_ID, &[1; 20]);
        assert_eq!(build_id(&notes[..notes.len() - 8]), None);
        assert_eq!(build_id(&note(b"Xen\0", 3, &[1])), None);
        assert_eq!(build_id(&[]), None);
        assert_eq!(build_id(&[0xff; 11]), None);
    }

    #[test]
    fn the_live_kernel_exports_a_build_id_where_it_has_notes() {
        let facts = BootFacts::read(&SysRoot::system());
        assert!(!facts.release.is_empty());
        assert_eq!(facts.boot_id.len(), 36, "{}", facts.boot_id);
        if let Some(id) = facts.build_id {
            assert!(
                id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
                "{id}"
            );
        }
    }

    #[test]
    fn bookkeeping_and_the_token_are_not_what_a_boot_means() {
        let found = "BOOT_IMAGE=/boot/vmlinuz root=/dev/vda ro quiet rtsoak.campaign=ab.1.0";
        assert_eq!(
            missing_words("root=/dev/vda quiet ro", found),
            Vec::<&str>::new()
        );
        assert_eq!(
            missing_words("root=/dev/vda nohz_full=2", found),
            ["nohz_full=2"]
        );
    }

    #[test]
    fn the_varied_parameters_are_named_once_by_their_key() {
        let a = "root=/dev/vda isolcpus=2 quiet";
        let b = "root=/dev/vda isolcpus=2,3 nohz_full=2,3 quiet mitigations=off";
        assert_eq!(
            varied_parameters(a, b),
            ["isolcpus", "mitigations", "nohz_full"]
        );
        assert!(varied_parameters(a, a).is_empty());
    }

    #[test]
    fn the_token_is_read_from_the_command_line() {
        let mut facts = BootFacts {
            boot_id: "x".into(),
            release: "6.12".into(),
            build_id: None,
            cmdline: "ro rtsoak.campaign=0123abcd.2.0 quiet".into(),
        };
        assert_eq!(facts.token(), Some("0123abcd.2.0"));
        facts.cmdline = "ro quiet".into();
        assert_eq!(facts.token(), None);
    }
}
