//! What each kind of noise asked for and what it got: the setups noise workers (and burst
//! threads) recorded about themselves, judged one by one against what each was asked and folded
//! into a few counts per kind, since a run starts hundreds of short-lived queue-noise processes.
//!
//! Pure: it reads records, never the kernel, and keeps no per-process list.

use serde::{Deserialize, Serialize};

use crate::Policy;
use crate::cpulist;
use crate::{Role, RtSetup};

/// Distinct reasons kept per kind of noise.
const MAX_REASONS: usize = 3;

/// A kind of noise whose setup is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseKind {
    /// Queue-noise publisher processes.
    NoisePublisher,
    /// Queue-noise subscriber processes.
    NoiseSubscriber,
    /// Threads of the burst worker, one per burst CPU, each taking its own policy.
    BurstThread,
    /// The load worker (its generator threads inherit its CPUs and policy).
    Load,
}

impl NoiseKind {
    /// The kind a noise worker of `role` records (the burst worker records its threads).
    pub fn of(role: Role) -> Option<Self> {
        match role {
            Role::NoisePublisher => Some(NoiseKind::NoisePublisher),
            Role::NoiseSubscriber => Some(NoiseKind::NoiseSubscriber),
            Role::Burst => Some(NoiseKind::BurstThread),
            Role::Load => Some(NoiseKind::Load),
            Role::Publisher | Role::Subscriber => None,
        }
    }

    /// One of them, in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            NoiseKind::NoisePublisher => "noise publisher",
            NoiseKind::NoiseSubscriber => "noise subscriber",
            NoiseKind::BurstThread => "burst thread",
            NoiseKind::Load => "load worker",
        }
    }

    /// Several of them, in a sentence.
    pub fn plural(self) -> &'static str {
        match self {
            NoiseKind::NoisePublisher => "noise publishers",
            NoiseKind::NoiseSubscriber => "noise subscribers",
            NoiseKind::BurstThread => "burst threads",
            NoiseKind::Load => "load workers",
        }
    }
}

/// One policy and priority obtained, and by how many.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Obtained {
    /// Policy the kernel reported (`fifo`, `rr`, `other`, ...).
    pub policy: String,
    /// Priority the kernel reported.
    pub priority: u8,
    /// Workers (or burst threads) that ran with it.
    pub count: u64,
}

/// What one kind of noise asked for, and what its workers got, folded over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoiseSetup {
    /// Policy the profile asked for.
    pub policy_requested: String,
    /// Priority the profile asked for.
    pub priority_requested: u8,
    /// CPUs the profile put this noise on (a burst thread asks for one of them).
    pub cpus_requested: Vec<usize>,
    /// Workers (burst: threads) whose setup was recorded. One that died before reporting is
    /// not among them (it is a failure of its own).
    pub recorded: u64,
    /// Of those, how many got the policy and priority they asked for and stayed on their CPUs.
    pub as_asked: u64,
    /// Of those, how many did not (each one is also a noise failure).
    pub not_as_asked: u64,
    /// Every distinct policy and priority obtained, with how many got it.
    pub obtained: Vec<Obtained>,
    /// CPUs in the workers' affinity masks after pinning, all workers.
    pub cpus_allowed: Vec<usize>,
    /// CPUs the workers were seen running on, all workers.
    pub cpus_observed: Vec<usize>,
    /// Why some did not get what they asked for: the first few distinct reasons.
    pub reasons: Vec<String>,
}

impl NoiseSetup {
    /// Nothing recorded yet of noise that asks for `policy`/`priority` on `cpus`.
    pub fn asking(policy: Policy, priority: u8, cpus: &[usize]) -> Self {
        NoiseSetup {
            policy_requested: policy.name().to_string(),
            priority_requested: priority,
            cpus_requested: cpus.to_vec(),
            ..Default::default()
        }
    }

