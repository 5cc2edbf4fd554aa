//! Which kernel is running, as a campaign records it after every boot: its release, its build
//! id, its command line and the boot's id (new at every boot); and comparing command lines by
//! their words.
//!
//! The command line also says whether this is a boot rtsoak loaded: every point's command line
//! carries a token (`rtsoak.campaign=<campaign>.<boot>.<attempt>`), which a boot through the
//! firmware (a panic with `panic=N`, a watchdog, a person) never has.
//!
//! Owns: the facts' record and the comparison of command lines. Never reads the system (the
//! binaries' crate does) and never judges a boot.

use serde::{Deserialize, Serialize};

use super::plan::TOKEN_KEY;

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
    /// The token of the boot rtsoak loaded this one as, if it is one.
    pub fn token(&self) -> Option<&str> {
        self.cmdline
            .split_whitespace()
            .find_map(|word| word.strip_prefix(TOKEN_KEY))
    }
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
