//! When the coordinator wakes while a run measures.
//!
//! With a CPU of its own (`plan.housekeeping_cpus`) the coordinator ticks every 10 ms, as it
//! always has: nothing it does there reaches the RT pair. Without one (a 2-CPU machine, a board
//! whose every CPU is an RT or noise CPU) each of its wakeups lands on a CPU the RT pair runs
//! on, and one that coincides with the pair's wakeup delays it: a process reading a `/proc` file
//! every 10 ms beside a minimal pair raised that pair's delivery p99 from 8-13 us to 35-40 us on
//! a 2-CPU VM. So there it wakes rarely, and only in the quiet part of a period: a whole number
//! of periods apart, 30 % of a period after a deadline, when the publisher has sent and the
//! subscriber has taken the message (their median is a few microseconds) and the next deadline
//! is most of a period away. A floor run (`--floor`) is not disturbed at all: the coordinator
//! sleeps from the pair's start to its planned end.
//!
//! Signals end any sleep at once (the coordinator sleeps on its `bell`): a stop signal, and
//! SIGCHLD from a worker that ended, whose replacement (queue noise) or whose failure cannot
//! wait for the next tick. Pure arithmetic; the loop in `coordinator` sleeps.

use rtsoak_record::CoordinatorActivity;
use rtsoak_record::plan::RunPlan;

/// The tick with a CPU of its own, and with queue noise to replace (noise processes live 50 ms
/// and up by default: a newcomer should not wait longer than this).
const BUSY_TICK_NS: u64 = 10_000_000;
/// The longest tick without queue noise: the watchdog and the frame rings are served at
/// least this often.
const QUIET_TICK_NS: u64 = 1_000_000_000;
/// Where in a period a phase-locked wakeup falls, in tenths of the period after its deadline.
const PHASE_TENTHS: u64 = 3;

/// The coordinator's wake times for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pace {
    /// The first wake time; every later one is a whole number of steps after it.
    first_ns: u64,
    step_ns: u64,
    /// No wakeup before this (a floor run's planned end), signals apart.
    asleep_until_ns: u64,
    /// Whether the wakeups are placed in the quiet part of a period.
    phase_locked: bool,
}

impl Pace {
    /// The pace of a run of `plan` whose periods start at `start_ns` and whose measured part
    /// ends at `planned_end_ns`; `progress_every_ns` is how often the progress display redraws
    /// (`None` when it is off).
    pub(crate) fn new(
        plan: &RunPlan,
        start_ns: u64,
        planned_end_ns: u64,
        progress_every_ns: Option<u64>,
    ) -> Pace {
        if !plan.housekeeping_cpus.is_empty() {
            return Pace {
                first_ns: start_ns,
                step_ns: BUSY_TICK_NS,
                asleep_until_ns: 0,
                phase_locked: false,
            };
        }
        let queue_noise =
            plan.noise.enabled && plan.noise.queue.publishers + plan.noise.queue.subscribers > 0;
        let wanted_ns = if queue_noise {
            BUSY_TICK_NS
        } else {
            [QUIET_TICK_NS, plan.interval_ns / 2]
                .into_iter()
                .chain(progress_every_ns)
                .min()
                .unwrap_or(QUIET_TICK_NS)
        };
        let period_ns = plan.period_ns.max(1);
        Pace {
            first_ns: start_ns + period_ns * PHASE_TENTHS / 10,
            step_ns: (wanted_ns / period_ns).max(1) * period_ns,
            asleep_until_ns: if plan.floor { planned_end_ns } else { 0 },
            phase_locked: true,
        }
    }

    /// The first wake time after `now_ns`.
    pub(crate) fn next_after(&self, now_ns: u64) -> u64 {
        let from_ns = now_ns.max(self.asleep_until_ns);
        if from_ns < self.first_ns {
            return self.first_ns;
        }
        let steps = (from_ns - self.first_ns) / self.step_ns + 1;
        self.first_ns + steps * self.step_ns
    }

    /// How often the coordinator wakes at most, signals apart, ns.
    pub(crate) fn step_ns(&self) -> u64 {
        self.step_ns
    }

    /// Whether its wakeups fall in the quiet part of a period (it shares the RT CPUs).
    pub(crate) fn phase_locked(&self) -> bool {
        self.phase_locked
    }
}

/// The coordinator's wakeups on each RT CPU while the run measures (the RT publisher's CPU,
/// then the subscriber's): the harness's share of those CPUs, recorded in the result.
pub(crate) struct Wakeups {
    pace: Pace,
    rt_cpus: [usize; 2],
    measure_start_ns: u64,
    planned_end_ns: u64,
    on_rt_cpu: [u64; 2],
}

impl Wakeups {
    /// None counted yet, for a run of `plan` measuring from `measure_start_ns` to
    /// `planned_end_ns` at `pace`.
    pub(crate) fn new(
        pace: Pace,
        plan: &RunPlan,
        measure_start_ns: u64,
        planned_end_ns: u64,
    ) -> Self {
        Wakeups {
            pace,
            rt_cpus: [plan.rt.publisher_cpu, plan.rt.subscriber_cpu],
            measure_start_ns,
            planned_end_ns,
            on_rt_cpu: [0; 2],
        }
    }

