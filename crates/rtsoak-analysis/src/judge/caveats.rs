//! "What this result is worth": the conditions a reader of the figures must know, derived from
//! the system check recorded with the result (or, in results written before there was one, the
//! host facts), the plan, what was held on `/dev/cpu_dma_latency`, what each RT worker
//! recorded about itself (its setup, and any io-wq worker thread it had while measuring), what
//! the noise got of what the profile asked for, and what the measurement could not see (missed
//! periods, a delivery that may have been carried by another wakeup). Pure: it reads a result
//! document and says nothing it cannot point to in it.

use std::collections::BTreeMap;

use crate::merge::by_transport;
use rtsoak_record::Role;
use rtsoak_record::SystemCheck;
use rtsoak_record::cpulist;
use rtsoak_record::plan::{LayoutNote, LayoutNoteKind};
use rtsoak_record::result::noise_setup::{NoiseKind, NoiseSetup};
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Caveat, CaveatKind, CheckId, Level, Severity};

/// Every caveat of `doc` as a sentence, most serious first.
pub fn caveats(doc: &ResultDoc) -> Vec<String> {
    ranked(doc).into_iter().map(|c| c.text).collect()
}

/// Every caveat of `doc` with its severity and kind, most serious first (the order found within
/// a severity: the system check's problems before its warnings).
pub fn ranked(doc: &ResultDoc) -> Vec<Caveat> {
    let mut caveats = match &doc.system_check {
        Some(check) => from_check(doc, check),
        None => from_host(doc),
    };
    caveats.extend(super::sharing::caveats(doc));
    caveats.extend(doc.plan.layout_notes.iter().filter_map(layout_caveat));
    if let Some(hold) = &doc.cpu_dma_latency
        && hold.held_us.is_none()
        && deep_idle_states(doc)
        && let Some(reason) = &hold.not_held_because
    {
        caveats.push(Caveat::new(
            Severity::Distorts,
            CheckId::CpuIdle,
            format!(
                "{} was not held ({reason}): the RT CPUs could enter deep idle states and \
                 wakeups pay their exit latency",
                hold.path
            ),
        ));
    }
    for note in worker_notes(doc)
        .into_iter()
        .chain(io_wq_notes(doc))
        .chain(noise_notes(doc))
        .chain(explain_notes(doc))
    {
        if !caveats.iter().any(|c| c.text == note.text) {
            caveats.push(note);
        }
    }
    caveats.extend(measurement_notes(doc));
    caveats.sort_by_key(|c| c.severity);
    caveats
}

/// How much a condition the system check found changes what the figures mean, by its finding
/// id: a kernel without PREEMPT_RT, no real-time priority and noise on the RT CPUs change what
/// every figure means; RCU callbacks and SMT are details; the rest shift the figures. Compaction
/// allowed to move locked pages (`vm.compact-unevictable`) is among the rest: each page it moves
/// costs the RT worker that touches it next one minor fault, a spike in figures that are still
/// real-time figures, and the workers count those faults themselves (`hygiene.minor_faults`).
pub fn check_severity(id: &CheckId) -> Severity {
    match id {
        CheckId::KernelPreemptRt
        | CheckId::PrivilegesRtPriority
        | CheckId::LayoutNoiseSharesRtCpu => Severity::Invalidates,
        CheckId::CpusRcuNocbs | CheckId::CpuSmt => Severity::Detail,
        _ => Severity::Distorts,
    }
}

/// A note the plan's layout left (`plan.layout_notes`): noise or the coordinator put on the RT
/// CPUs is the plan's intent, and what really shared them is [`super::sharing`]'s to say from
/// the runs, so those notes are no caveat; the explainer left off is a detail; anything else
/// (an RT priority of 99) shifts the figures.
fn layout_caveat(note: &LayoutNote) -> Option<Caveat> {
    let (severity, kind) = match note.kind {
        LayoutNoteKind::SharesRtCpus => return None,
        LayoutNoteKind::ExplainOff => (Severity::Detail, CaveatKind::ExplainOff),
        LayoutNoteKind::BurstsOnRtCpus
        | LayoutNoteKind::NoBursts
        | LayoutNoteKind::RtPriority99
        | LayoutNoteKind::Other => (Severity::Distorts, CaveatKind::Layout),
    };
    Some(Caveat::new(severity, kind, &note.text))
}

