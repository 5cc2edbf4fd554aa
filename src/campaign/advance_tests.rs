//! The state machine driven by a fake machine: boots are values, the clock a number.

use super::*;
use crate::campaign::image::ImageFacts;
use crate::campaign::plan::parse;
use crate::campaign::state::{BootTarget, Outcome};

const START_CMDLINE: &str = "BOOT_IMAGE=/boot/vmlinuz-6.12 root=/dev/vda ro quiet";

fn plan(extra: &str) -> Plan {
    parse(
        "test",
        &format!(
            "command = [\"bench\", \"eventfd\"]\n{extra}\n\
             [parent]\nkernel = \"/boot/vmlinuz-6.1\"\nrelease = \"6.1.0-50-rt-amd64\"\n\
             [child]\nkernel = \"/boot/vmlinuz-6.12\"\n"
        ),
    )
    .unwrap()
}

fn image() -> ImageFacts {
    ImageFacts {
        sha256: "00".into(),
        size_bytes: 1,
        release: None,
        release_source: None,
    }
}

fn target(kernel: &str, release: Option<&str>) -> BootTarget {
    BootTarget {
        kernel: kernel.into(),
        kernel_image: image(),
        initrd: None,
        initrd_image: None,
        cmdline: "root=/dev/vda ro quiet".into(),
        release: release.map(str::to_string),
    }
}

fn start_facts() -> BootFacts {
    BootFacts {
        boot_id: "boot-start".into(),
        release: "6.12.117+deb13-rt-amd64".into(),
        build_id: Some("aa12".into()),
        cmdline: START_CMDLINE.into(),
    }
}

fn state_of(plan: &Plan, driver: Driver) -> State {
    let mut targets = BTreeMap::new();
    targets.insert(
        Role::Parent,
        target("/boot/vmlinuz-6.1", Some("6.1.0-50-rt-amd64")),
    );
    targets.insert(Role::Child, target("/boot/vmlinuz-6.12", None));
    create(
        NewCampaign {
            campaign_id: "c0ffee".into(),
            driver,
            plan_sha256: "ff".into(),
            started_at: "2026-12-05T00:00:00Z".into(),
            start: StartBoot {
                facts: start_facts(),
                return_to: Some(target("/boot/vmlinuz-6.12", None)),
            },
            targets,
        },
        plan,
    )
}

/// A fake machine: hands out boots with fresh ids, and a clock.
struct Machine {
    boots: u32,
    now_s: u64,
}

impl Machine {
    fn new() -> Self {
        Machine {
            boots: 0,
            now_s: 1000,
        }
    }

    /// The boot a kexec into try `token` of a point of `release` gives.
    fn booted(&mut self, release: &str, token: &str) -> BootFacts {
        self.boots += 1;
        self.now_s += 60;
        BootFacts {
            boot_id: format!("boot-{}", self.boots),
            release: release.into(),
            build_id: Some(format!("id-{release}")),
            cmdline: format!("root=/dev/vda ro quiet rtsoak.campaign={token}"),
        }
    }

    /// A boot through the firmware into the default (start) kernel.
    fn fell_back(&mut self, after_s: u64) -> BootFacts {
        self.boots += 1;
        self.now_s += after_s;
        BootFacts {
            boot_id: format!("boot-{}", self.boots),
            ..start_facts()
        }
    }
}

fn current_token(state: &State, seq: usize) -> String {
    state.slots[seq].attempts.last().unwrap().token.clone()
}

fn release_of(state: &State, seq: usize) -> &'static str {
    match state.slots[seq].slot.role {
        Role::Parent => "6.1.0-50-rt-amd64",
        Role::Child => "6.12.117+deb13-rt-amd64",
    }
}

