//! Behaviour of `resolve`: ranges, CPU layout, overrides. Kept beside `resolve.rs` so that file
//! stays readable in one sitting.

use super::*;
use crate::profile::{builtin_names, load, parse};
use rtsoak_record::RingSetup;
use rtsoak_record::plan::{LayoutNote, LayoutNoteKind};
use rtsoak_record::transport::Name;
use rtsoak_record::transport::futex::FutexWake;

/// The transports the tests choose from.
fn known() -> Vec<Name> {
    ["futex", "msg-ring", "eventfd", "signalfd"]
        .into_iter()
        .map(|name| Name::lookup(name).unwrap())
        .collect()
}

fn topology(online: std::ops::RangeInclusive<usize>, isolated: &[usize]) -> CpuTopology {
    CpuTopology {
        online: online.collect(),
        isolated: isolated.to_vec(),
    }
}

/// The reference board: 6 CPUs, 4 and 5 isolated.
fn jetson() -> CpuTopology {
    topology(0..=5, &[4, 5])
}

fn two_cpus() -> CpuTopology {
    topology(0..=1, &[])
}

fn resolve_text(text: &str, ov: &Overrides, topo: &CpuTopology) -> Result<RunPlan, ProfileError> {
    resolve("test", &parse("test", text).unwrap(), ov, topo, &known())
}

fn error_text(text: &str, ov: &Overrides, topo: &CpuTopology) -> String {
    resolve_text(text, ov, topo).unwrap_err().to_string()
}

fn invalid_key(err: ProfileError) -> String {
    match err {
        ProfileError::Invalid { key, .. } | ProfileError::Cpu { key, .. } => key,
        other => panic!("expected a key error, got {other}"),
    }
}

/// The transports' flags as the command line gives them.
fn transport_flags(args: &[&str]) -> rtsoak_measure::transport::Flags {
    use clap::{Args, FromArgMatches};
    let command = rtsoak_measure::transport::Flags::augment_args(clap::Command::new("rtsoak"));
    let matches = command
        .try_get_matches_from(std::iter::once("rtsoak").chain(args.iter().copied()))
        .unwrap();
    rtsoak_measure::transport::Flags::from_arg_matches(&matches).unwrap()
}

#[test]
fn every_auto_layout_builtin_resolves_on_two_cpus_with_noise_sharing_the_rt_pair() {
    for name in builtin_names().iter().filter(|n| **n != "jetson-orin-nano") {
        let (name, profile) = load(name).unwrap();
        let plan = resolve(
            &name,
            &profile,
            &Overrides::default(),
            &two_cpus(),
            &known(),
        )
        .unwrap();
        assert_eq!(plan.profile, name);
        assert_eq!((plan.rt.publisher_cpu, plan.rt.subscriber_cpu), (0, 1));
        assert_eq!(plan.noise_cpus, vec![0, 1]);
        assert_eq!(
            plan.layout_notes[0],
            LayoutNote::new(
                LayoutNoteKind::SharesRtCpus,
                "only 2 CPUs online: noise and the coordinator share CPUs with the RT pair; \
                 latencies include that interference"
            )
        );
        // default keeps FIFO bursts off the RT CPUs (so none run here); ci puts them there.
        for note in &plan.layout_notes[1..] {
            assert!(
                matches!(
                    note.kind,
                    LayoutNoteKind::NoBursts
                        | LayoutNoteKind::BurstsOnRtCpus
                        | LayoutNoteKind::ExplainOff
                ),
                "{note:?}"
            );
        }
        assert_eq!(plan.transports, known());
    }
}

#[test]
fn every_auto_layout_builtin_puts_the_rt_pair_on_the_isolated_cpus_of_the_reference_board() {
    for name in builtin_names().iter().filter(|n| **n != "jetson-orin-nano") {
        let (name, profile) = load(name).unwrap();
        let plan = resolve(&name, &profile, &Overrides::default(), &jetson(), &known()).unwrap();
        assert_eq!((plan.rt.publisher_cpu, plan.rt.subscriber_cpu), (4, 5));
        assert_eq!(plan.noise_cpus, vec![0, 1, 2, 3]);
        assert!(plan.layout_notes.is_empty(), "{:?}", plan.layout_notes);
    }
}

