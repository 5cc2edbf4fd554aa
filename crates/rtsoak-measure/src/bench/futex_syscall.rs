//! `futex-syscall` (like will-it-scale's futex01 tests, whose 2 % slowdown from v6.9 to
//! v6.10-rc1 was reported in 2024): the cost of an uncontended
//! `futex(FUTEX_WAKE)` on a word nobody waits on, per thread count. Each thread has its own
//! word and CPU and makes K calls per cycle; every call must return 0 (nobody woken). Rounds
//! start together (a barrier) and a round's ns/op is the mean over threads of each thread's
//! elapsed time over its own calls. `--shared` calls without `FUTEX_PRIVATE_FLAG` on a
//! MAP_SHARED word, so the kernel keys the futex by page (the get_user_pages path that report
//! pointed at).

use std::sync::Barrier;
use std::sync::atomic::AtomicU32;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::checks::Tally;
use super::words::Words;
use super::{About, Bench, RawRound, RoundPlan, Shape, Workload, describe_rounds, run_round};
use rtsoak_record::HostFacts;
use rtsoak_record::bench::{BenchConfig, BenchName, BenchSeries, Setup};
use rtsoak_sys::futex::wake;
use rtsoak_sys::sched::{pin_to, set_policy};

/// The bench, as the registry holds it.
pub(super) struct FutexSyscall;

/// Its own flags.
#[derive(Debug, Args)]
struct Flags {
    /// Calls per cycle per thread.
    #[arg(short, long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    k: u32,
    /// Thread counts to measure, comma-separated (default: 1, 2, 4, ... up to the CPUs).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=4096))]
    threads: Option<Vec<u32>>,
}

impl Bench for FutexSyscall {
    fn about(&self) -> &'static About {
        &About {
            id: BenchName::FutexSyscall,
            help: "Uncontended futex(FUTEX_WAKE) calls per thread count, each thread on its own word and CPU",
            op: "futex call",
            needs: &[],
        }
    }

    fn flags(&self, command: Command) -> Command {
        Flags::augment_args(command)
    }

    fn shape(&self, flags: &ArgMatches, host: &HostFacts) -> anyhow::Result<Shape> {
        let Flags { k, threads } = Flags::from_arg_matches(flags)?;
        let threads = threads.unwrap_or_else(|| default_thread_counts(host.online.len().max(1)));
        Ok(Shape {
            thread_counts: Some(threads),
            ..Shape::k(k)
        })
    }

    fn run(
        &self,
        config: &BenchConfig,
        plan: RoundPlan,
        host: &HostFacts,
        setup: &mut Setup,
    ) -> anyhow::Result<Vec<BenchSeries>> {
        let cpus = rotated_online(host, config.cpu);
        let counts = config.thread_counts.clone().unwrap_or_default();
        let widest = counts.iter().copied().max().unwrap_or(1) as usize;
        setup.cpus = (0..widest).map(|t| cpus[t % cpus.len()]).collect();
        run_counts(self, config, plan, &counts, &cpus)
    }
}

/// One thread's calls.
struct Calls<'a> {
    word: &'a AtomicU32,
    private: bool,
    k: u64,
}

impl Workload for Calls<'_> {
    fn ops_per_cycle(&self) -> u64 {
        self.k
    }

    fn checks_per_cycle(&self) -> u64 {
        self.k
    }

    #[inline(always)]
    fn cycle(&mut self, tally: &mut Tally) -> bool {
        for call in 0..self.k {
            match wake(self.word, 1, self.private) {
                Ok(woken) => tally.expect(call, i64::from(woken), 0),
                Err(errno) => {
                    tally.call_failed(errno as i32);
                    return false;
                }
            }
        }
        true
    }
}

/// The thread counts measured by default: 1, 2, 4, ... up to `cpus`, and `cpus` itself.
fn default_thread_counts(cpus: usize) -> Vec<u32> {
    let mut counts: Vec<u32> = std::iter::successors(Some(1u32), |n| n.checked_mul(2))
        .take_while(|&n| n as usize <= cpus)
        .collect();
    if counts.last().is_some_and(|&n| n as usize != cpus) {
        counts.push(cpus as u32);
    }
    counts
}

