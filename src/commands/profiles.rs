//! `rtsoak profiles`: list the profiles a name can give (installed in /etc/rtsoak/profiles, then
//! built-in) or print one.

use crate::exit::Outcome;
use crate::profile;

/// List or show.
pub(super) fn profiles(show: Option<&str>) -> anyhow::Result<Outcome> {
    match show {
        Some(name) => print!("{}", text_of(name)?),
        None => {
            for name in profile::names() {
                let (source, text) = profile::named_text(&name)?.unwrap_or_default();
                let description = profile::parse(&name, &text)
                    .ok()
                    .and_then(|p| p.description)
                    .unwrap_or_default();
                println!("{name:<18} {source:<10} {description}");
            }
        }
    }
    Ok(Outcome::Pass)
}

fn text_of(name: &str) -> anyhow::Result<String> {
    let Some((_, text)) = profile::named_text(name)? else {
        anyhow::bail!(
            "no profile `{name}`: the profiles are {} (rtsoak profiles lists them)",
            profile::names().join(", ")
        );
    };
    Ok(text)
}