    /// One wakeup at `now_ns`, running on `cpu` (negative: unknown).
    pub(crate) fn count(&mut self, now_ns: u64, cpu: i32) {
        if !(self.measure_start_ns..self.planned_end_ns).contains(&now_ns) {
            return;
        }
        for (rt_cpu, count) in self.rt_cpus.iter().zip(&mut self.on_rt_cpu) {
            if usize::try_from(cpu).is_ok_and(|cpu| cpu == *rt_cpu) {
                *count += 1;
            }
        }
    }

    /// The record of a run that measured for `measured_ns`.
    pub(crate) fn activity(&self, measured_ns: u64) -> CoordinatorActivity {
        let seconds = measured_ns as f64 / 1e9;
        CoordinatorActivity {
            tick_ns: self.pace.step_ns(),
            phase_locked: self.pace.phase_locked(),
            wakeups_per_s_on_rt_cpus: self
                .rt_cpus
                .iter()
                .zip(self.on_rt_cpu)
                .map(|(&cpu, count)| {
                    let per_s = if seconds > 0.0 {
                        count as f64 / seconds
                    } else {
                        0.0
                    };
                    (cpu, per_s)
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture;

    const MS: u64 = 1_000_000;

    fn plan(housekeeping: &[usize], noise: bool, floor: bool) -> RunPlan {
        let mut plan = fixture::one_run_doc().plan;
        plan.housekeeping_cpus = housekeeping.to_vec();
        plan.noise.enabled = noise;
        plan.noise.queue.publishers = 2;
        plan.floor = floor;
        plan.period_ns = 500_000;
        plan.interval_ns = 10_000 * MS;
        plan
    }

    #[test]
    fn with_a_cpu_of_its_own_the_coordinator_ticks_every_10_ms_as_before() {
        let pace = Pace::new(&plan(&[2, 3], false, false), 1_000 * MS, 11_000 * MS, None);
        assert!(!pace.phase_locked());
        assert_eq!(pace.next_after(1_000 * MS), 1_010 * MS);
        assert_eq!(pace.next_after(1_013 * MS), 1_020 * MS);
    }

    #[test]
    fn sharing_the_rt_cpus_it_wakes_30_percent_into_a_period_whole_periods_apart() {
        let start = 1_000 * MS;
        let pace = Pace::new(&plan(&[], false, false), start, start + 10_000 * MS, None);
        assert!(pace.phase_locked());
        assert_eq!(pace.step_ns(), 1_000 * MS, "quiet: once a second");
        for now in [start - 7 * MS, start, start + 3 * MS, start + 12_345 * MS] {
            let next = pace.next_after(now);
            assert!(next > now);
            assert_eq!(
                (next - start) % 500_000,
                150_000,
                "{now}: 30 % into a period"
            );
        }
        let shown = Pace::new(&plan(&[], false, false), start, start, Some(200 * MS));
        assert_eq!(shown.step_ns(), 200 * MS, "the terminal's progress redraws");
        let noisy = Pace::new(&plan(&[], true, false), start, start, Some(200 * MS));
        assert_eq!(noisy.step_ns(), 10 * MS, "queue noise is replaced promptly");
    }

    #[test]
    fn a_period_longer_than_the_tick_is_woken_in_once_per_period() {
        let mut long = plan(&[], true, false);
        long.period_ns = 25 * MS;
        let pace = Pace::new(&long, 0, 1_000 * MS, None);
        assert_eq!(pace.step_ns(), 25 * MS);
        assert_eq!(pace.next_after(0), 7_500_000);
    }

    #[test]
    fn a_floor_run_sharing_the_rt_cpus_is_left_alone_until_its_planned_end() {
        let (start, end) = (1_000 * MS, 11_000 * MS);
        let pace = Pace::new(&plan(&[], true, true), start, end, Some(200 * MS));
        let next = pace.next_after(start);
        assert!(next > end && next <= end + 10 * MS, "{next}");
        let own_cpu = Pace::new(&plan(&[3], true, true), start, end, None);
        assert_eq!(own_cpu.next_after(start), start + 10 * MS);
    }

    #[test]
    fn only_wakeups_on_an_rt_cpu_while_the_run_measures_are_counted() {
        let plan = plan(&[], false, false);
        let (start, end) = (1_000 * MS, 3_000 * MS);
        let pace = Pace::new(&plan, start, end, None);
        let mut wakeups = Wakeups::new(pace, &plan, start, end);
        let [publisher, subscriber] = [plan.rt.publisher_cpu, plan.rt.subscriber_cpu];
        for (now, cpu) in [
            (start - 1, publisher),
            (start, publisher),
            (start + MS, subscriber),
            (start + 2 * MS, subscriber),
            (start + 3 * MS, 99),
            (end, publisher),
        ] {
            wakeups.count(now, cpu as i32);
        }
        wakeups.count(start, -1);
        let activity = wakeups.activity(end - start);
        assert_eq!(
            activity.wakeups_per_s_on_rt_cpus,
            [(publisher, 0.5), (subscriber, 1.0)].into_iter().collect()
        );
        assert!(activity.phase_locked);
        assert_eq!(activity.tick_ns, 1_000 * MS);
    }
}
