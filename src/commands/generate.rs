//! `rtsoak completions SHELL` and `rtsoak man`: shell completion scripts and manual pages, made
//! from the same command-line definition the program parses (`cli::command`), so they can never
//! offer a flag it does not take.
//!
//! Two things clap's generators leave out are added here: bash completes the words after a
//! comma of a comma-separated list (`--export hdr-log,<TAB>`, `-t futex,<TAB>`) and files as
//! well as profile names after `--profile`; each manual page's SYNOPSIS names every option's
//! value (`--profile <PROFILE>`), and the exit codes are its EXIT STATUS section, one entry per
//! code.

use std::path::Path;

use anyhow::Context;
use clap::Command;

use crate::exit::Outcome;

/// Print the completion script for `shell`.
pub(super) fn completions(shell: clap_complete::Shell) -> anyhow::Result<Outcome> {
    let mut command = crate::cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "rtsoak", &mut script);
    if shell == clap_complete::Shell::Bash {
        script = bash_lists_and_profile_files(&String::from_utf8_lossy(&script)).into_bytes();
    }
    use std::io::Write;
    std::io::stdout()
        .write_all(&script)
        .context("writing the completion script")?;
    Ok(Outcome::Pass)
}

/// The bash script with every word list completed after the last comma of the current word
/// (the words before it kept as typed), and file names offered beside the built-in profiles.
fn bash_lists_and_profile_files(script: &str) -> String {
    let profiles = crate::profile::builtin_names().join(" ");
    let mut out = String::with_capacity(script.len() + 4096);
    for line in script.split_inclusive('\n') {
        let Some(words) = line
            .trim_start()
            .strip_prefix("COMPREPLY=($(compgen -W \"")
            .and_then(|rest| rest.strip_suffix("\" -- \"${cur}\"))\n"))
        else {
            out.push_str(line);
            continue;
        };
        let indent = &line[..line.len() - line.trim_start().len()];
        if words == profiles {
            out.push_str(&format!(
                "{indent}COMPREPLY=($(compgen -W \"{words}\" -- \"${{cur}}\") $(compgen -f -- \"${{cur}}\"))\n"
            ));
        } else {
            out.push_str(&format!(
                "{indent}COMPREPLY=($(compgen -P \"${{cur%\"${{cur##*,}}\"}}\" -W \"{words}\" -- \"${{cur##*,}}\"))\n"
            ));
        }
    }
    out
}

/// Print rtsoak(1), or write it and one page per visible command into `dir`.
pub(super) fn man(dir: Option<&Path>) -> anyhow::Result<Outcome> {
    let mut command = crate::cli::command().disable_help_subcommand(true);
    command.build();
    match dir {
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(&page(&command).context("rendering the manual page")?)
                .context("writing the manual page")?;
        }
        Some(dir) => {
            let out = rtsoak_sys::safe_dir::SafeDir::create(dir)
                .with_context(|| format!("creating {}", dir.display()))?;
            write_pages(&command, &out)
                .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
            println!("Manual pages written to {}", dir.display());
        }
    }
    Ok(Outcome::Pass)
}

/// `command`'s page and one for each visible subcommand, as `rtsoak-compare.1`, ..., each
/// written through the directory's fd under a fresh name (never through a planted link).
fn write_pages(command: &Command, out: &rtsoak_sys::safe_dir::SafeDir) -> std::io::Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, out)?;
    }
    let name = clap_mangen::Man::new(command.clone()).get_filename();
    out.write(name.as_ref(), &page(command)?, 0o644)
}

/// One manual page: clap_mangen's sections, the SYNOPSIS with value placeholders, and EXIT
/// STATUS in place of the after-help text (which clap_mangen would print as EXTRA).
fn page(command: &Command) -> std::io::Result<Vec<u8>> {
    let usage = synopsis(command);
    let man = clap_mangen::Man::new(
        command
            .clone()
            .after_help(None::<&str>)
            .override_usage(usage),
    );
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    out.extend_from_slice(exit_status(crate::exit::exit_codes_help(command.get_name())).as_bytes());
    if command.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(once_preamble(&out))
}

/// Each clap_mangen section comes with roff's two-line apostrophe preamble: keep the first.
fn once_preamble(page: &[u8]) -> Vec<u8> {
    const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";
    let text = String::from_utf8_lossy(page);
    let (first, rest) = match text.find(PREAMBLE) {
        Some(at) => text.split_at(at + PREAMBLE.len()),
        None => return page.to_vec(),
    };
    format!("{first}{}", rest.replace(PREAMBLE, "")).into_bytes()
}

