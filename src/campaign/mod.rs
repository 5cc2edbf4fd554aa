//! Kernel campaigns: a fresh boot per point, parent A → child → parent B (or any order the plan
//! gives, several boots per step), the same rtsoak command on every boot, and the child judged
//! against its parents across the boots. `docs/campaign.md` describes the protocol.
//!
//! The plan ([`plan`]) becomes planned boots ([`sequence`]); a campaign's state ([`state`])
//! moves only through [`advance`], the state machine both drivers run: [`kexec`] on the machine
//! itself, resumed by a systemd unit after every boot, and [`qemu`] from a host, one guest per
//! boot ([`guest`] is what runs inside). Each boot is checked to be the one meant
//! ([`identity`], [`image`]), settles ([`settle`]), runs the command ([`command`]) and records
//! the host's fingerprint ([`fingerprint`]). The document ([`doc`]) holds every boot's result
//! and the judgement ([`judge`]).
//!
//! Must never: boot a file another user could have written, follow a symlink it did not check,
//! loop (every boot is tried a bounded number of times, and a campaign that sees more boots
//! than it could have caused ends), or judge a boot that was not the one meant.

#![forbid(unsafe_code)]

pub mod advance;
pub mod args;
pub mod command;
pub mod doc;
pub mod fingerprint;
pub mod guest;
pub mod identity;
pub mod image;
pub mod judge;
pub mod judge_bench;
pub mod judge_soak;
pub mod kexec;
pub mod measure;
pub mod plan;
pub mod qemu;
pub mod sequence;
pub mod settle;
pub mod state;
pub mod targets;
