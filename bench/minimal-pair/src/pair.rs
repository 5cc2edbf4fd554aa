//! The pair: a publisher thread and a subscriber thread meeting through a 64-slot ring of send
//! stamps and one wake mechanism.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use io_uring::{IoUring, opcode, types};

use crate::args::{Args, Mechanism};
use crate::realtime::{become_realtime, hold_cpu_dma_latency, lock_memory, now_ns, sleep_until};
use crate::samples::{Figures, Samples};

/// Send stamps the subscriber can be behind by before it loses one (counted as `overrun`).
const STAMPS: usize = 64;
/// The first period starts this long after both threads are ready.
const START_LEAD_NS: u64 = 50_000_000;
/// The subscriber's longest wait: it looks at the stop flag at least this often.
const POLL_NS: u32 = 100_000_000;
const FUTEX2_SIZE_U32: u32 = 0x02;

/// What the pair measured.
pub(crate) struct Outcome {
    mechanism: Mechanism,
    period_ns: u64,
    /// The measured phase's periods: each one sent (a `timer` sample) or counted `missed`.
    planned_periods: u64,
    ring: &'static str,
    cpu_dma_latency: bool,
    missed: u64,
    overrun: u64,
    timer: Figures,
    send_call: Figures,
    delivery: Figures,
}

impl Outcome {
    pub(crate) fn to_json(&self) -> String {
        format!(
            "{{\"mechanism\":\"{}\",\"period_ns\":{},\"planned_periods\":{},\"ring\":\"{}\",\"cpu_dma_latency\":{},\
             \"missed\":{},\"overrun\":{},\"timer\":{},\"send_call\":{},\"delivery\":{}}}",
            self.mechanism.name(),
            self.period_ns,
            self.planned_periods,
            self.ring,
            self.cpu_dma_latency,
            self.missed,
            self.overrun,
            self.timer.to_json(),
            self.send_call.to_json(),
            self.delivery.to_json()
        )
    }
}

/// What the two threads share.
struct Shared {
    /// Sequence number of the last message whose stamp is stored (0: none yet).
    published: AtomicU64,
    /// Send stamps, slot `sequence % STAMPS`.
    sent_ns: [AtomicU64; STAMPS],
    /// The first measured message's sequence number.
    first_measured: AtomicU64,
    /// The futex word (in a shared mapping, waited on and woken non-private, as rtsoak does
    /// across processes).
    word: &'static AtomicU32,
    eventfd: i32,
    subscriber_ready: AtomicBool,
    done: AtomicBool,
}

/// Run the pair as `args` says.
pub(crate) fn run(args: &Args) -> Result<Outcome, String> {
    lock_memory()?;
    let dma = if args.hold_cpu_dma_latency {
        hold_cpu_dma_latency()
    } else {
        None
    };
    let shared = Shared {
        published: AtomicU64::new(0),
        sent_ns: [const { AtomicU64::new(0) }; STAMPS],
        first_measured: AtomicU64::new(u64::MAX),
        word: shared_word()?,
        eventfd: eventfd()?,
        subscriber_ready: AtomicBool::new(false),
        done: AtomicBool::new(false),
    };
    let (warmup, measured) = args.periods();
    let (publisher, subscriber) = std::thread::scope(|scope| {
        let subscriber = scope.spawn(|| {
            let _ends_run = EndsRun(&shared.done);
            subscribe(args, &shared, measured as usize)
        });
        let publisher = publish(args, &shared, warmup, measured);
        shared.done.store(true, Ordering::Release);
        wake(args.mechanism, &shared);
        (publisher, subscriber.join())
    });
    // The subscriber's failure first: when it failed before it was ready, the publisher's
    // error only says that it never was.
    let subscriber = subscriber.map_err(|_| "the subscriber thread panicked".to_string())??;
    let publisher = publisher?;
    Ok(Outcome {
        mechanism: args.mechanism,
        period_ns: args.period_ns,
        planned_periods: measured,
        ring: subscriber.ring,
        cpu_dma_latency: dma.is_some(),
        missed: publisher.missed,
        overrun: subscriber.overrun,
        timer: publisher.timer.figures(),
        send_call: publisher.send_call.figures(),
        delivery: subscriber.delivery.figures(),
    })
}

