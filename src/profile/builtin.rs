//! The built-in profiles: the files in `profiles/`, embedded so `rtsoak run` works with none on
//! disk. Owns the name → text table; never parses (that is `profile::parse`).

/// Name and text of every built-in profile, in the order `builtin_names` lists them.
const BUILTINS: &[(&str, &str)] = &[
    ("default", include_str!("../../profiles/default.toml")),
    ("ci", include_str!("../../profiles/ci.toml")),
    (
        "jetson-orin-nano",
        include_str!("../../profiles/jetson-orin-nano.toml"),
    ),
    ("nightly", include_str!("../../profiles/nightly.toml")),
];

/// The names alone; kept beside `BUILTINS` and checked against it by a test.
const NAMES: &[&str] = &["default", "ci", "jetson-orin-nano", "nightly"];

/// Names of the built-in profiles, `default` first.
pub fn builtin_names() -> &'static [&'static str] {
    NAMES
}

/// The TOML text of a built-in profile, or `None` if there is no built-in of that name.
pub(crate) fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_has_a_text_and_every_text_is_listed() {
        let table: Vec<&str> = BUILTINS.iter().map(|(name, _)| *name).collect();
        assert_eq!(table, builtin_names());
    }

    #[test]
    fn unknown_names_have_no_text() {
        assert_eq!(builtin_text("nope"), None);
    }
}
