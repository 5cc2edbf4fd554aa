//! Message integrity: which of one publisher's sequence numbers a subscriber saw, so that lost,
//! duplicated and reordered messages are counted rather than guessed.

use serde::{Deserialize, Serialize};

/// Integrity counts of one run (RT publisher → RT subscriber). A run with `lost > 0`, or with a
/// transport failure ([`Integrity::transport_failures`]), fails, whatever its latencies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// Messages the publisher sent in the measured phase.
    pub sent: u64,
    /// Of those, messages the subscriber observed within the delivery timeout.
    pub delivered: u64,
    /// `sent - delivered`: never observed, observed only after the delivery timeout, or
    /// overwritten in the queue before they were read.
    pub lost: u64,
    /// Observed, but only after the delivery timeout (included in `lost`).
    pub late: u64,
    /// Overwritten in the queue before the subscriber read them (included in `lost`).
    pub overrun: u64,
    /// Observed more than once.
    pub duplicated: u64,
    /// Observed after a later sequence number of the same publisher.
    pub reordered: u64,
    /// Measured periods the plan gave the run (0 in results written before it was recorded).
    #[serde(default)]
    pub planned_periods: u64,
    /// Measured periods whose deadline had passed before the publisher could send: skipped,
    /// so no histogram holds them (coordinated omission), and counted here.
    #[serde(default)]
    pub missed_periods: u64,
    /// The RT publisher's wake calls that failed (a subscriber that had just left aside).
    #[serde(default)]
    pub wake_errors: u64,
    /// The RT subscriber's completions with an unexpected error result.
    #[serde(default)]
    pub cqe_errors: u64,
    /// RT messages first seen after a wait that ended with no completion at all: delivered by
    /// the subscriber's fallback poll, not by any wakeup.
    #[serde(default)]
    pub fallback_deliveries: u64,
    /// How the RT subscriber tells the RT publisher's own wake from others'.
    #[serde(default)]
    pub own_wake: Attribution,
    /// Own wakes that reached the RT subscriber, warm-up included (none when not attributable).
    #[serde(default)]
    pub own_wakes: Option<u64>,
    /// [`Attribution::Exact`] only: the RT publisher's wakes of the RT subscriber, warm-up
    /// included, that never reached it.
    #[serde(default)]
    pub wakes_missing: Option<u64>,
    /// Measured RT messages first seen through someone else's wakeup or the fallback poll,
    /// not through their own (none when not attributable).
    #[serde(default)]
    pub piggybacked: Option<u64>,
}

/// How far the RT subscriber can tell the RT publisher's own wake apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attribution {
    /// Every own wake names the message it was sent for (MSG_RING data, a signal's value, an
    /// eventfd count): each one is counted, and one that never arrives is a failure.
    Exact,
    /// An own wake is known as such (a futex bitset) but not which message it was sent for:
    /// it carries every RT message published before it.
    Covering,
    /// The transport cannot tell (every wake looks alike): no own-wake figures.
    #[default]
    None,
}

impl Attribution {
    /// True when own wakes are told apart at all.
    pub fn attributable(self) -> bool {
        self != Attribution::None
    }

    /// `exact`, `covering` or `none`, as every renderer names it.
    pub fn name(self) -> &'static str {
        match self {
            Attribution::Exact => "exact",
            Attribution::Covering => "covering",
            Attribution::None => "none",
        }
    }
}

impl Integrity {
    /// The lost messages in words (`3 of 4002 messages lost (...)`), none when none were.
    pub fn loss(&self) -> Option<String> {
        (self.lost > 0).then(|| {
            format!(
                "{} of {} messages lost (never delivered within the delivery timeout)",
                self.lost, self.sent
            )
        })
    }

    /// The transport's failures as one count: failed wake calls, error completions, messages
    /// only the fallback poll delivered and own wakes that never arrived, added saturating.
    pub fn transport_errors(&self) -> u64 {
        [self.cqe_errors, self.fallback_deliveries]
            .into_iter()
            .chain(self.wakes_missing)
            .fold(self.wake_errors, u64::saturating_add)
    }

    /// What of the transport failed, in words: failed wake calls, error completions, messages
    /// only the fallback poll delivered, own wakes that never arrived. Empty when none did.
    pub fn transport_failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if self.wake_errors > 0 {
            failures.push(format!("{} wake calls failed", self.wake_errors));
        }
        if self.cqe_errors > 0 {
            failures.push(format!("{} completions were errors", self.cqe_errors));
        }
        if self.fallback_deliveries > 0 {
            failures.push(format!(
                "{} messages were delivered only by the fallback poll (no wakeup came)",
                self.fallback_deliveries
            ));
        }
        if let Some(missing) = self.wakes_missing.filter(|m| *m > 0) {
            failures.push(format!(
                "{missing} of the RT publisher's wakes never reached the RT subscriber"
            ));
        }
        if self.own_wake == Attribution::Covering && self.own_wakes == Some(0) && self.delivered > 0
        {
            failures.push(
                "no wake of the RT publisher ever reached the RT subscriber (every message was \
                 carried by another wakeup)"
                    .to_string(),
            );
        }
        failures
    }
}