#[test]
fn the_default_profile_resolves_to_the_documented_values_in_nanoseconds() {
    let (_, profile) = load("default").unwrap();
    let plan = resolve(
        "default",
        &profile,
        &Overrides::default(),
        &jetson(),
        &known(),
    )
    .unwrap();
    assert_eq!(plan.duration_ns, 10_000_000_000);
    assert_eq!(plan.warmup_ns, 500_000_000);
    assert_eq!(plan.period_ns, 500_000);
    assert_eq!(plan.threshold_ns, 100_000);
    assert_eq!(plan.interval_ns, 10_000_000_000);
    assert_eq!(plan.delivery_timeout_ns, 1_000_000_000);
    assert_eq!(plan.outliers_max, 1000);
    assert_eq!(plan.rt.policy, Policy::Fifo);
    assert_eq!(
        (plan.rt.publisher_priority, plan.rt.subscriber_priority),
        (40, 40)
    );
    assert_eq!(plan.ring_setup, RingSetup::DeferTaskrun);
    assert_eq!(plan.transport_settings.futex.futex_wake, FutexWake::Syscall);
    // The file spells out every default, so it must equal an empty profile, but for saying it
    // is a development machine's (a key whose default is false, so a profile written for a
    // board never accepts a non-RT kernel by leaving it out).
    let mut empty = Profile::default();
    empty.verdict.development = true;
    assert_eq!(
        plan,
        resolve(
            "default",
            &empty,
            &Overrides::default(),
            &jetson(),
            &known()
        )
        .unwrap()
    );
}

#[test]
fn without_two_isolated_cpus_auto_takes_the_two_highest_online() {
    let plan = resolve_text("", &Overrides::default(), &topology(0..=3, &[3])).unwrap();
    assert_eq!((plan.rt.publisher_cpu, plan.rt.subscriber_cpu), (2, 3));
    assert_eq!(plan.noise_cpus, vec![0, 1]);
    assert!(plan.layout_notes.is_empty());
}

#[test]
fn one_auto_cpu_is_chosen_around_an_explicit_one() {
    let plan = resolve_text("[cpus]\npublisher = 5\n", &Overrides::default(), &jetson()).unwrap();
    assert_eq!((plan.rt.publisher_cpu, plan.rt.subscriber_cpu), (5, 4));
}

#[test]
fn a_one_cpu_machine_is_an_error_saying_two_are_needed() {
    let text = error_text("", &Overrides::default(), &topology(0..=0, &[]));
    assert!(text.contains("needs at least two CPUs"), "{text}");
    assert!(text.contains("`cpus`"), "{text}");
}

#[test]
fn priorities_outside_1_to_99_are_errors_naming_the_key_and_range() {
    for (text, key) in [
        ("[rt]\npublisher_priority = 0\n", "rt.publisher_priority"),
        (
            "[rt]\nsubscriber_priority = 100\n",
            "rt.subscriber_priority",
        ),
    ] {
        let err = resolve_text(text, &Overrides::default(), &jetson()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("1..=99"), "{message}");
        assert_eq!(invalid_key(err), key);
    }
}

