//! The qemu driver: a campaign from a host, one qemu guest per planned boot. Each guest boots
//! the point's kernel with its initramfs (which must carry a static rtsoak whose init runs
//! `rtsoak campaign guest --share /out`: `scripts/campaign-initramfs` makes one), the boot's
//! order in a 9p share, and `-no-reboot`, so a panic ends qemu. The host reads the guest's
//! report, judges the boot with the same state machine as the kexec driver, and writes the same
//! document after every boot.
//!
//! KVM where it works on this host (qemu is started with it once, paused, to find out: a
//! `/dev/kvm` that opens is not enough in a nested guest), else TCG with a warning: under
//! emulation behaviour is real and timings are not, and the verdict is INCONCLUSIVE.
//!
//! Owns: running the guests and collecting their reports. The decisions are `advance`'s.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::advance::{self, Decision, NewCampaign, Target};
use super::command::{boot_dir, checked_program, supervise};
use super::doc::{self, CAMPAIGN_FILE, CampaignDoc};
use super::guest::{GuestOrder, GuestReport, MAX_EXCHANGE_BYTES, ORDER_FILE, REPORT_FILE};
use super::image::sha256_hex;
use super::plan::{Accel, Plan, QemuSection};
use super::state::{BootTarget, Driver, Outcome, PLAN_FILE, StartBoot, State, now_s};
use super::targets;
use crate::sysinfo::SysRoot;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_sys::safe_dir::SafeDir;

/// How long a paused qemu must stay up for KVM to count as working.
const KVM_PROBE: Duration = Duration::from_secs(2);

/// Everything one guest boot needs.
struct Machine {
    qemu: PathBuf,
    accel: Accel,
    section: QemuSection,
}

/// Run the campaign of `plan_text` (from `name`) in qemu guests, into `output`.
pub(crate) fn run(
    name: &str,
    plan_text: &str,
    output: &Path,
    stop: &StopFlag,
) -> anyhow::Result<CampaignDoc> {
    anyhow::ensure!(
        rtsoak_sys::safe_dir::euid() == 0,
        "run `rtsoak campaign run` as root: the guests run rtsoak as root, which accepts only a \
         9p share that root owns"
    );
    let plan = super::plan::parse(name, plan_text)?;
    let targets_of = targets::resolve_all(&plan, console(&plan.qemu))?;
    let qemu =
        checked_program(
            &plan.qemu.binary.clone().unwrap_or_else(|| {
                PathBuf::from(format!("/usr/bin/qemu-system-{}", plan.qemu.arch))
            }),
        )?;
    let accel = choose_accel(&qemu, &plan.qemu)?;
    let dir = SafeDir::create(output)?;
    anyhow::ensure!(
        dir.entry(OsStr::new(CAMPAIGN_FILE)).is_none(),
        "{} already holds a campaign: choose another --output",
        output.display()
    );
    dir.write(OsStr::new(PLAN_FILE), plan_text.as_bytes(), 0o644)?;
    let mut state = advance::create(
        NewCampaign {
            campaign_id: rtsoak_sys::random::hex_token(),
            driver: Driver::Qemu,
            plan_sha256: sha256_hex(plan_text.as_bytes()),
            started_at: rtsoak_sys::clock::timestamp(),
            start: StartBoot {
                facts: super::identity::read(&SysRoot::system()),
                return_to: None,
            },
            targets: targets_of,
        },
        &plan,
    );
    let machine = Machine {
        qemu,
        accel,
        section: plan.qemu.clone(),
    };
    let mut decision = advance::begin(&mut state);
    while let Decision::Boot(Target::Slot { seq }) = decision {
        decision = boot(&dir, &plan, &mut state, &machine, seq, stop)?;
        save(&dir, &plan, &state, accel)?;
        if stop.is_set() {
            let host = state.start.facts.clone();
            advance::abort(&mut state, &host, now_s());
            break;
        }
    }
    save(&dir, &plan, &state, accel)
}

fn save(dir: &SafeDir, plan: &Plan, state: &State, accel: Accel) -> anyhow::Result<CampaignDoc> {
    let doc = doc::build(state, plan, Some(accel), dir);
    let bytes = rtsoak_report::campaign::render_json(&doc);
    dir.write(OsStr::new(CAMPAIGN_FILE), &bytes, 0o644)
        .context("saving campaign.json")?;
    Ok(doc)
}

/// The command line a guest boots with where the plan gives none: the serial console of the
/// guest's machine, and a panic that ends qemu (`-no-reboot`) at once.
pub(crate) fn console(section: &QemuSection) -> &'static str {
    match section.arch.as_str() {
        "aarch64" => "console=ttyAMA0 panic=-1",
        _ => "console=ttyS0 panic=-1",
    }
}

