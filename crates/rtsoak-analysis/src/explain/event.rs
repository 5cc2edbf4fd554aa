//! One line of the private trace instance's `trace_pipe`, parsed into the few events the
//! explainer reads. The text layout is the kernel's default with the `irq-info` column off:
//!
//! ```text
//!   rtsoak-pub-244   [005]  1234.567890: sched_pi_setprio: comm=rtsoak-npub pid=248 oldprio=79 newprio=59
//! ```
//!
//! Timestamps are the `mono` trace clock (the `CLOCK_MONOTONIC` the workers stamp messages
//! with), printed in microseconds. A line that is not one of these events, or that does not
//! parse, is `None`: the explainer counts it and never guesses.

use rtsoak_record::text::printable;

/// A task as the kernel names it in an event.
pub type Pid = i32;

/// What the explainer reads from the trace.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `sched:sched_switch`: `prev` leaves the CPU, `next` gets it.
    Switch {
        prev_pid: Pid,
        prev_comm: String,
        prev_prio: i32,
        /// `prev` was still runnable (`R`, `R+`): preempted rather than blocked or sleeping.
        prev_runnable: bool,
        /// `prev` blocked uninterruptibly (`D`), as a task waiting on a sleeping lock does.
        prev_blocked: bool,
        next_pid: Pid,
        next_comm: String,
        next_prio: i32,
    },
    /// `sched:sched_waking`: the current task wakes `pid` onto `target_cpu`.
    Waking {
        pid: Pid,
        comm: String,
        target_cpu: usize,
    },
    /// `sched:sched_pi_setprio`: priority inheritance sets `pid`'s priority. Emitted by the
    /// waiter when it boosts the owner of the rt_mutex it blocks on, and by the owner when it
    /// is deboosted on unlock.
    PiSetprio {
        pid: Pid,
        comm: String,
        old_prio: i32,
        new_prio: i32,
    },
    /// `lock:contention_begin`: the current task must wait for the lock at `address`.
    ContentionBegin { address: u64, flags: String },
    /// `lock:contention_end`: the current task has the lock (or gave up waiting).
    ContentionEnd { address: u64 },
    /// `irq:irq_handler_entry`.
    IrqEntry { irq: u32, name: String },
    /// `irq:irq_handler_exit`.
    IrqExit,
    /// `irq:softirq_entry`.
    SoftirqEntry { action: String },
    /// `irq:softirq_exit`.
    SoftirqExit,
    /// `syscalls:sys_enter_futex`: the current task enters futex(2) with `op` on `uaddr`.
    FutexEnter { uaddr: u64, op: u32 },
    /// A line `=> symbol+0x1a/0x40` of a stack trace the kernel printed after the event before.
    StackFrame { symbol: String },
    /// `CPU:N [LOST M EVENTS]`: the kernel buffer overflowed and events are missing.
    Lost { cpu: usize, events: u64 },
}

/// One parsed line: the event with the task, CPU and time it happened on.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The task the event happened in (`common_pid`).
    pub pid: Pid,
    /// That task's name.
    pub comm: String,
    pub cpu: usize,
    /// `CLOCK_MONOTONIC`, microseconds.
    pub at_us: u64,
    pub event: Event,
}

/// Parse one `trace_pipe` line; `None` for anything the explainer does not read.
pub fn parse(line: &str) -> Option<Record> {
    let trimmed = line.trim();
    if let Some(frame) = trimmed.strip_prefix("=> ") {
        return Some(Record {
            pid: 0,
            comm: String::new(),
            cpu: 0,
            at_us: 0,
            event: Event::StackFrame {
                symbol: frame.split('+').next()?.trim().to_string(),
            },
        });
    }
    if let Some(rest) = trimmed.strip_prefix("CPU:")
        && let Some((cpu, lost)) = rest.split_once(" [LOST ")
    {
        return Some(Record {
            pid: 0,
            comm: String::new(),
            cpu: cpu.trim().parse().ok()?,
            at_us: 0,
            event: Event::Lost {
                cpu: cpu.trim().parse().ok()?,
                events: lost.split_whitespace().next()?.parse().ok()?,
            },
        });
    }
    // "<comm>-<pid> [CPU] [flags] <secs>.<usecs>: <event>: <fields>"; the comm may hold
    // dashes and spaces, so the task is everything before the last " [".
    let open = trimmed.find(" [")?;
    let task = trimmed[..open].trim_end();
    let (comm, pid) = task.rsplit_once('-')?;
    let after_cpu = &trimmed[open + 2..];
    let (cpu, after) = after_cpu.split_once(']')?;
    let (head, body) = after.split_once(": ")?;
    let stamp = head.split_whitespace().last()?;
    // A syscall event prints as a call: "sys_futex(uaddr: 7f00aa10, op: 6, ...)".
    let (name, fields) = match body.split_once('(') {
        Some((call, arguments)) if call.starts_with("sys_") && !call.contains(' ') => {
            (call, arguments.trim_end_matches(')'))
        }
        _ => body
            .split_once(": ")
            .unwrap_or((body.trim_end_matches(':'), "")),
    };
    let event = event(name.trim(), fields)?;
    Some(Record {
        pid: pid.parse().ok()?,
        comm: printable(comm.trim()).into_owned(),
        cpu: cpu.trim().parse().ok()?,
        at_us: micros(stamp)?,
        event,
    })
}

