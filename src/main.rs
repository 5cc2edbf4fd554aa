#![forbid(unsafe_code)]

use rtsoak::exit::Outcome;
use rtsoak_sys::alloc::CountingAllocator;

/// Every allocation is counted, so workers can show their measured loops allocated nothing
/// (where this binary runs them: see below).
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

// The workers are another binary, `rtsoak-worker` beside this one or in the prefix's
// `libexec/rtsoak/` (src/bin/rtsoak-worker.rs says why): this one is the command line and the
// coordinator. Where there is no worker binary (`cargo build --bin rtsoak` builds only this
// one), the coordinator starts this binary as `rtsoak worker` instead (launch::worker_binary), a
// hidden sub-command no help, page or completion offers.
fn main() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == rtsoak_measure::launch::worker_binary::WORKER_ARG)
    {
        std::process::exit(rtsoak_measure::worker::main());
    }
    // Like any Unix filter, end quietly when stdout's reader goes away (`rtsoak report | head`)
    // instead of panicking on the failed write; workers set their own dispositions.
    rtsoak_sys::signals::restore_default(nix::sys::signal::Signal::SIGPIPE);
    let cli = rtsoak::cli::parse();
    let code = match rtsoak::commands::dispatch(cli) {
        Ok(outcome) => outcome.code(),
        Err(error) => {
            // Errors quote paths, profile names and text read from files: escaped, so none of
            // it reaches the terminal as an escape sequence or a line of its own. A profile's
            // parse error alone spans lines (its quoted lines escaped where they were read).
            let message = format!("{error:#}");
            let multi_line = matches!(
                error.downcast_ref::<rtsoak::profile::ProfileError>(),
                Some(rtsoak::profile::ProfileError::Toml { .. })
            );
            let shown = if multi_line {
                rtsoak_record::text::visible_lines(&message)
            } else {
                rtsoak_record::text::visible(&message)
            };
            eprintln!("Error: {shown}");
            error_outcome(&error).code()
        }
    };
    std::process::exit(code);
}

/// Usage errors (profile, flags, CPU lists, a refused environment variable, a
/// directory root must not write into, an input that is not a regular file of bounded size or
/// not a result, a result whose counts cannot be added) and busy RT CPUs are told apart from
/// system errors by type.
fn error_outcome(error: &anyhow::Error) -> Outcome {
    let refused = error.downcast_ref::<rtsoak_measure::coordinator::actions::Refused>();
    if error.is::<rtsoak::profile::ProfileError>()
        || error.is::<rtsoak::commands::environment::EnvironmentError>()
        || error.is::<rtsoak_sys::safe_dir::Untrusted>()
        || error.is::<rtsoak_sys::input::InputError>()
        || error.is::<rtsoak::store::NotAResult>()
        || error.is::<rtsoak::store::Refused>()
        || refused.is_some_and(|refused| !refused.system)
    {
        Outcome::Usage
    } else if error.is::<rtsoak_sys::cpu_lock::CpusBusy>() {
        Outcome::CpusBusy
    } else {
        Outcome::SystemError
    }
}
