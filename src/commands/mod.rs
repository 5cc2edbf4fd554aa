//! One file per sub-command; each reads as a short sequence of named steps.

mod bench;
mod campaign;
mod columns;
mod diff;
pub mod environment;
mod explain_check;
mod export_files;
mod generate;
mod invocation;
mod probe;
mod profiles;
mod report;
mod soak;

use crate::cli::{Cli, Command};
use crate::exit::Outcome;

/// Run the parsed command line, once the environment is known to hold nothing refused.
pub fn dispatch(cli: Cli) -> anyhow::Result<Outcome> {
    environment::check()?;
    match cli.command {
        Command::Run { transport, soak } => {
            soak::soak("run", Some(vec![transport]), &soak, cli.quiet)
        }
        Command::Compare { transports, soak } => {
            soak::soak("compare", transports, &soak, cli.quiet)
        }
        Command::Probe {
            json,
            rt_cpus,
            profile,
        } => probe::probe(json, rt_cpus, &profile),
        Command::Report {
            results,
            format,
            output,
            details,
            kcidb_origin,
        } => report::report(
            &results,
            &format,
            output.as_deref(),
            report::Options {
                details,
                kcidb_origin,
            },
        ),
        Command::Profiles { show } => profiles::profiles(show.as_deref()),
        Command::Diff {
            baseline,
            new,
            json,
            markdown,
        } => diff::diff(&baseline, &new, json, markdown),
        Command::Baseline {
            command: crate::cli::BaselineCommand::Promote { result, to, force },
        } => diff::promote(&result, &to, force),
        Command::Bench { bench } => bench::bench(bench, cli.quiet),
        Command::Campaign { command } => campaign::campaign(command),
        Command::ExplainCheck {
            rounds,
            cpus,
            keep_trace,
        } => explain_check::explain_check(rounds, cpus, keep_trace),
        Command::Completions { shell } => generate::completions(shell),
        Command::Man { dir } => generate::man(dir.as_deref()),
    }
}