/// Load `seq`, boot it as meant and measure it successfully; the decision that follows.
fn measure_ok(state: &mut State, plan: &Plan, machine: &mut Machine, seq: usize) -> Decision {
    loaded(state, Target::Slot { seq }, machine.now_s);
    let token = current_token(state, seq);
    let boot = machine.booted(release_of(state, seq), &token);
    assert_eq!(
        on_boot(state, plan, &boot, machine.now_s),
        Decision::Measure { seq }
    );
    after_measure(
        state,
        plan,
        seq,
        Outcome::Measured,
        None,
        &boot,
        machine.now_s + 30,
    )
}

fn outcomes(state: &State) -> Vec<Vec<&'static str>> {
    state
        .slots
        .iter()
        .map(|s| {
            s.attempts
                .iter()
                .map(|a| a.outcome.as_ref().map_or("open", Outcome::kind))
                .collect()
        })
        .collect()
}

#[test]
fn a_b_a_boots_each_point_measures_it_and_returns_to_the_start_kernel() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    assert_eq!(begin(&mut state), Decision::Boot(Target::Slot { seq: 0 }));
    assert_eq!(
        measure_ok(&mut state, &plan, &mut machine, 0),
        Decision::Boot(Target::Slot { seq: 1 })
    );
    assert_eq!(
        measure_ok(&mut state, &plan, &mut machine, 1),
        Decision::Boot(Target::Slot { seq: 2 })
    );
    // The last boot is parent B (6.1): the machine goes back to the 6.12 it started in.
    assert_eq!(
        measure_ok(&mut state, &plan, &mut machine, 2),
        Decision::Boot(Target::Start)
    );
    loaded(&mut state, Target::Start, machine.now_s);
    let back = machine.fell_back(20);
    assert_eq!(
        on_boot(&mut state, &plan, &back, machine.now_s),
        Decision::Finished
    );
    assert!(matches!(
        state.phase,
        Phase::Finished {
            why: EndReason::Completed,
            left_in: LeftIn::Start,
            ..
        }
    ));
    assert_eq!(outcomes(&state), [["measured"], ["measured"], ["measured"]]);
    // The unit runs once more at the next boot and finds nothing to do.
    assert_eq!(
        on_boot(&mut state, &plan, &back, machine.now_s),
        Decision::Finished
    );
}

#[test]
fn a_boot_of_the_wrong_release_is_recorded_and_the_campaign_goes_on() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    loaded(&mut state, Target::Slot { seq: 0 }, machine.now_s);
    let token = current_token(&state, 0);
    let boot = machine.booted("6.1.0-49-rt-amd64", &token);
    assert_eq!(
        on_boot(&mut state, &plan, &boot, machine.now_s),
        Decision::Boot(Target::Slot { seq: 1 })
    );
    let Some(Outcome::WrongKernel { mismatches }) = state.slots[0].final_outcome() else {
        panic!("{:?}", state.slots[0]);
    };
    assert_eq!(mismatches.len(), 1);
    assert_eq!(mismatches[0].fact, Fact::Release);
    assert_eq!(mismatches[0].expected, "6.1.0-50-rt-amd64");
}

#[test]
fn a_second_boot_of_a_point_with_another_build_id_is_the_wrong_kernel() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    measure_ok(&mut state, &plan, &mut machine, 0);
    measure_ok(&mut state, &plan, &mut machine, 1);
    loaded(&mut state, Target::Slot { seq: 2 }, machine.now_s);
    let token = current_token(&state, 2);
    let mut boot = machine.booted("6.1.0-50-rt-amd64", &token);
    boot.build_id = Some("rebuilt".into());
    assert_eq!(
        on_boot(&mut state, &plan, &boot, machine.now_s),
        Decision::Boot(Target::Start)
    );
    let Some(Outcome::WrongKernel { mismatches }) = state.slots[2].final_outcome() else {
        panic!();
    };
    assert_eq!(mismatches[0].fact, Fact::BuildId);
    assert_eq!(mismatches[0].found, "rebuilt");
}

