//! The CPU layout of a run: which CPUs the RT publisher, the RT subscriber and the noise get,
//! from explicit choices (profile or command line) or `auto`, and the layout notes a reader of
//! the result must see.
//!
//! Owns: the auto-layout rules documented in `profiles/README.md`. Never reads the system, and
//! never judges whether the RT CPUs are isolated enough (the system checks do that).

use rtsoak_record::cpulist;
use rtsoak_record::plan::{LayoutNote, LayoutNoteKind};

use super::error::{FROM_CLI, ProfileError, cpu_error, invalid};
use super::overrides::Overrides;
use super::sections::{AUTO, CpuChoice, CpuListChoice, CpuTopology, Profile};

/// An explicit RT CPU from the profile, or `None` for `auto`.
fn explicit_cpu(key: &str, choice: &CpuChoice) -> Result<Option<usize>, ProfileError> {
    match choice {
        CpuChoice::Cpu(cpu) => Ok(Some(*cpu)),
        CpuChoice::Keyword(word) if word == AUTO => Ok(None),
        CpuChoice::Keyword(word) => Err(invalid(
            key,
            format!("{word:?}"),
            "\"auto\" or a CPU number such as 4".to_string(),
        )),
    }
}

fn online_cpus(topology: &CpuTopology) -> Vec<usize> {
    let mut online = topology.online.clone();
    online.sort_unstable();
    online.dedup();
    online
}

/// Publisher and subscriber CPUs: explicit ones checked, `auto` ones chosen from the highest
/// isolated CPUs (when at least two are isolated) or else the highest online CPUs.
pub(super) fn rt_cpus(
    profile: &Profile,
    ov: &Overrides,
    topology: &CpuTopology,
) -> Result<(usize, usize), ProfileError> {
    let online = at_least_two_online(topology)?;
    let requested = requested_rt_cpus(profile, ov)?;
    requested.check_online(&online)?;
    let (publisher, subscriber) = requested.or_auto(&auto_candidates(topology, online));
    if publisher == subscriber {
        return Err(cpu_error(
            "cpus.subscriber",
            format!(
                "publisher and subscriber are both CPU {publisher}{}: the RT pair needs two \
                 different CPUs; pick another CPU for one of them, or \"auto\"",
                requested.suffix
            ),
        ));
    }
    Ok((publisher, subscriber))
}

/// The online CPUs, sorted, when there are enough for an RT pair.
fn at_least_two_online(topology: &CpuTopology) -> Result<Vec<usize>, ProfileError> {
    let online = online_cpus(topology);
    if online.len() >= 2 {
        return Ok(online);
    }
    Err(cpu_error(
        "cpus",
        format!(
            "rtsoak needs at least two CPUs (one each for the RT publisher and subscriber), \
             but only {} is online ({}); run it on a machine or VM with two or more CPUs",
            online.len(),
            cpulist::format(&online)
        ),
    ))
}

/// The RT CPUs asked for, each `None` for `auto`, and where they were asked (for messages).
struct RequestedPair {
    publisher: Option<usize>,
    subscriber: Option<usize>,
    suffix: &'static str,
}

/// The command line's pair, which must be exactly two CPUs, wins over the profile's.
fn requested_rt_cpus(profile: &Profile, ov: &Overrides) -> Result<RequestedPair, ProfileError> {
    match &ov.rt_cpus {
        Some(pair) if pair.len() == 2 => Ok(RequestedPair {
            publisher: Some(pair[0]),
            subscriber: Some(pair[1]),
            suffix: FROM_CLI,
        }),
        Some(pair) => Err(cpu_error(
            "cpus.publisher, cpus.subscriber",
            format!(
                "the command line gave {} RT CPUs ({}); give exactly two: publisher, then \
                 subscriber",
                pair.len(),
                cpulist::format(pair)
            ),
        )),
        None => Ok(RequestedPair {
            publisher: explicit_cpu("cpus.publisher", &profile.cpus.publisher)?,
            subscriber: explicit_cpu("cpus.subscriber", &profile.cpus.subscriber)?,
            suffix: "",
        }),
    }
}

