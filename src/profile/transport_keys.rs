//! The transports' own keys of `[rt]` (`futex_wake`): each transport defines its settings
//! (`rtsoak_record::transport`), and `[rt]` reads them beside the RT pair's own keys, which is
//! where they were before transports owned them. `[rt]` hands over the keys it does not know
//! ([`from_rt_keys`]); a key no transport owns is refused, naming every key `[rt]` accepts.

use rtsoak_record::transport::Settings;

/// Every transport's profile keys: the fields the default settings serialize to.
pub(super) fn keys() -> Vec<String> {
    match toml::Value::try_from(Settings::default()) {
        Ok(toml::Value::Table(table)) => table.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Read every transport's settings from the `[rt]` keys the RT pair's own keys (`rt_keys`) did
/// not take; a key left out takes its default, and a key no transport owns is refused, naming
/// every key `[rt]` accepts.
pub(crate) fn from_rt_keys(mut rest: toml::Table, rt_keys: &[&str]) -> Result<Settings, String> {
    let mut own = toml::Table::new();
    for key in keys() {
        if let Some(value) = rest.remove(&key) {
            own.insert(key, value);
        }
    }
    let named: Vec<String> = own
        .iter()
        .map(|(key, value)| rtsoak_record::text::quote(&format!("rt.{key} = {value}")))
        .collect();
    let settings = toml::Value::Table(own)
        .try_into()
        .map_err(|error: toml::de::Error| format!("{}: {}", named.join(", "), error.message()))?;
    match rest.keys().next() {
        Some(unknown) => Err(unknown_key(unknown, rt_keys, &keys())),
        None => Ok(settings),
    }
}

/// Each key of `settings` and its value as a profile spells it (`syscall`, not `"syscall"`).
pub(super) fn values(settings: &Settings) -> Vec<(String, String)> {
    let Ok(toml::Value::Table(table)) = toml::Value::try_from(settings) else {
        return Vec::new();
    };
    table
        .into_iter()
        .map(|(key, value)| match value {
            toml::Value::String(text) => (key, text),
            other => (key, other.to_string()),
        })
        .collect()
}

/// The error for a key of `[rt]` that neither the RT pair (`rt_keys`) nor a transport
/// (`transport_keys`) owns. The key is the user's text: escaped.
fn unknown_key(unknown: &str, rt_keys: &[&str], transport_keys: &[String]) -> String {
    let expected: Vec<String> = rt_keys
        .iter()
        .map(|key| key.to_string())
        .chain(transport_keys.iter().cloned())
        .map(|key| format!("`{key}`"))
        .collect();
    format!(
        "unknown field `{}` in [rt], expected one of {}",
        rtsoak_record::text::quote(unknown),
        expected.join(", ")
    )
}
