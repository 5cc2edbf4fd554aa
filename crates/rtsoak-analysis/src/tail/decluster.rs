//! Spikes come in bursts (one lock holder, one interrupt storm delays several samples in a
//! row), and a fit that took each sample of a burst as an independent draw would be too sure of
//! itself. This module groups the samples over a threshold into clusters and keeps each
//! cluster's largest sample.
//!
//! Owns: the extremal index (Ferro and Segers' intervals estimator, which needs no tuning) and
//! runs declustering with the run length that estimator implies: the `C - 1` longest gaps
//! between exceedances separate clusters, `C = theta * n` (Ferro and Segers 2003, section 5),
//! with `C` taken two standard errors high and gaps under [`MIN_RUN_LENGTH`] never separating.
//! Never fits or extrapolates.

/// Gaps shorter than this many samples never separate clusters: spikes a period or two apart
/// are one episode (the same lock holder, the same interrupt storm), however many clusters the
/// extremal index alone would allow.
pub(crate) const MIN_RUN_LENGTH: u64 = 4;

/// One sample over the threshold: its sample number (time / period) and value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Exceedance {
    /// Sample number since the start of the measured phase.
    pub index: u64,
    /// The sample, in any unit.
    pub value: f64,
}

/// The exceedances grouped into clusters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Clusters {
    /// Each cluster's largest sample, in time order.
    pub maxima: Vec<f64>,
    /// The extremal index estimate, in (0, 1]: 1 for independent exceedances, 1/k for bursts of
    /// k on average.
    pub extremal_index: f64,
    /// The shortest gap, in samples, that separates two clusters (the run length).
    pub run_length_samples: u64,
}

/// Cluster `exceedances` (in time order, at least two).
pub(crate) fn decluster(exceedances: &[Exceedance]) -> Clusters {
    let n = exceedances.len();
    if n < 2 {
        return Clusters {
            maxima: exceedances.iter().map(|e| e.value).collect(),
            extremal_index: 1.0,
            run_length_samples: 1,
        };
    }
    let gaps: Vec<u64> = exceedances
        .windows(2)
        .map(|w| w[1].index.saturating_sub(w[0].index).max(1))
        .collect();
    let theta = intervals_estimator(&gaps);
    // The estimate of the number of clusters, C = theta n, is noisy (about +-1/sqrt(C)
    // relative), and a low one merges separate bursts, whose maxima then look lighter-tailed
    // than they are. Two standard errors more clusters are allowed; splitting a burst is
    // prevented by MIN_RUN_LENGTH instead.
    let expected = theta * n as f64;
    let clusters = ((expected * (1.0 + 2.0 / expected.sqrt())).round() as usize).clamp(1, n);
    // The C - 1 longest gaps separate clusters (by rank: a tie at the cut would otherwise
    // split every cluster of a run with a one-sample gap).
    let mut order: Vec<usize> = (0..gaps.len()).collect();
    order.sort_by(|&a, &b| gaps[b].cmp(&gaps[a]));
    let mut separates = vec![false; gaps.len()];
    let cut: Vec<usize> = order[..clusters - 1]
        .iter()
        .copied()
        .filter(|&i| gaps[i] >= MIN_RUN_LENGTH)
        .collect();
    for &i in &cut {
        separates[i] = true;
    }
    let run_length = cut
        .last()
        .map_or(gaps.iter().max().copied().unwrap_or(0) + 1, |&i| gaps[i]);
    let mut maxima = Vec::with_capacity(clusters);
    let mut current = exceedances[0].value;
    for (gap_separates, e) in separates.iter().zip(&exceedances[1..]) {
        if *gap_separates {
            maxima.push(current);
            current = e.value;
        } else {
            current = current.max(e.value);
        }
    }
    maxima.push(current);
    Clusters {
        extremal_index: theta,
        maxima,
        run_length_samples: run_length,
    }
}

/// Ferro and Segers' intervals estimator of the extremal index from the gaps (in samples)
/// between consecutive exceedances.
fn intervals_estimator(gaps: &[u64]) -> f64 {
    let m = gaps.len() as f64;
    let theta = if gaps.iter().all(|&g| g <= 2) {
        let sum: f64 = gaps.iter().map(|&g| g as f64).sum();
        let sum_sq: f64 = gaps.iter().map(|&g| (g as f64).powi(2)).sum();
        2.0 * sum * sum / (m * sum_sq)
    } else {
        let sum: f64 = gaps.iter().map(|&g| g as f64 - 1.0).sum();
        let sum_sq: f64 = gaps
            .iter()
            .map(|&g| (g as f64 - 1.0) * (g as f64 - 2.0))
            .sum();
        2.0 * sum * sum / (m * sum_sq)
    };
    if theta.is_finite() {
        theta.clamp(1.0 / (m + 1.0), 1.0)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(indices: &[u64]) -> Vec<Exceedance> {
        indices
            .iter()
            .enumerate()
            .map(|(i, &index)| Exceedance {
                index,
                value: i as f64,
            })
            .collect()
    }

    #[test]
    fn bursts_of_three_make_one_cluster_each() {
        let mut indices = Vec::new();
        let mut rng = fastrand::Rng::with_seed(7);
        let mut start = 0;
        for _ in 0..200 {
            // Independent bursts: geometric gaps between them.
            start += 20 + (-(rng.f64().ln()) * 3000.0) as u64;
            indices.extend([start, start + 1, start + 2]);
        }
        let clusters = decluster(&at(&indices));
        assert!(
            (clusters.extremal_index - 1.0 / 3.0).abs() < 0.05,
            "{}",
            clusters.extremal_index
        );
        assert!(
            (180..=240).contains(&clusters.maxima.len()),
            "{}",
            clusters.maxima.len()
        );
        // Values rise within a burst, so a whole burst's maximum is its third sample.
        let whole = clusters
            .maxima
            .iter()
            .filter(|&&v| v as u64 % 3 == 2)
            .count();
        assert!(
            whole >= 180,
            "{whole} clusters kept their burst's largest sample"
        );
    }

    #[test]
    fn scattered_exceedances_stay_apart() {
        let mut rng = fastrand::Rng::with_seed(8);
        let mut index = 0;
        let indices: Vec<u64> = (0..500)
            .map(|_| {
                // Geometric gaps: what independent exceedances look like.
                index += (-(rng.f64().ln()) * 2000.0) as u64 + 1;
                index
            })
            .collect();
        let clusters = decluster(&at(&indices));
        assert!(clusters.extremal_index > 0.9, "{}", clusters.extremal_index);
        assert!(clusters.maxima.len() > 450);
    }
}