/// The spikes of a run the explainer could not trace are unexplained, and why.
fn explain_notes(doc: &ResultDoc) -> Vec<Caveat> {
    doc.runs
        .iter()
        .filter_map(|run| run.explanation.as_ref()?.tracing.unavailable.clone())
        .take(1)
        .map(|reason| {
            let text = format!("the spikes are unexplained: no kernel trace ({reason})");
            Caveat::new(Severity::Detail, CaveatKind::ExplainUnavailable, text)
        })
        .collect()
}

/// Over the measured transports (rounds merged), one line each: which missed periods, with how
/// many of how many planned, and which cannot tell their own wake apart.
fn measurement_notes(doc: &ResultDoc) -> Vec<Caveat> {
    let mut missed = Vec::new();
    let mut not_attributable = Vec::new();
    for t in by_transport(doc) {
        if t.status == RunStatus::Unsupported {
            continue;
        }
        let (name, integrity) = (t.label.as_str(), &t.integrity);
        let (count, planned) = (integrity.missed_periods, integrity.planned_periods);
        if count > 0 {
            missed.push(if planned > 0 {
                format!(
                    "{name} {count} of {planned} planned ({})",
                    percent(count, planned)
                )
            } else {
                format!("{name} {count}")
            });
        }
        if !integrity.own_wake.attributable() {
            not_attributable.push(name.to_string());
        }
    }
    let mut notes = Vec::new();
    if !missed.is_empty() {
        let text = format!(
            "periods were missed (their deadline passed before the RT publisher could send): \
             {}. Those periods have no sample in any histogram, so the \
             latencies leave out the moments the publisher was held up longest",
            missed.join(", ")
        );
        notes.push(Caveat::new(
            Severity::Distorts,
            CaveatKind::MissedPeriods,
            text,
        ));
    }
    if !not_attributable.is_empty() {
        let text = format!(
            "own wake not attributable for {}: the RT subscriber cannot tell the RT publisher's \
             own wake from other wakeups, so a delivery may have been carried by another wakeup \
             (a noise publisher's, an earlier message's), and the own wake path has no figure",
            not_attributable.join(", ")
        );
        notes.push(Caveat::new(Severity::Detail, CaveatKind::OwnWake, text));
    }
    notes
}

/// `part` as a percentage of `whole` to two significant digits (`0.12 %`, `3.5 %`, `40 %`).
fn percent(part: u64, whole: u64) -> String {
    let value = part as f64 * 100.0 / whole as f64;
    let decimals = if value >= 10.0 {
        0
    } else {
        (1 - value.log10().floor() as i32).clamp(1, 9) as usize
    };
    format!("{value:.decimals$} %")
}

/// The check's summary (its distinct worth lines, problems first), each as the caveat of its
/// finding, less the findings whose truth depends on what ran ([`super::sharing`] derives those
/// from the runs), less its idle-state line when the result records the `/dev/cpu_dma_latency` hold:
/// held, the CPUs stayed out of those states; not held, the hold's own caveat says so with the
/// reason.
fn from_check(doc: &ResultDoc, check: &SystemCheck) -> Vec<Caveat> {
    let held = doc.cpu_dma_latency.is_some();
    let mut caveats: Vec<Caveat> = Vec::new();
    for level in [Level::Problem, Level::Warning] {
        for finding in check.findings.iter().filter(|f| f.level == level) {
            let Some(line) = &finding.worth else {
                continue;
            };
            let hidden = (held && finding.id == CheckId::CpuIdle)
                || super::sharing::RUN_DERIVED.contains(&finding.id);
            if !hidden && !caveats.iter().any(|c| &c.text == line) {
                let severity = check_severity(&finding.id);
                caveats.push(Caveat::new(severity, finding.id.clone(), line));
            }
        }
    }
    caveats
}

/// Whether the check found enabled deep idle states on the RT CPUs (unknown counts as yes).
fn deep_idle_states(doc: &ResultDoc) -> bool {
    doc.system_check
        .as_ref()
        .is_none_or(|check| check.by_id(&CheckId::CpuIdle).any(|f| f.level != Level::Ok))
}

