//! Kernel facts: whether the running kernel is PREEMPT_RT (and which file said so), the
//! isolation parameters on its boot command line, and the sysctls only the system check reads
//! (timer migration, compaction of locked pages).
//!
//! Owns: reading `/sys/kernel/realtime`, those sysctls, and parsing `/proc/cmdline`. Never judges
//! whether the isolation is adequate; values are kept raw (`isolcpus` may carry flags such as
//! `domain`).

use super::SysRoot;
use rtsoak_record::BootIsolation;

/// Said when neither source marks the kernel as PREEMPT_RT.
pub(crate) const NOT_RT: &str =
    "neither /sys/kernel/realtime nor the version string mention PREEMPT_RT";

/// The four isolation parameters of a kernel command line; absent ones are `None`.
pub(crate) fn boot_isolation(cmdline: &str) -> BootIsolation {
    BootIsolation {
        isolcpus: cmdline_value(cmdline, "isolcpus"),
        nohz_full: cmdline_value(cmdline, "nohz_full"),
        rcu_nocbs: cmdline_value(cmdline, "rcu_nocbs"),
        irqaffinity: cmdline_value(cmdline, "irqaffinity"),
    }
}

/// The value of `key=value` on a kernel command line, the way the kernel reads it: the last
/// occurrence wins, `-` and `_` in names are the same, and everything after a standalone `--`
/// belongs to init, not the kernel. A bare `key` without `=` has no value and gives `None`.
pub(crate) fn cmdline_value(cmdline: &str, key: &str) -> Option<String> {
    let key = normalise_name(key);
    cmdline
        .split_whitespace()
        .take_while(|word| *word != "--")
        .filter_map(|word| word.split_once('='))
        .filter(|(name, _)| normalise_name(name) == key)
        .last()
        .map(|(_, value)| value.to_string())
}

/// The kernel's `parameq` treats dashes and underscores in parameter names alike.
fn normalise_name(name: &str) -> String {
    name.replace('-', "_")
}

/// Whether the kernel is PREEMPT_RT, and which source said so (or [`NOT_RT`]).
///
/// `/sys/kernel/realtime` is the direct answer, but not every RT kernel has it (mainline gained
/// it in 6.12; before that it depended on the RT patch set), so `PREEMPT_RT` in
/// `/proc/sys/kernel/version` counts too.
pub(crate) fn preempt_rt(root: &SysRoot, kernel_version: Option<&str>) -> (bool, String) {
    if root.read_trimmed("/sys/kernel/realtime").as_deref() == Some("1") {
        return (true, "/sys/kernel/realtime is 1".to_string());
    }
    if kernel_version.is_some_and(|version| version.contains("PREEMPT_RT")) {
        return (
            true,
            "/proc/sys/kernel/version contains PREEMPT_RT".to_string(),
        );
    }
    (false, NOT_RT.to_string())
}

/// `/proc/sys/kernel/timer_migration`: 1 lets the kernel move timers to busy CPUs (onto an
/// RT CPU too); `None` where the kernel lacks it (built without `NO_HZ_COMMON`).
pub(crate) fn timer_migration(root: &SysRoot) -> Option<u32> {
    root.parsed("/proc/sys/kernel/timer_migration")
}

/// `/proc/sys/vm/compact_unevictable_allowed`: 1 lets memory compaction migrate mlocked pages,
/// and whoever touches one next takes a minor fault (the kernel's default, 0 on PREEMPT_RT).
/// `None` where the kernel lacks it: built without `CONFIG_COMPACTION`, or an RT patch set from
/// before mainline took the default (5.7), which hid the file and never moved locked pages.
pub(crate) fn compact_unevictable_allowed(root: &SysRoot) -> Option<u32> {
    root.parsed("/proc/sys/vm/compact_unevictable_allowed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_parameters_are_kept_raw_including_isolcpus_flags() {
        let boot = boot_isolation(
            "root=/dev/sda1 ro isolcpus=managed_irq,domain,4-5 nohz_full=4-5 rcu_nocbs=4-5 \
             irqaffinity=0-3 quiet\n",
        );
        assert_eq!(
            boot,
            BootIsolation {
                isolcpus: Some("managed_irq,domain,4-5".into()),
                nohz_full: Some("4-5".into()),
                rcu_nocbs: Some("4-5".into()),
                irqaffinity: Some("0-3".into()),
            }
        );
    }

    #[test]
    fn the_last_occurrence_of_a_parameter_wins() {
        assert_eq!(
            cmdline_value("isolcpus=1 quiet isolcpus=2-3", "isolcpus"),
            Some("2-3".into())
        );
    }

    #[test]
    fn words_after_a_standalone_double_dash_belong_to_init() {
        let cmdline = "quiet nohz_full=1 -- nohz_full=2 isolcpus=3";
        assert_eq!(cmdline_value(cmdline, "nohz_full"), Some("1".into()));
        assert_eq!(cmdline_value(cmdline, "isolcpus"), None);
    }

    #[test]
    fn a_double_dash_inside_a_word_does_not_end_the_kernel_part() {
        assert_eq!(
            cmdline_value("init=/bin/sh--x isolcpus=3", "isolcpus"),
            Some("3".into())
        );
    }

    #[test]
    fn dashes_and_underscores_in_parameter_names_are_the_same() {
        assert_eq!(
            cmdline_value("nohz-full=4-5", "nohz_full"),
            Some("4-5".into())
        );
    }

    #[test]
    fn a_value_may_itself_contain_an_equals_sign() {
        assert_eq!(
            cmdline_value("root=PARTUUID=ab-01 ro", "root"),
            Some("PARTUUID=ab-01".into())
        );
    }

    #[test]
    fn bare_flags_and_absent_parameters_have_no_value() {
        assert_eq!(cmdline_value("quiet isolcpus", "isolcpus"), None);
        assert_eq!(boot_isolation(""), BootIsolation::default());
    }

    #[test]
    fn a_parameter_name_must_match_whole_not_as_a_prefix() {
        assert_eq!(cmdline_value("xisolcpus=1 isolcpus_x=2", "isolcpus"), None);
    }
}