#[test]
fn priority_99_is_allowed_with_a_note_about_kernel_watchdogs() {
    let plan = resolve_text(
        "[rt]\npublisher_priority = 99\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert_eq!(plan.rt.publisher_priority, 99);
    assert_eq!(plan.layout_notes.len(), 1);
    assert_eq!(plan.layout_notes[0].kind, LayoutNoteKind::RtPriority99);
    assert!(plan.layout_notes[0].text.contains("watchdog"));
}

#[test]
fn policy_other_takes_no_priority() {
    let plan = resolve_text(
        "[rt]\npolicy = \"other\"\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert_eq!(
        (plan.rt.publisher_priority, plan.rt.subscriber_priority),
        (0, 0)
    );

    let err = resolve_text(
        "[rt]\npolicy = \"other\"\nsubscriber_priority = 40\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("policy `other`"), "{err}");
    assert_eq!(invalid_key(err), "rt.subscriber_priority");
}

#[test]
fn a_command_line_policy_other_drops_the_profiles_rt_priorities() {
    let (_, profile) = load("default").unwrap();
    let ov = Overrides {
        policy: Some(Policy::Other),
        ..Overrides::default()
    };
    let plan = resolve("default", &profile, &ov, &jetson(), &known()).unwrap();
    assert_eq!(plan.rt.policy, Policy::Other);
    assert_eq!(
        (plan.rt.publisher_priority, plan.rt.subscriber_priority),
        (0, 0)
    );
}

#[test]
fn periods_below_50_us_are_errors_with_the_allowed_range() {
    for period in [0, 49] {
        let text = error_text(
            &format!("[run]\nperiod_us = {period}\n"),
            &Overrides::default(),
            &jetson(),
        );
        assert!(
            text.starts_with(&format!(
                "profile key `run.period_us` = {period} is not allowed: expected \
                 50..=1000000 (microseconds)"
            )),
            "{text}"
        );
    }
}

#[test]
fn a_command_line_period_is_reported_in_the_keys_unit() {
    let ov = Overrides {
        period_ns: Some(10_500),
        ..Overrides::default()
    };
    let text = error_text("", &ov, &jetson());
    assert!(
        text.contains("`run.period_us` = 10.5 (from the command line) is not allowed"),
        "{text}"
    );
}

#[test]
fn other_ranges_name_their_key() {
    for (text, key) in [
        ("[run]\nduration_s = 0\n", "run.duration_s"),
        ("[run]\nduration_s = 604801\n", "run.duration_s"),
        ("[run]\nwarmup_ms = 60001\n", "run.warmup_ms"),
        ("[run]\nthreshold_us = 0\n", "run.threshold_us"),
        ("[run]\ninterval_s = 3601\n", "run.interval_s"),
        (
            "[run]\ndelivery_timeout_ms = 9\n",
            "run.delivery_timeout_ms",
        ),
        ("[run]\noutliers_max = 100001\n", "run.outliers_max"),
        ("[run]\nrounds = 0\n", "run.rounds"),
        ("[run]\nrounds = 1001\n", "run.rounds"),
    ] {
        let err = resolve_text(text, &Overrides::default(), &jetson()).unwrap_err();
        assert_eq!(invalid_key(err), key, "{text}");
    }
}

#[test]
fn the_delivery_timeout_must_cover_four_periods() {
    let err = resolve_text(
        "[run]\nperiod_us = 5000\ndelivery_timeout_ms = 19\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("at least 4 periods, 20 ms or more"), "{text}");
    assert_eq!(invalid_key(err), "run.delivery_timeout_ms");

    let plan = resolve_text(
        "[run]\nperiod_us = 5000\ndelivery_timeout_ms = 20\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert_eq!(plan.delivery_timeout_ns, 4 * plan.period_ns);
}

#[test]
fn an_empty_noise_list_is_an_error_naming_cpus_noise() {
    let err = resolve_text("[cpus]\nnoise = \"\"\n", &Overrides::default(), &jetson()).unwrap_err();
    assert!(err.to_string().contains("empty CPU list"), "{err}");
    assert_eq!(invalid_key(err), "cpus.noise");

    let ov = Overrides {
        noise_cpus: Some(vec![]),
        ..Overrides::default()
    };
    let err = resolve_text("", &ov, &jetson()).unwrap_err();
    assert_eq!(invalid_key(err), "cpus.noise");
}

#[test]
fn noise_overlapping_the_rt_pair_is_allowed_with_a_note() {
    let plan = resolve_text(
        "[cpus]\nnoise = \"0-4\"\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert_eq!(plan.noise_cpus, vec![0, 1, 2, 3, 4]);
    assert_eq!(
        plan.layout_notes[0],
        LayoutNote::new(
            LayoutNoteKind::SharesRtCpus,
            "noise CPUs 0-4 include RT CPU 4: latencies include that interference"
        )
    );
    assert_eq!(
        plan.layout_notes.len(),
        1,
        "bursts stay on 0-3, off RT CPU 4"
    );
    assert_eq!(plan.noise.bursts.cpus, vec![0, 1, 2, 3]);
}

#[test]
fn offline_cpus_are_errors_naming_the_key_the_cpu_and_the_online_list() {
    for (text, key, cpu) in [
        ("[cpus]\npublisher = 9\n", "cpus.publisher", "CPU 9"),
        ("[cpus]\nsubscriber = 6\n", "cpus.subscriber", "CPU 6"),
        ("[cpus]\nnoise = \"0,7\"\n", "cpus.noise", "CPUs 7"),
    ] {
        let err = resolve_text(text, &Overrides::default(), &jetson()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(cpu), "{message}");
        assert!(message.contains("online CPUs are 0-5"), "{message}");
        assert_eq!(invalid_key(err), key);
    }
}

#[test]
fn publisher_and_subscriber_on_the_same_cpu_is_an_error() {
    let err = resolve_text(
        "[cpus]\npublisher = 4\nsubscriber = 4\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("both CPU 4"), "{err}");
    assert_eq!(invalid_key(err), "cpus.subscriber");
}

#[test]
fn a_cpu_keyword_other_than_auto_is_an_error_naming_the_key() {
    let err = resolve_text(
        "[cpus]\npublisher = \"automatic\"\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("\"auto\" or a CPU number"),
        "{err}"
    );
    assert_eq!(invalid_key(err), "cpus.publisher");
}

#[test]
fn an_unknown_transport_lists_the_known_ones() {
    let text = error_text(
        "[run]\ntransports = [\"futex\", \"pipe\"]\n",
        &Overrides::default(),
        &jetson(),
    );
    assert!(text.contains("`pipe`"), "{text}");
    assert!(
        text.contains("futex, msg-ring, eventfd, signalfd"),
        "{text}"
    );
}

#[test]
fn duplicate_transports_are_dropped_keeping_the_first_order() {
    let plan = resolve_text(
        "[run]\ntransports = [\"eventfd\", \"futex\", \"eventfd\"]\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert_eq!(plan.transports, vec!["eventfd", "futex"]);
}

#[test]
fn overrides_win_over_profile_values() {
    let ov = Overrides {
        transports: Some(vec!["msg-ring".into()]),
        duration_ns: Some(60_000_000_000),
        rounds: Some(3),
        warmup_ns: Some(0),
        period_ns: Some(1_000_000),
        threshold_ns: Some(50_000),
        interval_ns: Some(5_000_000_000),
        rt_cpus: Some(vec![3, 2]),
        noise_cpus: Some(vec![1, 0]),
        priority: Some(80),
        policy: Some(Policy::Rr),
        ring_setup: Some(vec![RingSetup::CoopTaskrun]),
        transport: transport_flags(&["--futex-wake", "io-uring"]),
        no_cpu_dma_latency: true,
        no_noise: true,
        explain: false,
        no_explain: true,
        keep_trace: false,
        break_on_ns: Some(200_000),
        break_on_continue: true,
        kcidb_origin: Some("my_lab".parse().unwrap()),
        inject_fault: Some(rtsoak_record::plan::Fault::RtWakeLost),
        on_threshold: vec![rtsoak_record::action::Action::Continue],
        on_end: vec![rtsoak_record::action::Action::Trace],
        on_threshold_limit_ns: Some(20_000),
        on_threshold_series: Some(vec![rtsoak_record::Series::SendCall]),
        on_threshold_every_ns: Some(1_000_000),
        action_timeout_ns: None,
    };
    let (_, profile) = load("ci").unwrap();
    assert!(profile.system.hold_cpu_dma_latency);
    let plan = resolve("ci", &profile, &ov, &jetson(), &known()).unwrap();
    assert_eq!(plan.transports, vec!["msg-ring"]);
    assert_eq!(plan.export.kcidb_origin.as_str(), "my_lab");
    assert!(!plan.hold_cpu_dma_latency);
    assert!(!plan.noise.enabled, "--no-noise wins over the profile");
    assert!(!plan.explain, "--no-explain wins over the profile");
    assert_eq!(plan.duration_ns, 60_000_000_000);
    assert_eq!(plan.rounds, 3);
    assert_eq!(plan.warmup_ns, 0);
    assert_eq!(plan.period_ns, 1_000_000);
    assert_eq!(plan.threshold_ns, 50_000);
    assert_eq!(
        (plan.actions.limit_ns, plan.actions.every_ns),
        (20_000, Some(1_000_000))
    );
    assert_eq!(plan.actions.series, vec![rtsoak_record::Series::SendCall]);
    assert_eq!(
        plan.actions.on_end,
        vec![rtsoak_record::action::Action::Trace]
    );
    assert_eq!(plan.interval_ns, 5_000_000_000);
    assert_eq!((plan.rt.publisher_cpu, plan.rt.subscriber_cpu), (3, 2));
    assert_eq!(plan.noise_cpus, vec![0, 1]);
    assert_eq!(plan.rt.policy, Policy::Rr);
    assert_eq!(
        (plan.rt.publisher_priority, plan.rt.subscriber_priority),
        (80, 80)
    );
    assert_eq!(plan.ring_setup, RingSetup::CoopTaskrun);
    assert_eq!(plan.transport_settings.futex.futex_wake, FutexWake::IoUring);
    assert_eq!(
        plan.break_on_ns,
        Some(200_000),
        "--break-on is resolved into the plan"
    );
    assert!(plan.break_on_continue);
    assert_eq!(
        plan.inject_fault,
        Some(rtsoak_record::plan::Fault::RtWakeLost)
    );
    assert!(plan.layout_notes.is_empty(), "{:?}", plan.layout_notes);
}

#[test]
fn command_line_rt_cpus_must_be_exactly_two_and_online() {
    let ov = Overrides {
        rt_cpus: Some(vec![1, 2, 3]),
        ..Overrides::default()
    };
    let text = error_text("", &ov, &jetson());
    assert!(text.contains("exactly two"), "{text}");

    let ov = Overrides {
        rt_cpus: Some(vec![4, 8]),
        ..Overrides::default()
    };
    let err = resolve_text("", &ov, &jetson()).unwrap_err();
    assert!(
        err.to_string()
            .contains("CPU 8 (from the command line) is not online"),
        "{err}"
    );
    assert_eq!(invalid_key(err), "cpus.subscriber");
}

#[test]
fn the_jetson_profile_is_the_seed_setup_and_refuses_a_smaller_machine() {
    let (name, profile) = load("jetson-orin-nano").unwrap();
    let plan = resolve(&name, &profile, &Overrides::default(), &jetson(), &known()).unwrap();
    assert_eq!((plan.rt.publisher_cpu, plan.rt.subscriber_cpu), (4, 5));
    assert_eq!(plan.noise_cpus, vec![0, 1]);
    assert_eq!(
        (plan.rt.policy, plan.rt.publisher_priority),
        (Policy::Fifo, 40)
    );
    assert_eq!(
        (plan.period_ns, plan.duration_ns),
        (500_000, 600_000_000_000)
    );
    assert_eq!(
        (plan.noise.queue.period_ns, plan.noise.queue.priority),
        (200_000, 20)
    );
    assert_eq!(
        (
            plan.noise.bursts.priority,
            plan.noise.bursts.min_ns,
            plan.noise.bursts.max_ns
        ),
        (50, 20_000, 1_000_000)
    );
    assert!(plan.layout_notes.is_empty(), "{:?}", plan.layout_notes);
    let error = resolve(
        &name,
        &profile,
        &Overrides::default(),
        &two_cpus(),
        &known(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("cpus.publisher"), "{error}");
}

#[test]
fn rounds_split_the_duration_and_each_round_must_measure_100_periods() {
    let plan = resolve_text(
        "[run]\nduration_s = 10\nrounds = 4\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert_eq!(plan.rounds, 4);
    assert_eq!(
        plan.duration_ns, 10_000_000_000,
        "the duration is per transport"
    );
    assert_eq!(plan.round_duration_ns(), 2_500_000_000);
    assert_eq!(plan.measured_periods(), 5_000);

    let err = resolve_text(
        "[run]\nduration_s = 1\nperiod_us = 5000\nrounds = 3\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("at most 2 with this duration"), "{text}");
    assert_eq!(invalid_key(err), "run.rounds");
}

#[test]
fn a_command_line_rounds_wins_and_is_named_as_such_when_wrong() {
    let ov = Overrides {
        rounds: Some(2),
        ..Default::default()
    };
    assert_eq!(resolve_text("", &ov, &jetson()).unwrap().rounds, 2);
    let ov = Overrides {
        rounds: Some(0),
        ..Default::default()
    };
    assert!(error_text("", &ov, &jetson()).contains("0 (from the command line)"));
}

#[test]
fn a_list_of_ring_setups_becomes_variants_in_order_without_duplicates() {
    let plan = resolve_text(
        "[rt]\nring_setup = [\"none\", \"defer-taskrun\", \"none\"]\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert_eq!(plan.ring_setup, RingSetup::None);
    assert_eq!(
        plan.ring_setups(),
        vec![RingSetup::None, RingSetup::DeferTaskrun]
    );
    let one = resolve_text(
        "[rt]\nring_setup = \"coop-taskrun\"\n",
        &Overrides::default(),
        &jetson(),
    )
    .unwrap();
    assert!(
        one.ring_setup_variants.is_empty(),
        "one setup is no comparison"
    );
    assert_eq!(one.ring_setups(), vec![RingSetup::CoopTaskrun]);
    let error = error_text("[rt]\nring_setup = []\n", &Overrides::default(), &jetson());
    assert!(error.contains("rt.ring_setup"), "{error}");
}

/// Workers count an interval's samples in 32-bit buckets (`stats::new_interval_histogram`):
/// the plan's limits must keep every series of every interval below `u32::MAX` samples.
#[test]
fn no_accepted_plan_can_fill_a_32_bit_bucket_in_one_interval() {
    let limits = "[run]\nperiod_us = 50\ninterval_s = 3600\nduration_s = 604800\n\
                  [noise.queue]\npublishers = 16\nsubscribers = 16\nperiod_us = 50\n\
                  lifetime_min_ms = 600000\nlifetime_max_ms = 600000\n";
    let plan = resolve_text(limits, &Overrides::default(), &jetson()).unwrap();
    let queue = &plan.noise.queue;
    let per_publisher = |span_ns: u64, period_ns: u64| span_ns / period_ns + 1;
    // The RT pair's own series: one sample per period.
    let rt = per_publisher(plan.interval_ns, plan.period_ns);
    // The RT subscriber's other_delivery: every noise publisher's every message.
    let other = u64::from(queue.publishers) * per_publisher(plan.interval_ns, queue.period_ns);
    // A noise subscriber ships one interval for its whole life.
    let noise = u64::from(queue.publishers) * per_publisher(queue.lifetime_max_ns, queue.period_ns);
    let most = rt.max(other).max(noise);
    assert!(most < u64::from(u32::MAX), "{most} samples in one interval");
    // One step past any of these limits is refused.
    for past in [
        "[run]\nperiod_us = 49\n",
        "[run]\ninterval_s = 3601\n",
        "[noise.queue]\npublishers = 17\n",
        "[noise.queue]\nperiod_us = 49\n",
        "[noise.queue]\nlifetime_max_ms = 600001\n",
    ] {
        assert!(
            resolve_text(past, &Overrides::default(), &jetson()).is_err(),
            "{past}"
        );
    }
}

#[test]
fn the_explainer_runs_by_default_only_where_the_coordinator_has_a_cpu_of_its_own() {
    let note = |plan: &RunPlan| {
        plan.layout_notes
            .iter()
            .any(|n| n.kind == LayoutNoteKind::ExplainOff)
    };
    let default = Overrides::default();
    let plan = resolve_text("", &default, &jetson()).unwrap();
    assert!(plan.explain && !note(&plan), "housekeeping CPUs: on");
    let plan = resolve_text("", &default, &two_cpus()).unwrap();
    assert!(
        !plan.explain && note(&plan),
        "every CPU an RT CPU: off, and said"
    );
    let forced = Overrides {
        explain: true,
        ..Overrides::default()
    };
    let plan = resolve_text("", &forced, &two_cpus()).unwrap();
    assert!(plan.explain && !note(&plan), "--explain runs it anyway");
    let plan = resolve_text("[run]\nexplain = \"on\"\n", &default, &two_cpus()).unwrap();
    assert!(plan.explain);
    let plan = resolve_text("[run]\nexplain = \"off\"\n", &default, &jetson()).unwrap();
    assert!(!plan.explain && !note(&plan));
    let off = Overrides {
        no_explain: true,
        keep_trace: false,
        ..Overrides::default()
    };
    assert!(!resolve_text("", &off, &jetson()).unwrap().explain);
    assert!(
        parse("test", "[run]\nexplain = true\n").is_err(),
        "auto, on or off"
    );
}

#[test]
fn the_kcidb_origin_is_rtsoak_unless_the_profile_or_the_command_line_names_one_kcidb_takes() {
    let origin = |text: &str, ov: &Overrides| {
        let plan = resolve_text(text, ov, &two_cpus()).unwrap();
        plan.export.kcidb_origin.as_str().to_string()
    };
    let none = Overrides::default();
    assert_eq!(origin("", &none), "rtsoak");
    let profile = "[export]\nkcidb_origin = \"board_lab\"\n";
    assert_eq!(origin(profile, &none), "board_lab");
    let flag = Overrides {
        kcidb_origin: Some("night_lab".parse().unwrap()),
        ..Overrides::default()
    };
    assert_eq!(origin(profile, &flag), "night_lab", "the flag wins");
    let bad = "[export]\nkcidb_origin = \"Board-Lab\"\n";
    let err = resolve_text(bad, &none, &two_cpus()).unwrap_err();
    let text = err.to_string();
    assert_eq!(invalid_key(err), "export.kcidb_origin");
    assert!(
        text.contains("\"Board-Lab\"") && text.contains("^[a-z0-9_]+$"),
        "{text}"
    );
    assert!(
        parse("test", "[export]\norigin = \"x\"\n").is_err(),
        "unknown keys are errors"
    );
}
