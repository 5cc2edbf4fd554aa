//! The publisher's view of the membership table: for each active subscriber, what the
//! transport needs to wake it (a pidfd, a duplicated fd). Refreshed outside the timed section;
//! fixed-size, so the hot path never allocates.

use std::sync::atomic::Ordering;

use crate::region::{MAX_MEMBERS, Region, member_state};
use crate::sys::SysError;

/// Wake targets of type `T`, in membership order (slot 0, the RT subscriber, first).
pub struct Targets<T> {
    slots: [Option<(u32, T)>; MAX_MEMBERS],
    order: [u8; MAX_MEMBERS],
    count: usize,
    seen_epoch: u64,
}

impl<T> Default for Targets<T> {
    fn default() -> Self {
        Targets {
            slots: std::array::from_fn(|_| None),
            order: [0; MAX_MEMBERS],
            count: 0,
            seen_epoch: u64::MAX,
        }
    }
}

impl<T> Targets<T> {
    /// Re-read membership; `open(pid, wake_fd)` makes the target for a new member.
    /// A member that cannot be opened (it left in the meantime) is skipped, not fatal, unless
    /// it is the RT subscriber (slot 0).
    pub fn refresh(
        &mut self,
        region: &Region,
        mut open: impl FnMut(i32, i32) -> Result<T, SysError>,
    ) -> Result<(), SysError> {
        let epoch = region.control.members_epoch.load(Ordering::Acquire);
        if epoch == self.seen_epoch {
            return Ok(());
        }
        self.count = 0;
        for (index, member) in region.members.iter().enumerate() {
            let active = member.state.load(Ordering::Acquire) == member_state::ACTIVE;
            let generation = member.generation.load(Ordering::Relaxed);
            if !active {
                self.slots[index] = None;
                continue;
            }
            let current = matches!(&self.slots[index], Some((g, _)) if *g == generation);
            if !current {
                let pid = member.pid.load(Ordering::Relaxed);
                let wake_fd = member.wake_fd.load(Ordering::Relaxed);
                match open(pid, wake_fd) {
                    Ok(target) => self.slots[index] = Some((generation, target)),
                    Err(error) if index == 0 => return Err(error),
                    Err(_) => {
                        self.slots[index] = None;
                        continue;
                    }
                }
            }
            self.order[self.count] = index as u8;
            self.count += 1;
        }
        self.seen_epoch = epoch;
        Ok(())
    }

    /// Number of targets.
    #[inline]
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when there is nobody to wake.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Target number `index` in wake order.
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> &mut T {
        let slot = self.order[index] as usize;
        &mut self.slots[slot]
            .as_mut()
            .expect("ordered targets are present")
            .1
    }
}
