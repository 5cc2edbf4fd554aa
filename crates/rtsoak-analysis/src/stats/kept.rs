//! A series' bounded list of over-threshold samples. While it has room it keeps every one; once
//! it is full it keeps the largest, so that at the end of a run of any length it holds every
//! sample over one level for the *whole* run (the level it reports), which is what a tail fit
//! needs: the exceedances of a threshold and their times, over the span the rate is counted
//! in. A list that kept the first samples to arrive held a prefix of the run, and a fit on it
//! described only the run's first minutes.
//!
//! Owns: the list as a binary min-heap on the value, in a buffer sized (and written once) at
//! construction, so [`KeptList::offer`] never allocates: a sample goes in with a sift-up, or,
//! when the list is full and the sample beats the smallest kept, replaces it with a sift-down
//! (at most 17 levels at the largest list, 100,000). Never decides what the samples mean.

use rtsoak_record::Outlier;

/// The bounded list.
pub(crate) struct KeptList {
    /// A min-heap on `value_ns` (the smallest kept at 0), never beyond its capacity.
    heap: Vec<Outlier>,
    /// The most it keeps (`Vec::capacity` may be more).
    capacity: usize,
    /// Samples offered that are not in the list (never kept, or let go for a larger one).
    dropped: u64,
    /// The largest of those, ns (0 when none was).
    largest_dropped_ns: u64,
}

/// What a list leaves at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The kept samples, in time order.
    pub outliers: Vec<Outlier>,
    /// Over-threshold samples not in `outliers`.
    pub dropped: u64,
    /// Every sample over this many ns is in `outliers`: the recording threshold while nothing
    /// was dropped, else the largest sample dropped.
    pub complete_over_ns: u64,
}

impl KeptList {
    /// A list of at most `capacity` samples, every page of it written (no page fault later).
    pub(super) fn new(capacity: usize) -> Self {
        let mut heap = Vec::with_capacity(capacity);
        heap.resize(
            capacity,
            Outlier {
                at_ns: 0,
                value_ns: 0,
            },
        );
        heap.clear();
        KeptList {
            heap,
            capacity,
            dropped: 0,
            largest_dropped_ns: 0,
        }
    }

    /// Keep `sample` if it is among the largest so far; never allocates.
    #[inline]
    pub(super) fn offer(&mut self, sample: Outlier) {
        if self.heap.len() < self.capacity {
            self.heap.push(sample);
            self.sift_up(self.heap.len() - 1);
            return;
        }
        self.dropped += 1;
        match self.heap.first_mut() {
            Some(smallest) if sample.value_ns > smallest.value_ns => {
                let let_go = std::mem::replace(smallest, sample);
                self.largest_dropped_ns = self.largest_dropped_ns.max(let_go.value_ns);
                self.sift_down(0);
            }
            _ => self.largest_dropped_ns = self.largest_dropped_ns.max(sample.value_ns),
        }
    }

    /// The list at the end of a run (allocates: after the loop), over `threshold_ns`.
    pub(super) fn kept(&self, threshold_ns: u64) -> Kept {
        let mut outliers = self.heap.clone();
        outliers.sort_by_key(|o| (o.at_ns, o.value_ns));
        Kept {
            outliers,
            dropped: self.dropped,
            complete_over_ns: threshold_ns.max(self.largest_dropped_ns),
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].value_ns <= self.heap[i].value_ns {
                break;
            }
            self.heap.swap(parent, i);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (left, right) = (2 * i + 1, 2 * i + 2);
            let mut smallest = i;
            if left < n && self.heap[left].value_ns < self.heap[smallest].value_ns {
                smallest = left;
            }
            if right < n && self.heap[right].value_ns < self.heap[smallest].value_ns {
                smallest = right;
            }
            if smallest == i {
                break;
            }
            self.heap.swap(i, smallest);
            i = smallest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(capacity: usize, values: &[u64]) -> Kept {
        let mut list = KeptList::new(capacity);
        for (at, &value_ns) in values.iter().enumerate() {
            list.offer(Outlier {
                at_ns: at as u64,
                value_ns,
            });
        }
        list.kept(10)
    }

    #[test]
    fn a_list_with_room_keeps_every_sample_in_time_order() {
        let kept = offered(8, &[50, 20, 90, 30]);
        let values: Vec<u64> = kept.outliers.iter().map(|o| o.value_ns).collect();
        assert_eq!(values, [50, 20, 90, 30]);
        assert_eq!((kept.dropped, kept.complete_over_ns), (0, 10));
    }

    #[test]
    fn a_full_list_keeps_the_largest_of_the_whole_run_and_says_over_what() {
        let mut rng = fastrand::Rng::with_seed(4);
        let values: Vec<u64> = (0..5_000).map(|_| rng.u64(11..1_000_000)).collect();
        let kept = offered(100, &values);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let largest = &sorted[sorted.len() - 100..];
        let mut kept_values: Vec<u64> = kept.outliers.iter().map(|o| o.value_ns).collect();
        kept_values.sort_unstable();
        assert_eq!(kept_values, largest);
        assert!(kept.outliers.windows(2).all(|w| w[0].at_ns < w[1].at_ns));
        assert_eq!(kept.dropped, 4_900);
        assert_eq!(kept.complete_over_ns, sorted[sorted.len() - 101]);
        // Late samples are kept as surely as early ones: the list is not a prefix in time.
        assert!(kept.outliers.last().unwrap().at_ns > 4_000);
    }

    #[test]
    fn a_list_without_room_keeps_nothing_and_is_complete_over_the_largest() {
        let kept = offered(0, &[40, 70]);
        assert!(kept.outliers.is_empty());
        assert_eq!((kept.dropped, kept.complete_over_ns), (2, 70));
    }
}
