//! The board a result was measured on, where the machine says: the device tree's model and
//! compatible strings (arm64 boards), and NVIDIA's L4T release on a Jetson. A CPU model such as
//! arm64's `0xd42` names a core, not a board; a fleet tells its boards apart by these.

use serde::{Deserialize, Serialize};

/// What names the board.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Board {
    /// The device tree's `model` (`/proc/device-tree/model`), e.g. `NVIDIA Jetson Orin Nano
    /// Engineering Reference Developer Kit`.
    pub model: Option<String>,
    /// The device tree's `compatible` strings, most specific first (`nvidia,p3767-0005`, ...,
    /// `nvidia,tegra234`).
    pub compatible: Vec<String>,
    /// NVIDIA's L4T release from `/etc/nv_tegra_release` (`R36.4.3`); none elsewhere.
    pub l4t_release: Option<String>,
    /// On an L4T board: whether the running kernel is the vendor's kernel (a `-tegra` release)
    /// built with PREEMPT_RT. None where there is no L4T release.
    pub vendor_rt_kernel: Option<bool>,
}

impl Board {
    /// Whether nothing names the board (a PC without a device tree).
    pub fn is_empty(&self) -> bool {
        self.model.is_none() && self.compatible.is_empty() && self.l4t_release.is_none()
    }
}
