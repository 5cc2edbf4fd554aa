//! Profiles: TOML files in `profiles/`, embedded in the binary, plus command-line overrides,
//! resolved against the machine's CPU topology into a [`crate::plan::RunPlan`].
//!
//! Owns: the profile's shape (every key, its default), loading a built-in or a file, and the
//! errors a user sees for a bad profile. Validation and CPU layout live in `resolve`. Never reads
//! `/proc` or `/sys`: the machine arrives as a [`CpuTopology`] filled by `sysinfo`.

#![forbid(unsafe_code)]

mod builtin;
mod installed;
mod layout;
mod noise;
mod overrides;
mod resolve;
mod verdict;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::Explain;

use crate::record::{Policy, RingSetup};

pub use builtin::{builtin_names, builtin_text};
pub use installed::DIR as INSTALLED_DIR;
pub use noise::{BurstSection, LoadSection, NoiseSection, QueueNoiseSection};
pub use overrides::{Overrides, parse_break_on_ns, parse_cpus, parse_duration_ns, profile_values};
pub use resolve::resolve;
pub use verdict::VerdictSection;

/// One profile as written in TOML. Every key is optional; a missing key takes the default
/// documented in `profiles/README.md`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Profile {
    /// Free text shown by `rtsoak probe` and recorded with results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What to measure and for how long.
    pub run: RunSection,
    /// Where the RT pair and the noise run.
    pub cpus: CpuSection,
    /// Scheduling and io_uring setup of the RT pair.
    pub rt: RtSection,
    /// What competes with the RT pair.
    pub noise: NoiseSection,
    /// Assumed constants of unmerged kernel patches, for patched kernels.
    pub abi: crate::abi::PatchedAbi,
    /// What rtsoak sets on the system for the duration of a run.
    pub system: SystemSection,
    /// Pass/fail limits judged on each transport's figures.
    pub verdict: VerdictSection,
}

/// `[system]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SystemSection {
    /// Hold `/dev/cpu_dma_latency` open at 0 during `run`/`compare`, keeping CPUs out of deep
    /// idle states.
    pub hold_cpu_dma_latency: bool,
}

impl Default for SystemSection {
    fn default() -> Self {
        SystemSection {
            hold_cpu_dma_latency: true,
        }
    }
}

/// `[run]`: durations carry their unit in the key name, as integers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSection {
    /// Registry names of the transports to run, in order; empty = every registered transport.
    pub transports: Vec<String>,
    /// Measured seconds per transport, after warm-up, split evenly over the rounds.
    pub duration_s: u64,
    /// Rounds of a comparison: every transport runs once per round (A B C, A B C, ...).
    pub rounds: u32,
    /// Warm-up milliseconds per run, whose samples are discarded.
    pub warmup_ms: u64,
    /// Publisher period in microseconds.
    pub period_us: u64,
    /// Over-threshold limit in microseconds.
    pub threshold_us: u64,
    /// Length of one per-interval histogram, in seconds.
    pub interval_s: u64,
    /// A message not delivered this many milliseconds after its send is counted lost.
    pub delivery_timeout_ms: u64,
    /// Capacity of each over-threshold sample list.
    pub outliers_max: u32,
    /// Explain every kept send-call and delivery spike from a kernel trace of the run (needs
    /// root and tracefs; without them the result says the spikes are unexplained): `auto` (where
    /// the coordinator has a CPU outside the RT pair), `on` or `off`.
    pub explain: Explain,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            transports: Vec::new(),
            duration_s: 10,
            rounds: 1,
            warmup_ms: 500,
            period_us: 500,
            threshold_us: 100,
            interval_s: 10,
            delivery_timeout_ms: 1000,
            outliers_max: 1000,
            explain: Explain::Auto,
        }
    }
}

/// A CPU for one RT worker: `"auto"` or a CPU number. Any other string is rejected by
/// `resolve` with an error naming the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, expecting = "\"auto\" or a CPU number such as 4")]
pub enum CpuChoice {
    /// An explicit CPU.
    Cpu(usize),
    /// A keyword; only `"auto"` is accepted.
    Keyword(String),
}

