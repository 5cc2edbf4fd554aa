//! The profile's shape: every section and key as TOML spells it, with its default, and what
//! the resolver is told of the machine.

use serde::{Deserialize, Serialize};

use super::actions::ActionSection;
use super::noise::NoiseSection;
use super::verdict::VerdictSection;
use rtsoak_record::plan::Explain;
use rtsoak_record::{Policy, RingSetup};

/// One profile as written in TOML. Every key is optional; a missing key takes the default
/// documented in `profiles/README.md`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Profile {
    /// Free text shown by `rtsoak probe` and recorded with results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// What to measure and for how long.
    pub run: RunSection,
    /// Where the RT pair and the noise run.
    pub(crate) cpus: CpuSection,
    /// Scheduling and io_uring setup of the RT pair.
    pub rt: RtSection,
    /// What competes with the RT pair.
    pub(crate) noise: NoiseSection,
    /// Assumed constants of unmerged kernel patches, for patched kernels.
    pub(crate) abi: rtsoak_record::abi::PatchedAbi,
    /// What rtsoak sets on the system for the duration of a run.
    pub system: SystemSection,
    /// Pass/fail limits judged on each transport's figures.
    pub(crate) verdict: VerdictSection,
    /// How the lab exports name the invocation.
    pub(crate) export: ExportSection,
    /// What to do when a sample crosses a limit, and at the end.
    pub(crate) actions: ActionSection,
}

/// `[export]`: checked where the plan is resolved, so an error names the key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ExportSection {
    /// The KCIDB origin of the `kcidb` export (none: `rtsoak`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kcidb_origin: Option<String>,
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
    pub(crate) transports: Vec<String>,
    /// Measured seconds per transport, after warm-up, split evenly over the rounds.
    pub duration_s: u64,
    /// Rounds of a comparison: every transport runs once per round (A B C, A B C, ...).
    pub(crate) rounds: u32,
    /// Warm-up milliseconds per run, whose samples are discarded.
    pub(crate) warmup_ms: u64,
    /// Publisher period in microseconds.
    pub period_us: u64,
    /// Over-threshold limit in microseconds.
    pub threshold_us: u64,
    /// Length of one per-interval histogram, in seconds.
    pub(crate) interval_s: u64,
    /// A message not delivered this many milliseconds after its send is counted lost.
    pub(crate) delivery_timeout_ms: u64,
    /// Capacity of each over-threshold sample list.
    pub(crate) outliers_max: u32,
    /// Explain every kept send-call and delivery spike from a kernel trace of the run (needs
    /// root and tracefs; without them the result says the spikes are unexplained): `auto` (where
    /// the coordinator has a CPU outside the RT pair), `on` or `off`.
    pub(crate) explain: Explain,
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
pub(crate) enum CpuChoice {
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
pub(crate) enum CpuListChoice {
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
pub(crate) const AUTO: &str = "auto";

/// `[cpus]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct CpuSection {
    /// CPU of the RT publisher.
    pub(crate) publisher: CpuChoice,
    /// CPU of the RT subscriber's event loop.
    pub(crate) subscriber: CpuChoice,
    /// CPUs for noise and the coordinator.
    pub(crate) noise: CpuListChoice,
}

/// `rt.ring_setup`: one setup, or a list to compare (`["defer-taskrun", "coop-taskrun"]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, expecting = "a ring setup name or a list of them")]
pub(crate) enum RingSetupChoice {
    /// One setup for every run.
    One(RingSetup),
    /// Each transport runs once per setup, reported as separate rows.
    Many(Vec<RingSetup>),
}

impl RingSetupChoice {
    /// The setups, in order, duplicates dropped.
    pub(crate) fn to_vec(&self) -> Vec<RingSetup> {
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

/// Priority of an RT worker whose profile gives none.
pub(crate) const DEFAULT_RT_PRIORITY: u8 = 40;

/// `[rt]`: the RT pair's keys, and each transport's own keys (`futex_wake`), which the
/// transport defines ([`rtsoak_record::transport::Settings`]) and `[rt]` reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RtKeys")]
pub struct RtSection {
    /// Scheduling policy of both RT workers.
    pub policy: Policy,
    /// RT publisher priority; absent = 40 for `fifo`/`rr`, 0 for `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) publisher_priority: Option<u8>,
    /// RT subscriber priority; absent = 40 for `fifo`/`rr`, 0 for `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) subscriber_priority: Option<u8>,
    /// io_uring setup flags of the subscriber's ring; a list compares each as its own row.
    pub(crate) ring_setup: RingSetupChoice,
    /// Every transport's own settings, each a key of `[rt]`.
    #[serde(flatten)]
    pub(crate) transport_settings: rtsoak_record::transport::Settings,
}

impl Default for RtSection {
    fn default() -> Self {
        RtSection {
            policy: Policy::Fifo,
            publisher_priority: None,
            subscriber_priority: None,
            ring_setup: RingSetupChoice::One(RingSetup::DeferTaskrun),
            transport_settings: rtsoak_record::transport::Settings::default(),
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
        let transport_settings = super::transport_keys::from_rt_keys(keys.rest, &RT_KEYS)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::parse;

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
        use rtsoak_record::transport::futex::FutexWake;
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
        own.retain(|key| !crate::profile::transport_keys::keys().contains(key));
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
}
