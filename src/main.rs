#![forbid(unsafe_code)]

use rtsoak::exit::Outcome;

// The workers are another binary, `rtsoak-worker` beside this one (src/bin/rtsoak-worker.rs
// says why; it counts their allocations): this one is the command line and the coordinator.
fn main() {
    // Like any Unix filter, end quietly when stdout's reader goes away (`rtsoak report | head`)
    // instead of panicking on the failed write; workers set their own dispositions.
    rtsoak::sys::signals::restore_default(nix::sys::signal::Signal::SIGPIPE);
    let cli = rtsoak::cli::parse();
    let code = match rtsoak::commands::dispatch(cli) {
        Ok(outcome) => outcome.code(),
        Err(error) => {
            eprintln!("Error: {error:#}");
            error_outcome(&error).code()
        }
    };
    std::process::exit(code);
}

/// Usage errors (profile, flags, CPU lists, a refused environment variable, a
/// directory root must not write into) and busy RT CPUs are told apart from system errors
/// by type.
fn error_outcome(error: &anyhow::Error) -> Outcome {
    if error
        .downcast_ref::<rtsoak::profile::ProfileError>()
        .is_some()
        || error
            .downcast_ref::<rtsoak::commands::environment::EnvironmentError>()
            .is_some()
        || error
            .downcast_ref::<rtsoak::sys::safe_dir::Untrusted>()
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
