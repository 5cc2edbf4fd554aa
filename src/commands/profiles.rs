//! `rtsoak profiles`: list the built-in profiles or print one.

use crate::exit::Outcome;
use crate::profile;

/// List or show.
pub fn profiles(show: Option<&str>) -> anyhow::Result<Outcome> {
    match show {
        Some(name) => {
            let text = profile::builtin_text(name).ok_or_else(|| {
                anyhow::anyhow!(
                    "no built-in profile `{name}`: the built-in profiles are {}",
                    profile::builtin_names().join(", ")
                )
            })?;
            print!("{text}");
        }
        None => {
            for name in profile::builtin_names() {
                let description = profile::parse(name, profile::builtin_text(name).unwrap_or(""))
                    .ok()
                    .and_then(|p| p.description)
                    .unwrap_or_default();
                println!("{name:<10} {description}");
            }
        }
    }
    Ok(Outcome::Pass)
}