#[test]
fn a_command_line_without_the_points_words_is_the_wrong_kernel() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    loaded(&mut state, Target::Slot { seq: 0 }, machine.now_s);
    let token = current_token(&state, 0);
    let mut boot = machine.booted("6.1.0-50-rt-amd64", &token);
    boot.cmdline = boot.cmdline.replace(" quiet", "");
    on_boot(&mut state, &plan, &boot, machine.now_s);
    let Some(Outcome::WrongKernel { mismatches }) = state.slots[0].final_outcome() else {
        panic!();
    };
    assert_eq!(
        (mismatches[0].fact, mismatches[0].expected.as_str()),
        (Fact::Cmdline, "quiet")
    );
}

#[test]
fn a_panic_that_falls_back_to_the_default_kernel_is_recorded_once_and_never_retried() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    measure_ok(&mut state, &plan, &mut machine, 0);
    loaded(&mut state, Target::Slot { seq: 1 }, machine.now_s);
    // The child panics; panic=5 reboots through the firmware into the default kernel.
    let fallback = machine.fell_back(45);
    assert_eq!(
        on_boot(&mut state, &plan, &fallback, machine.now_s),
        Decision::Boot(Target::Slot { seq: 2 })
    );
    let Some(Outcome::FellBack { after_s, found }) = state.slots[1].final_outcome() else {
        panic!("{:?}", state.slots[1]);
    };
    assert_eq!(
        (*after_s, found.release.as_str()),
        (45, "6.12.117+deb13-rt-amd64")
    );
    measure_ok(&mut state, &plan, &mut machine, 2);
    assert_eq!(
        outcomes(&state),
        [["measured"], ["fell_back"], ["measured"]]
    );
}

#[test]
fn a_machine_back_after_the_deadline_missed_it() {
    let plan = plan("deadline_s = 1000");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    loaded(&mut state, Target::Slot { seq: 0 }, machine.now_s);
    let late = machine.fell_back(1001);
    on_boot(&mut state, &plan, &late, machine.now_s);
    assert_eq!(
        state.slots[0].final_outcome(),
        Some(&Outcome::DeadlineMissed { after_s: 1001 })
    );
}

#[test]
fn the_boot_meant_coming_up_after_its_deadline_is_not_measured() {
    let plan = plan("deadline_s = 1000");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    loaded(&mut state, Target::Slot { seq: 0 }, machine.now_s);
    machine.now_s += 1100;
    let token = current_token(&state, 0);
    let boot = machine.booted("6.1.0-50-rt-amd64", &token);
    assert_ne!(
        on_boot(&mut state, &plan, &boot, machine.now_s),
        Decision::Measure { seq: 0 }
    );
    assert_eq!(
        state.slots[0].final_outcome().unwrap().kind(),
        "deadline_missed"
    );
}

#[test]
fn a_boot_that_ends_while_measuring_is_lost_and_a_restart_in_the_same_boot_interrupted() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    loaded(&mut state, Target::Slot { seq: 0 }, machine.now_s);
    let token = current_token(&state, 0);
    let boot = machine.booted("6.1.0-50-rt-amd64", &token);
    assert_eq!(
        on_boot(&mut state, &plan, &boot, machine.now_s),
        Decision::Measure { seq: 0 }
    );
    // A crash during the bench: the firmware brings the default kernel up.
    let after_crash = machine.fell_back(30);
    on_boot(&mut state, &plan, &after_crash, machine.now_s);
    assert_eq!(
        state.slots[0].final_outcome(),
        Some(&Outcome::LostBoot {
            boot_id: boot.boot_id.clone()
        })
    );
    // Planned boot 1: measuring starts, then `resume` runs again in the same boot.
    loaded(&mut state, Target::Slot { seq: 1 }, machine.now_s);
    let token = current_token(&state, 1);
    let boot = machine.booted("6.12.117+deb13-rt-amd64", &token);
    assert_eq!(
        on_boot(&mut state, &plan, &boot, machine.now_s),
        Decision::Measure { seq: 1 }
    );
    on_boot(&mut state, &plan, &boot, machine.now_s);
    assert_eq!(state.slots[1].final_outcome(), Some(&Outcome::Interrupted));
}

