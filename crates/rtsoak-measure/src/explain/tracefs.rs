//! rtsoak's own tracefs instance (`instances/rtsoak-tTOKEN`): its own buffer, clock, events and
//! filters, so the user's tracing setup (the top-level buffer, `tracing_on`, other instances) is
//! never touched. Where tracefs is not mounted, it is mounted first (`sys::trace`). The instance
//! is removed when dropped.
//!
//! TOKEN is random, and while the instance lives its owner listens on the abstract unix socket
//! `@rtsoak-trace-TOKEN`: the name is unique across PID namespaces (a pid is not), and whether
//! its owner still lives is one `connect` away (refused: the owner is gone, however it died).
//! Every run, tracing or not, removes the instances whose owner is gone ([`remove_stale`]), and
//! the `rtsoak-PID` instances older versions made.
//!
//! Events and filters, chosen so the trace stays small (a few events per RT period plus what
//! holds the RT tasks back):
//!
//! | event | filter |
//! | --- | --- |
//! | `sched:sched_switch` | a real-time task on either side |
//! | `sched:sched_waking`, `lock:contention_begin/end` (stack at begin), `syscalls:sys_enter_futex`, `irq:*` entry/exit | the RT tasks |
//! | `sched:sched_pi_setprio` | a real-time priority on either side |

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::event::Pid;

/// Where tracefs is mounted, newest first.
const ROOTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
/// Per-CPU buffer, KiB: room for a second of heavy noise before the reader drains it.
const BUFFER_KIB: u32 = 8192;
const PREFIX: &str = "rtsoak-";

/// One traced event and how it is filtered.
struct Wanted {
    event: &'static str,
    filter: Filter,
    /// Print the kernel stack with each event (the lock's caller).
    stack: bool,
}

enum Filter {
    RtSwitch,
    RtPrio,
    Pid(&'static str),
}

const EVENTS: [Wanted; 10] = [
    Wanted {
        event: "sched/sched_switch",
        filter: Filter::RtSwitch,
        stack: false,
    },
    Wanted {
        event: "sched/sched_waking",
        filter: Filter::Pid("pid"),
        stack: false,
    },
    Wanted {
        event: "sched/sched_pi_setprio",
        filter: Filter::RtPrio,
        stack: false,
    },
    Wanted {
        event: "lock/contention_begin",
        filter: Filter::Pid("common_pid"),
        stack: true,
    },
    Wanted {
        event: "lock/contention_end",
        filter: Filter::Pid("common_pid"),
        stack: false,
    },
    Wanted {
        event: "syscalls/sys_enter_futex",
        filter: Filter::Pid("common_pid"),
        stack: false,
    },
    Wanted {
        event: "irq/irq_handler_entry",
        filter: Filter::Pid("common_pid"),
        stack: false,
    },
    Wanted {
        event: "irq/irq_handler_exit",
        filter: Filter::Pid("common_pid"),
        stack: false,
    },
    Wanted {
        event: "irq/softirq_entry",
        filter: Filter::Pid("common_pid"),
        stack: false,
    },
    Wanted {
        event: "irq/softirq_exit",
        filter: Filter::Pid("common_pid"),
        stack: false,
    },
];

/// A private, configured, running trace instance.
pub(crate) struct Instance {
    dir: PathBuf,
    /// Events this kernel does not have (`system/event`).
    pub(crate) missing: Vec<String>,
    /// The owner socket `@rtsoak-trace-TOKEN`, bound as long as the instance lives.
    _owner: std::os::fd::OwnedFd,
}

/// The abstract socket name that says an instance's owner lives.
fn owner_name(token: &str) -> String {
    format!("rtsoak-trace-{token}")
}

/// A fresh token and its bound owner socket.
fn new_owner() -> Result<(String, std::os::fd::OwnedFd), String> {
    loop {
        let token = format!("t{}", rtsoak_sys::random::hex_token());
        match rtsoak_sys::cpu_lock::bind_abstract(&owner_name(&token)) {
            Ok(owner) => return Ok((token, owner)),
            Err(error) if error.kind() == ErrorKind::AddrInUse => continue,
            Err(errno) => {
                return Err(format!(
                    "binding the trace instance's owner socket: {errno} (rtsoak needs AF_UNIX                      sockets)"
                ));
            }
        }
    }
}

impl Instance {
    /// Create the instance and start tracing the tasks `pids`. The error says what is missing
    /// and what to do.
    pub(crate) fn start(pids: &[Pid]) -> Result<Instance, String> {
        // As trace-cmd does: where nothing is mounted, mount tracefs rather than ask the user to.
        if let rtsoak_sys::trace::Mount::Failed(reason) = rtsoak_sys::trace::mount_if_missing() {
            return Err(reason);
        }
        let mut denied = false;
        let root = ROOTS
            .iter()
            .map(Path::new)
            .find(|root| match fs::metadata(root.join("instances")) {
                Ok(meta) => meta.is_dir(),
                Err(error) => {
                    denied |= error.kind() == ErrorKind::PermissionDenied;
                    false
                }
            })
            .ok_or_else(|| {
                if denied {
                    "tracefs is readable only by root (run rtsoak as root to explain spikes)"
                        .to_string()
                } else {
                    "tracefs is not mounted (mount it: `mount -t tracefs nodev \
                     /sys/kernel/tracing`)"
                        .to_string()
                }
            })?;
        remove_stale_in(root);
        let (token, owner) = new_owner()?;
        let dir = root.join("instances").join(format!("{PREFIX}{token}"));
        if let Err(error) = fs::create_dir(&dir)
            && error.kind() != ErrorKind::AlreadyExists
        {
            return Err(format!(
                "cannot create the trace instance {}: {error} (tracing needs root or \
                 CAP_SYS_ADMIN; run rtsoak as root to explain spikes)",
                dir.display()
            ));
        }
        let mut instance = Instance {
            dir,
            missing: Vec::new(),
            _owner: owner,
        };
        instance.configure(pids)?;
        Ok(instance)
    }

