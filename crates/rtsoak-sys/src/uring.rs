//! io_uring setup with the requested flags (falling back from `DEFER_TASKRUN` to
//! `COOP_TASKRUN` where the kernel refuses it) and opcode support probing.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, AtomicU64};

use io_uring::{IoUring, Probe, opcode, squeue, types};
use nix::errno::Errno;

use rtsoak_record::RingSetup;

use super::SysError;
use super::read_buffer::{AnyBytes, ReadBuffer};

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
pub(crate) const RING_ENTRIES: u32 = 64;
/// Completion queue size: room for a burst of MSG_RING messages between two drains.
pub(crate) const CQ_ENTRIES: u32 = 1024;

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

/// The raw bytes of an SQE, to patch a field the io-uring crate has no builder for.
fn sqe_bytes(entry: &squeue::Entry) -> [u8; 64] {
    const _: () = assert!(std::mem::size_of::<squeue::Entry>() == 64);
    // SAFETY: `squeue::Entry` is `#[repr(C)]` around the 64-byte `io_uring_sqe`, which is plain
    // integers and unions of integers: every byte is initialised (entries start zeroed).
    unsafe { std::mem::transmute_copy(entry) }
}

/// An SQE from raw bytes (not pushable as it is: only [`Sqe`]'s constructors make those).
fn sqe_from_bytes(bytes: [u8; 64]) -> squeue::Entry {
    // SAFETY: as in `sqe_bytes`; any 64 bytes are a valid `io_uring_sqe` bit pattern.
    unsafe { std::mem::transmute(bytes) }
}

/// Bytes of the buffer [`register_one`] hands the kernel: far more than any registration
/// structure of one element.
const REGISTER_BUFFER_BYTES: usize = 4096;

/// `io_uring_register(ring_fd, opcode, arg, 1)` for an opcode the io-uring crate does not know
/// (an unmerged patch's, whose number and structure layout are assumptions).
///
/// `arg` is copied to the start of a zeroed 4 KiB buffer and the kernel is given that buffer:
/// whatever `opcode` really is on the running kernel, a one-element registration reads or
/// writes well inside it, never past `arg` into the caller's memory.
pub fn register_one<T: Copy>(ring_fd: i32, opcode: u32, arg: &T) -> Result<i32, Errno> {
    const { assert!(std::mem::size_of::<T>() <= REGISTER_BUFFER_BYTES) };
    let mut buffer = vec![0u64; REGISTER_BUFFER_BYTES / 8].into_boxed_slice();
    let bytes = std::mem::size_of::<T>();
    // SAFETY: `arg` is `bytes` initialised bytes of a `Copy` type; `buffer` holds 4096 writable
    // bytes aligned for u64 (at least `T`'s alignment for the registration structures, which
    // are integers), and the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (arg as *const T).cast::<u8>(),
            buffer.as_mut_ptr().cast::<u8>(),
            bytes,
        )
    };
    // SAFETY: the kernel reads (and for some opcodes writes) one element at `buffer`, which is
    // valid for 4096 bytes for the whole call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd,
            opcode,
            buffer.as_mut_ptr().cast::<libc::c_void>(),
            1u32,
        )
    };
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(rc as i32)
    }
}

/// An SQE that is sound to push however long it stays in flight: every memory it names is
/// either only read by the kernel (a futex word, a wait vector) or lives for the rest of the
/// process (a read's buffer), or it names none (`MSG_RING`, a poll, a cancel, a registered
/// wake). The transports and the microbenchmarks submit only these, so they need no `unsafe` of
/// their own.
#[derive(Clone)]
#[repr(transparent)]
pub struct Sqe(squeue::Entry);

impl Sqe {
    /// `IORING_OP_FUTEX_WAIT` on `word` (the kernel only reads it).
    #[inline]
    pub fn futex_wait(word: &AtomicU32, expected: u64, mask: u64, flags: u32) -> Self {
        Sqe(opcode::FutexWait::new(word.as_ptr(), expected, mask, flags).build())
    }

    /// `IORING_OP_FUTEX_WAKE` of `word`'s waiters (the kernel only reads the word).
    #[inline]
    pub fn futex_wake(word: &AtomicU32, count: u64, mask: u64, flags: u32) -> Self {
        Sqe(opcode::FutexWake::new(word.as_ptr(), count, mask, flags).build())
    }

    /// `IORING_OP_FUTEX_WAITV` on `vectors` (the kernel only reads them and their words).
    #[inline]
    pub fn futex_waitv(vectors: &[types::FutexWaitV]) -> Self {
        Sqe(opcode::FutexWaitV::new(vectors.as_ptr(), vectors.len() as u32).build())
    }

    /// `IORING_OP_READ` of 8 bytes from `fd` into `buffer`, which outlives any read.
    #[inline]
    pub fn read_u64(fd: RawFd, buffer: &'static AtomicU64) -> Self {
        Sqe(opcode::Read::new(types::Fd(fd), buffer.as_ptr().cast(), 8).build())
    }

    /// `IORING_OP_READ` from `fd` filling `buffer`, which outlives any read.
    #[inline]
    pub fn read<T: AnyBytes, const N: usize>(fd: RawFd, buffer: &ReadBuffer<T, N>) -> Self {
        let bytes = ReadBuffer::<T, N>::BYTES as u32;
        Sqe(opcode::Read::new(types::Fd(fd), buffer.as_mut_ptr(), bytes).build())
    }

