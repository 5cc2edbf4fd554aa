//! Command-line overrides of a profile: one type, which clap parses straight from the flags of
//! `run` and `compare` and the resolver reads. `None` (or `false`) keeps the profile's value;
//! durations are parsed into nanoseconds here, so the plan never sees a unit.

use super::sections::{CpuChoice, CpuListChoice, DEFAULT_RT_PRIORITY, Profile};
use rtsoak_record::export::{DEFAULT_KCIDB_ORIGIN, KcidbOrigin};
use rtsoak_record::plan::Fault;
use rtsoak_record::{Policy, RingSetup};

/// What the command line overrides.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct Overrides {
    /// Transports to run (`run -t`, `compare -t`); set by the command, not a flag of its own.
    #[arg(skip)]
    pub transports: Option<Vec<String>>,
    /// Measured time per transport (e.g. `600s`, `10m`).
    #[arg(short, long = "duration", value_name = "DURATION", value_parser = parse_duration_ns)]
    pub duration_ns: Option<u64>,
    /// Rounds of a comparison: every transport runs once per round, for duration / rounds.
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Warm-up per run before measuring (e.g. `500ms`).
    #[arg(long = "warmup", value_name = "WARMUP", value_parser = parse_duration_ns)]
    pub warmup_ns: Option<u64>,
    /// Publisher period (e.g. `500us`).
    #[arg(long = "period", value_name = "PERIOD", value_parser = parse_duration_ns)]
    pub period_ns: Option<u64>,
    /// Latency counted as over threshold (e.g. `100us`).
    #[arg(long = "threshold", value_name = "THRESHOLD", value_parser = parse_duration_ns)]
    pub threshold_ns: Option<u64>,
    /// Length of each per-interval histogram (e.g. `10s`).
    #[arg(long = "interval", value_name = "INTERVAL", value_parser = parse_duration_ns)]
    pub interval_ns: Option<u64>,
    /// CPUs of the RT publisher and subscriber, in that order (e.g. `4,5`).
    // The full path keeps clap from reading the list as repeated values: it is one CPU list.
    #[arg(long, value_parser = parse_cpus)]
    pub rt_cpus: Option<::std::vec::Vec<usize>>,
    /// CPUs for noise and the coordinator (e.g. `0-1`).
    #[arg(long, value_parser = parse_cpus)]
    pub noise_cpus: Option<::std::vec::Vec<usize>>,
    /// Priority of both RT workers (1..=99).
    #[arg(long)]
    pub priority: Option<u8>,
    /// Scheduling policy of both RT workers.
    #[arg(long, value_enum)]
    pub policy: Option<Policy>,
    /// Setup flags of the subscriber's ring; several (comma-separated) compare each as its own
    /// row, e.g. `defer-taskrun,coop-taskrun,none`.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub ring_setup: Option<Vec<RingSetup>>,
    /// Each transport's own flags (`--futex-wake`), defined in its file.
    #[command(flatten)]
    pub transport: rtsoak_measure::transport::Flags,
    /// A quiet baseline: no noise, whatever the profile says.
    #[arg(long)]
    pub no_noise: bool,
    /// Trace the run to explain its spikes even where the trace reader must share the RT CPUs
    /// (which delays their wakeups), whatever the profile says.
    #[arg(long, conflicts_with = "no_explain")]
    pub explain: bool,
    /// Do not trace the run to explain its spikes, whatever the profile says.
    #[arg(long)]
    pub no_explain: bool,
    /// Keep the explainer's whole trace of each run in the result directory
    /// (`trace-TRANSPORT-SETUP-N.txt`, named in the result), to read it by hand.
    #[arg(long, conflicts_with = "no_explain")]
    pub keep_trace: bool,
    /// Write a marker into the ftrace buffer and stop tracing when a send call or delivery
    /// takes longer than this (microseconds, or with a unit: `200us`), then stop the run.
    #[arg(long = "break-on", value_parser = parse_break_on_ns, value_name = "US")]
    pub break_on_ns: Option<u64>,
    /// After `--break-on` fires, carry on measuring (tracing stays off).
    #[arg(long, requires = "break_on_ns")]
    pub break_on_continue: bool,
    /// When a watched sample (delivery, by default) takes longer than the on-threshold limit
    /// (the threshold, by default), do ACTION: `trace` (save the trace buffer),
    /// `signal=NUM|NAME,pid=PID`, `exec=PROGRAM,ARG,...` (never through a shell) or `continue`.
    /// Repeat for several, done in order (docs/actions.md).
    #[arg(long = "on-threshold", value_name = "ACTION", value_parser = super::action_spelling::parse_action)]
    pub on_threshold: Vec<rtsoak_record::action::Action>,
    /// At the end, once the result is saved, do ACTION (the forms of --on-threshold). Repeat
    /// for several, done in order.
    #[arg(long = "on-end", value_name = "ACTION", value_parser = super::action_spelling::parse_action)]
    pub on_end: Vec<rtsoak_record::action::Action>,
    /// The on-threshold limit, if not the threshold (e.g. `200us`).
    #[arg(long = "on-threshold-limit", value_name = "DURATION", value_parser = parse_duration_ns)]
    pub on_threshold_limit_ns: Option<u64>,
    /// The series whose samples fire the on-threshold actions: `delivery`, `send-call`, or both
    /// (comma-separated).
    #[arg(long = "on-threshold-series", value_name = "SERIES", value_delimiter = ',',
        value_parser = super::actions::parse_series)]
    pub on_threshold_series: Option<Vec<rtsoak_record::Series>>,
    /// Fire on every sample over the limit, at most once per DURATION in each series (e.g.
    /// `100ms`), instead of on the first of each run only.
    #[arg(long = "on-threshold-every", value_name = "DURATION", value_parser = parse_duration_ns)]
    pub on_threshold_every_ns: Option<u64>,
    /// Stop an exec action's command still running after DURATION (SIGTERM, then SIGKILL 2 s
    /// later) and record it as timed out.
    #[arg(long = "action-timeout", value_name = "DURATION", value_parser = parse_duration_ns)]
    pub action_timeout_ns: Option<u64>,
    /// Do not hold /dev/cpu_dma_latency at 0 during the runs (profile `system.hold_cpu_dma_latency`).
    #[arg(long)]
    pub no_cpu_dma_latency: bool,
    /// The KCIDB origin the `kcidb` export names its objects and ids by: the name your KCIDB
    /// submissions are made under (lower-case letters, digits and `_`; profile key
    /// `export.kcidb_origin`).
    #[arg(long, value_name = "NAME")]
    pub kcidb_origin: Option<KcidbOrigin>,
    /// Tests only: break the measurement on purpose (`rt-wake-lost`: the RT publisher never
    /// wakes the RT subscriber, to prove such a run cannot pass; `rt-wake-late`: it wakes it
    /// after the subscriber's fallback poll, to prove a slow send call is no transport
    /// failure). Recorded in the result.
    #[arg(long, value_enum, hide = true)]
    pub inject_fault: Option<Fault>,
}

