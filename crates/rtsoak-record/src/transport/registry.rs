//! The `transports!` macro: from one list of `Variant "id" field` lines (`field::Type` for a
//! transport with settings of its own, whose file `field.rs` it declares) it declares
//! [`Name`](super::Name), the closed set of transports, and [`Settings`](super::Settings), one
//! field per transport holding its own settings. `mod.rs` holds its one call.

/// The settings type of one line: its own, or [`NoSettings`](super::NoSettings).
macro_rules! settings_of {
    ($field:ident :: $settings:ident) => {
        $field::$settings
    };
    ($field:ident) => {
        NoSettings
    };
}

macro_rules! transports {
    ($($variant:ident $id:literal $field:ident $(:: $settings:ident)?),+ $(,)?) => {
        $($(
            pub mod $field;
            #[doc(inline)]
            pub use $field::$settings;
        )?)+

        /// A transport, by its stable id (`msg-ring`). Reading a plan or a worker's spec refuses
        /// an id this build lacks, naming the ones it has. Written as the bare id.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Name {
            $(
                #[allow(missing_docs, reason = "each variant is the transport of its id")]
                $variant,
            )+
        }

        impl Name {
            /// Every transport, in the order `compare` runs them and `probe` lists them.
            pub const ALL: &[Name] = &[$(Name::$variant),+];

            /// The transport whose id is `text`, or `None`.
            pub fn lookup(text: &str) -> Option<Name> {
                Name::ALL.iter().copied().find(|name| name.as_str() == text)
            }

            /// Every transport, in registry order.
            pub fn all() -> Vec<Name> {
                Name::ALL.to_vec()
            }

            /// Every transport's id, in registry order.
            pub fn ids() -> Vec<&'static str> {
                Name::ALL.iter().map(|name| name.as_str()).collect()
            }

            /// The id as the command line, profiles and results spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Name::$variant => $id,)+
                }
            }
        }

        /// Every transport's own settings. Flattened: in the plan (and the profile's `[rt]`)
        /// each setting is a key of its own (`futex_wake`).
        #[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct Settings {
            $(
                #[allow(missing_docs, reason = "each field is the transport of its name")]
                #[serde(flatten)]
                pub $field: settings_of!($field $(:: $settings)?),
            )+
        }
    };
}