impl RequestedPair {
    /// Every explicit CPU must be online, the publisher's checked first.
    fn check_online(&self, online: &[usize]) -> Result<(), ProfileError> {
        for (key, cpu) in [
            ("cpus.publisher", self.publisher),
            ("cpus.subscriber", self.subscriber),
        ] {
            if let Some(cpu) = cpu.filter(|cpu| !online.contains(cpu)) {
                return Err(cpu_error(
                    key,
                    format!(
                        "CPU {cpu}{} is not online; online CPUs are {}: pick one of them or \
                         \"auto\"",
                        self.suffix,
                        cpulist::format(online)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The pair with each `auto` CPU chosen from `candidates` (sorted): the highest one the other
    /// CPU does not take, or the two highest when both are `auto`.
    fn or_auto(&self, candidates: &[usize]) -> (usize, usize) {
        // Highest candidate other than `taken`; there are at least two candidates.
        let highest_except =
            |taken: usize| *candidates.iter().rev().find(|&&c| c != taken).unwrap();
        match (self.publisher, self.subscriber) {
            (Some(p), Some(s)) => (p, s),
            (Some(p), None) => (p, highest_except(p)),
            (None, Some(s)) => (highest_except(s), s),
            (None, None) => {
                let n = candidates.len();
                (candidates[n - 2], candidates[n - 1])
            }
        }
    }
}

/// Where `auto` RT CPUs come from: the isolated CPUs when at least two are isolated, or else
/// every online one.
fn auto_candidates(topology: &CpuTopology, online: Vec<usize>) -> Vec<usize> {
    let isolated: Vec<usize> = online
        .iter()
        .copied()
        .filter(|cpu| topology.isolated.contains(cpu))
        .collect();
    if isolated.len() >= 2 {
        isolated
    } else {
        online
    }
}

/// Noise CPUs: explicit ones checked (overlap with the RT pair is allowed, but noted); `auto`
/// is every online CPU the RT pair does not use, or all of them when none is left.
pub(super) fn noise_cpus(
    profile: &Profile,
    ov: &Overrides,
    topology: &CpuTopology,
    rt: [usize; 2],
    notes: &mut Vec<LayoutNote>,
) -> Result<Vec<usize>, ProfileError> {
    let key = "cpus.noise";
    let online = online_cpus(topology);
    let (explicit, suffix) = match (&ov.noise_cpus, &profile.cpus.noise) {
        (Some(cpus), _) if cpus.is_empty() => {
            return Err(cpu_error(
                key,
                "the command line gave an empty noise CPU list: give at least one CPU, or \
                 leave it out for \"auto\""
                    .to_string(),
            ));
        }
        (Some(cpus), _) => {
            let mut cpus = cpus.clone();
            cpus.sort_unstable();
            cpus.dedup();
            (Some(cpus), FROM_CLI)
        }
        (None, CpuListChoice::Cpu(cpu)) => (Some(vec![*cpu]), ""),
        (None, CpuListChoice::Text(text)) if text == AUTO => (None, ""),
        (None, CpuListChoice::Text(text)) => {
            let cpus = cpulist::parse(text).map_err(|e| {
                cpu_error(
                    key,
                    format!("{text:?} is neither \"auto\" nor a CPU list: {e}"),
                )
            })?;
            (Some(cpus), "")
        }
    };
    let Some(noise) = explicit else {
        let free: Vec<usize> = online.iter().copied().filter(|c| !rt.contains(c)).collect();
        if !free.is_empty() {
            return Ok(free);
        }
        notes.push(LayoutNote::new(
            LayoutNoteKind::SharesRtCpus,
            format!(
                "only {} CPUs online: noise and the coordinator share CPUs with the RT pair; \
                 latencies include that interference",
                online.len()
            ),
        ));
        return Ok(online);
    };
    let offline: Vec<usize> = noise
        .iter()
        .copied()
        .filter(|c| !online.contains(c))
        .collect();
    if !offline.is_empty() {
        return Err(cpu_error(
            key,
            format!(
                "CPUs {}{suffix} are not online; online CPUs are {}: pick noise CPUs among them \
                 or \"auto\"",
                cpulist::format(&offline),
                cpulist::format(&online)
            ),
        ));
    }
    let shared: Vec<usize> = noise.iter().copied().filter(|c| rt.contains(c)).collect();
    if !shared.is_empty() {
        notes.push(LayoutNote::new(
            LayoutNoteKind::SharesRtCpus,
            format!(
                "noise CPUs {} include RT CPU {}: latencies include that interference",
                cpulist::format(&noise),
                cpulist::format(&shared)
            ),
        ));
    }
    Ok(noise)
}