impl Default for CpuChoice {
    fn default() -> Self {
        CpuChoice::Keyword(AUTO.to_string())
    }
}

/// The noise CPUs: `"auto"`, a CPU list such as `"0-1"`, or a single CPU number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, expecting = "\"auto\" or a CPU list such as \"0-1\"")]
pub enum CpuListChoice {
    /// One explicit CPU.
    Cpu(usize),
    /// `"auto"` or a CPU list in the kernel's notation.
    Text(String),
}

impl Default for CpuListChoice {
    fn default() -> Self {
        CpuListChoice::Text(AUTO.to_string())
    }
}

/// The keyword that lets `resolve` choose CPUs for the machine it runs on.
pub const AUTO: &str = "auto";

/// `[cpus]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CpuSection {
    /// CPU of the RT publisher.
    pub publisher: CpuChoice,
    /// CPU of the RT subscriber's event loop.
    pub subscriber: CpuChoice,
    /// CPUs for noise and the coordinator.
    pub noise: CpuListChoice,
}

/// `rt.ring_setup`: one setup, or a list to compare (`["defer-taskrun", "coop-taskrun"]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, expecting = "a ring setup name or a list of them")]
pub enum RingSetupChoice {
    /// One setup for every run.
    One(RingSetup),
    /// Each transport runs once per setup, reported as separate rows.
    Many(Vec<RingSetup>),
}

impl RingSetupChoice {
    /// The setups, in order, duplicates dropped.
    pub fn to_vec(&self) -> Vec<RingSetup> {
        let all = match self {
            RingSetupChoice::One(one) => vec![*one],
            RingSetupChoice::Many(many) => many.clone(),
        };
        let mut unique = Vec::new();
        for setup in all {
            if !unique.contains(&setup) {
                unique.push(setup);
            }
        }
        unique
    }
}

/// `[rt]`: the RT pair's keys, and each transport's own keys (`futex_wake`), which the
/// transport defines and the registry reads ([`crate::transport::Settings`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RtKeys")]
pub struct RtSection {
    /// Scheduling policy of both RT workers.
    pub policy: Policy,
    /// RT publisher priority; absent = 40 for `fifo`/`rr`, 0 for `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher_priority: Option<u8>,
    /// RT subscriber priority; absent = 40 for `fifo`/`rr`, 0 for `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscriber_priority: Option<u8>,
    /// io_uring setup flags of the subscriber's ring; a list compares each as its own row.
    pub ring_setup: RingSetupChoice,
    /// Every transport's own settings, each a key of `[rt]`.
    #[serde(flatten)]
    pub transport_settings: crate::transport::Settings,
}

impl Default for RtSection {
    fn default() -> Self {
        RtSection {
            policy: Policy::Fifo,
            publisher_priority: None,
            subscriber_priority: None,
            ring_setup: RingSetupChoice::One(RingSetup::DeferTaskrun),
            transport_settings: crate::transport::Settings::default(),
        }
    }
}

/// `[rt]` as read: the RT pair's keys, and every other key left for the transports. (serde
/// cannot refuse unknown keys of a struct that flattens another, so `[rt]` refuses them itself,
/// once the transports took theirs.)
#[derive(Deserialize)]
#[serde(default)]
struct RtKeys {
    policy: Policy,
    publisher_priority: Option<u8>,
    subscriber_priority: Option<u8>,
    ring_setup: RingSetupChoice,
    #[serde(flatten)]
    rest: toml::Table,
}

/// The RT pair's own keys of `[rt]`, for the error that names every key it accepts.
const RT_KEYS: [&str; 4] = [
    "policy",
    "publisher_priority",
    "subscriber_priority",
    "ring_setup",
];

impl Default for RtKeys {
    fn default() -> Self {
        let rt = RtSection::default();
        RtKeys {
            policy: rt.policy,
            publisher_priority: rt.publisher_priority,
            subscriber_priority: rt.subscriber_priority,
            ring_setup: rt.ring_setup,
            rest: toml::Table::new(),
        }
    }
}

