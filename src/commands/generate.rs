//! `rtsoak completions SHELL` and `rtsoak man`: shell completion scripts and manual pages, made
//! from the same command-line definition the program parses (`cli::command`), so they can never
//! offer a flag it does not take.

use std::path::Path;

use anyhow::Context;

use crate::exit::Outcome;

/// Print the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<Outcome> {
    let mut command = crate::cli::command();
    clap_complete::generate(shell, &mut command, "rtsoak", &mut std::io::stdout());
    Ok(Outcome::Pass)
}

/// Print rtsoak(1), or write it and one page per visible command into `dir`.
pub fn man(dir: Option<&Path>) -> anyhow::Result<Outcome> {
    let command = crate::cli::command();
    match dir {
        None => {
            clap_mangen::Man::new(command)
                .render(&mut std::io::stdout())
                .context("writing the manual page")?;
        }
        Some(dir) => {
            let out = crate::sys::safe_dir::SafeDir::create(dir)
                .with_context(|| format!("creating {}", dir.display()))?;
            let mut command = command.disable_help_subcommand(true);
            command.build();
            write_pages(command, &out)
                .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
            println!("Manual pages written to {}", dir.display());
        }
    }
    Ok(Outcome::Pass)
}

/// One page per command, as `clap_mangen::generate_to` makes them, but each written through the
/// directory's fd under a fresh name (clap_mangen's `File::create` would follow a planted link).
fn write_pages(command: clap::Command, out: &crate::sys::safe_dir::SafeDir) -> anyhow::Result<()> {
    for sub in command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
    {
        write_pages(sub, out)?;
    }
    let man = clap_mangen::Man::new(command);
    let mut page = Vec::new();
    man.render(&mut page)?;
    out.write(man.get_filename().as_ref(), &page, 0o644)?;
    Ok(())
}