/// `"1234.567890"` seconds as microseconds.
fn micros(stamp: &str) -> Option<u64> {
    let (secs, frac) = stamp.split_once('.')?;
    let secs: u64 = secs.parse().ok()?;
    // Pad or cut the fraction to six digits, whatever precision the clock printed.
    let mut digits = frac.chars().take(6).collect::<String>();
    while digits.len() < 6 {
        digits.push('0');
    }
    Some(secs * 1_000_000 + digits.parse::<u64>().ok()?)
}

fn event(name: &str, fields: &str) -> Option<Event> {
    Some(match name {
        "sched_switch" => {
            let (prev, next) = fields.split_once(" ==> ")?;
            let state = text(prev, "prev_state")?;
            Event::Switch {
                prev_pid: number(prev, "prev_pid")?,
                prev_comm: comm(prev, "prev_comm=", " prev_pid=")?,
                prev_prio: number(prev, "prev_prio")?,
                prev_runnable: state.starts_with('R'),
                prev_blocked: state.starts_with('D'),
                next_pid: number(next, "next_pid")?,
                next_comm: comm(next, "next_comm=", " next_pid=")?,
                next_prio: number(next, "next_prio")?,
            }
        }
        "sched_waking" => Event::Waking {
            pid: number(fields, "pid")?,
            comm: comm(fields, "comm=", " pid=")?,
            target_cpu: number(fields, "target_cpu")?,
        },
        "sched_pi_setprio" => Event::PiSetprio {
            pid: number(fields, "pid")?,
            comm: comm(fields, "comm=", " pid=")?,
            old_prio: number(fields, "oldprio")?,
            new_prio: number(fields, "newprio")?,
        },
        "contention_begin" => {
            let (address, flags) = fields.split_once(" (flags=")?;
            Event::ContentionBegin {
                address: hex(address.trim())?,
                flags: flags.trim_end_matches(')').to_string(),
            }
        }
        "contention_end" => Event::ContentionEnd {
            address: hex(fields.split_whitespace().next()?)?,
        },
        "irq_handler_entry" => Event::IrqEntry {
            irq: number(fields, "irq")?,
            name: text(fields, "name")?.to_string(),
        },
        "irq_handler_exit" => Event::IrqExit,
        "softirq_entry" => Event::SoftirqEntry {
            action: text(fields, "[action")?.trim_end_matches(']').to_string(),
        },
        "softirq_exit" => Event::SoftirqExit,
        "sys_futex" => Event::FutexEnter {
            uaddr: hex(text(fields, "uaddr:")?.trim_end_matches(','))?,
            op: hex(text(fields, "op:")?.trim_end_matches(','))? as u32,
        },
        _ => return None,
    })
}

/// The whitespace-free value after `key=` (or after `key: ` for keys ending in ':').
fn text<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    let mut search = 0;
    while let Some(found) = fields[search..].find(key) {
        let at = search + found;
        let starts_word = at == 0 || fields.as_bytes()[at - 1] == b' ';
        let rest = &fields[at + key.len()..];
        if starts_word {
            let rest = if key.ends_with(':') {
                rest.trim_start()
            } else {
                rest.strip_prefix('=')?
            };
            return rest.split_whitespace().next();
        }
        search = at + key.len();
    }
    None
}

fn number<T: std::str::FromStr>(fields: &str, key: &str) -> Option<T> {
    text(fields, key)?.parse().ok()
}

