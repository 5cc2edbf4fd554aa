//! Kernel campaigns' records and their judgement: the plan's shape ([`plan`]) and its planned
//! boots ([`sequence`]), a campaign's state between boots ([`state`]) with what each boot was
//! found to be ([`identity`], [`image`], [`fingerprint`]), the document ([`doc`]), and the
//! judgement across boots ([`judge`]: `bench compare`'s arithmetic per column
//! ([`judge_bench`]), the exact rate test for soaks ([`judge_soak`]), the fingerprint's
//! differences). `docs/campaign.md` describes the protocol.
//!
//! Owns: pure functions of records. Never reads the system, a file or the clock: the binaries'
//! crate runs campaigns (`rtsoak::campaign`) and `rtsoak-report` renders them.

pub mod doc;
pub mod fingerprint;
pub mod identity;
pub mod image;
pub mod judge;
pub mod judge_bench;
pub mod judge_soak;
pub mod plan;
pub mod sequence;
pub mod state;
