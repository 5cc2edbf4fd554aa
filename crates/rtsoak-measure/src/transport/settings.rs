//! How a transport's own settings are overridden from the command line: the settings are a
//! record (`rtsoak_record::transport`, gathered into its `Settings`: profile keys in `[rt]`, the
//! plan, the worker's spec); the flags that override them are the transport's, declared in its
//! file, and the registry gathers them into [`super::Flags`] (flattened into `run` and
//! `compare`).

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// One transport's settings. The field names are the profile keys in `[rt]` and the keys in the
/// plan (flattened, so the plan reads as before transports owned them). Every field serializes
/// (no `skip_serializing_if`): the keys are read off the serialized default
/// (`rtsoak::profile::transport_keys::keys`), and `#[serde(default)]` lets a profile leave any
/// of them out.
pub(crate) trait OwnSettings:
    Default + Clone + Debug + PartialEq + Eq + Serialize + DeserializeOwned + Send + Sync
{
    /// The flags that override them: `#[derive(clap::Args)]` with `#[group(skip)]`, one
    /// `Option` per setting, each field named as the setting (its clap id is then the profile
    /// key, which `--help` uses to say what the default profile gives it).
    type Flags: clap::Args + clap::FromArgMatches + Default + Clone + Debug;

    /// These settings with every flag that was given applied.
    fn overridden(&self, flags: &Self::Flags) -> Self;
}

/// The flags of a transport that has no settings.
#[derive(Debug, Default, Clone, clap::Args)]
#[group(skip)]
pub(crate) struct NoFlags {}

impl OwnSettings for rtsoak_record::transport::NoSettings {
    type Flags = NoFlags;

    fn overridden(&self, _flags: &NoFlags) -> Self {
        Self {}
    }
}
