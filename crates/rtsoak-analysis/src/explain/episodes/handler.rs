//! Interrupts and softirqs: a hard interrupt handler or a softirq ran on an RT task's CPU
//! while the task was there, from the handler's entry to its exit on that CPU.
//!
//! It owns the handlers running on one CPU and what each becomes; the walker decides whose
//! wait it is (the RT task on that CPU at the exit) and whether it is kept.

use rtsoak_record::result::explain::Wait;

/// The handlers running on one CPU, each with its entry time.
#[derive(Debug, Clone, Default)]
pub(super) struct Handlers {
    irq: Option<(u64, String)>,
    softirq: Option<(u64, String)>,
}

impl Handlers {
    /// `irq_handler_entry` of `irq` (named `name`) at `now`.
    pub(super) fn irq_entry(&mut self, now: u64, irq: u32, name: &str) {
        self.irq = Some((now, format!("{irq}:{name}")));
    }

    /// `irq_handler_exit`: the handler that ran, from its entry time, if the trace saw it begin.
    pub(super) fn irq_exit(&mut self) -> Option<(u64, Wait)> {
        let (start_us, name) = self.irq.take()?;
        Some((start_us, Wait::Interrupt { name }))
    }

    /// `softirq_entry` of `action` at `now`.
    pub(super) fn softirq_entry(&mut self, now: u64, action: &str) {
        self.softirq = Some((now, action.to_string()));
    }

    /// `softirq_exit`: the softirq that ran, from its entry time, if the trace saw it begin.
    pub(super) fn softirq_exit(&mut self) -> Option<(u64, Wait)> {
        let (start_us, action) = self.softirq.take()?;
        Some((start_us, Wait::Softirq { action }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_runs_from_its_entry_to_its_exit_and_an_exit_alone_is_nothing() {
        let mut handlers = Handlers::default();
        assert_eq!(handlers.irq_exit(), None, "the trace did not see it begin");
        handlers.irq_entry(100, 24, "virtio0");
        handlers.softirq_entry(110, "TIMER");
        assert_eq!(
            handlers.softirq_exit(),
            Some((
                110,
                Wait::Softirq {
                    action: "TIMER".to_string()
                }
            ))
        );
        assert_eq!(
            handlers.irq_exit(),
            Some((
                100,
                Wait::Interrupt {
                    name: "24:virtio0".to_string()
                }
            ))
        );
        assert_eq!(handlers.irq_exit(), None, "each entry ends once");
    }
}