/// The caveats results had before the system check: RT kernel and isolation from host facts.
fn from_host(doc: &ResultDoc) -> Vec<Caveat> {
    let mut caveats = Vec::new();
    let host = &doc.host;
    if !host.preempt_rt {
        let text = format!(
            "not a PREEMPT_RT kernel ({}): the figures show this kernel's latencies, not an RT kernel's",
            host.kernel_release.as_deref().unwrap_or("release unknown")
        );
        caveats.push(Caveat::new(
            Severity::Invalidates,
            CheckId::KernelPreemptRt,
            text,
        ));
    }
    let rt_cpus = [doc.plan.rt.publisher_cpu, doc.plan.rt.subscriber_cpu];
    let not_isolated: Vec<usize> = rt_cpus
        .iter()
        .copied()
        .filter(|cpu| !host.isolated.contains(cpu))
        .collect();
    if !not_isolated.is_empty() {
        let text = format!(
            "RT CPU{} {} not isolated (isolcpus=/nohz_full=): other tasks and interrupts may run there",
            if not_isolated.len() > 1 { "s" } else { "" },
            cpulist::format(&not_isolated)
        );
        caveats.push(Caveat::new(Severity::Distorts, CheckId::CpusIsolated, text));
    }
    caveats
}

/// What the RT workers recorded about their own setup, each distinct note once: a worker
/// without its real-time policy changes what every figure means; memory not (all) locked can
/// add page faults.
fn worker_notes(doc: &ResultDoc) -> Vec<Caveat> {
    let mut notes = Vec::new();
    for worker in doc.runs.iter().flat_map(|run| &run.workers) {
        let role = match worker.role {
            Role::Publisher => "publisher",
            Role::Subscriber => "subscriber",
            other => other.name(),
        };
        let setup = &worker.setup;
        if let Some(error) = &setup.policy_error {
            let text = format!(
                "the RT {role} ran {} priority {} instead of {} {}: {error}",
                setup.policy, setup.priority, setup.policy_requested, setup.priority_requested
            );
            notes.push(Caveat::new(
                Severity::Invalidates,
                CaveatKind::WorkerPolicy,
                text,
            ));
        }
        match (&setup.memory_lock_error, setup.memory_locked) {
            (Some(note), false) => {
                let partly = setup.memory_locked_bytes.is_some_and(|bytes| bytes > 0);
                let how = if partly {
                    "not all locked"
                } else {
                    "not locked"
                };
                let text = format!(
                    "the RT {role}'s memory was {how}, so page faults can add latency: {note}"
                );
                notes.push(Caveat::new(
                    Severity::Distorts,
                    CaveatKind::WorkerMemory,
                    text,
                ));
            }
            (Some(note), true) => {
                let text = format!("the RT {role}'s memory: {note}");
                notes.push(Caveat::new(
                    Severity::Detail,
                    CaveatKind::WorkerMemory,
                    text,
                ));
            }
            (None, _) => {}
        }
    }
    notes.dedup();
    notes
}

/// RT workers that had io-wq worker threads (`iou-wrk`) while measuring: one line per transport
/// and role, with the most any of its runs saw. Such a worker's io_uring requests (a
/// subscriber's wait, most likely) ran on a kernel thread, so its figures include a thread hop
/// the transport's users would not choose.
fn io_wq_notes(doc: &ResultDoc) -> Vec<Caveat> {
    let mut most: BTreeMap<(String, &str), u64> = BTreeMap::new();
    for run in &doc.runs {
        for worker in &run.workers {
            let role = match worker.role {
                Role::Publisher => "publisher",
                Role::Subscriber => "subscriber",
                _ => continue,
            };
            if let Some(workers @ 1..) = worker.hygiene.io_wq_workers {
                let label = rtsoak_record::result::RunKey::of(run).label();
                let seen = most.entry((label, role)).or_default();
                *seen = (*seen).max(workers);
            }
        }
    }
    most.into_iter()
        .map(|((transport, role), workers)| {
            let text = format!(
                "the RT {role} of {transport} had {workers} io-wq worker thread{} (iou-wrk) \
                 while measuring: some of its io_uring requests ran on a kernel worker thread, \
                 a thread hop its figures include",
                if workers == 1 { "" } else { "s" }
            );
            Caveat::new(Severity::Distorts, CaveatKind::WorkerIoWq, text)
        })
        .collect()
}

