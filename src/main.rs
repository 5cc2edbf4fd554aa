use clap::Parser;
use rtsoak::cli::Cli;
use rtsoak::exit::Outcome;
use rtsoak::sys::alloc::CountingAllocator;

/// Every allocation is counted, so workers can show their measured loops allocated nothing.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn main() {
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

/// Usage errors (profile, flags, CPU lists) are told apart from system errors by type.
fn error_outcome(error: &anyhow::Error) -> Outcome {
    if error
        .downcast_ref::<rtsoak::profile::ProfileError>()
        .is_some()
    {
        Outcome::Usage
    } else {
        Outcome::SystemError
    }
}