impl TryFrom<RtKeys> for RtSection {
    type Error = String;

    fn try_from(keys: RtKeys) -> Result<Self, String> {
        let transport_settings = crate::transport::Settings::from_rt_keys(keys.rest, &RT_KEYS)?;
        Ok(RtSection {
            policy: keys.policy,
            publisher_priority: keys.publisher_priority,
            subscriber_priority: keys.subscriber_priority,
            ring_setup: keys.ring_setup,
            transport_settings,
        })
    }
}

/// What the resolver needs to know about the machine (the sysinfo module fills it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CpuTopology {
    /// Online CPUs, sorted.
    pub online: Vec<usize>,
    /// CPUs isolated from the scheduler (`isolcpus=` / `/sys/devices/system/cpu/isolated`).
    pub isolated: Vec<usize>,
}

/// Appended to a value that came from a flag, so the error names where it came from.
const FROM_CLI: &str = " (from the command line)";

/// A key whose value is out of its range.
fn invalid(key: &str, value: String, allowed: String) -> ProfileError {
    ProfileError::Invalid {
        key: key.to_string(),
        value,
        allowed,
    }
}

/// A CPU key that cannot be satisfied on this machine.
fn cpu_error(key: &str, message: String) -> ProfileError {
    ProfileError::Cpu {
        key: key.to_string(),
        message,
    }
}

/// A profile that cannot be loaded or resolved. Every message names what is wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read profile {}: {source}; check the path, or give a built-in name ({})",
        .path.display(), builtin_names().join(", "))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no profile named `{name}`: the built-in and installed (in {}) profiles are {}; give \
        one of them or a path to a .toml file", installed::DIR, .known.join(", "))]
    UnknownBuiltin { name: String, known: Vec<String> },
    #[error("refusing the installed profile {}: {why}, so another user could choose what rtsoak \
        runs as root; make it and its directories root's and not writable by group or others \
        (chown root: and chmod go-w)", .path.display())]
    UntrustedInstalled { path: PathBuf, why: String },
    #[error(
        "cannot parse profile {name}: {message}\nfix the profile; profiles/README.md lists \
        every key with its unit and allowed values"
    )]
    Toml { name: String, message: String },
    #[error(
        "profile key `{key}` = {value} is not allowed: expected {allowed}; change the \
        profile or the command-line flag that sets it"
    )]
    Invalid {
        key: String,
        value: String,
        allowed: String,
    },
    #[error("profile key `{key}`: {message}")]
    Cpu { key: String, message: String },
    #[error("unknown transport `{name}`: known transports are {}; name one of them, or leave \
        `run.transports` empty to run them all", .known.join(", "))]
    UnknownTransport { name: String, known: Vec<String> },
}

/// True when `name_or_path` names a file rather than a built-in profile.
fn is_path(name_or_path: &str) -> bool {
    name_or_path.contains('/') || name_or_path.ends_with(".toml")
}

/// `name_or_path`: a name, or a path to a TOML file (anything containing '/' or ending in .toml
/// is a path). A name is the installed profile `/etc/rtsoak/profiles/NAME.toml` where there is
/// one, else the built-in of that name. Returns the profile and the name to record: the
/// built-in's name, or the path of the file read.
pub fn load(name_or_path: &str) -> Result<(String, Profile), ProfileError> {
    load_with(name_or_path, Path::new(installed::DIR))
}

/// Every name `--profile` takes: the built-in profiles, then installed ones of other names.
pub fn names() -> Vec<String> {
    names_with(Path::new(installed::DIR))
}