    /// What was asked, in a sentence: `fifo 20 on CPUs 0-1`.
    pub fn asked(&self) -> String {
        format!(
            "{} on {}",
            policy_text(&self.policy_requested, self.priority_requested),
            cpus_text(&self.cpus_requested)
        )
    }

    /// Fold one worker's (or burst thread's) setup in. Returns why it did not get what it asked
    /// for, if it did not.
    pub fn record(&mut self, setup: &RtSetup) -> Option<String> {
        self.recorded += 1;
        self.add_obtained(Obtained {
            policy: setup.policy.clone(),
            priority: setup.priority,
            count: 1,
        });
        union(&mut self.cpus_allowed, &setup.cpus_allowed);
        union(&mut self.cpus_observed, &setup.cpus_observed);
        let reason = shortfall(setup);
        match &reason {
            None => self.as_asked += 1,
            Some(reason) => {
                self.not_as_asked += 1;
                self.add_reason(reason);
            }
        }
        reason
    }

    /// Add another run's record of the same kind (to speak of several runs at once).
    pub fn absorb(&mut self, other: &NoiseSetup) {
        self.recorded += other.recorded;
        self.as_asked += other.as_asked;
        self.not_as_asked += other.not_as_asked;
        for obtained in &other.obtained {
            self.add_obtained(obtained.clone());
        }
        union(&mut self.cpus_requested, &other.cpus_requested);
        union(&mut self.cpus_allowed, &other.cpus_allowed);
        union(&mut self.cpus_observed, &other.cpus_observed);
        for reason in &other.reasons {
            self.add_reason(reason);
        }
    }

    /// Count `more` under its policy and priority, the list kept in order.
    fn add_obtained(&mut self, more: Obtained) {
        match self
            .obtained
            .iter_mut()
            .find(|o| o.policy == more.policy && o.priority == more.priority)
        {
            Some(obtained) => obtained.count += more.count,
            None => {
                self.obtained.push(more);
                self.obtained.sort();
            }
        }
    }

    /// Keep `reason` where it is new and fewer than [`MAX_REASONS`] are kept.
    fn add_reason(&mut self, reason: &str) {
        if self.reasons.len() < MAX_REASONS && !self.reasons.iter().any(|r| r == reason) {
            self.reasons.push(reason.to_string());
        }
    }

    /// What the workers got, in a sentence: `other (37), fifo 20 (3) on CPUs 0-1`.
    pub fn got(&self) -> String {
        let policies: Vec<String> = self
            .obtained
            .iter()
            .map(|o| format!("{} ({})", policy_text(&o.policy, o.priority), o.count))
            .collect();
        if self.cpus_observed.is_empty() {
            policies.join(", ")
        } else {
            format!(
                "{} on {}",
                policies.join(", "),
                cpus_text(&self.cpus_observed)
            )
        }
    }
}

/// One worker that fell short `reason`, as a noise failure: what it asked for and what it got,
/// without its pid, so that hundreds alike are one message.
pub fn failure(kind: NoiseKind, setup: &RtSetup, reason: &str) -> String {
    format!(
        "a {} asked for {} on {} and got {}: {reason}",
        kind.name(),
        policy_text(&setup.policy_requested, setup.priority_requested),
        cpus_text(&setup.cpus_requested),
        policy_text(&setup.policy, setup.priority)
    )
}

