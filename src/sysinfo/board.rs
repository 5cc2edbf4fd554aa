//! The board's names: the device tree's model and compatible strings, and on an NVIDIA Jetson
//! the L4T release and whether the running kernel is the vendor's RT kernel. Reads only files
//! under the [`SysRoot`]; a machine without a device tree has no board record.

use super::SysRoot;
use rtsoak_record::Board;

/// What names the board under `root`, whose kernel is `preempt_rt`; none where nothing does.
pub(super) fn board(root: &SysRoot, preempt_rt: bool) -> Option<Board> {
    let model = root
        .read_trimmed("/proc/device-tree/model")
        .filter(|m| !m.is_empty());
    let compatible = root
        .read("/proc/device-tree/compatible")
        .map(|text| {
            text.split('\0')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let l4t_release = root
        .read("/etc/nv_tegra_release")
        .ok()
        .and_then(|text| l4t_release(&text));
    let vendor_rt_kernel = l4t_release.as_ref().map(|_| {
        let release = root.read_trimmed("/proc/sys/kernel/osrelease");
        preempt_rt && release.is_some_and(|r| r.ends_with("-tegra"))
    });
    let board = Board {
        model,
        compatible,
        l4t_release,
        vendor_rt_kernel,
    };
    (!board.is_empty()).then_some(board)
}

/// `R36.4.3` from the first line of `/etc/nv_tegra_release`, `# R36 (release), REVISION: 4.3,
/// GCID: ...`; none if it does not read so.
fn l4t_release(text: &str) -> Option<String> {
    let line = text.lines().next()?.trim_start_matches('#').trim();
    let major = line.split_whitespace().next()?;
    let numeric = major.strip_prefix('R')?;
    if numeric.is_empty() || !numeric.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let revision = line
        .split(',')
        .find_map(|field| field.trim().strip_prefix("REVISION:"))
        .map(str::trim)
        .filter(|r| !r.is_empty());
    Some(match revision {
        Some(revision) => format!("{major}.{revision}"),
        None => major.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jetson() -> SysRoot {
        SysRoot::at(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sys/jetson-orin-nano"
        ))
    }

    #[test]
    fn a_jetson_is_named_by_its_device_tree_and_l4t_release() {
        // The fixture's kernel, 5.15.148-tegra, says nothing of PREEMPT_RT: the stock kernel.
        let board = board(&jetson(), false).expect("the Jetson names its board");
        assert_eq!(
            board.model.as_deref(),
            Some("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit")
        );
        assert_eq!(
            board.compatible,
            [
                "nvidia,p3768-0000+p3767-0005",
                "nvidia,p3767-0005",
                "nvidia,tegra234"
            ]
        );
        assert_eq!(board.l4t_release.as_deref(), Some("R36.4.3"));
        assert_eq!(board.vendor_rt_kernel, Some(false));
        assert_eq!(
            super::super::host_facts(&jetson()).board,
            Some(board),
            "the host facts carry it"
        );
    }

    #[test]
    fn the_vendor_rt_kernel_is_the_tegra_kernel_with_preempt_rt() {
        assert_eq!(board(&jetson(), true).unwrap().vendor_rt_kernel, Some(true));
        let vm = SysRoot::at(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sys/vm-2cpu"
        ));
        assert_eq!(
            board(&vm, true),
            None,
            "a PC without a device tree has no board"
        );
    }

    #[test]
    fn the_l4t_release_reads_the_first_line_or_nothing() {
        assert_eq!(
            l4t_release("# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic\n"),
            Some("R36.4.3".to_string())
        );
        assert_eq!(l4t_release("# R35 (release)\n"), Some("R35".to_string()));
        assert_eq!(l4t_release("garbage\n"), None);
        assert_eq!(l4t_release(""), None);
    }
}
