//! Rewording every cause changes nothing but the words: two stored results whose spikes have
//! every kind of cause are judged, then judged and rendered again with every cause shouted
//! (upper-cased). The diff pairs every cause of both, the judge's output is the same, and the
//! rendering differs only in the causes' words.

use super::*;
use crate::json;
use rtsoak_analysis::judge::decision::decide;
use rtsoak_analysis::judge::diff;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::cause::LockHolder;
use rtsoak_record::result::diff::DiffRules;
use rtsoak_record::result::explain::{CauseShare, Explanation, LockKind, SeriesBlame};
use rtsoak_record::{Series, SeriesKey};

fn task(role: TaskRole, name: Option<&str>, priority: &str) -> Culprit {
    Culprit {
        role,
        name: name.map(str::to_string),
        priority: priority.into(),
    }
}

/// One cause of every kind.
fn every_kind() -> Vec<Cause> {
    let burst = task(TaskRole::Burst, None, "FIFO 50");
    vec![
        Cause::Lock {
            lock: LockKind::SleepingSpinlock,
            caller: Some("futex_wake".into()),
            holder: Some(LockHolder {
                role: TaskRole::NoisePublisher,
                boosted_to: Some("FIFO 40".into()),
                preempted_by: Some(burst.clone()),
            }),
        },
        Cause::Lock {
            lock: LockKind::RtMutex,
            caller: None,
            holder: None,
        },
        Cause::Preempted {
            by: task(TaskRole::KernelThread, Some("ktimers/1"), "FIFO 98"),
        },
        Cause::WaitingForCpu { by: burst },
        Cause::IdleWakeup,
        Cause::Blocked {
            woken_by: Some(task(TaskRole::KernelThread, Some("kworker/1"), "normal")),
        },
        Cause::Blocked { woken_by: None },
        Cause::Interrupt {
            name: "24:virtio0".into(),
        },
        Cause::Softirq {
            action: "TIMER".into(),
        },
    ]
}

/// A result whose delivery spikes have `causes` (each `count` times) and 10 unexplained ones,
/// saved and loaded back.
fn stored(causes: &[(Cause, u64)]) -> ResultDoc {
    let mut doc = rtsoak_testing::fixture::one_run_doc();
    let explained: u64 = causes.iter().map(|(_, n)| n).sum();
    let kept = explained + 10;
    let blame = SeriesBlame {
        over_threshold: 2 * kept,
        kept,
        explained,
        unexplained: 10,
        unexplained_on_cpu: 4,
        causes: causes
            .iter()
            .map(|(cause, count)| CauseShare {
                cause: cause.clone(),
                count: *count,
                share_percent: (1000.0 * *count as f64 / kept as f64).round() / 10.0,
                median_us: 100 + count,
            })
            .collect(),
    };
    doc.runs[0].explanation = Some(Explanation {
        series: [(SeriesKey::Rt(Series::Delivery), blame)].into(),
        ..Default::default()
    });
    serde_json::from_slice(&json::render(&doc)).unwrap()
}

#[test]
fn rewording_every_cause_changes_no_pairing_and_no_judgement_only_the_words() {
    let kinds = every_kind();
    // The baseline has every cause but the last, the new result every one but the first.
    let base = stored(
        &kinds[..kinds.len() - 1]
            .iter()
            .cloned()
            .zip(1..)
            .collect::<Vec<_>>(),
    );
    let new = stored(&kinds[1..].iter().cloned().zip(20..).collect::<Vec<_>>());
    let judge = || {
        let d = diff("base", &base, &new, &DiffRules::default());
        (
            d.clone(),
            decide(&base),
            decide(&new),
            crate::diff::render(&d),
        )
    };
    let (english, decided_base, decided_new, said) = judge();
    SHOUT.set(true);
    let (shouted, shouted_base, shouted_new, shouted_said) = judge();
    let loud: Vec<String> = english.causes[0]
        .changes
        .iter()
        .map(|c| cause_or_unexplained(c.cause.as_ref()))
        .collect();
    SHOUT.set(false);

    assert_eq!(shouted, english, "the diff does not depend on the words");
    assert_eq!((shouted_base, shouted_new), (decided_base, decided_new));
    let changes = &english.causes[0].changes;
    for (i, cause) in kinds.iter().enumerate() {
        let paired: Vec<_> = changes
            .iter()
            .filter(|c| c.cause.as_ref() == Some(cause))
            .collect();
        assert_eq!(paired.len(), 1, "{cause:?} is one change: {changes:?}");
        let c = paired[0];
        assert!(!c.unpaired);
        assert_eq!(c.baseline_count > 0.0, i < kinds.len() - 1, "{c:?}");
        assert_eq!(c.new_count > 0.0, i > 0, "{c:?}");
    }
    assert!(changes.iter().any(|c| c.cause.is_none()), "the unexplained");
    // The rendering differs by the causes' words alone: put the English back and it is equal.
    let mut words: Vec<(&String, String)> = changes
        .iter()
        .zip(&loud)
        .map(|(c, loud)| (loud, cause_or_unexplained(c.cause.as_ref())))
        .collect();
    // Longest first: one cause's words may begin another's.
    words.sort_by_key(|(loud, _)| std::cmp::Reverse(loud.len()));
    let mut unshouted = shouted_said.clone();
    for (loud, english) in words {
        assert_ne!(*loud, english);
        unshouted = unshouted.replace(loud.as_str(), &english);
    }
    assert_ne!(shouted_said, said);
    assert_eq!(unshouted, said);
    // And no result holds a cause's words.
    let stored = String::from_utf8(json::render(&new)).unwrap();
    for c in &kinds {
        assert!(!stored.contains(&cause(c)), "{}", cause(c));
    }
}