    /// `IORING_OP_POLL_ADD` for `events` on `fd` (no memory); multishot where asked.
    #[inline]
    pub fn poll_add(fd: RawFd, events: u32, multishot: bool) -> Self {
        Sqe(opcode::PollAdd::new(types::Fd(fd), events)
            .multi(multishot)
            .build())
    }

    /// `IORING_OP_ASYNC_CANCEL` of the request whose user data is `user_data` (no memory).
    #[inline]
    pub fn async_cancel(user_data: u64) -> Self {
        Sqe(opcode::AsyncCancel::new(user_data).build())
    }

    /// [`Sqe::futex_wait`] with io_uring futex flags in `sqe->futex_flags`: mainline takes none
    /// (and refuses any with `EINVAL`); an unmerged patch's bits. The kernel still only reads
    /// the word.
    #[inline]
    pub fn futex_wait_flagged(
        word: &AtomicU32,
        expected: u64,
        mask: u64,
        flags: u32,
        futex_flags: u32,
    ) -> Self {
        Sqe(opcode::FutexWait::new(word.as_ptr(), expected, mask, flags)
            .flags(futex_flags)
            .build())
    }

    /// `IORING_OP_FUTEX_WAKE` of the futex an unmerged patch registered as `slot`, flagged by
    /// `futex_flags`: the slot stands where the word's address would. A wake never reads or
    /// writes the memory at that address (it only looks up the futex keyed by it), and mainline
    /// refuses the flag with `EINVAL`, so no memory is named.
    #[inline]
    pub fn futex_wake_slot(slot: u32, count: u64, mask: u64, flags: u32, futex_flags: u32) -> Self {
        Sqe(
            opcode::FutexWake::new(slot as usize as *const u32, count, mask, flags)
                .flags(futex_flags)
                .build(),
        )
    }

    /// `IORING_OP_MSG_RING` to the ring `target` with the command word `command` (`sqe->addr`;
    /// mainline's `IORING_MSG_DATA` is 0, an unmerged patch may assume another) and `value` in
    /// `sqe->off`. `MSG_RING` names no memory of the submitter for any command: the command
    /// selects what the target ring is given, and one the kernel lacks fails with `EINVAL`.
    #[inline]
    pub fn msg_ring_command(target: RawFd, command: u64, value: u64) -> Self {
        let base = opcode::MsgRingData::new(types::Fd(target), 0, value, None).build();
        let mut bytes = sqe_bytes(&base);
        bytes[ADDR..ADDR + 8].copy_from_slice(&command.to_ne_bytes());
        Sqe(sqe_from_bytes(bytes))
    }

    /// The SQE's 64 bytes (`struct io_uring_sqe`), to check an encoding field by field.
    #[inline]
    pub fn bytes(&self) -> [u8; 64] {
        sqe_bytes(&self.0)
    }

    /// `IORING_OP_MSG_RING` posting `result` and `user_data` to the ring whose fd is
    /// `target` (no memory).
    #[inline]
    pub fn msg_ring_data(target: RawFd, result: i32, user_data: u64) -> Self {
        Sqe(opcode::MsgRingData::new(types::Fd(target), result, user_data, None).build())
    }

    /// The same SQE with `user_data`.
    #[inline]
    pub fn user_data(self, user_data: u64) -> Self {
        Sqe(self.0.user_data(user_data))
    }
}

/// Offset of `sqe->addr` in `struct io_uring_sqe` (include/uapi/linux/io_uring.h).
const ADDR: usize = 16;

/// Queue `sqe` on `ring`; `EBUSY` (as a failed `io_uring push`) if the submission queue is full.
#[inline]
pub fn push(ring: &mut IoUring, sqe: &Sqe) -> Result<(), SysError> {
    push_all(ring, std::slice::from_ref(sqe)).map_err(|errno| SysError::new("io_uring push", errno))
}

/// Queue `sqes` on `ring`; `EBUSY` if the submission queue fills first.
#[inline(always)]
pub fn push_all(ring: &mut IoUring, sqes: &[Sqe]) -> Result<(), Errno> {
    let mut sq = ring.submission();
    for sqe in sqes {
        // SAFETY: an `Sqe` names only memory the kernel merely reads or that lives for the rest
        // of the process (see `Sqe`).
        if unsafe { sq.push(&sqe.0) }.is_err() {
            return Err(Errno::EBUSY);
        }
    }
    Ok(())
}

/// The flags of the ring setup a plan asks for.
impl From<RingSetup> for SetupFlags {
    fn from(setup: RingSetup) -> Self {
        match setup {
            RingSetup::DeferTaskrun => SetupFlags::SingleIssuerDeferTaskrun,
            RingSetup::CoopTaskrun => SetupFlags::CoopTaskrun,
            RingSetup::None => SetupFlags::None,
        }
    }
}

/// The ring setup the kernel granted, as a result records it.
impl From<SetupFlags> for RingSetup {
    fn from(flags: SetupFlags) -> Self {
        match flags {
            SetupFlags::SingleIssuerDeferTaskrun => RingSetup::DeferTaskrun,
            SetupFlags::CoopTaskrun => RingSetup::CoopTaskrun,
            SetupFlags::None => RingSetup::None,
        }
    }
}