/// Sets `done` when the subscriber thread ends, however it ends: an error anywhere in its setup
/// (real-time, io_uring, the first arm) or a panic would otherwise leave the publisher waiting
/// for `subscriber_ready` forever. Setting it when the subscriber succeeded changes nothing: it
/// returns `Ok` only once the publisher has set it.
struct EndsRun<'a>(&'a AtomicBool);

impl Drop for EndsRun<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

struct Published {
    timer: Samples,
    send_call: Samples,
    missed: u64,
}

/// The publisher: a period at a time on absolute deadlines, a stamp and a wake each.
fn publish(args: &Args, shared: &Shared, warmup: u64, measured: u64) -> Result<Published, String> {
    let mut out = Published {
        timer: Samples::with_capacity(measured as usize),
        send_call: Samples::with_capacity(measured as usize),
        missed: 0,
    };
    let realtime = become_realtime(args.publisher_cpu, args.priority);
    while !shared.subscriber_ready.load(Ordering::Acquire) {
        if shared.done.load(Ordering::Acquire) {
            return Err("the subscriber never got ready".to_string());
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    realtime?;
    let start_ns = now_ns() + START_LEAD_NS;
    let total = warmup + measured;
    let (mut period, mut sequence) = (0u64, 0u64);
    while period < total {
        let deadline_ns = start_ns + period * args.period_ns;
        sleep_until(deadline_ns);
        let woke_ns = now_ns();
        sequence += 1;
        let measuring = period >= warmup;
        if measuring && shared.first_measured.load(Ordering::Relaxed) == u64::MAX {
            shared.first_measured.store(sequence, Ordering::Release);
        }
        let sent_ns = now_ns();
        shared.sent_ns[sequence as usize % STAMPS].store(sent_ns, Ordering::Release);
        shared.published.store(sequence, Ordering::Release);
        // The wake call alone, as rtsoak times it: the stamp and publication before it are
        // `delivery`'s, not the call's.
        let before_ns = now_ns();
        wake(args.mechanism, shared);
        let returned_ns = now_ns();
        if measuring {
            out.timer.push(woke_ns - deadline_ns);
            out.send_call.push(returned_ns - before_ns);
        }
        // Deadlines that passed before the publisher could send again are skipped, and
        // counted: a missed period is a sample no histogram holds.
        let next = (period + 1).max((returned_ns - start_ns) / args.period_ns + 1);
        // Only the measured phase's: [max(period + 1, warmup), min(next, total)).
        out.missed += next.min(total).saturating_sub((period + 1).max(warmup));
        period = next;
    }
    Ok(out)
}

/// The one wake call.
#[inline]
fn wake(mechanism: Mechanism, shared: &Shared) {
    match mechanism {
        Mechanism::Eventfd => {
            let one = 1u64.to_ne_bytes();
            // SAFETY: `one` is 8 readable bytes; the eventfd lives as long as `shared`.
            unsafe { libc::write(shared.eventfd, one.as_ptr().cast(), one.len()) };
        }
        Mechanism::Futex => {
            shared.word.fetch_add(1, Ordering::Release);
            // SAFETY: the word is a live, aligned u32 in a shared mapping; FUTEX_WAKE (not
            // private) wakes waiters keyed on that mapping.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    shared.word.as_ptr(),
                    libc::FUTEX_WAKE,
                    1,
                    std::ptr::null::<libc::timespec>(),
                    std::ptr::null::<u32>(),
                    0,
                )
            };
        }
    }
}

struct Subscribed {
    delivery: Samples,
    overrun: u64,
    ring: &'static str,
}

