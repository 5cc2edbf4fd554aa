//! What kind of lock an RT task blocked on: a stable snake_case id in the result, worded only by
//! the report. Results written before the ids stored the report's phrase (`PI futex
//! (rt_mutex)`); each is read as its kind, and anything else is kept as written.

use serde::de::IntoDeserializer;
use serde::de::value::{Error, StrDeserializer};
use serde::{Deserialize, Serialize};

/// The kind of a lock a wait was on. Declared in the order the phrases results stored before
/// the ids sort in, so causes that tie on everything else sort as they always have.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockKind {
    /// An rt_mutex with no contention event, where the task's last `futex(2)` call was a PI
    /// operation (`FUTEX_LOCK_PI` and the like).
    #[serde(alias = "PI futex (rt_mutex)")]
    PiFutex,
    /// Contended with `lock:contention_begin` whose flags name none of the kinds below.
    #[serde(alias = "lock")]
    Other,
    /// Contended with `lock:contention_begin` flagged `MUTEX`.
    Mutex,
    /// An rt_mutex with no contention event, known from the owner's priority inheritance alone.
    RtMutex,
    /// Contended with `lock:contention_begin` flagged `READ` or `WRITE`.
    RwSemaphore,
    /// Contended with `lock:contention_begin` flagged `RT`: on PREEMPT_RT, spinlock_t, rwlock_t
    /// and mutexes are rt_mutex-based and sleep.
    #[serde(alias = "sleeping spinlock (rt_mutex)")]
    SleepingSpinlock,
    /// Contended with `lock:contention_begin` flagged `SPIN`.
    Spinlock,
    /// A kind this build does not know (a result from another build), kept as written and
    /// shown as it is.
    #[serde(untagged)]
    Unknown(String),
}

impl LockKind {
    /// The kind stored as `text`: its id, or the phrase an earlier build stored.
    pub fn parse(text: &str) -> LockKind {
        let id: StrDeserializer<'_, Error> = text.into_deserializer();
        LockKind::deserialize(id).unwrap_or_else(|_| LockKind::Unknown(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind this build names, with its id and the phrase results stored before the ids.
    const KINDS: [(LockKind, &str, &str); 7] = [
        (
            LockKind::SleepingSpinlock,
            "sleeping_spinlock",
            "sleeping spinlock (rt_mutex)",
        ),
        (LockKind::PiFutex, "pi_futex", "PI futex (rt_mutex)"),
        (LockKind::RtMutex, "rt_mutex", "rt_mutex"),
        (LockKind::Mutex, "mutex", "mutex"),
        (LockKind::Spinlock, "spinlock", "spinlock"),
        (LockKind::RwSemaphore, "rw_semaphore", "rw_semaphore"),
        (LockKind::Other, "other", "lock"),
    ];

    #[test]
    fn every_kind_is_written_as_its_id_and_reads_back_from_its_id_or_its_old_phrase() {
        for (kind, id, phrase) in KINDS {
            let written = serde_json::to_string(&kind).unwrap();
            assert_eq!(written, format!("\"{id}\""));
            assert_eq!(serde_json::from_str::<LockKind>(&written).unwrap(), kind);
            let old: LockKind = serde_json::from_str(&format!("\"{phrase}\"")).unwrap();
            assert_eq!(old, kind, "{phrase}");
            assert_eq!(LockKind::parse(phrase), kind, "{phrase}");
        }
    }

    #[test]
    fn kinds_sort_as_the_phrases_stored_before_the_ids_did() {
        let mut by_kind: Vec<(LockKind, &str)> = KINDS
            .into_iter()
            .map(|(kind, _, phrase)| (kind, phrase))
            .collect();
        by_kind.sort();
        let mut phrases: Vec<&str> = KINDS.iter().map(|&(_, _, phrase)| phrase).collect();
        phrases.sort();
        assert_eq!(
            by_kind.into_iter().map(|(_, p)| p).collect::<Vec<_>>(),
            phrases
        );
    }

    #[test]
    fn a_kind_this_build_does_not_know_is_kept_as_written() {
        for text in ["ww_mutex", "PI futex", "Mutex", ""] {
            let kind: LockKind = serde_json::from_str(&format!("\"{text}\"")).unwrap();
            assert_eq!(kind, LockKind::Unknown(text.to_string()));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{text}\""));
            assert_eq!(LockKind::parse(text), kind);
        }
        assert!(
            serde_json::from_str::<LockKind>("7").is_err(),
            "not a string"
        );
    }
}
