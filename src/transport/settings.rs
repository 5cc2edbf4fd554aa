//! A transport's own settings: one typed section that the transport defines in its own file.
//! The registry gathers every transport's section into [`super::Settings`] (profile keys in
//! `[rt]`, the plan, the worker's spec) and its flags into [`super::Flags`] (flattened into
//! `run` and `compare`), so a transport with a setting touches no profile, plan or spec code.
//!
//! The profile reads these keys in `[rt]`, beside the RT pair's own keys (`rt.futex_wake`),
//! which is where they were before transports owned them. `[rt]` hands over the keys it does not
//! know ([`take`]); a key no transport owns is refused, naming every key `[rt]` accepts.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// One transport's settings. The field names are the profile keys in `[rt]` and the keys in the
/// plan (flattened, so the plan reads as before transports owned them). Every field serializes
/// (no `skip_serializing_if`): the keys are read off the serialized default ([`keys`]), and
/// `#[serde(default)]` lets a profile leave any of them out.
pub trait OwnSettings:
    Default + Clone + Debug + PartialEq + Eq + Serialize + DeserializeOwned + Send + Sync
{
    /// The flags that override them: `#[derive(clap::Args)]` with `#[group(skip)]`, one
    /// `Option` per setting, each field named as the setting (its clap id is then the profile
    /// key, which `--help` uses to say what the default profile gives it).
    type Flags: clap::Args + clap::FromArgMatches + Default + Clone + Debug;

    /// These settings with every flag that was given applied.
    fn overridden(&self, flags: &Self::Flags) -> Self;
}

/// The settings of a transport that has none.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NoSettings {}

/// The flags of a transport that has no settings.
#[derive(Debug, Default, Clone, clap::Args)]
#[group(skip)]
pub struct NoFlags {}

impl OwnSettings for NoSettings {
    type Flags = NoFlags;

    fn overridden(&self, _flags: &NoFlags) -> Self {
        NoSettings {}
    }
}

/// The profile keys of `S`: the fields its default serializes to.
pub fn keys<S: OwnSettings>() -> Vec<String> {
    match toml::Value::try_from(S::default()) {
        Ok(toml::Value::Table(table)) => table.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Take `S`'s keys out of `rest` (the `[rt]` keys `[rt]` itself did not take) and read them;
/// a key left out takes its default.
pub fn take<S: OwnSettings>(rest: &mut toml::Table) -> Result<S, String> {
    let mut own = toml::Table::new();
    for key in keys::<S>() {
        if let Some(value) = rest.remove(&key) {
            own.insert(key, value);
        }
    }
    let named: Vec<String> = own
        .iter()
        .map(|(key, value)| crate::sys::text::quote(&format!("rt.{key} = {value}")))
        .collect();
    toml::Value::Table(own)
        .try_into()
        .map_err(|error: toml::de::Error| format!("{}: {}", named.join(", "), error.message()))
}

/// Each key of `settings` and its value as a profile spells it (`syscall`, not `"syscall"`).
pub fn values<S: OwnSettings>(settings: &S) -> Vec<(String, String)> {
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
pub fn unknown_key(unknown: &str, rt_keys: &[&str], transport_keys: &[String]) -> String {
    let expected: Vec<String> = rt_keys
        .iter()
        .map(|key| key.to_string())
        .chain(transport_keys.iter().cloned())
        .map(|key| format!("`{key}`"))
        .collect();
    format!(
        "unknown field `{}` in [rt], expected one of {}",
        crate::sys::text::quote(unknown),
        expected.join(", ")
    )
}
