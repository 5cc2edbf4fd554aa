//! Kernel campaigns: a fresh boot per point, parent A → child → parent B (or any order the plan
//! gives, several boots per step), the same rtsoak command on every boot, and the child judged
//! against its parents across the boots. `docs/campaign.md` describes the protocol.
//!
//! The plan ([`plan`], parsed and validated) becomes planned boots (`rtsoak-analysis`'s
//! `campaign::sequence`); a campaign's state ([`state`]) moves only through [`advance`], the
//! state machine both drivers run: [`kexec`] on the machine itself, resumed by a systemd unit
//! after every boot, and [`qemu`] from a host, one guest per boot ([`guest`] is what runs
//! inside). Each boot is checked to be the one meant
//! ([`identity`], [`image`]), settles ([`settle`]), runs the command ([`command`]) and records
//! the host's fingerprint ([`fingerprint`]). The document ([`doc`]) holds every boot's result
//! and the judgement (`rtsoak-analysis`'s `campaign::judge`); the records' shapes are that
//! crate's too, and `rtsoak-report` renders the document.
//!
//! Must never: boot a file another user could have written, follow a symlink it did not check,
//! loop (every boot is tried a bounded number of times, and a campaign that sees more boots
//! than it could have caused ends), or judge a boot that was not the one meant.

// The state machine, the document and the plan are public for `tests/campaign.rs`, which
// builds a finished campaign from them; `args` for the command line.
pub mod advance;
pub(crate) mod args;
pub(crate) mod command;
pub mod doc;
pub(crate) mod fingerprint;
pub(crate) mod guest;
pub(crate) mod identity;
pub(crate) mod image;
pub(crate) mod kexec;
pub(crate) mod measure;
pub mod plan;
pub(crate) mod qemu;
pub(crate) mod settle;
pub(crate) mod state;
pub(crate) mod targets;