#[test]
fn a_retry_gets_a_token_of_its_own_and_a_boot_is_tried_at_most_one_plus_retries_times() {
    let plan = plan("retries = 1");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    loaded(&mut state, Target::Slot { seq: 0 }, machine.now_s);
    let fallback = machine.fell_back(40);
    assert_eq!(
        on_boot(&mut state, &plan, &fallback, machine.now_s),
        Decision::Boot(Target::Slot { seq: 0 })
    );
    assert_eq!(current_token(&state, 0), "c0ffee.0.1");
    loaded(&mut state, Target::Slot { seq: 0 }, machine.now_s);
    // The first try's token no longer counts.
    let stale = machine.booted("6.1.0-50-rt-amd64", "c0ffee.0.0");
    assert_eq!(
        on_boot(&mut state, &plan, &stale, machine.now_s),
        Decision::Boot(Target::Slot { seq: 1 })
    );
    assert_eq!(outcomes(&state)[0], ["fell_back", "wrong_kernel"]);
}

#[test]
fn a_failed_boot_stops_the_campaign_where_the_plan_says_so() {
    let plan = plan("on_failure = \"stop\"");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    measure_ok(&mut state, &plan, &mut machine, 0);
    loaded(&mut state, Target::Slot { seq: 1 }, machine.now_s);
    // It fell back into the start kernel: already where the campaign ends.
    let fallback = machine.fell_back(40);
    assert_eq!(
        on_boot(&mut state, &plan, &fallback, machine.now_s),
        Decision::Finished
    );
    assert!(matches!(
        state.phase,
        Phase::Finished {
            why: EndReason::Stopped,
            left_in: LeftIn::Start,
            ..
        }
    ));
    assert!(
        state.slots[2].attempts.is_empty(),
        "parent B is never booted"
    );
}

#[test]
fn a_machine_that_always_falls_back_ends_the_campaign_and_never_loops() {
    for retries in [0, 2] {
        let plan = plan(&format!("retries = {retries}\nboots_per_step = 2"));
        let mut state = state_of(&plan, Driver::Kexec);
        let mut machine = Machine::new();
        let mut decision = begin(&mut state);
        let mut boots = 0;
        while decision != Decision::Finished {
            let Decision::Boot(target) = decision else {
                panic!("{decision:?}");
            };
            loaded(&mut state, target, machine.now_s);
            let boot = machine.fell_back(30);
            boots += 1;
            decision = on_boot(&mut state, &plan, &boot, machine.now_s);
            assert!(boots <= state.max_resumes, "looped: {boots} boots");
        }
        // Every planned boot tried exactly 1 + retries times; the last fallback is the start
        // kernel, so no return boot is needed.
        assert_eq!(boots, 6 * (1 + retries));
        for slot in &state.slots {
            assert_eq!(slot.attempts.len() as u32, 1 + retries);
        }
    }
}

#[test]
fn boots_beyond_what_the_plan_can_cause_end_the_campaign() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let machine_boot = start_facts();
    begin(&mut state);
    // Something reboots the machine over and over before rtsoak ever loads a kernel.
    let mut decisions = 0;
    while on_boot(&mut state, &plan, &machine_boot, 0) != Decision::Finished {
        decisions += 1;
        assert!(decisions < 100, "never gave up");
    }
    assert_eq!(decisions, state.max_resumes as usize);
    assert!(matches!(
        state.phase,
        Phase::Finished {
            why: EndReason::TooManyBoots,
            ..
        }
    ));
}

