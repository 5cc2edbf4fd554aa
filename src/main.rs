#![forbid(unsafe_code)]

use clap::Parser;
use rtsoak::cli::Cli;
use rtsoak::exit::Outcome;
use rtsoak::sys::alloc::CountingAllocator;

/// Every allocation is counted, so workers can show their measured loops allocated nothing.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn main() {
    // Like any Unix filter, end quietly when stdout's reader goes away (`rtsoak report | head`)
    // instead of panicking on the failed write; workers set their own dispositions.
    rtsoak::sys::signals::restore_default(nix::sys::signal::Signal::SIGPIPE);
    let cli = Cli::parse();
    let code = match rtsoak::commands::dispatch(cli) {
        Ok(outcome) => outcome.code(),
        Err(error) => {
            eprintln!("Error: {error:#}");
            error_outcome(&error).code()
        }
    };
    std::process::exit(code);
}

/// Usage errors (profile, flags, CPU lists) and busy RT CPUs are told apart from system errors
/// by type.
fn error_outcome(error: &anyhow::Error) -> Outcome {
    if error
        .downcast_ref::<rtsoak::profile::ProfileError>()
        .is_some()
    {
        Outcome::Usage
    } else if error
        .downcast_ref::<rtsoak::sys::cpu_lock::CpusBusy>()
        .is_some()
    {
        Outcome::CpusBusy
    } else {
        Outcome::SystemError
    }
}
