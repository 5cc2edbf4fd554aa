//! Which transports there are: each one's stable id, the spelling of the command line, profiles,
//! plans and results ([`Name`]), and each one's own settings ([`Settings`]). The mechanisms are
//! in the measure crate, whose registry matches every [`Name`] exhaustively: a transport named
//! here without a mechanism there, or the other way round, does not compile.
//!
//! Adding a transport: one line in the `transports!` call below (its variant, its id and its
//! field of [`Settings`], named as its file in the measure crate), and its settings type in a
//! file of its own here if it has any (`field::Type` on its line declares the file); then its
//! mechanism in the measure crate.

#[macro_use]
mod registry;

/// The settings of a transport that has none.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NoSettings {}

transports![
    Futex "futex" futex::FutexSettings,
    MsgRing "msg-ring" msg_ring,
    Eventfd "eventfd" eventfd,
    Signalfd "signalfd" signalfd,
    EventfdMultishot "eventfd-multishot" eventfd_multishot,
    FutexSyscall "futex-syscall" futex_syscall,
    PersistentFutex "persistent-futex" persistent_futex,
    Doorbell "doorbell" doorbell,
];

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Name, D::Error> {
        let text = String::deserialize(deserializer)?;
        Name::lookup(&text).ok_or_else(|| {
            let names: Vec<&str> = Name::ALL.iter().map(|name| name.as_str()).collect();
            serde::de::Error::custom(format!(
                "unknown transport `{}` (this rtsoak has {})",
                crate::text::quote(&text),
                names.join(", ")
            ))
        })
    }
}