#[test]
fn a_return_into_another_kernel_is_recorded_as_not_the_start() {
    let plan = plan("order = [\"parent\", \"child\"]");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    measure_ok(&mut state, &plan, &mut machine, 0);
    // The child runs the release the campaign started in, but with a token: not the start.
    assert_eq!(
        measure_ok(&mut state, &plan, &mut machine, 1),
        Decision::Boot(Target::Start)
    );
    let token = current_token(&state, 1);
    let odd = machine.booted("6.1.0-50-rt-amd64", &token);
    on_boot(&mut state, &plan, &odd, machine.now_s);
    let Phase::Finished {
        left_in: LeftIn::NotStart { found },
        ..
    } = &state.phase
    else {
        panic!("{:?}", state.phase);
    };
    assert_eq!(found.release, "6.1.0-50-rt-amd64");
}

#[test]
fn a_load_that_fails_is_recorded_and_the_next_boot_loaded() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    begin(&mut state);
    let decision = load_failed(
        &mut state,
        &plan,
        Target::Slot { seq: 0 },
        LoadFailure::Refused,
        "EPERM".into(),
        &start_facts(),
        5,
    );
    assert_eq!(decision, Decision::Boot(Target::Slot { seq: 1 }));
    assert_eq!(outcomes(&state)[0], ["load_failed"]);
}

#[test]
fn stay_and_reboot_leave_the_machine_as_asked_and_qemu_always_in_its_last_boot() {
    for (end, driver, decision, left) in [
        ("stay", Driver::Kexec, Decision::Finished, LeftIn::LastBoot),
        ("reboot", Driver::Kexec, Decision::Reboot, LeftIn::Reboot),
        ("start", Driver::Qemu, Decision::Finished, LeftIn::LastBoot),
    ] {
        let plan = plan(&format!("end = \"{end}\"\norder = [\"parent\", \"child\"]"));
        let mut state = state_of(&plan, driver);
        let mut machine = Machine::new();
        begin(&mut state);
        measure_ok(&mut state, &plan, &mut machine, 0);
        assert_eq!(
            measure_ok(&mut state, &plan, &mut machine, 1),
            decision,
            "{end}"
        );
        let Phase::Finished { left_in, .. } = &state.phase else {
            panic!();
        };
        assert_eq!(*left_in, left, "{end}");
    }
}

#[test]
fn abort_closes_the_try_under_way_and_ends_where_the_machine_is() {
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    begin(&mut state);
    loaded(&mut state, Target::Slot { seq: 0 }, 10);
    abort(&mut state, &start_facts(), 20);
    assert_eq!(outcomes(&state)[0], ["interrupted"]);
    assert!(matches!(
        state.phase,
        Phase::Finished {
            why: EndReason::Aborted,
            left_in: LeftIn::Start,
            ..
        }
    ));
}

#[test]
fn a_last_boot_of_the_start_kernel_still_returns_to_leave_no_token_behind() {
    // A command-line A/B: the parent boots the start kernel with the start command line.
    let plan = plan("");
    let mut state = state_of(&plan, Driver::Kexec);
    let mut machine = Machine::new();
    begin(&mut state);
    measure_ok(&mut state, &plan, &mut machine, 0);
    measure_ok(&mut state, &plan, &mut machine, 1);
    loaded(&mut state, Target::Slot { seq: 2 }, machine.now_s);
    let token = current_token(&state, 2);
    // Parent B is the start kernel (release, build id, command line), with the token.
    let boot = BootFacts {
        boot_id: "boot-b".into(),
        cmdline: format!("{START_CMDLINE} rtsoak.campaign={token}"),
        ..start_facts()
    };
    state.seen_releases.remove(&Role::Parent);
    state.seen_build_ids.remove(&Role::Parent);
    state.targets.get_mut(&Role::Parent).unwrap().release = None;
    assert_eq!(
        on_boot(&mut state, &plan, &boot, machine.now_s),
        Decision::Measure { seq: 2 }
    );
    let next = after_measure(
        &mut state,
        &plan,
        2,
        Outcome::Measured,
        None,
        &boot,
        machine.now_s,
    );
    assert_eq!(next, Decision::Boot(Target::Start));
}
