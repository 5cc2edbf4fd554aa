//! Reading a version 2 document: it stored a spike's cause as its sentence (a series' causes,
//! the decision's main causes, a baseline diff's cause changes), and version 3 stores the cause
//! itself; it stored the plan's layout notes as sentences, and version 3 gives each its kind. Each sentence is read back into the cause it words, by the words version 2 used
//! (kept here as they were, whatever the report says today); a sentence that is not one of
//! those becomes an `unknown` cause holding it, shown as it was and paired by `diff` only
//! with the same words.

use rtsoak_record::plan::{LayoutNote, LayoutNoteKind};
use rtsoak_record::result::cause::{Cause, Culprit, LockHolder};
use rtsoak_record::result::explain::{LockKind, TaskRole};
use serde_json::Value;

/// What version 2 wrote for the spikes no wait explained, where it wrote a cause.
const UNEXPLAINED: &str = "unexplained";

/// Turn every cause sentence of a version 2 document into its cause, and every layout note
/// into a note of its kind.
pub(super) fn upgrade(value: &mut Value) {
    for note in array(value.pointer_mut("/plan/layout_notes")) {
        if let Value::String(text) = note {
            let typed = LayoutNote::new(layout_note_kind(text), text.as_str());
            *note = serde_json::to_value(typed).unwrap_or(Value::Null);
        }
    }
    for run in array(value.get_mut("runs")) {
        let series = run
            .get_mut("explanation")
            .and_then(|e| e.get_mut("series"))
            .and_then(Value::as_object_mut);
        for blame in series.into_iter().flat_map(|s| s.values_mut()) {
            for share in array(blame.get_mut("causes")) {
                upgrade_cause(share);
            }
        }
    }
    // A main cause keeps its `sentence`: the earliest version 2 builds wrote the median only
    // there, so the report shows it as it was.
    for main in array(value.pointer_mut("/decision/causes")) {
        upgrade_cause(main);
    }
    for changes in array(value.pointer_mut("/verdict/baseline/causes")) {
        for change in array(changes.get_mut("changes")) {
            upgrade_cause(change);
        }
    }
}

/// The kind of a version 2 layout note, by the words version 2 wrote (each note began or
/// ended the same way whatever its figures).
fn layout_note_kind(text: &str) -> LayoutNoteKind {
    if text.ends_with("latencies include that interference") {
        LayoutNoteKind::SharesRtCpus
    } else if text.starts_with("spikes not explained") {
        LayoutNoteKind::ExplainOff
    } else if text.starts_with("no FIFO bursts") {
        LayoutNoteKind::NoBursts
    } else if text.contains("bursts also run on the RT pair's CPUs") {
        LayoutNoteKind::BurstsOnRtCpus
    } else if text.contains("runs at priority 99") {
        LayoutNoteKind::RtPriority99
    } else {
        LayoutNoteKind::Other
    }
}

fn array(value: Option<&mut Value>) -> impl Iterator<Item = &mut Value> {
    value
        .and_then(Value::as_array_mut)
        .into_iter()
        .flat_map(|a| a.iter_mut())
}

/// `holder["cause"]`, a sentence, becomes its cause (`null` for the unexplained spikes).
fn upgrade_cause(holder: &mut Value) {
    if let Some(Value::String(text)) = holder.get("cause") {
        let cause = (text != UNEXPLAINED).then(|| cause(text));
        holder["cause"] = serde_json::to_value(cause).unwrap_or(Value::Null);
    }
}

/// The cause a version 2 sentence words, or an `unknown` one holding the sentence.
pub(super) fn cause(text: &str) -> Cause {
    parse(text).unwrap_or_else(|| Cause::Unknown {
        text: text.to_string(),
    })
}

fn parse(text: &str) -> Option<Cause> {
    let between = |prefix: &str, suffix: &str| text.strip_prefix(prefix)?.strip_suffix(suffix);
    if text == "woken onto its idle CPU and slow to run (idle exit, wakeup IPI)" {
        return Some(Cause::IdleWakeup);
    }
    if text == "waiting in the kernel" {
        return Some(Cause::Blocked { woken_by: None });
    }
    if let Some(by) = text.strip_prefix("waiting in the kernel until woken by ") {
        return Some(Cause::Blocked {
            woken_by: Some(culprit(by)?),
        });
    }
    if let Some(by) = text.strip_prefix("preempted by ") {
        return Some(Cause::Preempted { by: culprit(by)? });
    }
    if let Some(by) = text.strip_prefix("woken while its CPU ran ") {
        return Some(Cause::WaitingForCpu { by: culprit(by)? });
    }
    if let Some(name) = between("interrupt handler ", " on its CPU") {
        return Some(Cause::Interrupt { name: name.into() });
    }
    if let Some(action) = between("softirq ", " on its CPU") {
        return Some(Cause::Softirq {
            action: action.into(),
        });
    }
    lock(text.strip_prefix("blocked on a ")?)
}

/// `<kind>[ in <caller>][ held by <role>[ boosted to <priority>][ and preempted by <task>]]`.
fn lock(text: &str) -> Option<Cause> {
    let (lock, holder) = match text.split_once(" held by ") {
        Some((lock, holder)) => (lock, Some(holder)),
        None => (text, None),
    };
    let (lock, caller) = match lock.split_once(" in ") {
        Some((lock, caller)) => (lock, Some(caller.to_string())),
        None => (lock, None),
    };
    let holder = match holder {
        None => None,
        Some(text) => {
            let (text, preempted_by) = match text.split_once(" and preempted by ") {
                Some((text, by)) => (text, Some(culprit(by)?)),
                None => (text, None),
            };
            let (role, boosted_to) = match text.split_once(" boosted to ") {
                Some((role, boost)) => (role, Some(boost.to_string())),
                None => (text, None),
            };
            let role = ROLES.iter().find(|(_, words)| *words == role)?.0;
            Some(LockHolder {
                role,
                boosted_to,
                preempted_by,
            })
        }
    };
    Some(Cause::Lock {
        lock: LockKind::parse(lock),
        caller,
        holder,
    })
}

