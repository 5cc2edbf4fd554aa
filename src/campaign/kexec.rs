//! The kexec driver: a campaign on the machine itself. `start` checks the plan and every image
//! (each loaded once with `kexec_file_load` and unloaded again, so a kernel that lacks the call,
//! a lockdown that forbids it or an image it will not take is refused before the first
//! reboot), records the state in a root-owned directory (`/var/lib/rtsoak/campaign`), enables
//! `rtsoak-campaign.service` and loads the first point. After every boot the unit runs
//! `resume`, which checks that the running kernel is the point meant, waits for the boot to
//! settle, runs the command, saves, and loads the next point; at the end it writes the
//! document, disables the unit and leaves the machine as the plan says. The reboot is always
//! systemd's `systemctl kexec`: every service stopped and every file system unmounted before
//! `reboot(LINUX_REBOOT_CMD_KEXEC)`.
//!
//! Owns: the steps of a kexec campaign on a live machine. The decisions are `advance`'s.

use std::ffi::{CString, OsStr};
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::advance::{self, Decision, NewCampaign, Target};
use super::command::{Finished, boot_dir, first_program, run_program, this_rtsoak};
use super::doc::{self, CAMPAIGN_FILE};
use super::identity::{BootFacts, meaningful_words};
use super::image::sha256_hex;
use super::measure::{Measured, Step, measure};
use super::plan::{End, Plan};
use super::state::{BootTarget, Driver, LoadFailure, PLAN_FILE, StartBoot, State, StateDir, now_s};
use super::targets;
use crate::sysinfo::SysRoot;
use rtsoak_analysis::campaign::sequence::Role;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_sys::kexec::{self as sys_kexec, KexecError};
use rtsoak_sys::safe_dir::SafeDir;

/// Where a kexec campaign keeps its state.
pub(crate) const STATE_DIR: &str = "/var/lib/rtsoak/campaign";
/// The unit that resumes it after every boot.
pub(crate) const UNIT: &str = "rtsoak-campaign.service";
/// How long `systemctl kexec` may take to stop this process before the kexec counts as failed.
const KEXEC_WAIT: Duration = Duration::from_secs(300);
/// How long a `systemctl kexec` that reported a failure may still turn out to have begun the
/// shutdown (this process stopped) before it counts as failed.
const KEXEC_FAILED_WAIT: Duration = Duration::from_secs(20);
/// Where systemctl is, in the order looked for.
const SYSTEMCTL: &[&str] = &["/usr/bin/systemctl", "/bin/systemctl"];

/// What a kexec campaign runs with: its state directory (locked) and the stop signals.
pub(crate) struct Session<'a> {
    /// The state directory.
    pub(crate) dir: &'a StateDir,
    /// Set by SIGTERM (systemd stopping the unit for the kexec), SIGINT or SIGHUP.
    pub(crate) stop: &'a StopFlag,
}

/// What a campaign starts from: the plan and what it boots, checked.
pub(crate) struct Prepared {
    /// The plan's text, as read.
    pub(crate) plan_text: String,
    /// The plan.
    pub(crate) plan: Plan,
    /// The boot it starts in, and where it returns.
    pub(crate) start: StartBoot,
    /// What each point boots.
    pub(crate) targets: std::collections::BTreeMap<Role, BootTarget>,
}

/// Read and check `plan_text` (from `name`) for this machine: every image opened, checked and
/// hashed, the start kernel found where the plan returns to it.
pub(crate) fn prepare(name: &str, plan_text: String, root: &SysRoot) -> anyhow::Result<Prepared> {
    let plan = super::plan::parse(name, &plan_text)?;
    let facts = super::identity::read(root);
    let running_cmdline = meaningful_words(&facts.cmdline).join(" ");
    let targets = targets::resolve_all(&plan, &running_cmdline)?;
    let return_to = match plan.end {
        End::Start => Some(start_target(&facts, running_cmdline)?),
        End::Stay | End::Reboot => None,
    };
    Ok(Prepared {
        plan_text,
        plan,
        start: StartBoot { facts, return_to },
        targets,
    })
}