/// A task name: everything between `key` (`"comm="`) and `next` (`" pid="`); a comm may hold
/// spaces, and, as any task may name itself, control characters: those are escaped here, once,
/// so no name from the trace reaches a terminal raw.
fn comm(fields: &str, key: &str, next: &str) -> Option<String> {
    let start = fields.find(key)? + key.len();
    let end = fields[start..]
        .find(next)
        .map_or(fields.len(), |i| start + i);
    Some(printable(&fields[start..end]).into_owned())
}

fn hex(value: &str) -> Option<u64> {
    let digits = value.trim_start_matches("0x");
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_keeps_both_tasks_and_how_prev_left() {
        let line = "  rtsoak-burst-22268  [000]  6512.003100: sched_switch: prev_comm=rtsoak-burst \
                    prev_pid=22268 prev_prio=49 prev_state=R+ ==> next_comm=Web Content \
                    next_pid=22269 next_prio=59";
        let record = parse(line).unwrap();
        assert_eq!(record.pid, 22268);
        assert_eq!(record.comm, "rtsoak-burst");
        assert_eq!(record.cpu, 0);
        assert_eq!(record.at_us, 6_512_003_100);
        assert_eq!(
            record.event,
            Event::Switch {
                prev_pid: 22268,
                prev_comm: "rtsoak-burst".into(),
                prev_prio: 49,
                prev_runnable: true,
                prev_blocked: false,
                next_pid: 22269,
                next_comm: "Web Content".into(),
                next_prio: 59,
            }
        );
    }

    #[test]
    fn the_flags_column_and_a_dashed_comm_do_not_confuse_the_task() {
        let line = "kworker/u8:2-rt-77 [001] d..2. 10.5: sched_pi_setprio: comm=rtsoak-npub \
                    pid=248 oldprio=79 newprio=59";
        let record = parse(line).unwrap();
        assert_eq!((record.comm.as_str(), record.pid), ("kworker/u8:2-rt", 77));
        assert_eq!(record.at_us, 10_500_000);
        assert_eq!(
            record.event,
            Event::PiSetprio {
                pid: 248,
                comm: "rtsoak-npub".into(),
                old_prio: 79,
                new_prio: 59
            }
        );
    }

    #[test]
    fn locks_irqs_futexes_stacks_and_losses_parse() {
        let cases = [
            (
                "rtsoak-pub-244 [005] 1.000001: contention_begin: 0xffff8881003c9274 (flags=RT)",
                Event::ContentionBegin {
                    address: 0xffff_8881_003c_9274,
                    flags: "RT".into(),
                },
            ),
            (
                "rtsoak-pub-244 [005] 1.000002: contention_end: 0xffff8881003c9274 (ret=0)",
                Event::ContentionEnd {
                    address: 0xffff_8881_003c_9274,
                },
            ),
            (
                "<idle>-0 [003] 1.000003: irq_handler_entry: irq=24 name=virtio0-input.0",
                Event::IrqEntry {
                    irq: 24,
                    name: "virtio0-input.0".into(),
                },
            ),
            (
                "<idle>-0 [003] 1.000004: softirq_entry: vec=7 [action=SCHED]",
                Event::SoftirqEntry {
                    action: "SCHED".into(),
                },
            ),
            (
                "rtsoak-pub-244 [005] 1.000005: sys_futex(uaddr: 7f00aa10, op: 6, val: 0, \
                 utime: 0, uaddr2: 0, val3: 0)",
                Event::FutexEnter {
                    uaddr: 0x7f00_aa10,
                    op: 6,
                },
            ),
        ];
        for (line, event) in cases {
            assert_eq!(parse(line).map(|r| r.event), Some(event), "{line}");
        }
        assert_eq!(
            parse(" => rt_spin_lock+0x3c/0x70").map(|r| r.event),
            Some(Event::StackFrame {
                symbol: "rt_spin_lock".into()
            })
        );
        assert_eq!(
            parse("CPU:3 [LOST 118 EVENTS]").map(|r| r.event),
            Some(Event::Lost {
                cpu: 3,
                events: 118
            })
        );
        assert_eq!(parse("# tracer: nop"), None);
        assert_eq!(
            parse("rtsoak-1 [000] 1.0: sched_wakeup: comm=x pid=2"),
            None
        );
    }
}
