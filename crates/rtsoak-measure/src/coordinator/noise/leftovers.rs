//! What an external noise command left running when its rtsoak was killed, found and ended by
//! the next run. Only possible where the kernel gave the command no PID namespace (without one,
//! the kernel does not end a tree with its init) and its noise init was SIGKILLed too, so that
//! it could not end the tree itself (`noise::external_init`).
//!
//! Every process of the command's tree carries `RTSOAK_NOISE_OWNER=TOKEN` in its environment,
//! and its init listens on `@rtsoak-noise-TOKEN` for as long as it lives. A process is ended
//! (SIGKILL) only when all of these hold: it carries the variable with a well-formed token;
//! nobody listens on that token's socket (its init is gone, however it died); it is in this
//! process's network namespace (where that socket would be); and its real and effective uid are
//! this process's (as root, a setuid program an ordinary user started with the variable set is
//! theirs, not root's, and is left alone).
//!
//! Owns: finding and ending those processes. Never signals any other.

use std::io::Read;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::noise::external_init::{OWNER_SOCKET_PREFIX, OWNER_VARIABLE};

/// The most of a process's environment read to find the variable: the init puts it first.
const ENVIRON_BYTES: u64 = 256 << 10;

/// End every leftover of an external noise command whose init is gone, saying so on stderr.
pub fn end() {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    let own_net = std::fs::read_link("/proc/self/ns/net").ok();
    let euid = rtsoak_sys::safe_dir::euid();
    let mut ended = Vec::new();
    for pid in entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
    {
        let Some(token) = owner_token(pid) else {
            continue;
        };
        let orphaned = own_net.is_some()
            && std::fs::read_link(format!("/proc/{pid}/ns/net")).ok() == own_net
            && owned_by(pid, euid)
            && rtsoak_sys::cpu_lock::has_listener(&format!("{OWNER_SOCKET_PREFIX}{token}"))
                == Some(false);
        if orphaned && kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
            ended.push(pid.to_string());
        }
    }
    if !ended.is_empty() {
        eprintln!(
            "Note: ended {} process(es) of an external noise command whose rtsoak was killed \
             (pid {}): they would have loaded the noise CPUs of this run",
            ended.len(),
            ended.join(", ")
        );
    }
}

/// The owner token in `pid`'s environment, if it has a well-formed one.
fn owner_token(pid: i32) -> Option<String> {
    let mut environ = Vec::new();
    std::fs::File::open(format!("/proc/{pid}/environ"))
        .ok()?
        .take(ENVIRON_BYTES)
        .read_to_end(&mut environ)
        .ok()?;
    let prefix = format!("{OWNER_VARIABLE}=");
    let token = environ
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))?;
    (token.len() == 16 && token.iter().all(u8::is_ascii_hexdigit))
        .then(|| String::from_utf8_lossy(token).into_owned())
}

/// True when `pid`'s real and effective uid are both `uid`.
fn owned_by(pid: i32, uid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .is_some_and(|ids| {
            let ids: Vec<&str> = ids.split_whitespace().collect();
            ids.len() >= 2 && ids[..2].iter().all(|id| id.parse() == Ok(uid))
        })
}
