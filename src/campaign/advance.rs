//! What a campaign does next, decided from its state, the plan, the boot it finds itself in
//! and the time: the state machine both drivers run. Pure: the boot and the clock come in as
//! values, so every path (the boot meant, a wrong kernel, a panic that fell back through the
//! firmware, a deadline passed, a boot lost while measuring, a process restarted within a boot)
//! is tested without a machine.
//!
//! It never loops. Every planned boot is tried at most `1 + retries` times, each try recorded
//! before its kernel is loaded; a failed boot moves on (or stops, as the plan says); and a
//! campaign that sees more boots than its plan could cause (`max_resumes`) ends itself.
//!
//! Owns: every transition of [`State`]. Never touches the system: loading, rebooting, settling
//! and measuring are the drivers'.

use std::collections::BTreeMap;

use super::identity::{BootFacts, missing_words};
use super::plan::{End, OnFailure, Plan};
use super::state::{
    Attempt, BootTarget, Driver, EndReason, Fact, LeftIn, LoadFailure, Measurement, Mismatch,
    Outcome, Phase, Reached, STATE_SCHEMA_VERSION, SlotState, StartBoot, State,
};
use rtsoak_analysis::campaign::sequence::{Role, slots};

/// What to load next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The current attempt at planned boot `seq`.
    Slot {
        /// The planned boot.
        seq: usize,
    },
    /// The kernel the campaign started in.
    Start,
}

/// What the driver must do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// This boot is planned boot `seq`'s: settle, run the command, then [`after_measure`].
    Measure {
        /// The planned boot.
        seq: usize,
    },
    /// Load this kernel ([`loaded`] once it is) and reboot into it.
    Boot(Target),
    /// Reboot through the firmware (`end = "reboot"`).
    Reboot,
    /// The campaign is over: nothing more to do.
    Finished,
}

/// The most boots a campaign of `slots` planned boots tried up to `1 + retries` times each can
/// cause: one per try, one for the return, and as many again for restarts of `resume` within a
/// boot (each ends its try).
fn max_resumes(slots: usize, retries: u32) -> u32 {
    (slots as u32) * (retries + 1) * 2 + 4
}

/// The token of try `number` at planned boot `seq`.
fn token(campaign_id: &str, seq: usize, number: u32) -> String {
    format!("{campaign_id}.{seq}.{number}")
}

/// What a new campaign starts from.
pub struct NewCampaign {
    /// Its id (16 random hex digits).
    pub campaign_id: String,
    /// How it boots.
    pub driver: Driver,
    /// SHA-256 of its plan text.
    pub plan_sha256: String,
    /// When it starts (RFC 3339 UTC).
    pub started_at: String,
    /// The boot it starts in.
    pub start: StartBoot,
    /// What each point boots.
    pub targets: BTreeMap<Role, BootTarget>,
}

/// The state of a new campaign of `plan`, before its first boot.
pub fn create(new: NewCampaign, plan: &Plan) -> State {
    let slots: Vec<SlotState> = slots(&plan.order, plan.boots_per_step)
        .into_iter()
        .map(|slot| SlotState {
            slot,
            attempts: Vec::new(),
        })
        .collect();
    State {
        schema_version: STATE_SCHEMA_VERSION,
        campaign_id: new.campaign_id,
        driver: new.driver,
        plan_sha256: new.plan_sha256,
        started_at: new.started_at,
        start: new.start,
        targets: new.targets,
        max_resumes: max_resumes(slots.len(), plan.retries),
        slots,
        phase: Phase::Booting { seq: 0 },
        resumes: 0,
        seen_releases: BTreeMap::new(),
        seen_build_ids: BTreeMap::new(),
    }
}

/// The first step of a new campaign: its first try planned, and that boot to load.
pub fn begin(state: &mut State) -> Decision {
    state.phase = Phase::Booting { seq: 0 };
    new_attempt(state, 0);
    Decision::Boot(Target::Slot { seq: 0 })
}

/// Record that `target` was loaded at `now_s` (before rebooting into it).
pub fn loaded(state: &mut State, target: Target, now_s: u64) {
    match target {
        Target::Slot { seq } => {
            if let Some(attempt) = state.slots[seq].attempts.last_mut() {
                attempt.loaded_at_s = Some(now_s);
            }
        }
        Target::Start => {
            if let Phase::Returning { loaded_at_s, .. } = &mut state.phase {
                *loaded_at_s = Some(now_s);
            }
        }
    }
}

