//! How the user calls rtsoak where they are, so that advice names a command they can type:
//! `rtsoak probe` for an installed rtsoak, `cargo run --release -- probe` in a source tree,
//! `sudo ./rtsoak probe` for a binary run by its path as root.

use std::path::Path;

/// The command that runs this rtsoak for the user, before the sub-command.
pub(super) fn rtsoak_command() -> String {
    // scripts/cargo-runner, which `cargo run` starts rtsoak through, says how it was run.
    let how = std::env::var("RTSOAK_CARGO_RUN")
        .ok()
        .filter(|run| run.starts_with("cargo run") && !run.contains(char::is_control))
        .unwrap_or_else(|| as_typed(std::env::args_os().next().as_deref().map(Path::new)));
    // Root by way of sudo types sudo again.
    let through_sudo = std::env::var_os("SUDO_USER").is_some() && nix::unistd::geteuid().is_root();
    if through_sudo {
        format!("sudo {how}")
    } else {
        how
    }
}

/// rtsoak as the user typed it: a name found on `PATH` is `rtsoak`, a path stays the path.
fn as_typed(argv0: Option<&Path>) -> String {
    match argv0 {
        Some(path) if path.components().count() > 1 => path.display().to_string(),
        _ => "rtsoak".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_from_path_is_rtsoak_and_a_path_stays_what_was_typed() {
        assert_eq!(as_typed(Some(Path::new("rtsoak"))), "rtsoak");
        assert_eq!(
            as_typed(Some(Path::new("target/release/rtsoak"))),
            "target/release/rtsoak"
        );
        assert_eq!(as_typed(Some(Path::new("./rtsoak"))), "./rtsoak");
        assert_eq!(as_typed(None), "rtsoak");
    }
}