/// What `profile` gives each override, by the override's argument id, as `--help` shows it
/// (`10s`, `fifo`, `auto`): a flag's help then says what running without it means.
pub(crate) fn profile_values(profile: &Profile) -> Vec<(String, String)> {
    let run = &profile.run;
    let cpu = |choice: &CpuChoice| match choice {
        CpuChoice::Cpu(cpu) => cpu.to_string(),
        CpuChoice::Keyword(word) => word.clone(),
    };
    let priority = |value: Option<u8>| value.unwrap_or(DEFAULT_RT_PRIORITY).to_string();
    let setups: Vec<&str> = profile
        .rt
        .ring_setup
        .to_vec()
        .iter()
        .map(|s| s.name())
        .collect();
    let own = [
        ("duration_ns", format!("{}s", run.duration_s)),
        ("rounds", run.rounds.to_string()),
        ("warmup_ns", format!("{}ms", run.warmup_ms)),
        ("period_ns", format!("{}us", run.period_us)),
        ("threshold_ns", format!("{}us", run.threshold_us)),
        ("interval_ns", format!("{}s", run.interval_s)),
        (
            "rt_cpus",
            format!(
                "{},{}",
                cpu(&profile.cpus.publisher),
                cpu(&profile.cpus.subscriber)
            ),
        ),
        (
            "noise_cpus",
            match &profile.cpus.noise {
                CpuListChoice::Cpu(cpu) => cpu.to_string(),
                CpuListChoice::Text(text) => text.clone(),
            },
        ),
        (
            "priority",
            format!(
                "{} publisher, {} subscriber",
                priority(profile.rt.publisher_priority),
                priority(profile.rt.subscriber_priority)
            ),
        ),
        ("policy", profile.rt.policy.name().to_string()),
        ("ring_setup", setups.join(",")),
        (
            "no_noise",
            if profile.noise.enabled {
                "noise on"
            } else {
                "no noise"
            }
            .to_string(),
        ),
        (
            "kcidb_origin",
            profile
                .export
                .kcidb_origin
                .clone()
                .unwrap_or_else(|| DEFAULT_KCIDB_ORIGIN.to_string()),
        ),
        (
            "no_cpu_dma_latency",
            if profile.system.hold_cpu_dma_latency {
                "held at 0"
            } else {
                "not held"
            }
            .to_string(),
        ),
    ];
    own.into_iter()
        .map(|(id, value)| (id.to_string(), value))
        .chain(super::transport_keys::values(
            &profile.rt.transport_settings,
        ))
        .collect()
}

/// `600s`, `500us`, `10m` → nanoseconds.
pub(crate) fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let duration = humantime::parse_duration(text).map_err(|e| {
        format!("{e}: write a number with a unit, for example 500us, 10ms, 600s or 10m")
    })?;
    u64::try_from(duration.as_nanos()).map_err(|_| "duration too long".to_string())
}

/// `--break-on`: a bare number is microseconds (as cyclictest's `-b`); a unit is allowed.
pub(crate) fn parse_break_on_ns(text: &str) -> Result<u64, String> {
    let ns = match text.parse::<u64>() {
        Ok(us) => us.checked_mul(1_000).ok_or("too long")?,
        Err(_) => parse_duration_ns(text)?,
    };
    if ns == 0 {
        return Err("give a positive limit, for example 200 (microseconds)".to_string());
    }
    Ok(ns)
}

/// A CPU list flag (`0-1,4`), one value to clap.
pub(crate) fn parse_cpus(text: &str) -> Result<Vec<usize>, String> {
    rtsoak_record::cpulist::parse(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_the_units_rt_people_write() {
        assert_eq!(parse_duration_ns("500us"), Ok(500_000));
        assert_eq!(parse_duration_ns("600s"), Ok(600_000_000_000));
        assert_eq!(parse_duration_ns("10m"), Ok(600_000_000_000));
        assert!(parse_duration_ns("500").unwrap_err().contains("500us"));
    }

    #[test]
    fn break_on_takes_microseconds_or_a_unit() {
        assert_eq!(parse_break_on_ns("200"), Ok(200_000));
        assert_eq!(parse_break_on_ns("1ms"), Ok(1_000_000));
        assert!(parse_break_on_ns("0").is_err());
    }
}
