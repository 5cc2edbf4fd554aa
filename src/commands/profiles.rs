//! `rtsoak profiles`: list the profiles a name can give (installed in /etc/rtsoak/profiles, then
//! built-in) or print one. A profile's text, name and description are shown escaped: a file
//! in the profile directory need not be root's work.

use crate::exit::Outcome;
use crate::profile;
use rtsoak_record::text::{visible, visible_lines};

/// List or show.
pub(super) fn profiles(show: Option<&str>) -> anyhow::Result<Outcome> {
    match show {
        Some(name) => print!("{}", visible_lines(&text_of(name)?)),
        None => {
            for name in profile::names() {
                let (source, text) = profile::named_text(&name)?.unwrap_or_default();
                println!("{}", listing_line(&name, source, &text));
            }
        }
    }
    Ok(Outcome::Pass)
}

/// A profile's line of the list: its name, where it comes from and its description, on one
/// line with everything a terminal acts on written visibly.
fn listing_line(name: &str, source: &str, text: &str) -> String {
    let description = profile::parse(name, text)
        .ok()
        .and_then(|p| p.description)
        .unwrap_or_default();
    visible(&format!("{name:<18} {source:<10} {description}")).into_owned()
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

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::text::acts_on;

    /// A title change, a screen clear, a carriage return that hides the line, C1 CSI, a
    /// right-to-left override and a line break before a forgery, as TOML escapes.
    const HOSTILE_TOML: &str = r#"\u001b]0;pwned\u0007\u001b[2J\r\u009b31m\u202e\nFORGED line"#;

    #[test]
    fn a_profiles_name_and_description_are_listed_on_one_escaped_line() {
        let text = format!("description = \"quiet {HOSTILE_TOML}\"\n");
        let description = profile::parse("lab", &text).unwrap().description.unwrap();
        assert!(
            description.contains('\u{1b}'),
            "the TOML holds the raw characters"
        );
        let line = listing_line("lab\u{1b}[2J", "installed", &text);
        assert!(!line.chars().any(acts_on), "{line:?}");
        assert!(line.contains("\\x1b]0;pwned\\x07\\x1b[2J\\x0d"), "{line:?}");
        assert!(line.starts_with("lab\\x1b[2J"), "{line:?}");
    }
}
