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
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(command, dir)
                .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
            println!("Manual pages written to {}", dir.display());
        }
    }
    Ok(Outcome::Pass)
}
