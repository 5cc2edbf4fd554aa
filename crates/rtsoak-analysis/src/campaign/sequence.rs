//! The boots a plan asks for, in order: each step of `order` booted `boots_per_step` times in a
//! row. A/B/A with one boot per step is three boots; `["parent", "child", "parent"]` with three
//! boots per step is nine, three of each point at each end.
//!
//! Which steps stand for what in the judgement: parent A is the first parent step, parent B
//! the last parent step (if there are two), the child every child step together; every parent
//! boot counts in the parents' boot-to-boot range.
//!
//! Owns: roles, slots and that mapping. Pure.

use serde::{Deserialize, Serialize};

/// Which point a boot is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The reference.
    Parent,
    /// The point under test.
    Child,
}

impl Role {
    /// The stable id (plan, document, token).
    pub fn name(self) -> &'static str {
        match self {
            Role::Parent => "parent",
            Role::Child => "child",
        }
    }
}

/// Where a step stands in the A/B/A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Column {
    /// The first parent step.
    ParentA,
    /// Every child step.
    Child,
    /// The last parent step, where it is not the first.
    ParentB,
    /// A parent step between them: in the parents' range only.
    ParentMiddle,
}

/// One planned boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// 0-based position in the campaign.
    pub seq: usize,
    /// Its point.
    pub role: Role,
    /// 0-based step of `order` it belongs to.
    pub step: usize,
    /// 0-based boot within its step.
    pub boot_in_step: u32,
    /// Where it counts.
    pub column: Column,
}

/// The planned boots of `order` with `boots_per_step` each.
pub fn slots(order: &[Role], boots_per_step: u32) -> Vec<Slot> {
    let first_parent = order.iter().position(|r| *r == Role::Parent);
    let last_parent = order.iter().rposition(|r| *r == Role::Parent);
    let mut slots = Vec::new();
    for (step, role) in order.iter().enumerate() {
        let column = match role {
            Role::Child => Column::Child,
            Role::Parent if Some(step) == first_parent => Column::ParentA,
            Role::Parent if Some(step) == last_parent => Column::ParentB,
            Role::Parent => Column::ParentMiddle,
        };
        for boot_in_step in 0..boots_per_step {
            slots.push(Slot {
                seq: slots.len(),
                role: *role,
                step,
                boot_in_step,
                column,
            });
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use Role::{Child, Parent};

    fn columns(order: &[Role], boots: u32) -> Vec<Column> {
        slots(order, boots).iter().map(|s| s.column).collect()
    }

    #[test]
    fn a_b_a_is_parent_a_then_the_child_then_parent_b() {
        assert_eq!(
            columns(&[Parent, Child, Parent], 1),
            [Column::ParentA, Column::Child, Column::ParentB]
        );
    }

    #[test]
    fn each_step_boots_its_count_in_a_row_numbered_in_order() {
        let s = slots(&[Parent, Child, Parent], 3);
        assert_eq!(s.len(), 9);
        assert_eq!(
            s.iter().map(|s| s.seq).collect::<Vec<_>>(),
            (0..9).collect::<Vec<_>>()
        );
        assert_eq!(
            s.iter()
                .map(|s| (s.step, s.boot_in_step))
                .collect::<Vec<_>>()[2..5],
            [(0, 2), (1, 0), (1, 1)]
        );
        assert!(s[3..6].iter().all(|s| s.role == Child));
    }

    #[test]
    fn in_a_b_a_b_a_the_middle_parent_counts_in_the_range_only() {
        assert_eq!(
            columns(&[Parent, Child, Parent, Child, Parent], 1),
            [
                Column::ParentA,
                Column::Child,
                Column::ParentMiddle,
                Column::Child,
                Column::ParentB
            ]
        );
    }

    #[test]
    fn a_two_step_order_has_no_parent_b() {
        assert_eq!(
            columns(&[Parent, Child], 2),
            [
                Column::ParentA,
                Column::ParentA,
                Column::Child,
                Column::Child
            ]
        );
        assert_eq!(
            columns(&[Child, Parent], 1),
            [Column::Child, Column::ParentA]
        );
    }
}
