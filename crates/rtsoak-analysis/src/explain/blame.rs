//! From waits to verdicts: each outlier is laid over the RT tasks' episodes, and the wait that
//! covered the most of it is its cause, if that wait covered at least half of it. Less than
//! half is "unexplained", with what the trace did show: a cause must account for the spike, not
//! merely coincide with it.
//!
//! A send call's outlier spans `[send, send + value]` and is laid over the RT publisher's
//! waits; a delivery's spans the same from the send timestamp to the subscriber seeing the
//! message and is laid over both RT tasks' waits (the publisher held back before its wake, or
//! the subscriber after it).

use std::collections::BTreeMap;

use super::episodes::{Episode, Episodes};
use super::event::Pid;
use rtsoak_record::result::cause::Cause;
use rtsoak_record::result::explain::{
    CauseShare, Chain, ExplainedOutlier, SeriesBlame, WaitShare, Why,
};
use rtsoak_record::{Outlier, Series};

/// A wait must cover at least this share of an outlier to be its cause, percent.
pub(crate) const CAUSE_MIN_PERCENT: f64 = 50.0;

/// One series to explain: its outliers and whose waits may explain them.
pub struct Target<'a> {
    pub series: Series,
    pub outliers: &'a [Outlier],
    /// Samples over the threshold, kept or not.
    pub over_threshold: u64,
    /// The tasks whose waits count.
    pub tasks: &'a [Pid],
}

/// Explain `target`'s outliers from the trace's `episodes`. `measure_start_ns` turns an
/// outlier's time into `CLOCK_MONOTONIC`.
pub fn explain(
    target: &Target,
    episodes: &Episodes,
    measure_start_ns: u64,
) -> (SeriesBlame, Vec<ExplainedOutlier>) {
    let longest_us = episodes
        .done
        .iter()
        .map(|e| e.end_us - e.start_us)
        .max()
        .unwrap_or(0);
    let mut explained = Vec::with_capacity(target.outliers.len());
    for outlier in target.outliers {
        let start_us = (measure_start_ns + outlier.at_ns) / 1_000;
        let end_us = (measure_start_ns + outlier.at_ns + outlier.value_ns).div_ceil(1_000);
        let why = verdict(target.tasks, episodes, longest_us, (start_us, end_us));
        explained.push(ExplainedOutlier {
            series: target.series,
            at_ns: outlier.at_ns,
            value_ns: outlier.value_ns,
            why,
        });
    }
    (summarise(target, &explained), explained)
}

fn verdict(
    tasks: &[Pid],
    trace: &Episodes,
    longest_us: u64,
    (start_us, end_us): (u64, u64),
) -> Why {
    let length_us = end_us.saturating_sub(start_us).max(1);
    let overlap = |start: u64, end: u64| end.min(end_us).saturating_sub(start.max(start_us));
    // Episodes are in end order: the first that can overlap ends at or after the start, and
    // none that starts after the end can end before `end + longest`.
    let episodes = &trace.done;
    let first = episodes.partition_point(|e| e.end_us < start_us);
    let mut best: Option<(&Episode, u64)> = None;
    for episode in &episodes[first..] {
        if episode.end_us > end_us + longest_us {
            break;
        }
        if !tasks.contains(&episode.task.pid) {
            continue;
        }
        let overlap = overlap(episode.start_us, episode.end_us);
        if overlap > best.map_or(0, |(_, o)| o) {
            best = Some((episode, overlap));
        }
    }
    let share = |overlap: u64| 100.0 * overlap as f64 / length_us as f64;
    match best {
        Some((episode, overlap)) if share(overlap) >= CAUSE_MIN_PERCENT => {
            Why::Explained(Box::new(Chain {
                task: episode.task.clone(),
                wait: episode.wait.clone(),
                blamed_us: overlap,
                share_percent: round1(share(overlap)),
            }))
        }
        best => {
            let events_lost_near = trace
                .losses
                .iter()
                .any(|&(at, _)| at + 1_000 >= start_us && at <= end_us + 1_000);
            let largest_wait = best.map(|(episode, overlap)| WaitShare {
                cause: Chain {
                    task: episode.task.clone(),
                    wait: episode.wait.clone(),
                    blamed_us: overlap,
                    share_percent: 0.0,
                }
                .cause(),
                share_percent: round1(share(overlap)),
            });
            // What the trace does show: an RT task on its CPU all along, with nothing else there.
            let on_cpu = trace
                .on_cpu
                .iter()
                .filter(|s| tasks.contains(&s.pid))
                .map(|s| overlap(s.start_us, s.end_us))
                .max()
                .unwrap_or(0);
            let on_cpu_percent =
                (share(on_cpu) >= CAUSE_MIN_PERCENT).then(|| round1(share(on_cpu)));
            Why::Unexplained {
                largest_wait,
                on_cpu_percent,
                events_lost_near,
                reason: None,
            }
        }
    }
}