/// `rtsoak run [-q|--quiet] [-p|--profile <PROFILE>] ... <-t|--transport <TRANSPORT>>`: the
/// optional options, the required ones, then the positionals, each with its value's name.
fn synopsis(command: &Command) -> String {
    let name = command.get_bin_name().unwrap_or(command.get_name());
    let mut words = vec![name.to_string()];
    let visible = || command.get_arguments().filter(|a| !a.is_hide_set());
    let options = visible().filter(|a| !a.is_positional());
    let (required, optional): (Vec<_>, Vec<_>) = options.partition(|a| a.is_required_set());
    for (arg, required) in optional
        .iter()
        .map(|a| (a, false))
        .chain(required.iter().map(|a| (a, true)))
    {
        let flag = match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!("-{short}|--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, Some(long)) => format!("--{long}"),
            (None, None) => continue,
        };
        let takes_value = arg.get_action().takes_values();
        let word = if takes_value {
            format!("{flag} <{}>", value_name(arg))
        } else {
            flag
        };
        words.push(if required {
            format!("<{word}>")
        } else {
            format!("[{word}]")
        });
    }
    for arg in visible().filter(|a| a.is_positional()) {
        let value = format!("<{}>", value_name(arg));
        let many = arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        let value = if many { format!("{value}...") } else { value };
        words.push(if arg.is_required_set() {
            value
        } else {
            format!("[{value}]")
        });
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        words.push("<COMMAND>".to_string());
    }
    words.join(" ")
}

/// The value's name as `--help` shows it: the given one, else the argument's id in capitals.
fn value_name(arg: &clap::Arg) -> String {
    match arg.get_value_names() {
        Some(names) if !names.is_empty() => names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => arg.get_id().as_str().to_uppercase(),
    }
}

/// The exit codes of `help` (`  0    PASS: ...`, continuation lines indented further) as an
/// EXIT STATUS section: a tagged paragraph per code, and what follows the codes as a paragraph
/// of its own.
fn exit_status(help: &str) -> String {
    let mut codes: Vec<(String, String)> = Vec::new();
    let mut after = Vec::new();
    for line in help.lines().skip_while(|l| !l.starts_with("  ")) {
        let trimmed = line.trim();
        if !line.starts_with("  ") {
            after.push(trimmed);
        } else if let Some((code, text)) = trimmed
            .split_once(char::is_whitespace)
            .filter(|(code, _)| code.chars().all(|c| c.is_ascii_digit()))
        {
            codes.push((code.to_string(), text.trim().to_string()));
        } else if let Some((_, text)) = codes.last_mut() {
            text.push(' ');
            text.push_str(trimmed);
        }
    }
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for (code, text) in &codes {
        roff.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff_text(text)));
    }
    if !after.is_empty() {
        roff.push_str(&format!(".PP\n{}\n", roff_text(&after.join(" "))));
    }
    roff
}

/// `text` safe as a roff text line: hyphens as minus signs (what a reader types), backslashes
/// escaped, and no line starting with a control character.
fn roff_text(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_is_an_entry_of_its_own_and_the_rule_after_them_a_paragraph() {
        let roff = exit_status(crate::exit::EXIT_CODES_HELP);
        for code in ["0", "1", "2", "3", "4", "5", "6", "7", "130"] {
            assert!(
                roff.contains(&format!(".TP\n\\fB{code}\\fR\n")),
                "{code}: {roff}"
            );
        }
        assert!(
            roff.contains("too many missed periods"),
            "continuations join: {roff}"
        );
        assert!(roff.contains(".PP\nWhen several apply"), "{roff}");
    }

    #[test]
    fn the_synopsis_names_each_value_and_marks_the_required_options() {
        let mut command = crate::cli::command();
        command.build();
        let run = command.find_subcommand("run").unwrap();
        let usage = synopsis(run);
        assert!(usage.starts_with("rtsoak run "), "{usage}");
        assert!(usage.contains("[-p|--profile <PROFILE>]"), "{usage}");
        assert!(usage.contains("<-t|--transport <TRANSPORT>>"), "{usage}");
        assert!(usage.contains("[--json]"), "{usage}");
    }
}
