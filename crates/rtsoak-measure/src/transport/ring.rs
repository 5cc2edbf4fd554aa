//! What the subscriber's own wait SQEs carry.

/// user_data of the subscriber's own wait SQEs (MSG_RING completions carry the sender's data).
pub(crate) const ARM_USER_DATA: u64 = u64::MAX;