fn names_with(installed_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = builtin_names().iter().map(|n| n.to_string()).collect();
    for name in installed::names(installed_dir) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Where the profile `name` comes from (`installed` or `built-in`) and its text, or `None`
/// when there is no profile of that name.
pub fn named_text(name: &str) -> Result<Option<(&'static str, String)>, ProfileError> {
    if let Some((_, text)) = installed::find(Path::new(installed::DIR), name)? {
        return Ok(Some(("installed", text)));
    }
    Ok(builtin_text(name).map(|text| ("built-in", text.to_string())))
}

/// [`load`], with installed profiles looked up in `installed_dir`.
fn load_with(name_or_path: &str, installed_dir: &Path) -> Result<(String, Profile), ProfileError> {
    if is_path(name_or_path) {
        let text = std::fs::read_to_string(name_or_path).map_err(|source| ProfileError::Io {
            path: PathBuf::from(name_or_path),
            source,
        })?;
        return Ok((name_or_path.to_string(), parse(name_or_path, &text)?));
    }
    if let Some((path, text)) = installed::find(installed_dir, name_or_path)? {
        let shown = path.to_string_lossy().into_owned();
        let profile = parse(&shown, &text)?;
        return Ok((shown, profile));
    }
    let text = builtin_text(name_or_path).ok_or_else(|| ProfileError::UnknownBuiltin {
        name: name_or_path.to_string(),
        known: names_with(installed_dir),
    })?;
    Ok((name_or_path.to_string(), parse(name_or_path, text)?))
}

/// Parse profile text; `name` is used in errors only. TOML errors carry toml's line/column
/// message, which quotes the profile: each of its lines is escaped and cut, as the profile may
/// be anyone's file (one 100 MB line must not reach stderr twice over). Values are checked by
/// [`resolve`], which knows the machine.
pub fn parse(name: &str, text: &str) -> Result<Profile, ProfileError> {
    toml::from_str(text).map_err(|e| ProfileError::Toml {
        name: name.to_string(),
        message: e
            .to_string()
            .trim_end()
            .lines()
            .map(crate::sys::text::quote)
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_line_in_a_bad_profile_is_quoted_cut_and_escaped() {
        let text = format!("[run]\nname = \"\x1b[2J{}", "x".repeat(1 << 20));
        let message = parse("huge", &text).unwrap_err().to_string();
        assert!(message.len() < 4096, "{} bytes", message.len());
        assert!(!message.contains('\x1b'), "{message}");
        assert!(message.contains("more bytes)"), "{message}");
    }

    #[test]
    fn an_empty_profile_takes_every_default() {
        assert_eq!(parse("empty", "").unwrap(), Profile::default());
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_the_key_and_its_line() {
        let err = parse("typo", "[run]\nperiod_ms = 5\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("period_ms"), "{text}");
        assert!(text.contains("line 2"), "{text}");
        assert!(text.contains("typo"), "{text}");
    }

    #[test]
    fn a_transports_own_key_is_read_in_rt_and_an_unknown_one_names_every_key_rt_takes() {
        use crate::transport::futex::FutexWake;
        let profile = parse("x", "[rt]\npolicy = \"rr\"\nfutex_wake = \"io-uring\"\n").unwrap();
        assert_eq!(profile.rt.policy, Policy::Rr);
        assert_eq!(
            profile.rt.transport_settings.futex.futex_wake,
            FutexWake::IoUring
        );
        let text = parse("x", "[rt]\nfutex_wak = 1\n").unwrap_err().to_string();
        assert!(text.contains("unknown field `futex_wak` in [rt]"), "{text}");
        assert!(text.contains("`ring_setup`, `futex_wake`"), "{text}");
        let text = parse("x", "[rt]\nfutex_wake = \"often\"\n")
            .unwrap_err()
            .to_string();
        assert!(text.contains("rt.futex_wake = \"often\""), "{text}");
        assert!(text.contains("`syscall` or `io-uring`"), "{text}");
    }

    #[test]
    fn the_rt_pairs_own_keys_are_every_key_of_its_section() {
        // RT_KEYS is written out for the unknown-key error; it must not drift from the struct.
        let rt = RtSection {
            publisher_priority: Some(1),
            subscriber_priority: Some(1),
            ..RtSection::default()
        };
        let toml::Value::Table(table) = toml::Value::try_from(&rt).unwrap() else {
            panic!("[rt] serializes to a table");
        };
        let mut own: Vec<String> = table.keys().cloned().collect();
        own.retain(|key| !crate::transport::Settings::keys().contains(key));
        own.sort();
        let mut expected: Vec<String> = RT_KEYS.iter().map(|key| key.to_string()).collect();
        expected.sort();
        assert_eq!(own, expected);
    }

    #[test]
    fn an_unknown_section_is_an_error_naming_it() {
        let text = parse("x", "[turbo]\nburst = 1\n").unwrap_err().to_string();
        assert!(text.contains("turbo"), "{text}");
    }

    #[test]
    fn a_value_of_the_wrong_type_is_an_error_naming_the_key() {
        let text = parse("x", "[run]\nduration_s = \"ten\"\n")
            .unwrap_err()
            .to_string();
        assert!(text.contains("duration_s"), "{text}");
        let text = parse("x", "[cpus]\npublisher = 4.5\n")
            .unwrap_err()
            .to_string();
        assert!(text.contains("publisher"), "{text}");
        assert!(text.contains("\"auto\" or a CPU number"), "{text}");
    }

    #[test]
    fn an_unknown_policy_lists_the_allowed_names() {
        let text = parse("x", "[rt]\npolicy = \"deadline\"\n")
            .unwrap_err()
            .to_string();
        assert!(text.contains("policy"), "{text}");
        assert!(text.contains("fifo") && text.contains("other"), "{text}");
    }

    #[test]
    fn cpus_are_auto_a_number_or_a_list() {
        let p = parse("x", "[cpus]\npublisher = 4\nnoise = \"0-1\"\n").unwrap();
        assert_eq!(p.cpus.publisher, CpuChoice::Cpu(4));
        assert_eq!(p.cpus.subscriber, CpuChoice::default());
        assert_eq!(p.cpus.noise, CpuListChoice::Text("0-1".into()));
    }

    #[test]
    fn a_profile_survives_a_round_trip_through_toml() {
        let p = parse(
            "x",
            "[cpus]\npublisher = 4\n[rt]\npublisher_priority = 50\n",
        )
        .unwrap();
        let text = toml::to_string(&p).unwrap();
        assert_eq!(parse("again", &text).unwrap(), p);
    }

    #[test]
    fn load_reads_builtins_by_name_and_files_by_path() {
        let (name, p) = load("ci").unwrap();
        assert_eq!(name, "ci");
        assert_eq!(p.run.duration_s, 3);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "[run]\nduration_s = 7\n").unwrap();
        let given = path.to_str().unwrap();
        let (name, p) = load(given).unwrap();
        assert_eq!(name, given);
        assert_eq!(p.run.duration_s, 7);
    }

    #[test]
    fn an_installed_profile_comes_before_the_builtin_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ci.toml"), "[run]\nduration_s = 11\n").unwrap();
        std::fs::write(dir.path().join("board.toml"), "[run]\nduration_s = 12\n").unwrap();
        let (name, p) = load_with("ci", dir.path()).unwrap();
        assert_eq!(name, dir.path().join("ci.toml").to_str().unwrap());
        assert_eq!(p.run.duration_s, 11);
        assert_eq!(load_with("board", dir.path()).unwrap().1.run.duration_s, 12);
        assert_eq!(load_with("nightly", dir.path()).unwrap().0, "nightly");
        let text = load_with("jetson", dir.path()).unwrap_err().to_string();
        assert!(text.contains("nightly, board;"), "{text}");
    }

    #[test]
    fn an_unknown_builtin_lists_the_builtins() {
        let text = load("jetson").unwrap_err().to_string();
        assert!(text.contains("`jetson`"), "{text}");
        assert!(text.contains("default, ci"), "{text}");
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let text = load("/nonexistent/p.toml").unwrap_err().to_string();
        assert!(
            text.starts_with("cannot read profile /nonexistent/p.toml: "),
            "{text}"
        );
    }
}