/// Why `setup` is not what it asked for (`None`: it got all of it): the error it recorded,
/// else the policy or priority the kernel reported, else CPUs outside the ones it asked for. An
/// empty affinity mask means it could not be read, which says nothing against the worker.
pub(crate) fn shortfall(setup: &RtSetup) -> Option<String> {
    if let Some(error) = &setup.policy_error {
        return Some(error.clone());
    }
    if setup.policy != setup.policy_requested
        || (takes_priority(&setup.policy) && setup.priority != setup.priority_requested)
    {
        return Some(format!(
            "the kernel reported {} after setup",
            policy_text(&setup.policy, setup.priority)
        ));
    }
    let outside = |cpus: &[usize]| -> Vec<usize> {
        cpus.iter()
            .copied()
            .filter(|cpu| !setup.cpus_requested.contains(cpu))
            .collect()
    };
    let allowed_outside = outside(&setup.cpus_allowed);
    if !allowed_outside.is_empty() {
        return Some(format!(
            "its affinity also held {}, outside {}",
            cpus_text(&allowed_outside),
            cpus_text(&setup.cpus_requested)
        ));
    }
    let seen_outside = outside(&setup.cpus_observed);
    if !seen_outside.is_empty() {
        return Some(format!(
            "it was seen running on {}, outside {}",
            cpus_text(&seen_outside),
            cpus_text(&setup.cpus_requested)
        ));
    }
    None
}

/// `fifo 20`, or `other` (whose priority means nothing).
pub(crate) fn policy_text(policy: &str, priority: u8) -> String {
    if takes_priority(policy) {
        format!("{policy} {priority}")
    } else {
        policy.to_string()
    }
}

/// Whether a policy as the kernel names it (`sys::sched::current_policy`) has a priority.
fn takes_priority(policy: &str) -> bool {
    matches!(policy, "fifo" | "rr")
}

/// `CPU 3` or `CPUs 0-1`.
fn cpus_text(cpus: &[usize]) -> String {
    match cpus {
        [] => "no CPU".to_string(),
        [cpu] => format!("CPU {cpu}"),
        _ => format!("CPUs {}", cpulist::format(cpus)),
    }
}