/// KVM if asked or if it works here, else TCG (said loudly).
fn choose_accel(qemu: &Path, section: &QemuSection) -> anyhow::Result<Accel> {
    let kvm = || kvm_works(qemu, &section.arch);
    let accel = match section.accel {
        Accel::Tcg => Accel::Tcg,
        Accel::Kvm => match kvm() {
            Ok(()) => Accel::Kvm,
            Err(why) => anyhow::bail!(
                "qemu.accel is \"kvm\" but KVM does not work on this host ({why}): use \"auto\" \
                 or \"tcg\""
            ),
        },
        Accel::Auto => match kvm() {
            Ok(()) => Accel::Kvm,
            Err(why) => {
                eprintln!("rtsoak campaign: KVM does not work on this host ({why})");
                Accel::Tcg
            }
        },
    };
    if accel == Accel::Tcg {
        eprintln!(
            "WARNING: the guests run under TCG, qemu's emulator: what they do is real, how long \
             it takes is not. Timings under TCG mean nothing, and the verdict will be \
             INCONCLUSIVE whatever the figures say."
        );
    }
    Ok(accel)
}

/// Whether qemu starts (paused) under KVM and stays up.
fn kvm_works(qemu: &Path, arch: &str) -> Result<(), String> {
    let mut command = Command::new(qemu);
    command.args([
        "-accel",
        "kvm",
        "-S",
        "-display",
        "none",
        "-nodefaults",
        "-no-user-config",
    ]);
    command.args(["-m", "64"]);
    if arch == "aarch64" {
        command.args(["-M", "virt", "-cpu", "host"]);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", qemu.display()))?;
    let started = Instant::now();
    while started.elapsed() < KVM_PROBE {
        if let Ok(Some(_)) = child.try_wait() {
            let mut said = String::new();
            use std::io::Read;
            if let Some(err) = child.stderr.as_mut() {
                let _ = err.take(4096).read_to_string(&mut said);
            }
            let first = said
                .lines()
                .next()
                .unwrap_or("qemu exited at once")
                .to_string();
            return Err(rtsoak_record::text::quote(&first));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}

/// One guest boot's share: its directory, that directory relative to the campaign's, and the
/// token the boot must carry.
struct Share {
    dir: SafeDir,
    relative: PathBuf,
    token: String,
}

/// Boot planned boot `seq` in a guest and judge what it reports.
fn boot(
    dir: &SafeDir,
    plan: &Plan,
    state: &mut State,
    machine: &Machine,
    seq: usize,
    stop: &StopFlag,
) -> anyhow::Result<Decision> {
    let share = share(dir, plan, state, seq)?;
    let role = state.slots[seq].slot.role;
    let target = &state.targets[&role];
    if let Err((failure, message)) = targets::reopen(target) {
        let host = state.start.facts.clone();
        let target = Target::Slot { seq };
        return Ok(advance::load_failed(
            state,
            plan,
            target,
            failure,
            message,
            &host,
            now_s(),
        ));
    }
    let mut command = Command::new(&machine.qemu);
    command.args(qemu_args(machine, target, &share.token, share.dir.path()));
    eprintln!(
        "rtsoak campaign: boot {} of {}: {} ({}), under {}",
        seq + 1,
        state.slots.len(),
        plan.label(role),
        target.kernel.display(),
        machine.accel.name()
    );
    let loaded_at_s = now_s();
    advance::loaded(state, Target::Slot { seq }, loaded_at_s);
    let log = share.dir.create_file(OsStr::new("console.log"), 0o644)?;
    let until = Instant::now() + Duration::from_secs(plan.deadline_s);
    let timed_out = supervise(command, log, until, stop)?.timed_out;
    let after_s = now_s().saturating_sub(loaded_at_s);
    Ok(judge_report(state, plan, seq, &share, timed_out, after_s))
}

/// The share of planned boot `seq`'s current try, with its order written.
fn share(dir: &SafeDir, plan: &Plan, state: &State, seq: usize) -> anyhow::Result<Share> {
    let slot = &state.slots[seq];
    let attempt = slot.attempts.last().context("a boot without a try")?;
    let relative = boot_dir(seq, slot.slot.role, attempt.number);
    let share = SafeDir::create(&dir.path().join(&relative))?;
    let order = GuestOrder {
        token: attempt.token.clone(),
        command: plan.command.clone(),
        kind: plan.command_kind(),
        settle: plan.settle,
        deadline_s: plan.deadline_s,
    };
    share.write(
        OsStr::new(ORDER_FILE),
        &serde_json::to_vec_pretty(&order)?,
        0o644,
    )?;
    Ok(Share {
        dir: share,
        relative,
        token: attempt.token.clone(),
    })
}

/// What the guest of planned boot `seq` reported (or that it reported nothing), judged.
fn judge_report(
    state: &mut State,
    plan: &Plan,
    seq: usize,
    share: &Share,
    timed_out: bool,
    after_s: u64,
) -> Decision {
    let report = share
        .dir
        .read_own_file(OsStr::new(REPORT_FILE), MAX_EXCHANGE_BYTES)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<GuestReport>(&bytes).ok());
    let Some(report) = report else {
        let outcome = if timed_out {
            Outcome::DeadlineMissed { after_s }
        } else {
            Outcome::NoReport { after_s }
        };
        let host = state.start.facts.clone();
        return advance::after_measure(state, plan, seq, outcome, None, &host, now_s());
    };
    match advance::on_boot(state, plan, &report.facts, now_s()) {
        Decision::Measure { seq: measured } if measured == seq => {
            let mut measurement = report.measurement;
            if let Some(m) = measurement.as_mut() {
                m.result = m.result.as_ref().map(|r| share.relative.join(r));
            }
            let outcome = report.outcome.unwrap_or(Outcome::CommandFailed);
            advance::after_measure(
                state,
                plan,
                seq,
                outcome,
                measurement,
                &report.facts,
                now_s(),
            )
        }
        other => other,
    }
}

/// qemu's arguments for one boot of `target`, its order in `share`.
fn qemu_args(machine: &Machine, target: &BootTarget, token: &str, share: &Path) -> Vec<String> {
    let section = &machine.section;
    let mut args: Vec<String> = match machine.accel {
        Accel::Kvm => vec!["-accel".into(), "kvm".into()],
        _ => vec!["-accel".into(), "tcg,thread=multi".into()],
    };
    let cpu =
        section
            .cpu_model
            .clone()
            .unwrap_or_else(|| match (section.arch.as_str(), machine.accel) {
                ("aarch64", Accel::Kvm) => "host".into(),
                ("aarch64", _) => "cortex-a76".into(),
                _ => "max".into(),
            });
    if section.arch == "aarch64" {
        args.extend(["-M".into(), "virt".into()]);
    }
    args.extend(["-cpu".into(), cpu]);
    args.extend(["-smp".into(), section.cpus.to_string()]);
    args.extend(["-m".into(), section.memory_mib.to_string()]);
    args.extend(["-nographic", "-no-reboot", "-nic", "none"].map(String::from));
    args.extend(["-kernel".into(), target.kernel.display().to_string()]);
    if let Some(initrd) = &target.initrd {
        args.extend(["-initrd".into(), initrd.display().to_string()]);
    }
    args.extend(["-append".into(), targets::cmdline(target, Some(token))]);
    // qemu's option syntax: a comma inside a value is written twice.
    let path = share.display().to_string().replace(',', ",,");
    args.extend([
        "-virtfs".into(),
        format!("local,path={path},mount_tag=out,security_model=none,id=out"),
    ]);
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::image::ImageFacts;

    #[test]
    fn a_guest_boots_the_points_kernel_with_its_token_and_the_share() {
        let machine = Machine {
            qemu: "/usr/bin/qemu-system-x86_64".into(),
            accel: Accel::Tcg,
            section: QemuSection::default(),
        };
        let target = BootTarget {
            kernel: "/k/vmlinuz".into(),
            kernel_image: ImageFacts {
                sha256: String::new(),
                size_bytes: 0,
                release: None,
                release_source: None,
            },
            initrd: Some("/k/initrd.gz".into()),
            initrd_image: None,
            cmdline: "console=ttyS0 panic=-1".into(),
            release: None,
        };
        let args = qemu_args(&machine, &target, "ab.2.0", Path::new("/out/boots/a,b"));
        let text = args.join(" ");
        assert!(
            text.starts_with(
                "-accel tcg,thread=multi -cpu max -smp 4 -m 1024 -nographic -no-reboot"
            ),
            "{text}"
        );
        assert!(
            text.contains("-kernel /k/vmlinuz -initrd /k/initrd.gz"),
            "{text}"
        );
        let append = args.iter().position(|a| a == "-append").unwrap();
        assert_eq!(
            args[append + 1],
            "console=ttyS0 panic=-1 rtsoak.campaign=ab.2.0"
        );
        assert!(
            text.ends_with("path=/out/boots/a,,b,mount_tag=out,security_model=none,id=out"),
            "{text}"
        );
    }
}
