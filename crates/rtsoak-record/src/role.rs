//! Who a worker is: the six roles of a run.

use serde::{Deserialize, Serialize};

/// What a worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The real-time publisher: periodic publish and timed send call.
    Publisher,
    /// The real-time subscriber's io_uring event loop.
    Subscriber,
    /// A lower-priority publisher on the same queue and transport objects; lives a while.
    NoisePublisher,
    /// A lower-priority subscriber on the same queue and transport objects; lives a while.
    NoiseSubscriber,
    /// Real-time busy bursts, one thread per noise CPU.
    Burst,
    /// System and interrupt load generators.
    Load,
}

impl Role {
    /// True for the publishing roles (RT and noise).
    pub fn is_publisher(self) -> bool {
        matches!(self, Role::Publisher | Role::NoisePublisher)
    }

    /// The name used in results and messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::Publisher => "RT publisher",
            Role::Subscriber => "RT subscriber",
            Role::NoisePublisher => "noise publisher",
            Role::NoiseSubscriber => "noise subscriber",
            Role::Burst => "burst",
            Role::Load => "load",
        }
    }

    /// The task name (comm, at most 15 bytes) a worker of this role gives itself, which its
    /// threads inherit: a kernel trace names rtsoak's tasks by it.
    pub fn comm(self) -> &'static str {
        match self {
            Role::Publisher => "rtsoak-pub",
            Role::Subscriber => "rtsoak-sub",
            Role::NoisePublisher => "rtsoak-npub",
            Role::NoiseSubscriber => "rtsoak-nsub",
            Role::Burst => "rtsoak-burst",
            Role::Load => "rtsoak-load",
        }
    }

    /// The role whose [`Role::comm`] is `comm`.
    pub fn from_comm(comm: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.comm() == comm)
    }

    /// Every role.
    pub const ALL: [Role; 6] = [
        Role::Publisher,
        Role::Subscriber,
        Role::NoisePublisher,
        Role::NoiseSubscriber,
        Role::Burst,
        Role::Load,
    ];
}
