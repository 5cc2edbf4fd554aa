//! Cacheline-separated futex words: private (process memory, waited on with `FUTEX2_PRIVATE`)
//! or shared (a `MAP_SHARED` memfd, waited on without it: the kernel then keys the futex by
//! page, the get_user_pages path whose cost the v6.10 futex01 regression report
//! measured). Every word stays 0: a wait expects 0 and nobody writes.

use std::sync::atomic::AtomicU32;

use rtsoak_sys::SysError;
use rtsoak_sys::futex::{FUTEX2_PRIVATE, FUTEX2_SIZE_U32};
use rtsoak_sys::shm::SharedMemory;

/// Bytes between two words: one cache line, so no two words share one.
pub(crate) const WORD_STRIDE_BYTES: usize = 64;

/// One word alone on its cache line.
#[repr(C, align(64))]
struct Line {
    word: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Line>() == WORD_STRIDE_BYTES);

enum Backing {
    Private(Box<[Line]>),
    Shared(SharedMemory),
}

/// `count` futex words.
pub(crate) struct Words {
    backing: Backing,
    count: usize,
}

impl Words {
    /// Allocate `count` zeroed words, shared or private.
    pub(super) fn new(count: usize, shared: bool) -> Result<Self, SysError> {
        let backing = if shared {
            Backing::Shared(SharedMemory::create(
                "rtsoak-bench-words",
                count * WORD_STRIDE_BYTES,
            )?)
        } else {
            Backing::Private(
                (0..count)
                    .map(|_| Line {
                        word: AtomicU32::new(0),
                    })
                    .collect(),
            )
        };
        Ok(Words { backing, count })
    }

    /// Word `index`.
    #[inline(always)]
    pub(super) fn word(&self, index: usize) -> &AtomicU32 {
        assert!(index < self.count, "word {index} of {}", self.count);
        match &self.backing {
            Backing::Private(lines) => &lines[index].word,
            Backing::Shared(memory) => memory
                .atomic_u32(index * WORD_STRIDE_BYTES)
                .expect("the mapping holds count words"),
        }
    }

    /// Address of word `index`, for an SQE.
    #[inline(always)]
    pub(super) fn addr(&self, index: usize) -> *const u32 {
        self.word(index).as_ptr()
    }

    /// futex2 flags for these words: `SIZE_U32`, plus `PRIVATE` unless shared.
    pub(crate) fn futex2_flags(&self) -> u32 {
        match self.backing {
            Backing::Private(_) => FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
            Backing::Shared(_) => FUTEX2_SIZE_U32,
        }
    }

    /// True for private words.
    pub(crate) fn is_private(&self) -> bool {
        matches!(self.backing, Backing::Private(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_words_are_one_cache_line_apart_and_zero() {
        for shared in [false, true] {
            let words = Words::new(3, shared).unwrap();
            let gap = words.addr(1) as usize - words.addr(0) as usize;
            assert_eq!(gap, WORD_STRIDE_BYTES);
            assert_eq!(words.addr(0) as usize % WORD_STRIDE_BYTES, 0);
            assert_eq!(words.word(2).load(std::sync::atomic::Ordering::Relaxed), 0);
            assert_eq!(words.is_private(), !shared);
        }
    }
}
