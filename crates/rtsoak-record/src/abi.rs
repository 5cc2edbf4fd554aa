//! UNMERGED KERNEL ABIs. Everything here is an assumption about kernel patches that are not in
//! mainline: the io_uring persistent futex wait with registered wakes (patch 2 of the RFC
//! "io_uring: futex wakeups that a preempted lower-priority task cannot delay", io-uring list,
//! 2026-10-22), and the
//! `IORING_MSG_DOORBELL` prototype. Every constant and field rtsoak assumes is in these files,
//! with its default; every one can be overridden from a profile's `[abi.*]` sections for another
//! patch revision (see `profiles/README.md`); how each is encoded is in the measure crate's
//! `abi` module. On a kernel without the patch the transports'
//! probes fail with the exact call and errno, and comparisons skip them.
//!
//! The defaults are deliberately outside the ranges mainline uses today (register opcodes
//! above `IORING_REGISTER_LAST`), so that a default can never alias a mainline operation: on a
//! patched kernel, set the values of that patch.

use serde::{Deserialize, Serialize};

/// The assumed ABIs: the profile's `[abi]` section, copied into every plan and worker spec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PatchedAbi {
    /// `[abi.persistent-futex]`.
    #[serde(alias = "persistent-futex")]
    pub persistent_futex: persistent_futex::Abi,
    /// `[abi.doorbell]`.
    pub doorbell: doorbell::Abi,
}

/// `[abi.persistent-futex]`: persistent futex waits and registered wakes.
pub mod persistent_futex {
    use serde::{Deserialize, Serialize};

    /// The assumed constants.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    pub struct Abi {
        /// `io_uring_register` opcode that registers futex words with a ring.
        pub register_opcode: u32,
        /// Bit in `sqe->futex_flags` that makes `IORING_OP_FUTEX_WAIT` persistent.
        pub wait_flag: u32,
        /// Bit in `sqe->futex_flags` that makes `IORING_OP_FUTEX_WAKE` take a registered slot.
        pub wake_flag: u32,
    }

    impl Default for Abi {
        fn default() -> Self {
            Abi {
                register_opcode: 64,
                wait_flag: 1 << 0,
                wake_flag: 1 << 1,
            }
        }
    }
}

/// `[abi.doorbell]`: `IORING_MSG_DOORBELL`.
pub mod doorbell {
    use serde::{Deserialize, Serialize};

    /// The assumed constants.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    pub struct Abi {
        /// `io_uring_register` opcode that gives a ring a doorbell.
        pub register_opcode: u32,
        /// `IORING_OP_MSG_RING` command (`sqe->addr`) that rings a doorbell.
        pub msg_command: u64,
    }

    impl Default for Abi {
        fn default() -> Self {
            Abi {
                register_opcode: 65,
                msg_command: 2,
            }
        }
    }
}