/// The online CPUs, starting at `first` (thread t runs on the t-th).
fn rotated_online(host: &HostFacts, first: usize) -> Vec<usize> {
    let mut cpus = host.online.clone();
    if cpus.is_empty() {
        return vec![first];
    }
    let start = cpus.iter().position(|&c| c == first).unwrap_or(0);
    cpus.rotate_left(start);
    cpus
}

/// Run every thread count; thread `t` runs on `cpus[t % cpus.len()]`.
fn run_counts(
    bench: &FutexSyscall,
    config: &BenchConfig,
    plan: RoundPlan,
    counts: &[u32],
    cpus: &[usize],
) -> anyhow::Result<Vec<BenchSeries>> {
    let mut series = Vec::with_capacity(counts.len());
    for &threads in counts {
        let threads = threads as usize;
        let words = Words::new(threads, config.shared)?;
        let barrier = Barrier::new(threads);
        let per_thread: Vec<Vec<RawRound>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (words, barrier) = (&words, &barrier);
                    let cpu = cpus[t % cpus.len()];
                    scope.spawn(move || {
                        let _ = pin_to(&[cpu]);
                        let _ = set_policy(config.policy.into(), config.priority);
                        let mut calls = Calls {
                            word: words.word(t),
                            private: words.is_private(),
                            k: u64::from(config.k),
                        };
                        let total = (plan.warmup_rounds + plan.rounds) as usize;
                        let mut rounds = Vec::with_capacity(total);
                        for _ in 0..total {
                            barrier.wait();
                            rounds.push(run_round(&mut calls, plan.cycles, cpu));
                        }
                        rounds
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let merged = merge_threads(&per_thread);
        let k = u64::from(config.k);
        let rounds = describe_rounds(&merged, plan, k, k * threads as u64);
        series.push(super::benchmark::series(
            &format!("threads-{threads}"),
            bench.about().op,
            k,
            rounds,
        ));
    }
    Ok(series)
}

/// One raw round per round index: mean elapsed time, summed checks, the fewest cycles done, and
/// a CPU check that fails if any thread's did.
fn merge_threads(per_thread: &[Vec<RawRound>]) -> Vec<RawRound> {
    let Some(first) = per_thread.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|r| {
            let rounds: Vec<&RawRound> = per_thread.iter().filter_map(|t| t.get(r)).collect();
            let mut merged = *rounds[0];
            merged.elapsed_ns =
                rounds.iter().map(|x| x.elapsed_ns).sum::<u64>() / rounds.len() as u64;
            merged.cycles_done = rounds.iter().map(|x| x.cycles_done).min().unwrap_or(0);
            for other in &rounds[1..] {
                merged.tally.merge(&other.tally);
                let cpu = other.tally.cpu as i32;
                if other.tally.cpu_at_start != cpu || other.tally.cpu_at_end != cpu {
                    merged.tally.cpu_at_end = -1;
                }
            }
            merged
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_double_up_to_the_cpus_and_include_the_cpu_count() {
        assert_eq!(default_thread_counts(1), [1]);
        assert_eq!(default_thread_counts(2), [1, 2]);
        assert_eq!(default_thread_counts(6), [1, 2, 4, 6]);
        assert_eq!(default_thread_counts(8), [1, 2, 4, 8]);
    }

    #[test]
    fn merged_rounds_average_elapsed_time_and_sum_checks() {
        let round = |elapsed_ns, completions| RawRound {
            elapsed_ns,
            cycles_done: 2,
            tally: Tally {
                completions,
                cpu_at_start: 0,
                cpu_at_end: 0,
                ..Tally::new(0)
            },
        };
        let merged = merge_threads(&[vec![round(100, 4)], vec![round(300, 4)]]);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].elapsed_ns, 200);
        assert_eq!(merged[0].tally.completions, 8);
    }
}
