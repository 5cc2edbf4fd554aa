//! The `registry!` macro: from one list of `module::Type` lines it declares each transport's
//! file, the list the commands iterate, the one dispatch into the loops, and the two records
//! gathered from every transport's own settings. `mod.rs` holds its one call.

/// Declares the transports once: each one's file (`module::Type` is `pub mod module;`),
/// `REGISTRY` for their names and probes, `visit` to reach one's concrete waker and waiter types
/// by name, `Name` for a name known to be one of them, and `Settings` and `Flags`, one field per transport (named as its file) holding
/// its own settings and the flags that override them.
macro_rules! registry {
    ($($module:ident :: $ty:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// Every transport, in the order `compare` runs them and `probe` lists them.
        pub static REGISTRY: &[&dyn Transport] = &[$(&$module::$ty),+];

        /// Hand the transport `name` to `visitor` with its concrete type and its own field of
        /// `settings` (`None` only for a `Name` from another build's registry, which reading
        /// one refuses).
        pub fn visit<V: Visit>(name: Name, settings: &Settings, visitor: V) -> Option<V::Output> {
            $(
                if $module::$ty.name() == name.as_str() {
                    return Some(visitor.visit(&$module::$ty, &settings.$module));
                }
            )+
            None
        }

        /// A transport of this build's registry, by its name (`msg-ring`). Made only by looking a
        /// name up: reading a plan or a worker's spec refuses a name the registry lacks, so one
        /// that holds a `Name` names a transport that exists. Written as the bare name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct Name(&'static str);

        impl Name {
            /// The registered transport called `text`, or `None`.
            pub fn lookup(text: &str) -> Option<Name> {
                REGISTRY.iter().find(|t| t.name() == text).map(|t| Name(t.name()))
            }

            /// Every registered transport, in registry order.
            pub fn all() -> Vec<Name> {
                REGISTRY.iter().map(|t| Name(t.name())).collect()
            }

            /// The name as the command line, profiles and results spell it.
            pub fn as_str(self) -> &'static str {
                self.0
            }
        }

        impl std::fmt::Display for Name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }

        impl PartialEq<&str> for Name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl serde::Serialize for Name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for Name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Name, D::Error> {
                let text = String::deserialize(deserializer)?;
                Name::lookup(&text).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "unknown transport `{}` (this rtsoak has {})",
                        crate::sys::text::quote(&text),
                        names().join(", ")
                    ))
                })
            }
        }

        /// Every transport's own settings. Flattened: in the plan (and the profile's `[rt]`)
        /// each setting is a key of its own (`futex_wake`).
        #[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct Settings {
            $(
                #[allow(missing_docs, reason = "each field is the transport of its name")]
                #[serde(flatten)]
                pub $module: <$module::$ty as Mechanism>::Settings,
            )+
        }

        /// Every transport's own flags (flattened into `run` and `compare`).
        #[derive(Debug, Default, Clone, clap::Args)]
        #[group(skip)]
        pub struct Flags {
            $(
                #[allow(missing_docs, reason = "each field is the transport of its name")]
                #[command(flatten)]
                pub $module: <<$module::$ty as Mechanism>::Settings as OwnSettings>::Flags,
            )+
        }

        impl Settings {
            /// These settings with every flag that was given applied.
            pub fn overridden(&self, flags: &Flags) -> Settings {
                Settings {
                    $($module: self.$module.overridden(&flags.$module),)+
                }
            }

            /// Read from the `[rt]` keys the RT pair's own keys (`rt_keys`) did not take; a key
            /// no transport owns is refused, naming every key `[rt]` accepts.
            pub fn from_rt_keys(mut rest: toml::Table, rt_keys: &[&str]) -> Result<Settings, String> {
                let settings = Settings {
                    $($module: settings::take(&mut rest)?,)+
                };
                match rest.keys().next() {
                    Some(unknown) => Err(settings::unknown_key(unknown, rt_keys, &Settings::keys())),
                    None => Ok(settings),
                }
            }

            /// Every transport's profile keys, in registry order.
            pub fn keys() -> Vec<String> {
                let mut keys = Vec::new();
                $(keys.extend(settings::keys::<<$module::$ty as Mechanism>::Settings>());)+
                keys
            }

            /// Each setting's key and value as a profile spells it.
            pub fn values(&self) -> Vec<(String, String)> {
                let mut values = Vec::new();
                $(values.extend(settings::values(&self.$module));)+
                values
            }
        }
    };
}