/// A boot has come up (or `resume` has started again): judge it and say what to do.
pub fn on_boot(state: &mut State, plan: &Plan, boot: &BootFacts, now_s: u64) -> Decision {
    if state.finished() {
        return Decision::Finished;
    }
    state.resumes += 1;
    if state.resumes > state.max_resumes {
        if let Phase::Booting { seq } = state.phase {
            end_attempt(state, seq, Outcome::Interrupted, now_s);
        }
        return finish(state, EndReason::TooManyBoots, left_in(state, boot), now_s);
    }
    match state.phase.clone() {
        Phase::Finished { .. } => Decision::Finished,
        Phase::Returning { why, .. } => finish(state, why, left_in(state, boot), now_s),
        Phase::Booting { seq } => judge_boot(state, plan, seq, boot, now_s),
    }
}

/// The measuring step of planned boot `seq` ended with `outcome` (`Measured`,
/// `CommandFailed`, `SettleTimeout`, `DeadlineMissed`) after `measurement` (if it got that
/// far), in boot `current`.
pub fn after_measure(
    state: &mut State,
    plan: &Plan,
    seq: usize,
    outcome: Outcome,
    measurement: Option<Measurement>,
    current: &BootFacts,
    now_s: u64,
) -> Decision {
    if let Some(attempt) = state.slots[seq].attempts.last_mut() {
        attempt.measurement = measurement;
    }
    close(state, plan, seq, outcome, current, now_s)
}

/// Loading `target` failed (in boot `current`): record it and say what to do instead.
pub(crate) fn load_failed(
    state: &mut State,
    plan: &Plan,
    target: Target,
    failure: LoadFailure,
    message: String,
    current: &BootFacts,
    now_s: u64,
) -> Decision {
    match target {
        Target::Slot { seq } => close(
            state,
            plan,
            seq,
            Outcome::LoadFailed { failure, message },
            current,
            now_s,
        ),
        Target::Start => {
            let why = match state.phase {
                Phase::Returning { why, .. } => why,
                _ => EndReason::Completed,
            };
            let left = LeftIn::NotStart {
                found: current.clone(),
            };
            finish(state, why, left, now_s)
        }
    }
}

/// `rtsoak campaign abort`: end it where it is; a try under way is recorded as interrupted.
pub(crate) fn abort(state: &mut State, current: &BootFacts, now_s: u64) {
    if state.finished() {
        return;
    }
    if let Phase::Booting { seq } = state.phase
        && state.slots[seq]
            .attempts
            .last()
            .is_some_and(|a| a.outcome.is_none())
    {
        end_attempt(state, seq, Outcome::Interrupted, now_s);
    }
    let left = if is_start(state, current) {
        LeftIn::Start
    } else {
        LeftIn::LastBoot
    };
    finish(state, EndReason::Aborted, left, now_s);
}

/// Judge boot `boot` while the campaign is booting planned boot `seq`.
fn judge_boot(
    state: &mut State,
    plan: &Plan,
    seq: usize,
    boot: &BootFacts,
    now_s: u64,
) -> Decision {
    let Some(attempt) = state.slots[seq].attempts.last().cloned() else {
        new_attempt(state, seq);
        return Decision::Boot(Target::Slot { seq });
    };
    if let Some(reached) = &attempt.reached {
        // The boot meant came up before, and this is a new run of `resume`: in the same boot,
        // the campaign process was stopped; in another, that boot ended unreported.
        let outcome = if reached.facts.boot_id == boot.boot_id {
            Outcome::Interrupted
        } else {
            Outcome::LostBoot {
                boot_id: reached.facts.boot_id.clone(),
            }
        };
        return close(state, plan, seq, outcome, boot, now_s);
    }
    let Some(loaded_at_s) = attempt.loaded_at_s else {
        // Planned but never loaded (stopped in between): load it now.
        return Decision::Boot(Target::Slot { seq });
    };
    let after_s = now_s.saturating_sub(loaded_at_s);
    let outcome = match boot.token() {
        None if after_s > plan.deadline_s => Outcome::DeadlineMissed { after_s },
        None => Outcome::FellBack {
            after_s,
            found: boot.clone(),
        },
        Some(_) => {
            let mismatches = mismatches(state, seq, &attempt, boot);
            if !mismatches.is_empty() {
                Outcome::WrongKernel { mismatches }
            } else if after_s > plan.deadline_s {
                Outcome::DeadlineMissed { after_s }
            } else {
                reach(state, seq, boot, now_s);
                return Decision::Measure { seq };
            }
        }
    };
    close(state, plan, seq, outcome, boot, now_s)
}

/// How `boot` differs from what try `attempt` at planned boot `seq` loaded.
fn mismatches(state: &State, seq: usize, attempt: &Attempt, boot: &BootFacts) -> Vec<Mismatch> {
    let role = state.slots[seq].slot.role;
    let target = &state.targets[&role];
    let mut found = Vec::new();
    let mut differs = |fact, expected: &str, got: &str| {
        found.push(Mismatch {
            fact,
            expected: expected.to_string(),
            found: got.to_string(),
        });
    };
    let token = boot.token().unwrap_or_default();
    if token != attempt.token {
        differs(Fact::Token, &attempt.token, token);
    }
    let release = target.release.as_ref().or(state.seen_releases.get(&role));
    if let Some(release) = release
        && *release != boot.release
    {
        differs(Fact::Release, release, &boot.release);
    }
    if let (Some(seen), Some(now)) = (state.seen_build_ids.get(&role), &boot.build_id)
        && seen != now
    {
        differs(Fact::BuildId, seen, now);
    }
    let missing = missing_words(&target.cmdline, &boot.cmdline);
    if !missing.is_empty() {
        differs(Fact::Cmdline, &missing.join(" "), &boot.cmdline);
    }
    found
}

