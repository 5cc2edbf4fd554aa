//! The `registry!` macro: from one list of `module::Type` lines it declares each transport's
//! file and the one map from a transport's id (the records' `transport::Name`, whose variant is
//! named as the type) to its mechanism: the probes the commands iterate, the one dispatch into
//! the loops, and the flags gathered from every transport's own settings. Each map is an
//! exhaustive `match`, so a `Name` without a mechanism here, or a mechanism without a `Name`,
//! does not compile. `mod.rs` holds its one call.

/// Declares the transports once: each one's file (`module::Type` is `mod module;`),
/// [`transport`](crate::transport::transport) for its probe and description,
/// [`visit`](crate::transport::visit) to reach its concrete waker and waiter types with its own
/// settings (the field of the records' `Settings` named as its file), and
/// [`Flags`](crate::transport::Flags), one field per transport holding the flags that override
/// its settings.
macro_rules! registry {
    ($($module:ident :: $ty:ident),+ $(,)?) => {
        $(mod $module;)+

        /// The transport called `name`, as the commands see it (its probe and description).
        pub fn transport(name: Name) -> &'static dyn Transport {
            match name {
                $(Name::$ty => &$module::$ty,)+
            }
        }

        /// Hand the transport `name` to `visitor` with its concrete type and its own field of
        /// `settings`.
        pub(crate) fn visit<V: Visit>(name: Name, settings: &Settings, visitor: V) -> V::Output {
            match name {
                $(Name::$ty => visitor.visit(&$module::$ty, &settings.$module),)+
            }
        }

        /// Every transport's own flags (flattened into `run` and `compare`).
        #[derive(Debug, Default, Clone, clap::Args)]
        #[group(skip)]
        pub struct Flags {
            $(
                #[allow(missing_docs, reason = "each field is the transport of its name")]
                #[command(flatten)]
                $module: <<$module::$ty as Mechanism>::Settings as OwnSettings>::Flags,
            )+
        }

        /// `settings` with every flag in `flags` that was given applied.
        pub fn overridden(settings: &Settings, flags: &Flags) -> Settings {
            Settings {
                $($module: settings.$module.overridden(&flags.$module),)+
            }
        }
    };
}
