//! The publisher's view of the membership table: for each active subscriber, what the
//! transport needs to wake it (a pidfd, a duplicated fd). Refreshed outside the timed section;
//! fixed-size, so the hot path never allocates.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;

use super::Env;
use rtsoak_record::Role;
use rtsoak_sys::region::{MAX_MEMBERS, RT_MEMBER, Region, member_state};
use rtsoak_sys::{SysError, pidfd};

/// Which subscribers a publisher wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Every member of the queue.
    Everyone,
    /// Every member but the RT subscriber (`noise.queue.wake_rt_subscriber = false`).
    AllButRtSubscriber,
}

impl Reach {
    /// Whom the publisher of `env` wakes: noise publishers spare the RT subscriber when the
    /// profile says so; the RT publisher wakes everyone.
    pub(crate) fn of<S>(env: &Env<'_, S>) -> Self {
        if env.role == Role::NoisePublisher && !env.noise_wakes_rt_subscriber {
            Reach::AllButRtSubscriber
        } else {
            Reach::Everyone
        }
    }
}

/// A subscriber's fd (its ring or eventfd) duplicated into this process with `pidfd_getfd`,
/// with the pidfd that reached it.
pub(crate) struct RemoteFd {
    _process: OwnedFd,
    /// The duplicate.
    pub(crate) fd: OwnedFd,
}

impl RemoteFd {
    /// Duplicate one of our own fds through a pidfd: proves both `pidfd_open` and
    /// `pidfd_getfd` exist and are allowed (the probe of every transport that uses this).
    pub(super) fn trial() -> Result<(), SysError> {
        let me = pidfd::open(std::process::id() as i32)?;
        pidfd::getfd(&me, me.as_raw_fd()).map(drop)
    }

    /// Duplicate `remote_fd` of process `pid`.
    pub(super) fn open(pid: i32, remote_fd: i32) -> Result<Self, SysError> {
        let process = pidfd::open(pid)?;
        let fd = pidfd::getfd(&process, remote_fd)?;
        Ok(RemoteFd {
            _process: process,
            fd,
        })
    }
}

/// Wake targets of type `T`, in membership order (slot 0, the RT subscriber, first).
pub(crate) struct Targets<T> {
    slots: [Option<(u32, T)>; MAX_MEMBERS],
    order: [u8; MAX_MEMBERS],
    count: usize,
    seen_epoch: u64,
    reach: Reach,
}

impl<T> Targets<T> {
    /// No targets yet; [`Targets::refresh`] finds the members `reach` covers.
    pub(crate) fn new(reach: Reach) -> Self {
        Targets {
            slots: std::array::from_fn(|_| None),
            order: [0; MAX_MEMBERS],
            count: 0,
            seen_epoch: u64::MAX,
            reach,
        }
    }

    /// Re-read membership; `open(pid, wake_fd)` makes the target for a new member.
    /// A member that cannot be opened (it left in the meantime) is skipped, not fatal, unless
    /// it is the RT subscriber (slot 0).
    pub(crate) fn refresh(
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
            let spared = index == RT_MEMBER && self.reach == Reach::AllButRtSubscriber;
            let active = member.state.load(Ordering::Acquire) == member_state::ACTIVE && !spared;
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
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// True if the member behind target `index` has left (or been replaced) since the refresh.
    pub(crate) fn departed(&self, region: &Region, index: usize) -> bool {
        let slot = self.order[index] as usize;
        let member = &region.members[slot];
        let generation = self.slots[slot].as_ref().map(|(g, _)| *g);
        member.state.load(Ordering::Acquire) != member_state::ACTIVE
            || Some(member.generation.load(Ordering::Acquire)) != generation
    }

    /// Target number `index` in wake order.
    #[inline]
    pub(crate) fn get_mut(&mut self, index: usize) -> &mut T {
        let slot = self.order[index] as usize;
        &mut self.slots[slot]
            .as_mut()
            .expect("ordered targets are present")
            .1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_sys::region::SharedRegion;

    /// Opens record which (pid, fd) they were asked for.
    fn refresh(targets: &mut Targets<(i32, i32)>, region: &Region, opened: &mut Vec<i32>) {
        targets
            .refresh(region, |pid, fd| {
                opened.push(pid);
                Ok((pid, fd))
            })
            .unwrap();
    }

    #[test]
    fn membership_changes_are_picked_up_and_only_new_members_are_opened() {
        let shared = SharedRegion::create().unwrap();
        let region = shared.get();
        let mut targets = Targets::new(Reach::Everyone);
        let mut opened = Vec::new();
        region.join(0, 100, 7, 0);
        refresh(&mut targets, region, &mut opened);
        assert_eq!((targets.len(), opened.as_slice()), (1, &[100][..]));

        region.join(3, 300, 9, 0);
        region.join(1, 200, 8, 0);
        refresh(&mut targets, region, &mut opened);
        assert_eq!(opened, [100, 200, 300], "only the newcomers were opened");
        let order: Vec<i32> = (0..targets.len()).map(|i| targets.get_mut(i).0).collect();
        assert_eq!(
            order,
            [100, 200, 300],
            "membership order, the RT subscriber first"
        );

        region.leave(1);
        refresh(&mut targets, region, &mut opened);
        let order: Vec<i32> = (0..targets.len()).map(|i| targets.get_mut(i).0).collect();
        assert_eq!(order, [100, 300]);
        assert_eq!(opened.len(), 3, "a departure opens nothing");
    }

    #[test]
    fn a_slot_taken_over_by_a_new_subscriber_is_reopened_and_the_old_target_is_departed() {
        let shared = SharedRegion::create().unwrap();
        let region = shared.get();
        let mut targets = Targets::new(Reach::Everyone);
        let mut opened = Vec::new();
        region.join(0, 100, 7, 0);
        region.join(1, 200, 8, 0);
        refresh(&mut targets, region, &mut opened);
        assert!(!targets.departed(region, 1));
        region.leave(1);
        assert!(targets.departed(region, 1), "left since the refresh");
        region.join(1, 201, 8, 0);
        assert!(targets.departed(region, 1), "replaced since the refresh");
        refresh(&mut targets, region, &mut opened);
        assert_eq!(opened, [100, 200, 201]);
        assert_eq!(targets.get_mut(1).0, 201);
        assert!(!targets.departed(region, 1));
    }

    #[test]
    fn a_publisher_that_spares_the_rt_subscriber_never_opens_or_wakes_it() {
        let shared = SharedRegion::create().unwrap();
        let region = shared.get();
        let mut targets = Targets::new(Reach::AllButRtSubscriber);
        let mut opened = Vec::new();
        region.join(RT_MEMBER, 100, 7, 0);
        region.join(1, 200, 8, 0);
        refresh(&mut targets, region, &mut opened);
        assert_eq!(opened, [200]);
        assert_eq!(targets.len(), 1);
        assert_eq!(targets.get_mut(0).0, 200);
    }

    #[test]
    fn without_a_change_of_epoch_nothing_is_reread() {
        let shared = SharedRegion::create().unwrap();
        let region = shared.get();
        let mut targets = Targets::new(Reach::Everyone);
        let mut opened = Vec::new();
        region.join(0, 100, 7, 0);
        refresh(&mut targets, region, &mut opened);
        refresh(&mut targets, region, &mut opened);
        assert_eq!(opened, [100]);
    }
}