/// Record that planned boot `seq` came up as meant in `boot`.
fn reach(state: &mut State, seq: usize, boot: &BootFacts, now_s: u64) {
    let role = state.slots[seq].slot.role;
    state
        .seen_releases
        .entry(role)
        .or_insert_with(|| boot.release.clone());
    if let Some(id) = &boot.build_id {
        state
            .seen_build_ids
            .entry(role)
            .or_insert_with(|| id.clone());
    }
    if let Some(attempt) = state.slots[seq].attempts.last_mut() {
        attempt.reached = Some(Reached {
            facts: boot.clone(),
            at_s: now_s,
        });
    }
}

/// End the current try at `seq` with `outcome` and go on (in boot `current`).
fn close(
    state: &mut State,
    plan: &Plan,
    seq: usize,
    outcome: Outcome,
    current: &BootFacts,
    now_s: u64,
) -> Decision {
    let failed = outcome != Outcome::Measured;
    end_attempt(state, seq, outcome, now_s);
    if failed {
        if state.slots[seq].attempts.len() <= plan.retries as usize {
            new_attempt(state, seq);
            return Decision::Boot(Target::Slot { seq });
        }
        if plan.on_failure == OnFailure::Stop {
            return end(state, plan, EndReason::Stopped, current, now_s);
        }
    }
    if seq + 1 < state.slots.len() {
        state.phase = Phase::Booting { seq: seq + 1 };
        new_attempt(state, seq + 1);
        return Decision::Boot(Target::Slot { seq: seq + 1 });
    }
    end(state, plan, EndReason::Completed, current, now_s)
}

fn end_attempt(state: &mut State, seq: usize, outcome: Outcome, now_s: u64) {
    if let Some(attempt) = state.slots[seq].attempts.last_mut() {
        attempt.outcome = Some(outcome);
        attempt.finished_at_s = Some(now_s);
    }
}

fn new_attempt(state: &mut State, seq: usize) {
    let number = state.slots[seq].attempts.len() as u32;
    let token = token(&state.campaign_id, seq, number);
    state.slots[seq].attempts.push(Attempt {
        number,
        token,
        loaded_at_s: None,
        reached: None,
        measurement: None,
        outcome: None,
        finished_at_s: None,
    });
}

/// Every planned boot is done (or the campaign stopped): leave the machine as the plan says.
fn end(
    state: &mut State,
    plan: &Plan,
    why: EndReason,
    current: &BootFacts,
    now_s: u64,
) -> Decision {
    if state.driver == Driver::Qemu {
        return finish(state, why, LeftIn::LastBoot, now_s);
    }
    match plan.end {
        End::Stay => finish(state, why, LeftIn::LastBoot, now_s),
        End::Reboot => {
            finish(state, why, LeftIn::Reboot, now_s);
            Decision::Reboot
        }
        End::Start if is_start(state, current) => finish(state, why, LeftIn::Start, now_s),
        End::Start => {
            state.phase = Phase::Returning {
                why,
                loaded_at_s: None,
            };
            Decision::Boot(Target::Start)
        }
    }
}

fn finish(state: &mut State, why: EndReason, left_in: LeftIn, now_s: u64) -> Decision {
    state.phase = Phase::Finished {
        why,
        left_in,
        at_s: now_s,
    };
    Decision::Finished
}

/// Where a campaign that ends in `boot` leaves the machine, as far as it can tell.
fn left_in(state: &State, boot: &BootFacts) -> LeftIn {
    if is_start(state, boot) {
        LeftIn::Start
    } else {
        LeftIn::NotStart {
            found: boot.clone(),
        }
    }
}

/// Whether `boot` runs the kernel and command line the campaign started in, and is not one
/// rtsoak loaded (a point's boot carries its token, even where it boots the same).
fn is_start(state: &State, boot: &BootFacts) -> bool {
    let start = &state.start.facts;
    if boot.token().is_some() {
        return false;
    }
    let same_build = match (&start.build_id, &boot.build_id) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    start.release == boot.release
        && same_build
        && missing_words(&start.cmdline, &boot.cmdline).is_empty()
        && missing_words(&boot.cmdline, &start.cmdline).is_empty()
}

#[cfg(test)]
#[path = "advance_tests.rs"]
mod tests;
