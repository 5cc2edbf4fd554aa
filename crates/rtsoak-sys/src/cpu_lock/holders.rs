//! Who a run waits behind: the processes holding its CPUs' locks and those queued ahead of it,
//! one entry per process, named as the kernel (`SO_PEERCRED`) and /proc name them.
//!
//! Owns: reading a holder's command line, escaped and cut. Never trusts it: another user may
//! have written it.

use std::collections::BTreeSet;

use rtsoak_record::text::printable_bytes;
use rtsoak_record::{CpuHolder, CpuHolderRole};

use super::ticket::{Peer, Seen};
use super::{Names, listener_of};

/// One process queued ahead: by pid, or by its number where the kernel did not say who.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Queued {
    Pid(u32),
    Number(u32),
}

/// The processes among the tickets `ahead`: how many are queued ahead, and which.
pub(super) fn queued(ahead: &[Seen]) -> BTreeSet<Queued> {
    ahead.iter().map(key).collect()
}

fn key(seen: &Seen) -> Queued {
    match seen.peer {
        Some(peer) => Queued::Pid(peer.pid),
        None => Queued::Number(seen.number),
    }
}

/// Whom a run on `cpus` waits behind: the holders of the CPUs' locks, then the processes of
/// the tickets `ahead`, first in the queue first.
pub(super) fn behind(names: &Names, cpus: &[usize], ahead: &[Seen]) -> Vec<CpuHolder> {
    let mut out: Vec<(Option<Queued>, CpuHolder)> = Vec::new();
    for &cpu in cpus {
        // Refused: nobody holds it. Any other answer but a holder cannot be told apart from
        // a lock just let go, and is left out.
        if let Ok(peer) = listener_of(&names.lock(cpu)) {
            let peer = peer.map(|(pid, uid)| Peer { pid, uid });
            add(&mut out, None, CpuHolderRole::Holding, cpu, peer);
        }
    }
    let mut ahead = ahead.to_vec();
    ahead.sort_by_key(|seen| (seen.number, seen.cpu));
    for seen in &ahead {
        add(
            &mut out,
            Some(key(seen)),
            CpuHolderRole::Queued,
            seen.cpu,
            seen.peer,
        );
    }
    out.into_iter().map(|(_, holder)| holder).collect()
}

/// Add `cpu` to the entry of the same process (`queued` for a ticket, `None` for a lock),
/// making one where there is none.
fn add(
    out: &mut Vec<(Option<Queued>, CpuHolder)>,
    queued: Option<Queued>,
    role: CpuHolderRole,
    cpu: usize,
    peer: Option<Peer>,
) {
    let pid = peer.map(|p| p.pid);
    let same = out
        .iter_mut()
        .find(|(q, h)| h.role == role && *q == queued && h.pid == pid);
    if let Some((_, holder)) = same {
        if !holder.cpus.contains(&cpu) {
            holder.cpus.push(cpu);
        }
        return;
    }
    out.push((
        queued,
        CpuHolder {
            role,
            cpus: vec![cpu],
            pid: peer.map(|p| p.pid),
            uid: peer.map(|p| p.uid),
            command: peer.and_then(|p| command_of(p.pid)),
        },
    ));
}

/// `pid 1234, uid 0, rtsoak compare --profile nightly`, or `holder unknown` where the kernel
/// did not say who.
pub(super) fn describe(holder: &CpuHolder) -> String {
    match (holder.pid, holder.uid) {
        (Some(pid), Some(uid)) => format!(
            "pid {pid}, uid {uid}, {}",
            holder.command.as_deref().unwrap_or("command unknown")
        ),
        _ => "holder unknown".to_string(),
    }
}

/// Process `pid`'s command line from /proc (its `comm` where that is empty), escaped (another
/// user wrote it) and cut; `None` where neither can be read (it has exited).
pub(super) fn command_of(pid: u32) -> Option<String> {
    let read = |what: &str| std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
    let mut cmdline = read("cmdline");
    if cmdline.last() == Some(&0) {
        cmdline.pop();
    }
    let command: Vec<u8> = if cmdline.is_empty() {
        let mut comm = read("comm");
        if comm.last() == Some(&b'\n') {
            comm.pop();
        }
        comm
    } else {
        cmdline
            .iter()
            .map(|&b| if b == 0 { b' ' } else { b })
            .collect()
    };
    if command.is_empty() {
        return None;
    }
    const MAX: usize = 200;
    let cut = command.len().saturating_sub(MAX);
    let mut text = printable_bytes(&command[..command.len().min(MAX)]);
    if cut > 0 {
        text.push_str(&format!("…({cut} more bytes)"));
    }
    Some(text)
}
