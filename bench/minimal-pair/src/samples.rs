//! Samples kept whole (one `u32` of nanoseconds each, allocated and touched before the loop),
//! and the figures read from them after it: exact order statistics, no histogram.

/// A preallocated list of nanosecond samples.
pub(crate) struct Samples {
    values_ns: Vec<u32>,
    len: usize,
}

impl Samples {
    /// Room for `capacity` samples, every page touched now so the loop never faults.
    pub(crate) fn with_capacity(capacity: usize) -> Samples {
        Samples {
            values_ns: vec![u32::MAX; capacity],
            len: 0,
        }
    }

    /// Keep one sample (clamped to 4.29 s); a sample beyond the capacity is dropped.
    #[inline]
    pub(crate) fn push(&mut self, value_ns: u64) {
        if let Some(slot) = self.values_ns.get_mut(self.len) {
            *slot = value_ns.min(u64::from(u32::MAX)) as u32;
            self.len += 1;
        }
    }

    /// The figures of the samples kept.
    pub(crate) fn figures(mut self) -> Figures {
        let values = &mut self.values_ns[..self.len];
        values.sort_unstable();
        Figures {
            count: values.len(),
            min_ns: values.first().copied().unwrap_or(0),
            p50_ns: quantile(values, 0.50),
            p99_ns: quantile(values, 0.99),
            p99_9_ns: quantile(values, 0.999),
            max_ns: values.last().copied().unwrap_or(0),
        }
    }
}

/// The smallest sample at or above quantile `q` of the sorted `values` (0 when empty): the
/// same definition as an HDR histogram's `value_at_quantile`, without its bucket rounding.
fn quantile(sorted: &[u32], q: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One series' figures, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Figures {
    pub(crate) count: usize,
    pub(crate) min_ns: u32,
    pub p50_ns: u32,
    pub p99_ns: u32,
    pub p99_9_ns: u32,
    pub(crate) max_ns: u32,
}

impl Figures {
    pub(crate) fn to_json(self) -> String {
        format!(
            "{{\"count\":{},\"min_ns\":{},\"p50_ns\":{},\"p99_ns\":{},\"p99_9_ns\":{},\"max_ns\":{}}}",
            self.count, self.min_ns, self.p50_ns, self.p99_ns, self.p99_9_ns, self.max_ns
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_exact_order_statistics() {
        let mut samples = Samples::with_capacity(1_000);
        for value in (1..=1_000).rev() {
            samples.push(value);
        }
        let figures = samples.figures();
        assert_eq!(figures.count, 1_000);
        assert_eq!((figures.min_ns, figures.max_ns), (1, 1_000));
        assert_eq!(
            (figures.p50_ns, figures.p99_ns, figures.p99_9_ns),
            (500, 990, 999)
        );
    }

    #[test]
    fn samples_beyond_the_room_are_dropped_and_huge_ones_clamped() {
        let mut samples = Samples::with_capacity(2);
        for value in [5, u64::MAX, 7] {
            samples.push(value);
        }
        let figures = samples.figures();
        assert_eq!(figures.count, 2);
        assert_eq!(figures.max_ns, u32::MAX);
        assert_eq!(Samples::with_capacity(3).figures().p99_ns, 0);
    }
}