/// Add `more` to the sorted set `into`.
fn union(into: &mut Vec<usize>, more: &[usize]) {
    for &cpu in more {
        if !into.contains(&cpu) {
            into.push(cpu);
        }
    }
    into.sort_unstable();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A setup that asked for `fifo 20` on CPUs 0-1, was pinned to them, and got `policy`
    /// `priority`, was seen on `observed` and recorded `error`.
    fn setup(policy: &str, priority: u8, observed: &[usize], error: Option<&str>) -> RtSetup {
        RtSetup {
            cpus_requested: vec![0, 1],
            cpus_allowed: vec![0, 1],
            cpus_observed: observed.to_vec(),
            policy_requested: "fifo".into(),
            priority_requested: 20,
            policy: policy.into(),
            priority,
            policy_error: error.map(str::to_string),
            ..Default::default()
        }
    }

    const EPERM: &str = "sched_setscheduler failed: EPERM: Operation not permitted";

    #[test]
    fn workers_that_got_what_they_asked_for_count_as_such() {
        let mut noise = NoiseSetup::asking(Policy::Fifo, 20, &[0, 1]);
        assert_eq!(noise.record(&setup("fifo", 20, &[0], None)), None);
        assert_eq!(noise.record(&setup("fifo", 20, &[1], None)), None);
        assert_eq!(
            (noise.recorded, noise.as_asked, noise.not_as_asked),
            (2, 2, 0)
        );
        assert_eq!(
            noise.obtained,
            [Obtained {
                policy: "fifo".into(),
                priority: 20,
                count: 2
            }]
        );
        assert_eq!(noise.cpus_observed, [0, 1]);
        assert!(noise.reasons.is_empty());
    }

    #[test]
    fn a_worker_refused_its_policy_is_counted_with_what_it_got_and_why() {
        let mut noise = NoiseSetup::asking(Policy::Fifo, 20, &[0, 1]);
        noise.record(&setup("fifo", 20, &[0], None));
        for _ in 0..3 {
            assert_eq!(
                noise
                    .record(&setup("other", 0, &[1], Some(EPERM)))
                    .as_deref(),
                Some(EPERM)
            );
        }
        assert_eq!(
            (noise.recorded, noise.as_asked, noise.not_as_asked),
            (4, 1, 3)
        );
        assert_eq!(noise.reasons, [EPERM], "one reason, however many hit it");
        assert_eq!(noise.asked(), "fifo 20 on CPUs 0-1");
        assert_eq!(noise.got(), "fifo 20 (1), other (3) on CPUs 0-1");
    }

    #[test]
    fn a_failure_says_which_noise_what_it_asked_for_what_it_got_and_why() {
        let refused = setup("other", 0, &[1], Some(EPERM));
        assert_eq!(
            failure(NoiseKind::NoisePublisher, &refused, EPERM),
            format!("a noise publisher asked for fifo 20 on CPUs 0-1 and got other: {EPERM}")
        );
    }

    #[test]
    fn the_record_is_keyed_by_kind_and_older_results_have_none() {
        let mut activity = crate::result::NoiseActivity::default();
        let mut bursts = NoiseSetup::asking(Policy::Fifo, 50, &[0, 1]);
        bursts.record(&setup("other", 0, &[0], Some(EPERM)));
        activity.setup.insert(NoiseKind::BurstThread, bursts);
        let json = serde_json::to_value(&activity).unwrap();
        assert_eq!(json["setup"]["burst_thread"]["not_as_asked"], 1);
        let back: crate::result::NoiseActivity = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, activity);
        let mut older = json;
        older.as_object_mut().unwrap().remove("setup");
        let older: crate::result::NoiseActivity = serde_json::from_value(older).unwrap();
        assert!(older.setup.is_empty());
    }

    #[test]
    fn a_worker_seen_outside_its_cpus_did_not_get_what_it_asked_for() {
        let reason = shortfall(&setup("fifo", 20, &[0, 3], None)).unwrap();
        assert_eq!(reason, "it was seen running on CPU 3, outside CPUs 0-1");
        let mut wide = setup("fifo", 20, &[0], None);
        wide.cpus_allowed = vec![0, 1, 2, 3];
        assert_eq!(
            shortfall(&wide).unwrap(),
            "its affinity also held CPUs 2-3, outside CPUs 0-1"
        );
        let mut unreadable = setup("fifo", 20, &[0], None);
        unreadable.cpus_allowed.clear();
        assert_eq!(
            shortfall(&unreadable),
            None,
            "an unread mask is no evidence"
        );
    }

    #[test]
    fn a_lower_priority_without_an_error_still_falls_short() {
        let reason = shortfall(&setup("fifo", 10, &[0], None)).unwrap();
        assert_eq!(reason, "the kernel reported fifo 10 after setup");
    }

    #[test]
    fn sched_other_asks_no_priority() {
        let mut asked_other = setup("other", 0, &[0], None);
        asked_other.policy_requested = "other".into();
        asked_other.priority_requested = 0;
        assert_eq!(shortfall(&asked_other), None);
    }

    #[test]
    fn runs_add_up_and_keep_a_few_distinct_reasons() {
        let mut first = NoiseSetup::asking(Policy::Fifo, 20, &[0, 1]);
        first.record(&setup("other", 0, &[0], Some(EPERM)));
        first.record(&setup(
            "other",
            0,
            &[0],
            Some("pinning to CPUs [0, 1]: EINVAL"),
        ));
        let mut second = NoiseSetup::asking(Policy::Fifo, 20, &[0, 1]);
        second.record(&setup("fifo", 20, &[1], None));
        for reason in ["a", "b", "c"] {
            second.record(&setup("other", 0, &[1], Some(reason)));
        }
        first.absorb(&second);
        assert_eq!(
            (first.recorded, first.as_asked, first.not_as_asked),
            (6, 1, 5)
        );
        assert_eq!(first.obtained.len(), 2);
        assert_eq!(first.obtained[1].count, 5, "{:?}", first.obtained);
        assert_eq!(first.cpus_observed, [0, 1]);
        assert_eq!(first.reasons.len(), MAX_REASONS);
        assert_eq!(first.reasons[0], EPERM);
    }
}