/// The running kernel's image and initramfs where Debian, Ubuntu and L4T install them:
/// `/boot/vmlinuz-<release>` (or `/boot/Image`) and `/boot/initrd.img-<release>`.
fn start_target(facts: &BootFacts, cmdline: String) -> anyhow::Result<BootTarget> {
    let release = &facts.release;
    let kernel = [
        format!("/boot/vmlinuz-{release}"),
        format!("/boot/Image-{release}"),
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .with_context(|| {
        format!(
            "end = \"start\" returns to the running kernel, but neither \
                 /boot/vmlinuz-{release} nor /boot/Image-{release} exists: set end = \"reboot\" \
                 (the boot loader's default) or \"stay\""
        )
    })?;
    let initrd = format!("/boot/initrd.img-{release}");
    let initrd = Path::new(&initrd).exists().then_some(initrd);
    let target = targets::of_files(
        Path::new(&kernel),
        initrd.as_deref().map(Path::new),
        cmdline,
        Some(release.clone()),
    )
    .context("the running kernel's image (end = \"start\")")?;
    if let Some(image) = &target.kernel_image.release {
        anyhow::ensure!(
            image == release,
            "{kernel} is release {image}, not the running {release}: set end = \"reboot\" or \
             \"stay\""
        );
    }
    Ok(target)
}

/// Load every target once and unload it again: what would refuse it at a reboot refuses it
/// now.
pub(crate) fn trial_load(prepared: &Prepared) -> anyhow::Result<()> {
    let mut all: Vec<(String, &BootTarget)> = prepared
        .targets
        .iter()
        .map(|(role, t)| (role.name().to_string(), t))
        .collect();
    if let Some(start) = &prepared.start.return_to {
        all.push(("the start kernel".into(), start));
    }
    let loaded = all.iter().try_for_each(|(name, target)| {
        load(target, Some("0.0.0")).map_err(|(_, message)| {
            anyhow::anyhow!(
                "the {name}'s kernel {} cannot be loaded: {message}",
                target.kernel.display()
            )
        })
    });
    // Whatever happened, nothing of the trial stays loaded for the next reboot to boot.
    let unloaded =
        sys_kexec::unload().map_err(|e| anyhow::anyhow!("unloading the trial image: {e}"));
    loaded.and(unloaded)
}

/// Load `target` (its files checked again) for the next kexec, with `token` on its command line.
fn load(target: &BootTarget, token: Option<&str>) -> Result<(), (LoadFailure, String)> {
    let opened = targets::reopen(target)?;
    let line = targets::cmdline(target, token);
    let line = CString::new(line)
        .map_err(|_| (LoadFailure::Refused, "a NUL in the command line".into()))?;
    sys_kexec::load(
        opened.kernel.as_fd(),
        opened.initrd.as_ref().map(|f| f.as_fd()),
        &line,
    )
    .map_err(|error| (LoadFailure::Refused, explain(error)))
}

/// What a refused load means here, and what to do.
fn explain(error: KexecError) -> String {
    let root = SysRoot::system();
    match error {
        KexecError::NotSupported => format!(
            "{error}: boot a kernel built with CONFIG_KEXEC_FILE=y to run kexec campaigns, or use \
             the qemu driver (`rtsoak campaign run`)"
        ),
        KexecError::Refused => {
            let lockdown = root.read_trimmed("/sys/kernel/security/lockdown");
            let disabled = root.read_trimmed("/proc/sys/kernel/kexec_load_disabled");
            if disabled.as_deref() == Some("1") {
                format!(
                    "{error}: kernel.kexec_load_disabled is 1 (it stays so until the next boot)"
                )
            } else if lockdown.as_deref().is_some_and(|l| !l.contains("[none]")) {
                format!(
                    "{error}: the kernel is locked down ({}), which allows only images signed \
                     with a key it trusts",
                    lockdown.unwrap_or_default()
                )
            } else {
                format!("{error}: run as root (CAP_SYS_BOOT)")
            }
        }
        KexecError::Signature(_) => format!(
            "{error}: the kernel requires signed images (CONFIG_KEXEC_SIG_FORCE, or lockdown); \
             sign it with a key in the kernel's keyring"
        ),
        KexecError::Format => format!(
            "{error}: on arm64 give the uncompressed Image (gunzip Image.gz), not vmlinuz.efi"
        ),
        KexecError::Busy | KexecError::Other(_) => error.to_string(),
    }
}

/// `systemctl ARGS`, checked, within a minute; an error names what it said.
pub(crate) fn systemctl(args: &[&str]) -> anyhow::Result<()> {
    let program = first_program(SYSTEMCTL)?;
    match run_program(&program, args, Instant::now() + Duration::from_secs(60))? {
        Finished::Exited { code: Some(0), .. } => Ok(()),
        Finished::Exited { code, .. } => {
            anyhow::bail!("`systemctl {}` failed (exit {code:?})", args.join(" "))
        }
        Finished::TimedOut => {
            anyhow::bail!("`systemctl {}` did not finish in a minute", args.join(" "))
        }
    }
}

/// Start a kexec campaign of `prepared` in `dir` (new, locked): state saved, unit enabled,
/// first point loaded, the machine kexec'd.
pub(crate) fn start(session: &Session<'_>, prepared: Prepared) -> anyhow::Result<()> {
    let dir = session.dir;
    if dir.has_state() {
        let (what, todo) = if dir.load().is_ok_and(|s| s.finished()) {
            (
                "a finished campaign",
                "move it away first (its campaign.json is the result), or give --state DIR",
            )
        } else {
            (
                "a campaign under way",
                "see `rtsoak campaign status`, or end it with `rtsoak campaign abort`",
            )
        };
        anyhow::bail!("{} holds {what}: {todo}", dir.dir().path().display());
    }
    trial_load(&prepared)?;
    dir.dir()
        .write(OsStr::new(PLAN_FILE), prepared.plan_text.as_bytes(), 0o644)
        .context("saving the plan in the state directory")?;
    let mut state = advance::create(
        NewCampaign {
            campaign_id: rtsoak_sys::random::hex_token(),
            driver: Driver::Kexec,
            plan_sha256: sha256_hex(prepared.plan_text.as_bytes()),
            started_at: rtsoak_sys::clock::timestamp(),
            start: prepared.start,
            targets: prepared.targets,
        },
        &prepared.plan,
    );
    let decision = advance::begin(&mut state);
    dir.save(&state)?;
    systemctl(&["enable", UNIT]).with_context(|| {
        format!("enabling {UNIT}, which resumes the campaign after each boot (is it installed?)")
    })?;
    drive(session, &prepared.plan, &mut state, decision)
}

/// After a boot: carry the campaign on from its state in `dir`.
pub(crate) fn resume(session: &Session<'_>) -> anyhow::Result<()> {
    let dir = session.dir;
    if !dir.has_state() {
        eprintln!(
            "rtsoak campaign: no campaign in {}: nothing to do",
            dir.dir().path().display()
        );
        return disable();
    }
    let mut state = dir.load()?;
    let text = dir.plan_text()?;
    anyhow::ensure!(
        sha256_hex(text.as_bytes()) == state.plan_sha256,
        "the saved plan is not the one the campaign started with: abort the campaign"
    );
    let plan = super::plan::parse(PLAN_FILE, &text)?;
    let boot = super::identity::read(&SysRoot::system());
    let decision = advance::on_boot(&mut state, &plan, &boot, now_s());
    dir.save(&state)?;
    drive(session, &plan, &mut state, decision)
}

/// Carry out decisions until the machine goes down or the campaign is over.
fn drive(
    session: &Session<'_>,
    plan: &Plan,
    state: &mut State,
    mut decision: Decision,
) -> anyhow::Result<()> {
    let stop = session.stop;
    let boot = super::identity::read(&SysRoot::system());
    loop {
        decision = match decision {
            Decision::Measure { seq } => match measure_boot(session, plan, state, seq, &boot)? {
                Some(next) => next,
                None => return Ok(()),
            },
            Decision::Boot(target) => match kexec_into(session, plan, state, target) {
                Ok(()) => return Ok(()),
                Err((failure, message)) => {
                    eprintln!("rtsoak campaign: {message}");
                    advance::load_failed(state, plan, target, failure, message, &boot, now_s())
                }
            },
            Decision::Reboot => {
                finish(session, plan, state)?;
                return systemctl(&["--no-block", "reboot"]);
            }
            Decision::Finished => return finish(session, plan, state),
        };
        save(session.dir, plan, state)?;
        if stop.is_set() {
            return Ok(());
        }
    }
}

/// Measure planned boot `seq` in this boot; `None` when the campaign was stopped meanwhile.
fn measure_boot(
    session: &Session<'_>,
    plan: &Plan,
    state: &mut State,
    seq: usize,
    boot: &BootFacts,
) -> anyhow::Result<Option<Decision>> {
    let (dir, stop) = (session.dir, session.stop);
    let slot = &state.slots[seq];
    let attempt = slot
        .attempts
        .last()
        .context("a boot measured without a try")?;
    let loaded_at_s = attempt.loaded_at_s.unwrap_or_else(now_s);
    let remaining_s = (loaded_at_s + plan.deadline_s).saturating_sub(now_s());
    let relative = boot_dir(seq, slot.slot.role, attempt.number);
    let boot_dir = SafeDir::create(&dir.dir().path().join(&relative))?;
    let rtsoak = this_rtsoak()?;
    let systemctl = first_program(SYSTEMCTL).ok();
    let step = Step {
        settle: &plan.settle,
        command: &plan.command,
        kind: plan.command_kind(),
        rtsoak: &rtsoak,
        systemctl: systemctl.as_deref(),
        boot_dir: &boot_dir,
        relative_dir: &relative,
        until: Instant::now() + Duration::from_secs(remaining_s),
        loaded_at_s,
    };
    Ok(match measure(&step, &SysRoot::system(), stop)? {
        Measured::Stopped => None,
        Measured::Done(outcome, measurement) => Some(advance::after_measure(
            state,
            plan,
            seq,
            outcome,
            measurement.map(|m| *m),
            boot,
            now_s(),
        )),
    })
}

/// Load `target`, record it (saved before anything else happens), and `systemctl kexec`;
/// `Ok` once systemd is taking the machine down (this process is being stopped).
fn kexec_into(
    session: &Session<'_>,
    plan: &Plan,
    state: &mut State,
    target: Target,
) -> Result<(), (LoadFailure, String)> {
    let (boot, token) = match target {
        Target::Slot { seq } => {
            let slot = &state.slots[seq];
            let token = slot.attempts.last().map(|a| a.token.clone());
            (&state.targets[&slot.slot.role], token)
        }
        Target::Start => match &state.start.return_to {
            Some(start) => (start, None),
            None => {
                return Err((
                    LoadFailure::ImageUnreadable,
                    "no start kernel was recorded".into(),
                ));
            }
        },
    };
    load(boot, token.as_deref())?;
    advance::loaded(state, target, now_s());
    let failed = |e: anyhow::Error| (LoadFailure::Reboot, format!("{e:#}"));
    save(session.dir, plan, state).map_err(failed)?;
    // --no-block: systemctl returns once the job is queued. Without it, it waits, and the
    // shutdown it started stops it with the rest of this unit's (or session's) processes, which
    // would read as a failed kexec.
    let asked = systemctl(&["--no-block", "kexec"]);
    let since = Instant::now();
    while since.elapsed() < KEXEC_WAIT {
        if session.stop.is_set() {
            return Ok(());
        }
        if asked.is_err() && since.elapsed() > KEXEC_FAILED_WAIT {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err((
        LoadFailure::Reboot,
        match asked {
            Err(error) => format!("{error:#}"),
            Ok(()) => format!(
                "`systemctl kexec` did not take the machine down within {} s",
                KEXEC_WAIT.as_secs()
            ),
        },
    ))
}

/// Save the state and the document so far (`campaign.json`, and its table in `table.txt`);
/// returns the table.
pub(crate) fn save(dir: &StateDir, plan: &Plan, state: &State) -> anyhow::Result<String> {
    dir.save(state)?;
    let doc = doc::build(state, plan, None, dir.dir());
    dir.dir()
        .write(
            OsStr::new(CAMPAIGN_FILE),
            &rtsoak_report::campaign::render_json(&doc),
            0o644,
        )
        .context("saving campaign.json")?;
    let table = rtsoak_report::campaign::render(&doc);
    dir.dir()
        .write(OsStr::new("table.txt"), table.as_bytes(), 0o644)
        .context("saving table.txt")?;
    Ok(table)
}

/// The campaign is over: the document, the table on stderr (the journal), the unit disabled.
fn finish(session: &Session<'_>, plan: &Plan, state: &State) -> anyhow::Result<()> {
    eprint!("{}", save(session.dir, plan, state)?);
    disable()
}

fn disable() -> anyhow::Result<()> {
    systemctl(&["disable", UNIT]).with_context(|| format!("disabling {UNIT}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_point_without_a_command_line_boots_the_one_the_campaign_started_under() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let kernel = dir.path().join("Image");
        std::fs::write(
            &kernel,
            b"Linux version 5.15.148-tegra (builder) #1 SMP PREEMPT_RT",
        )
        .unwrap();
        std::fs::set_permissions(&kernel, std::fs::Permissions::from_mode(0o644)).unwrap();
        let plan = format!(
            "command = [\"compare\", \"--profile\", \"jetson-orin-nano\"]\nend = \"stay\"\n\
             [parent]\nkernel = \"{k}\"\n[child]\nkernel = \"{k}\"\nappend = \"nohz_full=2\"\n",
            k = kernel.display()
        );
        let root = SysRoot::at(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sys/rt-board-6cpu"),
        );
        let prepared = prepare("plan", plan, &root).unwrap();
        let board = root.read_trimmed("/proc/cmdline").unwrap();
        let parent = &prepared.targets[&Role::Parent];
        assert_eq!(parent.cmdline, board);
        assert_eq!(
            prepared.targets[&Role::Child].cmdline,
            format!("{board} nohz_full=2")
        );
        assert_eq!(
            parent.release.as_deref(),
            Some("5.15.148-tegra"),
            "from the image's banner"
        );
        assert!(
            prepared.start.return_to.is_none(),
            "end = \"stay\" returns nowhere"
        );
    }
}
