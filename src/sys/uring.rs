//! io_uring setup with the requested flags (falling back from `DEFER_TASKRUN` to
//! `COOP_TASKRUN` where the kernel refuses it) and opcode support probing.

use io_uring::{IoUring, Probe};

use super::SysError;

/// The setup flags of a ring, as the kernel names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupFlags {
    /// `IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN` (Linux 6.1).
    SingleIssuerDeferTaskrun,
    /// `IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG` (Linux 5.19).
    CoopTaskrun,
    /// No setup flags.
    None,
}

/// Entries of every ring rtsoak creates: a few wait SQEs and bursts of CQEs.
pub const RING_ENTRIES: u32 = 64;
/// Completion queue size: room for a burst of MSG_RING messages between two drains.
pub const CQ_ENTRIES: u32 = 1024;

/// Build a ring with `requested` setup flags. Returns the ring and the flags it really has:
/// where the kernel refuses `DEFER_TASKRUN`, `COOP_TASKRUN`.
pub fn build(requested: SetupFlags) -> Result<(IoUring, SetupFlags), SysError> {
    build_sized(requested, RING_ENTRIES, CQ_ENTRIES)
}

/// [`build`] with `entries` submission slots and `cq_entries` completion slots (the
/// microbenchmarks submit a whole cycle's requests at once).
pub fn build_sized(
    requested: SetupFlags,
    entries: u32,
    cq_entries: u32,
) -> Result<(IoUring, SetupFlags), SysError> {
    let attempt = |setup: SetupFlags| {
        let mut builder = IoUring::builder();
        builder.setup_cqsize(cq_entries);
        match setup {
            SetupFlags::SingleIssuerDeferTaskrun => {
                builder.setup_single_issuer().setup_defer_taskrun();
            }
            SetupFlags::CoopTaskrun => {
                builder.setup_coop_taskrun().setup_taskrun_flag();
            }
            SetupFlags::None => {}
        }
        builder.build(entries)
    };
    match attempt(requested) {
        Ok(ring) => Ok((ring, requested)),
        Err(error) if requested == SetupFlags::SingleIssuerDeferTaskrun => {
            match attempt(SetupFlags::CoopTaskrun) {
                Ok(ring) => Ok((ring, SetupFlags::CoopTaskrun)),
                Err(_) => Err(SysError::from_io("io_uring_setup", &error)),
            }
        }
        Err(error) => Err(SysError::from_io("io_uring_setup", &error)),
    }
}

/// Which opcodes the running kernel's io_uring supports.
pub struct OpcodeSupport {
    probe: Probe,
}

impl OpcodeSupport {
    /// Ask the kernel (`IORING_REGISTER_PROBE` on a throwaway ring).
    pub fn query() -> Result<Self, SysError> {
        let ring = IoUring::new(8).map_err(|e| SysError::from_io("io_uring_setup", &e))?;
        let mut probe = Probe::new();
        ring.submitter()
            .register_probe(&mut probe)
            .map_err(|e| SysError::from_io("io_uring_register(IORING_REGISTER_PROBE)", &e))?;
        Ok(OpcodeSupport { probe })
    }

    /// True if `opcode` (an `io_uring::opcode::X::CODE`) is supported.
    pub fn has(&self, opcode: u8) -> bool {
        self.probe.is_supported(opcode)
    }
}
