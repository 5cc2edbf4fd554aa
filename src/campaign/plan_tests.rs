//! Every plan a campaign must refuse before its first reboot, each with the key it names and
//! what it allows; and the defaults a minimal plan gets.

use super::*;

const POINTS: &str =
    "[parent]\nkernel = \"/boot/vmlinuz-a\"\n[child]\nkernel = \"/boot/vmlinuz-b\"\n";

fn with(top: &str) -> String {
    format!("command = [\"bench\", \"eventfd\"]\n{top}\n{POINTS}")
}

#[test]
fn a_minimal_plan_is_a_b_a_once_each_with_the_bench_gates_and_a_settle_condition() {
    let plan = parse("p", &with("")).unwrap();
    assert_eq!(plan.order, [Role::Parent, Role::Child, Role::Parent]);
    assert_eq!(plan.boots_per_step, 1);
    assert_eq!(plan.on_failure, OnFailure::Continue);
    assert_eq!(plan.end, End::Start);
    assert_eq!(plan.retries, 0);
    assert_eq!(plan.deadline_s, 3600);
    assert_eq!(
        (
            plan.judge.signal_pct,
            plan.judge.drift_pct,
            plan.judge.cv_pct
        ),
        (5.0, 2.0, 2.0)
    );
    assert!(plan.settle.systemd);
    assert_eq!(
        (plan.settle.idle_percent, plan.settle.idle_span_s),
        (90.0, 10)
    );
    assert_eq!(plan.command_kind(), CommandKind::Bench);
    assert_eq!(plan.label(Role::Child), "child");
}

#[test]
fn a_compare_with_a_profile_is_a_soak_campaign() {
    let text = format!("command = [\"compare\", \"--profile\", \"nightly\"]\n{POINTS}");
    assert_eq!(parse("p", &text).unwrap().command_kind(), CommandKind::Soak);
}

#[test]
fn the_same_kernel_with_two_command_lines_is_a_plan() {
    let text = "command = [\"run\", \"-t\", \"futex\"]\n\
        [parent]\nkernel = \"/boot/vmlinuz\"\n\
        [child]\nkernel = \"/boot/vmlinuz\"\nappend = \"nohz_full=2,3\"\nlabel = \"nohz_full\"\n";
    let plan = parse("p", text).unwrap();
    assert_eq!(plan.label(Role::Child), "nohz_full");
}

/// Each bad plan, and what its error must say.
const BAD: &[(&str, &str, &[&str])] = &[
    (
        "not TOML",
        "command = [\n",
        &["cannot parse the campaign plan p", "docs/campaign.md"],
    ),
    (
        "an unknown key",
        "command = [\"bench\", \"eventfd\"]\nboots = 3\n",
        &["unknown field `boots`", "boots_per_step"],
    ),
    (
        "an unknown key in a section",
        "command = [\"bench\", \"eventfd\"]\n[settle]\nidle = 3\n",
        &["unknown field `idle`", "idle_percent"],
    ),
    (
        "no child",
        "command = [\"bench\", \"eventfd\"]\n[parent]\nkernel = \"/k\"\n",
        &["missing field `child`"],
    ),
    (
        "an order word that is no role",
        "order = [\"parent\", \"chlid\"]",
        &["unknown variant `chlid`", "`parent`", "`child`"],
    ),
    (
        "an order without the child",
        "order = [\"parent\", \"parent\"]",
        &["`order`", "at least one of each"],
    ),
    (
        "a one-step order",
        "order = [\"child\"]",
        &["`order`", "2 to 9 steps"],
    ),
    (
        "no boot per step",
        "boots_per_step = 0",
        &["`boots_per_step` = 0", "1 to 20"],
    ),
    (
        "an unknown failure policy",
        "on_failure = \"retry\"",
        &["unknown variant `retry`", "`continue`", "`stop`"],
    ),
    (
        "an unknown end",
        "end = \"halt\"",
        &["unknown variant `halt`", "`start`", "`stay`", "`reboot`"],
    ),
    (
        "too many retries",
        "retries = 9",
        &["`retries` = 9", "0 to 3"],
    ),
    (
        "a deadline too short",
        "deadline_s = 5",
        &["`deadline_s` = 5", "60 to"],
    ),
    (
        "a negative signal gate",
        "[judge]\nsignal_pct = -1.0",
        &["`judge.signal_pct` = -1", "more than 0"],
    ),
    (
        "an alpha of one",
        "[judge]\nalpha = 1.0",
        &["`judge.alpha` = 1", "at most 0.5"],
    ),
    (
        "a rate ratio below one",
        "[judge]\nmin_rate_ratio = 0.5",
        &["`judge.min_rate_ratio` = 0.5", "1 to 1000"],
    ),
    (
        "separate ranges from one boot per point",
        "[judge]\nseparate_ranges = true",
        &[
            "`judge.separate_ranges`",
            "at least 3 boots",
            "boots_per_step",
        ],
    ),
    (
        "an idle share over 100",
        "[settle]\nidle_percent = 150.0",
        &["`settle.idle_percent` = 150", "0 to 100"],
    ),
    (
        "a settle timeout beyond the deadline",
        "deadline_s = 600\n[settle]\ntimeout_s = 600",
        &["`settle.timeout_s` = 600", "less than deadline_s (600)"],
    ),
    (
        "a qemu arch rtsoak does not boot",
        "[qemu]\narch = \"riscv64\"",
        &["`qemu.arch` = riscv64", "\"x86_64\" or \"aarch64\""],
    ),
    (
        "a qemu binary by name",
        "[qemu]\nbinary = \"qemu-system-x86_64\"",
        &["`qemu.binary`", "never searches PATH"],
    ),
    (
        "a qemu cpu model with a shell character",
        "[qemu]\ncpu_model = \"max;reboot\"",
        &["`qemu.cpu_model`", "letters, digits"],
    ),
    (
        "an unknown accelerator",
        "[qemu]\naccel = \"hvf\"",
        &["unknown variant `hvf`", "`auto`", "`kvm`", "`tcg`"],
    ),
];

