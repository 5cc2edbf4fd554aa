//! Which kernel is running, as a campaign checks it after every boot: its release
//! (`/proc/sys/kernel/osrelease`), its build id (the GNU build-id note the kernel exports in
//! `/sys/kernel/notes`, the same bytes for every boot of one build), its command line
//! (`/proc/cmdline`) and the boot's id (`/proc/sys/kernel/random/boot_id`, new at every boot).
//!
//! The command line also says whether this is a boot rtsoak loaded: every point's command line
//! carries a token (`rtsoak.campaign=<campaign>.<boot>.<attempt>`), which a boot through the
//! firmware (a panic with `panic=N`, a watchdog, a person) never has.
//!
//! Owns: reading those facts (through [`SysRoot`]); their record and the comparison of
//! command lines are `rtsoak-analysis`'s (`campaign::identity`), re-exported here. Never judges
//! a boot: that is `advance`.

pub(crate) use rtsoak_analysis::campaign::identity::{
    BootFacts, meaningful_words, missing_words, varied_parameters,
};

use crate::sysinfo::SysRoot;

/// Read the running boot's facts under `root`; an empty fact where `/proc` does not have it.
pub(crate) fn read(root: &SysRoot) -> BootFacts {
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
        let facts = read(&SysRoot::system());
        assert!(!facts.release.is_empty());
        assert_eq!(facts.boot_id.len(), 36, "{}", facts.boot_id);
        if let Some(id) = facts.build_id {
            assert!(
                id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
                "{id}"
            );
        }
    }
}