/// Noise that did not get what the profile asked for: one line per kind, over every run that
/// recorded its noise's setup, saying what was asked, what was got and why. The figures were
/// measured beside other noise than the profile describes (toothless bursts, queue noise that
/// never preempted anything, or noise where it was not meant to be).
fn noise_notes(doc: &ResultDoc) -> Vec<Caveat> {
    let mut kinds: BTreeMap<NoiseKind, (NoiseSetup, usize)> = BTreeMap::new();
    let mut noisy_runs = 0;
    for run in doc.runs.iter().filter(|run| !run.noise.setup.is_empty()) {
        noisy_runs += 1;
        for (&kind, setup) in &run.noise.setup {
            let fell_short = usize::from(setup.not_as_asked > 0);
            match kinds.get_mut(&kind) {
                Some((all, runs)) => {
                    all.absorb(setup);
                    *runs += fell_short;
                }
                None => {
                    kinds.insert(kind, (setup.clone(), fell_short));
                }
            }
        }
    }
    kinds
        .into_iter()
        .filter(|(_, (all, _))| all.not_as_asked > 0)
        .map(|(kind, (all, runs))| {
            let across = if noisy_runs > 1 {
                format!(", in {runs} of {noisy_runs} runs")
            } else {
                String::new()
            };
            let text = format!(
                "{} of {} {} did not get {} as the profile asked{across} (they got {}): {}",
                all.not_as_asked,
                all.recorded,
                kind.plural(),
                all.asked(),
                all.got(),
                all.reasons.join("; ")
            );
            Caveat::new(Severity::Distorts, CaveatKind::NoiseSetup, text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::Policy;
    use rtsoak_record::result::{ResultDoc, WorkerRecord};
    use rtsoak_record::{Hygiene, RtSetup};

    #[test]
    fn missed_periods_name_each_transport_with_its_share_of_the_planned_periods() {
        let doc = rtsoak_testing::fixture::two_round_doc();
        let caveats = caveats(&doc);
        let missed: Vec<&String> = caveats.iter().filter(|c| c.contains("missed")).collect();
        assert_eq!(
            missed.len(),
            1,
            "one line for every transport: {caveats:#?}"
        );
        assert!(
            missed[0].starts_with(
                "periods were missed (their deadline passed before the RT publisher could send): \
                 futex 5 of 4007 planned (0.12 %), futex-syscall 2 of 4004 planned (0.050 %). \
                 Those periods have no sample in any histogram"
            ),
            "{}",
            missed[0]
        );
    }

    #[test]
    fn a_run_without_planned_periods_still_names_its_missed_ones() {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        doc.runs[0].integrity.missed_periods = 3;
        doc.runs[0].integrity.planned_periods = 0;
        let caveats = caveats(&doc);
        assert!(
            caveats
                .iter()
                .any(|c| c.contains("could send): eventfd 3. Those"))
        );
    }

    #[test]
    fn only_transports_that_cannot_tell_their_own_wake_apart_are_named() {
        let doc = rtsoak_testing::fixture::two_round_doc();
        let caveats = caveats(&doc);
        let carried: Vec<&String> = caveats
            .iter()
            .filter(|c| c.contains("carried by another wakeup"))
            .collect();
        assert_eq!(carried.len(), 1, "{caveats:#?}");
        assert!(carried[0].starts_with("own wake not attributable for futex-syscall: "));
        let exact = super::caveats(&rtsoak_testing::fixture::one_run_doc());
        assert!(!exact.iter().any(|c| c.contains("not attributable")));
    }

    #[test]
    fn percentages_keep_two_significant_digits() {
        assert_eq!(percent(5, 4007), "0.12 %");
        assert_eq!(percent(1, 7_200_000), "0.000014 %");
        assert_eq!(percent(7, 200), "3.5 %");
        assert_eq!(percent(2, 5), "40 %");
    }

    /// A setup recorded by a worker that asked for `asked` on CPUs 0-1 and got `got`.
    fn recorded(asked: (&str, u8), got: (&str, u8), error: Option<&str>) -> RtSetup {
        RtSetup {
            cpus_requested: vec![0, 1],
            cpus_allowed: vec![0, 1],
            cpus_observed: vec![0],
            policy_requested: asked.0.into(),
            priority_requested: asked.1,
            policy: got.0.into(),
            priority: got.1,
            policy_error: error.map(str::to_string),
            ..Default::default()
        }
    }

    const EPERM: &str = "sched_setscheduler failed: EPERM: Operation not permitted";

    #[test]
    fn noise_that_did_not_get_what_it_asked_for_is_one_caveat_per_kind_over_every_run() {
        let mut doc = rtsoak_testing::fixture::two_round_doc();
        let measured: Vec<usize> = (0..doc.runs.len())
            .filter(|&i| doc.runs[i].noise.enabled)
            .collect();
        let runs = measured.len();
        assert!(runs >= 2, "the fixture has several measured runs");
        for (n, &i) in measured.iter().enumerate() {
            let noise = &mut doc.runs[i].noise;
            let mut publishers = NoiseSetup::asking(Policy::Fifo, 20, &[0, 1]);
            let mut bursts = NoiseSetup::asking(Policy::Fifo, 50, &[0, 1]);
            // Bursts fall short in the first run only; publishers in every run.
            publishers.record(&recorded(("fifo", 20), ("other", 0), Some(EPERM)));
            publishers.record(&recorded(("fifo", 20), ("other", 0), Some(EPERM)));
            let burst = if n == 0 {
                recorded(("fifo", 50), ("other", 0), Some(EPERM))
            } else {
                recorded(("fifo", 50), ("fifo", 50), None)
            };
            bursts.record(&burst);
            noise.setup.insert(NoiseKind::NoisePublisher, publishers);
            noise.setup.insert(NoiseKind::BurstThread, bursts);
        }
        let notes: Vec<String> = noise_notes(&doc).into_iter().map(|c| c.text).collect();
        assert_eq!(
            notes,
            [
                format!(
                    "{} of {} noise publishers did not get fifo 20 on CPUs 0-1 as the profile \
                     asked, in {runs} of {runs} runs (they got other ({}) on CPU 0): {EPERM}",
                    2 * runs,
                    2 * runs,
                    2 * runs
                ),
                format!(
                    "1 of {runs} burst threads did not get fifo 50 on CPUs 0-1 as the profile \
                     asked, in 1 of {runs} runs (they got fifo 50 ({}), other (1) on CPU 0): \
                     {EPERM}",
                    runs - 1
                ),
            ]
        );
        let all = caveats(&doc);
        assert!(notes.iter().all(|note| all.contains(note)), "{all:#?}");
    }

    #[test]
    fn noise_that_got_what_it_asked_for_or_was_never_recorded_adds_no_caveat() {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        assert!(
            noise_notes(&doc).is_empty(),
            "older results record no noise setup"
        );
        let mut publishers = NoiseSetup::asking(Policy::Fifo, 20, &[0, 1]);
        publishers.record(&recorded(("fifo", 20), ("fifo", 20), None));
        doc.runs[0]
            .noise
            .setup
            .insert(NoiseKind::NoisePublisher, publishers);
        assert!(noise_notes(&doc).is_empty());
    }

    /// A one-run result of `transport` whose RT publisher and subscriber saw these io-wq
    /// worker counts.
    fn io_wq_doc(transport: &str, publisher: Option<u64>, subscriber: Option<u64>) -> ResultDoc {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        let worker = |role, io_wq_workers| WorkerRecord {
            role,
            pid: 4242,
            setup: RtSetup::default(),
            hygiene: Hygiene {
                io_wq_workers,
                ..Default::default()
            },
            counters: Default::default(),
            exit: "exit status: 0".into(),
            error: None,
        };
        doc.runs[0].transport = transport.into();
        doc.runs[0].workers = vec![
            worker(Role::Publisher, publisher),
            worker(Role::Subscriber, subscriber),
        ];
        doc
    }

    #[test]
    fn an_rt_worker_that_had_io_wq_threads_is_named_with_its_transport_and_role() {
        let mut doc = io_wq_doc("signalfd", Some(0), Some(1));
        let mut second = doc.runs[0].clone();
        second.workers[1].hygiene.io_wq_workers = Some(2);
        doc.runs.push(second);
        let expected = "the RT subscriber of signalfd had 2 io-wq worker threads (iou-wrk) while \
                        measuring: some of its io_uring requests ran on a kernel worker thread, \
                        a thread hop its figures include";
        let texts = |notes: Vec<Caveat>| notes.into_iter().map(|c| c.text).collect::<Vec<_>>();
        assert_eq!(
            texts(io_wq_notes(&doc)),
            [expected],
            "one line, the most any run saw"
        );
        assert!(caveats(&doc).iter().any(|c| c == expected));
        let publisher = io_wq_doc("msg-ring", Some(1), Some(0));
        assert_eq!(
            texts(io_wq_notes(&publisher)),
            [
                "the RT publisher of msg-ring had 1 io-wq worker thread (iou-wrk) while measuring: \
              some of its io_uring requests ran on a kernel worker thread, a thread hop its \
              figures include"
            ]
        );
    }

    #[test]
    fn rt_workers_without_io_wq_threads_or_unchecked_add_no_caveat() {
        assert!(io_wq_notes(&io_wq_doc("eventfd", Some(0), Some(0))).is_empty());
        assert!(io_wq_notes(&io_wq_doc("eventfd", None, None)).is_empty());
    }
}
