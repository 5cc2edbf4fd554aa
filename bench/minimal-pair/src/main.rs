//! minimal-pair: a real-time publisher and subscriber with nothing else, the reference that
//! rtsoak's harness is measured against (`bench/harness-cost`).
//!
//! Two SCHED_FIFO threads of one process, each pinned to its CPU, memory locked. The publisher
//! wakes on absolute deadlines (`clock_nanosleep(TIMER_ABSTIME)`), stamps the send time and
//! makes one wake call; the subscriber waits in `io_uring_enter` on a one-shot wait re-armed
//! after every wakeup, and stamps the time its wait returned. The figures are rtsoak's:
//! `timer` (wake time - deadline), `send_call` (the wake call's duration) and `delivery` (the
//! subscriber's return from its wait - the send stamp). There is no queue, no coordinator, no
//! per-interval histograms and no other process: whatever rtsoak adds on top shows as the
//! difference between the two.
//!
//! Prints one line of JSON on stdout; errors on stderr (exit 1; exit 2 for a bad argument).

mod args;
mod pair;
mod realtime;
mod samples;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match args::Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("minimal-pair: {message}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    match pair::run(&args) {
        Ok(figures) => {
            println!("{}", figures.to_json());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("minimal-pair: {message}");
            ExitCode::from(1)
        }
    }
}
