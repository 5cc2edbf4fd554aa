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
    /// True for the queue-noise roles, which live for `lifetime_ns` and are not measured as the
    /// RT pair is.
    pub fn is_queue_noise(self) -> bool {
        matches!(self, Role::NoisePublisher | Role::NoiseSubscriber)
    }

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
}