/// `a burst thread (FIFO 50)`, `a kernel thread ktimers/1 (FIFO 98)`.
fn culprit(text: &str) -> Option<Culprit> {
    let (who, priority) = text.strip_suffix(')')?.rsplit_once(" (")?;
    ROLES.iter().find_map(|&(role, words)| {
        let name = match who.strip_prefix(words)? {
            "" if !NAMED.contains(&role) => None,
            rest if NAMED.contains(&role) => Some(rest.strip_prefix(' ')?.to_string()),
            _ => return None,
        };
        Some(Culprit {
            role,
            name,
            priority: priority.to_string(),
        })
    })
}

/// The roles whose sentence named the task too.
const NAMED: [TaskRole; 4] = [
    TaskRole::KernelThread,
    TaskRole::InterruptThread,
    TaskRole::Rtsoak,
    TaskRole::Other,
];

/// Each role as version 2 worded it.
const ROLES: [(TaskRole, &str); 11] = [
    (TaskRole::RtPublisher, "the RT publisher"),
    (TaskRole::RtSubscriber, "the RT subscriber"),
    (TaskRole::NoisePublisher, "a noise publisher"),
    (TaskRole::NoiseSubscriber, "a noise subscriber"),
    (TaskRole::Burst, "a burst thread"),
    (TaskRole::LoadGenerator, "a load generator"),
    (TaskRole::Rtsoak, "an rtsoak process"),
    (TaskRole::InterruptThread, "an interrupt thread"),
    (TaskRole::KernelThread, "a kernel thread"),
    (TaskRole::Idle, "the idle task"),
    (TaskRole::Other, "a task outside rtsoak"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_report::why;

    #[test]
    fn every_kind_of_version_2_sentence_is_read_back_into_the_cause_it_words() {
        for text in [
            "woken onto its idle CPU and slow to run (idle exit, wakeup IPI)",
            "waiting in the kernel",
            "waiting in the kernel until woken by a kernel thread kworker/u8 (normal)",
            "preempted by a burst thread (FIFO 50)",
            "preempted by a task outside rtsoak stress-ng (cpu) (normal)",
            "woken while its CPU ran an interrupt thread irq/24-virtio0 (FIFO 99)",
            "interrupt handler 24:virtio0 on its CPU",
            "softirq TIMER on its CPU",
            "blocked on a sleeping spinlock (rt_mutex)",
            "blocked on a PI futex (rt_mutex) in futex_lock_pi held by a noise publisher",
            "blocked on a sleeping spinlock (rt_mutex) in futex_wake held by a noise subscriber \
             boosted to FIFO 40 and preempted by a burst thread (FIFO 50)",
        ] {
            let cause = cause(text);
            assert!(!matches!(cause, Cause::Unknown { .. }), "{text}");
            assert_eq!(why::cause(&cause), text);
        }
    }

    #[test]
    fn every_layout_note_version_2_wrote_is_read_back_as_its_kind() {
        let notes = [
            (
                "only 2 CPUs online: noise and the coordinator share CPUs with the RT pair; \
                 latencies include that interference",
                LayoutNoteKind::SharesRtCpus,
            ),
            (
                "noise CPUs 0-4 include RT CPU 4: latencies include that interference",
                LayoutNoteKind::SharesRtCpus,
            ),
            (
                "FIFO 50 bursts also run on the RT pair's CPUs (noise.bursts.on_rt_cpus): there \
                 the RT pair waits for every burst",
                LayoutNoteKind::BurstsOnRtCpus,
            ),
            (
                "no FIFO bursts: every noise CPU is an RT CPU, and a burst there would preempt \
                 the RT pair itself (set noise.bursts.on_rt_cpus = true to run them anyway)",
                LayoutNoteKind::NoBursts,
            ),
            (
                "RT publisher runs at priority 99, the level of the kernel's watchdog and \
                 migration threads: it can starve them; 98 or lower is safer",
                LayoutNoteKind::RtPriority99,
            ),
            (
                "spikes not explained: every CPU is an RT CPU, and the explainer's trace \
                 reader there would delay the RT wakeups it explains (`--explain` runs it anyway)",
                LayoutNoteKind::ExplainOff,
            ),
            ("something a later build wrote", LayoutNoteKind::Other),
        ];
        let mut doc = serde_json::json!({
            "plan": {"layout_notes": notes.iter().map(|(text, _)| *text).collect::<Vec<_>>()}
        });
        upgrade(&mut doc);
        let read: Vec<LayoutNote> =
            serde_json::from_value(doc["plan"]["layout_notes"].clone()).unwrap();
        let expected: Vec<LayoutNote> = notes
            .iter()
            .map(|(text, kind)| LayoutNote::new(*kind, *text))
            .collect();
        assert_eq!(read, expected);
    }

    #[test]
    fn a_sentence_version_2_did_not_write_is_kept_as_an_unknown_cause_with_its_words() {
        for text in [
            "preempted by a kernel thread (FIFO 98)",
            "preempted by a burst thread kthread (FIFO 50)",
            "blocked on a lock held by someone",
            "PREEMPTED BY A BURST THREAD (FIFO 50)",
            "",
        ] {
            assert_eq!(cause(text), Cause::Unknown { text: text.into() }, "{text}");
        }
    }
}