fn summarise(target: &Target, explained: &[ExplainedOutlier]) -> SeriesBlame {
    let mut causes: BTreeMap<Cause, Vec<u64>> = BTreeMap::new();
    let (mut unexplained, mut on_cpu) = (0, 0);
    for outlier in explained {
        match &outlier.why {
            Why::Explained(chain) => causes
                .entry(chain.cause())
                .or_default()
                .push(chain.blamed_us),
            Why::Unexplained { on_cpu_percent, .. } => {
                unexplained += 1;
                on_cpu += u64::from(on_cpu_percent.is_some());
            }
        }
    }
    let kept = explained.len() as u64;
    let mut causes: Vec<CauseShare> = causes
        .into_iter()
        .map(|(cause, mut blamed)| {
            blamed.sort_unstable();
            CauseShare {
                cause,
                count: blamed.len() as u64,
                share_percent: round1(100.0 * blamed.len() as f64 / kept.max(1) as f64),
                median_us: blamed[blamed.len() / 2],
            }
        })
        .collect();
    causes.sort_by(|a, b| b.count.cmp(&a.count).then(a.cause.cmp(&b.cause)));
    SeriesBlame {
        over_threshold: target.over_threshold,
        kept,
        explained: kept - unexplained,
        unexplained,
        unexplained_on_cpu: on_cpu,
        causes,
    }
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::episodes::OnCpu;
    use crate::explain::role;
    use rtsoak_record::result::explain::Wait;

    fn episode(pid: Pid, start_us: u64, end_us: u64, by: &str) -> Episode {
        Episode {
            task: role::task(pid, "rtsoak-pub", 19),
            start_us,
            end_us,
            wait: Wait::Preempted {
                by: role::task(7, by, 1),
            },
        }
    }

    #[test]
    fn the_wait_covering_most_of_an_outlier_is_its_cause_and_less_than_half_is_unexplained() {
        let episodes = [
            episode(1, 1_000, 1_150, "ktimers/1"),
            episode(2, 1_000, 1_400, "other"),
            episode(1, 5_000, 5_040, "ktimers/1"),
        ];
        let outliers = [
            // 1_000..1_200 us: 150 of 200 us by task 1's wait; task 2 is not looked at.
            Outlier {
                at_ns: 0,
                value_ns: 200_000,
            },
            // 5_000..5_100: 40 of 100 us.
            Outlier {
                at_ns: 4_000_000,
                value_ns: 100_000,
            },
            // Nothing at all.
            Outlier {
                at_ns: 9_000_000,
                value_ns: 150_000,
            },
        ];
        let target = Target {
            series: Series::SendCall,
            outliers: &outliers,
            over_threshold: 5,
            tasks: &[1],
        };
        let on_cpu = vec![OnCpu {
            pid: 1,
            start_us: 9_990,
            end_us: 10_200,
        }];
        let trace = Episodes::recorded(episodes.to_vec(), vec![(9_950, 12)], on_cpu);
        let (blame, each) = explain(&target, &trace, 1_000_000);
        let Why::Explained(chain) = &each[0].why else {
            panic!("{:?}", each[0])
        };
        assert_eq!((chain.blamed_us, chain.share_percent), (150, 75.0));
        let ktimers = Cause::Preempted {
            by: role::task(7, "ktimers/1", 1).culprit(),
        };
        assert_eq!(
            each[1].why,
            Why::Unexplained {
                largest_wait: Some(WaitShare {
                    cause: ktimers.clone(),
                    share_percent: 40.0
                }),
                on_cpu_percent: None,
                events_lost_near: false,
                reason: None,
            }
        );
        assert_eq!(
            each[2].why,
            Why::Unexplained {
                largest_wait: None,
                on_cpu_percent: Some(100.0),
                events_lost_near: true,
                reason: None,
            }
        );
        assert_eq!(
            (
                blame.over_threshold,
                blame.kept,
                blame.explained,
                blame.unexplained
            ),
            (5, 3, 1, 2)
        );
        assert_eq!(blame.unexplained_on_cpu, 1);
        assert_eq!(blame.causes.len(), 1);
        assert_eq!(blame.causes[0].cause, ktimers);
        assert_eq!((blame.causes[0].count, blame.causes[0].median_us), (1, 150));
        assert!((blame.causes[0].share_percent - 33.3).abs() < 0.01);
    }
}
