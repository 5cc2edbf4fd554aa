//! The board's identity: the device tree's model and compatible strings, NVIDIA's L4T release
//! (`/etc/nv_tegra_release`) and whether the running kernel is NVIDIA's real-time kernel.
//!
//! Owns: reading and parsing those files. Never judges.

use super::SysRoot;
use rtsoak_record::BoardFacts;

/// The board under `root`, or `None` where there is neither a device tree nor an L4T release
/// file (PCs, most VMs).
pub(crate) fn board_facts(
    root: &SysRoot,
    kernel_release: Option<&str>,
    kernel_version: Option<&str>,
) -> Option<BoardFacts> {
    let model = root
        .read_trimmed("/proc/device-tree/model")
        .filter(|m| !m.is_empty());
    let compatible = root
        .read("/proc/device-tree/compatible")
        .map(|text| nul_separated(&text))
        .unwrap_or_default();
    let l4t_release = root
        .read("/etc/nv_tegra_release")
        .ok()
        .and_then(|text| l4t_release(&text));
    if model.is_none() && compatible.is_empty() && l4t_release.is_none() {
        return None;
    }
    let vendor_rt_kernel = l4t_release
        .is_some()
        .then(|| is_l4t_rt_kernel(kernel_release, kernel_version));
    Some(BoardFacts {
        model,
        compatible,
        l4t_release,
        vendor_rt_kernel,
    })
}

/// A device-tree string list: strings ending in NUL, one after the other.
fn nul_separated(text: &str) -> Vec<String> {
    text.split('\0')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `R36.4.0` from the first line of `/etc/nv_tegra_release`:
/// `# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, DATE: ...`.
fn l4t_release(text: &str) -> Option<String> {
    let line = text.lines().next()?.trim_start_matches('#').trim();
    let major = line.split_whitespace().next()?.trim_start_matches('R');
    major.parse::<u32>().ok()?;
    let revision = line
        .split(',')
        .find_map(|field| field.trim().strip_prefix("REVISION:"))
        .map(str::trim)
        .filter(|r| r.chars().all(|c| c.is_ascii_digit() || c == '.') && !r.is_empty());
    Some(match revision {
        Some(revision) => format!("R{major}.{revision}"),
        None => format!("R{major}"),
    })
}

/// NVIDIA's RT kernel for L4T: the release ends in `-tegra` and carries `-rt`
/// (`5.15.148-rt-tegra`, `5.10.216-rt108-tegra`), and `uname -v` says `PREEMPT_RT`.
fn is_l4t_rt_kernel(release: Option<&str>, version: Option<&str>) -> bool {
    let release = release.unwrap_or("");
    release.ends_with("-tegra")
        && release.contains("-rt")
        && version.is_some_and(|v| v.contains("PREEMPT_RT"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_l4t_release_is_the_major_release_and_its_revision() {
        let jetpack6 = "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, \
                        EABI: aarch64, DATE: Fri Sep 13 04:36:44 UTC 2024\n\
                        # KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n";
        assert_eq!(l4t_release(jetpack6).as_deref(), Some("R36.4.0"));
        let jetpack5 = "# R35 (release), REVISION: 5.0, GCID: 35550185, BOARD: t186ref\n";
        assert_eq!(l4t_release(jetpack5).as_deref(), Some("R35.5.0"));
        assert_eq!(l4t_release("garbage\n"), None);
        assert_eq!(l4t_release(""), None);
    }

    #[test]
    fn nvidias_rt_kernel_is_a_tegra_release_with_rt_in_it_and_preempt_rt_in_its_version() {
        let rt = Some("#1 SMP PREEMPT_RT Fri Sep 13 04:33:41 PDT 2024");
        assert!(is_l4t_rt_kernel(Some("5.15.148-rt-tegra"), rt));
        assert!(is_l4t_rt_kernel(Some("5.10.216-rt108-tegra"), rt));
        let not_rt = Some("#1 SMP PREEMPT Fri Sep 13 04:33:41 PDT 2024");
        assert!(!is_l4t_rt_kernel(Some("5.15.148-tegra"), not_rt));
        assert!(!is_l4t_rt_kernel(Some("6.12.117+deb13-rt-arm64"), rt));
    }

    #[test]
    fn compatible_strings_are_split_at_their_nul_bytes() {
        assert_eq!(
            nul_separated("nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0"),
            [
                "nvidia,p3768-0000+p3767-0005",
                "nvidia,p3767-0005",
                "nvidia,tegra234"
            ]
        );
    }
}