/// The subscriber: wait in `io_uring_enter`, stamp, re-arm, account every message sent by then.
fn subscribe(args: &Args, shared: &Shared, capacity: usize) -> Result<Subscribed, String> {
    let mut out = Subscribed {
        delivery: Samples::with_capacity(capacity),
        overrun: 0,
        ring: "defer-taskrun",
    };
    become_realtime(args.subscriber_cpu, args.priority)?;
    let mut ring = match IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(8)
    {
        Ok(ring) => ring,
        Err(_) => {
            out.ring = "coop-taskrun";
            IoUring::builder()
                .setup_coop_taskrun()
                .setup_taskrun_flag()
                .build(8)
                .map_err(|e| format!("io_uring setup: {e}: is io_uring enabled?"))?
        }
    };
    let mut buffer = [0u8; 8];
    arm(&mut ring, args.mechanism, shared, &mut buffer)?;
    shared.subscriber_ready.store(true, Ordering::Release);
    let timeout = types::Timespec::new().nsec(POLL_NS);
    let wait = types::SubmitArgs::new().timespec(&timeout);
    let mut next = 1u64;
    loop {
        let waited = ring.submitter().submit_with_args(1, &wait);
        let seen_ns = now_ns();
        match waited {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
            Err(e) => return Err(format!("waiting in io_uring_enter: {e}")),
            Ok(_) => {}
        }
        let mut rearm = false;
        for cqe in ring.completion() {
            rearm = true;
            let result = cqe.result();
            // A futex wait whose word moved before it was armed ends at once with -EAGAIN:
            // a normal race, handled by re-arming. Anything else is a failure.
            let ok = result >= 0 || (args.mechanism == Mechanism::Futex && result == -libc::EAGAIN);
            if !ok {
                return Err(format!("completion error {}", -result));
            }
        }
        if rearm {
            arm(&mut ring, args.mechanism, shared, &mut buffer)?;
        }
        next = account(shared, next, seen_ns, &mut out);
        if shared.done.load(Ordering::Acquire) && next > shared.published.load(Ordering::Acquire) {
            return Ok(out);
        }
    }
}

/// Record the delivery of every message sent at or before `seen_ns`, from sequence `next` on;
/// the next sequence to account.
#[inline]
fn account(shared: &Shared, mut next: u64, seen_ns: u64, out: &mut Subscribed) -> u64 {
    let published = shared.published.load(Ordering::Acquire);
    // Stored before `published` was: as current as it.
    let first_measured = shared.first_measured.load(Ordering::Acquire);
    if published >= next + STAMPS as u64 {
        let skipped = published + 1 - STAMPS as u64;
        // Only measured sends are counted, as only they are samples: every measured send is
        // then a `delivery` sample or an `overrun`.
        out.overrun += skipped.saturating_sub(next.max(first_measured));
        next = skipped;
    }
    while next <= published {
        let sent_ns = shared.sent_ns[next as usize % STAMPS].load(Ordering::Acquire);
        if sent_ns > seen_ns {
            break;
        }
        if next >= first_measured {
            out.delivery.push(seen_ns - sent_ns);
        }
        next += 1;
    }
    next
}

/// Queue the one-shot wait; it is submitted by the next `io_uring_enter`.
fn arm(
    ring: &mut IoUring,
    mechanism: Mechanism,
    shared: &Shared,
    buffer: &mut [u8; 8],
) -> Result<(), String> {
    let entry = match mechanism {
        Mechanism::Eventfd => {
            opcode::Read::new(types::Fd(shared.eventfd), buffer.as_mut_ptr(), 8).build()
        }
        Mechanism::Futex => opcode::FutexWait::new(
            shared.word.as_ptr().cast_const(),
            u64::from(shared.word.load(Ordering::Acquire)),
            u64::from(u32::MAX),
            FUTEX2_SIZE_U32,
        )
        .build(),
    };
    // SAFETY: the read's buffer and the futex word outlive the ring's use of them: the buffer
    // lives in `subscribe`'s frame until its loop ends, the word for the whole program.
    unsafe { ring.submission().push(&entry) }.map_err(|_| "the submission queue is full".into())
}

/// A futex word in a shared mapping, as rtsoak's is (its region is a shared memfd).
fn shared_word() -> Result<&'static AtomicU32, String> {
    // SAFETY: an anonymous shared mapping of one page, never unmapped: the word lives for the
    // whole program.
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the page is mapped, zeroed, aligned and never freed; AtomicU32 has u32's layout.
    Ok(unsafe { &*page.cast::<AtomicU32>() })
}

/// A non-blocking eventfd, as rtsoak's eventfd transport makes.
fn eventfd() -> Result<i32, String> {
    // SAFETY: plain system call.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("eventfd: {}", std::io::Error::last_os_error()));
    }
    Ok(fd)
}