#[test]
fn every_bad_plan_names_its_key_and_what_is_allowed() {
    for (name, top, wanted) in BAD {
        let text = if top.starts_with("command") {
            top.to_string()
        } else {
            with(top)
        };
        let error = parse("p", &text).expect_err(name).to_string();
        for want in *wanted {
            assert!(error.contains(want), "{name}: {error}");
        }
    }
}

/// Plans whose command or points are wrong (the whole text given).
const BAD_POINTS: &[(&str, &str, &[&str])] = &[
    (
        "no command",
        "command = []",
        &["`command` = []", "the words of one rtsoak command"],
    ),
    (
        "a command rtsoak cannot run per boot",
        "command = [\"diff\", \"a\", \"b\"]",
        &["`command[0]` = diff", "\"bench\", \"run\" or \"compare\""],
    ),
    (
        "a bench that does not exist",
        "command = [\"bench\", \"futex-wait\"]",
        &["`command[1]` = futex-wait", "\"futex-wait-wake\""],
    ),
    (
        "bench compare",
        "command = [\"bench\", \"compare\", \"a\", \"b\"]",
        &["`command[1]` = compare", "a bench to run"],
    ),
    (
        "an output of its own",
        "command = [\"compare\", \"--output=/tmp/x\"]",
        &[
            "`command[1]` = --output=/tmp/x",
            "the campaign keeps every boot's result",
        ],
    ),
    (
        "results kept elsewhere",
        "command = [\"run\", \"-t\", \"futex\", \"--results-dir\", \"/r\"]",
        &["`command[3]` = --results-dir"],
    ),
];

#[test]
fn a_command_that_cannot_run_on_every_boot_is_refused_naming_its_word() {
    for (name, command, wanted) in BAD_POINTS {
        let error = parse("p", &format!("{command}\n{POINTS}"))
            .expect_err(name)
            .to_string();
        for want in *wanted {
            assert!(error.contains(want), "{name}: {error}");
        }
    }
}

#[test]
fn bad_points_are_refused_naming_the_point_and_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "kernel = \"vmlinuz\"",
            "`child.kernel` = vmlinuz",
            "an absolute path",
        ),
        (
            "kernel = \"/k\"\ninitrd = \"initrd.img\"",
            "`child.initrd` = initrd.img",
            "an absolute path",
        ),
        (
            "kernel = \"/k\"\ncmdline = \"root=/dev/sda rtsoak.campaign=1.2.3\"",
            "`child.cmdline`",
            "without `rtsoak.campaign=`",
        ),
        (
            "kernel = \"/k\"\nappend = \"quiet\\nsingle\"",
            "`child.append`",
            "printable ASCII",
        ),
        ("kernel = \"/k\"\nlabel = \"\"", "`child.label`", "1 to 32"),
        (
            "kernel = \"/k\"\nrelease = \"6.1 rt\"",
            "`child.release`",
            "as `uname -r` prints it",
        ),
        (
            "kernel = \"/k\"\nimage = \"/x\"",
            "unknown field `image`",
            "`kernel`",
        ),
    ];
    for (child, key, allowed) in cases {
        let text = format!(
            "command = [\"bench\", \"eventfd\"]\n[parent]\nkernel = \"/k0\"\n[child]\n{child}\n"
        );
        let error = parse("p", &text).expect_err(key).to_string();
        assert!(error.contains(key), "{key}: {error}");
        assert!(error.contains(allowed), "{key}: {error}");
    }
    let long = "x".repeat(MAX_CMDLINE_BYTES + 1);
    let text = format!(
        "command = [\"bench\", \"eventfd\"]\n[parent]\nkernel = \"/k0\"\n[child]\nkernel = \"/k\"\ncmdline = \"{long}\"\n"
    );
    let error = parse("p", &text).unwrap_err().to_string();
    assert!(
        error.contains("more bytes"),
        "a long value is cut when quoted: {error}"
    );
}

#[test]
fn two_points_that_boot_the_same_are_refused() {
    let text = "command = [\"bench\", \"eventfd\"]\n\
        [parent]\nkernel = \"/boot/vmlinuz\"\nappend = \"quiet\"\n\
        [child]\nkernel = \"/boot/vmlinuz\"\nappend = \"quiet\"\nlabel = \"same\"\n";
    let error = parse("p", text).unwrap_err().to_string();
    assert!(error.contains("`child`"), "{error}");
    assert!(error.contains("differs from the parent"), "{error}");
}

#[test]
fn separate_ranges_are_accepted_with_three_boots_of_each_point() {
    let plan = parse(
        "p",
        &with("boots_per_step = 3\n[judge]\nseparate_ranges = true"),
    )
    .unwrap();
    assert!(plan.judge.separate_ranges);
    // A B A B A with two boots per step: the child has 4, the parent 6.
    parse(
        "p",
        &with(
            "order = [\"parent\", \"child\", \"parent\", \"child\", \"parent\"]\n\
             boots_per_step = 2\n[judge]\nseparate_ranges = true",
        ),
    )
    .unwrap();
}