    fn configure(&mut self, pids: &[Pid]) -> Result<(), String> {
        self.write("trace_clock", "mono")?;
        self.write("buffer_size_kb", &BUFFER_KIB.to_string())?;
        // Plain lines (no irq-info column) and real lock addresses.
        let _ = self.write("options/irq-info", "0");
        let _ = self.write("options/hash-ptr", "0");
        let by_pid = |field: &str| {
            pids.iter()
                .map(|pid| format!("{field} == {pid}"))
                .collect::<Vec<_>>()
                .join(" || ")
        };
        for wanted in &EVENTS {
            let event = format!("events/{}", wanted.event);
            if !self.dir.join(&event).is_dir() {
                self.missing.push(wanted.event.replace('/', ":"));
                continue;
            }
            let filter = match wanted.filter {
                Filter::RtSwitch => "prev_prio < 100 || next_prio < 100".to_string(),
                Filter::RtPrio => "oldprio < 100 || newprio < 100".to_string(),
                Filter::Pid(field) => by_pid(field),
            };
            self.write(&format!("{event}/filter"), &filter)?;
            if wanted.stack {
                // Where the lock was taken; a kernel without triggers still traces the event.
                let _ = self.write(
                    &format!("{event}/trigger"),
                    &format!("stacktrace if {filter}"),
                );
            }
            self.write(&format!("{event}/enable"), "1")?;
        }
        if self.missing.iter().any(|e| e == "sched:sched_switch") {
            return Err("this kernel has no sched:sched_switch trace event".to_string());
        }
        self.write("tracing_on", "1")
    }

    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        let path = self.dir.join(file);
        OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .and_then(|mut f| f.write_all(value.as_bytes()))
            .map_err(|error| format!("writing `{value}` to {}: {error}", path.display()))
    }

    /// The instance's `trace_pipe`, non-blocking: a read with nothing new returns `WouldBlock`.
    pub(crate) fn pipe(&self) -> Result<File, String> {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.dir.join("trace_pipe"))
            .map_err(|error| format!("opening the trace pipe: {error}"))
    }

    /// Stop recording (what is in the buffer can still be read).
    pub(crate) fn stop(&self) {
        let _ = self.write("tracing_on", "0");
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.stop();
        remove(&self.dir);
    }
}

/// Remove an instance: its triggers first (an event with a trigger keeps it busy).
fn remove(dir: &Path) {
    for wanted in EVENTS.iter().filter(|w| w.stack) {
        let trigger = dir.join("events").join(wanted.event).join("trigger");
        if let Ok(mut text) = fs::read_to_string(&trigger)
            && let Some(line) = text.lines().find(|l| l.starts_with("stacktrace"))
        {
            text = format!("!{}", line.split(" [").next().unwrap_or(line));
            let _ = fs::write(&trigger, text);
        }
    }
    let _ = fs::remove_dir(dir);
}

/// Remove the instances whose owner is gone, in whichever tracefs mount has instances; nothing
/// at all (and no error) where tracefs is not mounted or not readable: this runs on every run,
/// tracing or not, and never mounts tracefs to clean up.
pub fn remove_stale() {
    for root in ROOTS.iter().map(Path::new) {
        if root.join("instances").is_dir() {
            remove_stale_in(root);
        }
    }
}

/// Instances of rtsoak processes that are gone: a token whose owner socket nobody listens on
/// any more, or an older version's `rtsoak-PID` (a pid says nothing across PID namespaces, so
/// those are all taken as left behind).
fn remove_stale_in(root: &Path) {
    let Ok(entries) = fs::read_dir(root.join("instances")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let legacy = !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
        let orphaned = rest.starts_with('t')
            && rest.len() > 1
            && rest[1..].bytes().all(|b| b.is_ascii_hexdigit())
            && rtsoak_sys::cpu_lock::has_listener(&owner_name(rest)) == Some(false);
        if legacy || orphaned {
            remove(&entry.path());
        }
    }
}

/// Read what the pipe has now into `buffer`; false when it had nothing.
pub(crate) fn read_some(pipe: &mut File, buffer: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut chunk = [0u8; 64 * 1024];
    match pipe.read(&mut chunk) {
        Ok(0) => Ok(false),
        Ok(n) => {
            buffer.extend_from_slice(&chunk[..n]);
            Ok(true)
        }
        Err(error) if error.kind() == ErrorKind::WouldBlock => Ok(false),
        Err(error) if error.kind() == ErrorKind::Interrupted => Ok(true),
        Err(error) => Err(error),
    }
}
