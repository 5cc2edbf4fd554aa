//! `rtsoak campaign`: a kernel A/B/A with a fresh boot per point. `check` validates a plan
//! before any reboot; `start`, `resume` (the unit's), `status`, `wait` and `abort` run a kexec
//! campaign on this machine; `run` runs one in qemu guests from this host; `report` renders a
//! campaign document. With `--bisect`, the verdict becomes `git bisect run`'s exit code.
//!
//! A bad plan or an input refused as untrusted is a usage error (exit 2, or 128 with
//! `--bisect`), answered before anything boots.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::campaign::args::CampaignCommand;
use crate::campaign::doc::{self, CampaignDoc};
use crate::campaign::plan::{Plan, PlanError};
use crate::campaign::state::{BootTarget, StateDir};
use crate::campaign::{advance, guest, kexec, qemu, targets};
use crate::exit::Outcome;
use crate::sysinfo::SysRoot;
use rtsoak_analysis::bench::compare::Verdict;
use rtsoak_analysis::campaign::sequence::slots;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_sys::checked_input::{self, InputRefused};

/// The largest plan read.
const MAX_PLAN_BYTES: u64 = 1 << 20;

/// Run one `campaign` sub-command.
pub(super) fn campaign(command: CampaignCommand) -> anyhow::Result<Outcome> {
    let bisect = matches!(
        command,
        CampaignCommand::Wait { bisect: true, .. }
            | CampaignCommand::Run { bisect: true, .. }
            | CampaignCommand::Report { bisect: true, .. }
    );
    let result = match command {
        CampaignCommand::Check { plan, qemu } => check(&plan, qemu),
        CampaignCommand::Start { plan, state } => start(&plan, &state),
        CampaignCommand::Resume { state } => resume(&state),
        CampaignCommand::Status { state } => status(&state),
        CampaignCommand::Wait { state, bisect } => wait(&state, bisect),
        CampaignCommand::Abort { state } => abort(&state),
        CampaignCommand::Run {
            plan,
            output,
            bisect,
        } => run(&plan, output.as_deref(), bisect),
        CampaignCommand::Report {
            campaign,
            format,
            output,
            bisect,
        } => report(&campaign, &format, output.as_deref(), bisect),
        CampaignCommand::Guest { share } => {
            guest::run(&share, &StopFlag::install()?).map(|()| Outcome::Pass)
        }
    };
    match result {
        Err(error) if bisect => {
            eprintln!("Error: {error:#}");
            Ok(Outcome::BisectAbort)
        }
        Err(error)
            if error.downcast_ref::<PlanError>().is_some()
                || error.downcast_ref::<InputRefused>().is_some() =>
        {
            eprintln!("Error: {error:#}");
            Ok(Outcome::Usage)
        }
        other => other,
    }
}

/// A kexec campaign's session in `dir`.
fn session<'a>(dir: &'a StateDir, stop: &'a StopFlag) -> kexec::Session<'a> {
    kexec::Session { dir, stop }
}

/// The exit code of a verdict: `bench compare`'s, or `git bisect run`'s.
fn outcome(verdict: Verdict, bisect: bool) -> Outcome {
    match (verdict, bisect) {
        (Verdict::Regression, false) => Outcome::Regression,
        // Exit 1: git bisect's "bad".
        (Verdict::Regression, true) => Outcome::ThresholdBreach,
        (Verdict::Inconclusive, false) => Outcome::Inconclusive,
        (Verdict::Inconclusive, true) => Outcome::BisectSkip,
        (Verdict::Improvement | Verdict::NoChange, _) => Outcome::Pass,
    }
}

/// The verdict a document stands for: an unfinished campaign makes no claim yet.
fn verdict_of(doc: &CampaignDoc) -> Verdict {
    if doc.finished() {
        doc.judgement.verdict
    } else {
        Verdict::Inconclusive
    }
}

/// The plan at `path`, read once and checked, with its text; its command checked against the
/// command line rtsoak itself parses.
fn read_plan(path: &Path) -> anyhow::Result<(String, String, Plan)> {
    let bytes = checked_input::read(path, "campaign plan", MAX_PLAN_BYTES)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))?;
    let name = path.display().to_string();
    let plan = crate::campaign::plan::parse(&name, &text)?;
    check_command(&plan)?;
    Ok((name, text, plan))
}

/// The plan's command as rtsoak will run it on every boot (with the `--output` the campaign
/// adds) must parse, and a soak's profile must load.
fn check_command(plan: &Plan) -> anyhow::Result<()> {
    let mut words = vec!["rtsoak".to_string()];
    words.extend(plan.command.iter().cloned());
    words.extend(["--output".into(), "/campaign/boot".into()]);
    let matches = crate::cli::command()
        .try_get_matches_from(&words)
        .map_err(|error| PlanError::Invalid {
            key: "command".into(),
            value: format!("{:?}", plan.command),
            allowed: format!(
                "a command rtsoak accepts (it says: {})",
                error
                    .render()
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
            ),
        })?;
    if let Some((_, sub)) = matches.subcommand()
        && let Ok(Some(profile)) = sub.try_get_one::<String>("profile")
    {
        crate::profile::load(profile)
            .with_context(|| format!("the campaign's command names the profile {profile}"))?;
    }
    Ok(())
}

fn check(path: &Path, for_qemu: bool) -> anyhow::Result<Outcome> {
    let (name, text, plan) = read_plan(path)?;
    let mut shown: Vec<(String, BootTarget)> = Vec::new();
    if for_qemu {
        for (role, target) in targets::resolve_all(&plan, qemu::console(&plan.qemu))? {
            shown.push((plan.label(role).to_string(), target));
        }
    } else {
        let prepared = kexec::prepare(&name, text, &SysRoot::system())?;
        if rtsoak_sys::safe_dir::euid() == 0 {
            kexec::trial_load(&prepared)?;
            println!("every kernel loads with kexec_file_load (each was loaded and unloaded)");
        } else {
            println!("not root: the kernels were not trial-loaded (start needs root anyway)");
        }
        for (role, target) in &prepared.targets {
            shown.push((plan.label(*role).to_string(), target.clone()));
        }
        if let Some(start) = &prepared.start.return_to {
            shown.push(("return to".into(), start.clone()));
        }
    }
    for (label, target) in &shown {
        println!(
            "{label}: {} (release {}, SHA-256 {}){}\n  command line: {}",
            target.kernel.display(),
            target
                .release
                .as_deref()
                .unwrap_or("read at its first boot"),
            &target.kernel_image.sha256[..16],
            target
                .initrd
                .as_ref()
                .map_or(" without an initramfs".into(), |i| format!(
                    ", initramfs {}",
                    i.display()
                )),
            target.cmdline
        );
    }
    let planned = slots(&plan.order, plan.boots_per_step);
    let order: Vec<&str> = planned.iter().map(|s| plan.label(s.role)).collect();
    println!(
        "{} boots: {}; then `rtsoak {}` on each",
        planned.len(),
        order.join(" "),
        plan.command.join(" ")
    );
    Ok(Outcome::Pass)
}

fn start(path: &Path, state_dir: &Path) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        rtsoak_sys::safe_dir::euid() == 0,
        "a kexec campaign needs root (it loads kernels and reboots): run it with sudo"
    );
    let (name, text, _) = read_plan(path)?;
    let prepared = kexec::prepare(&name, text, &SysRoot::system())?;
    let dir = StateDir::open(state_dir, true)?;
    let stop = StopFlag::install()?;
    eprintln!(
        "rtsoak campaign: starting; the machine kexecs into the first point now, and \
         rtsoak-campaign.service carries on after every boot (`rtsoak campaign status`)"
    );
    kexec::start(&session(&dir, &stop), prepared)?;
    Ok(Outcome::Pass)
}

fn resume(state_dir: &Path) -> anyhow::Result<Outcome> {
    let stop = StopFlag::install()?;
    let resumed =
        StateDir::open(state_dir, false).and_then(|dir| kexec::resume(&session(&dir, &stop)));
    if let Err(error) = resumed {
        // Whatever went wrong, the unit must not run again at every boot.
        let _ = kexec::systemctl(&["disable", kexec::UNIT]);
        return Err(error.context(format!(
            "the campaign cannot go on, and {} was disabled; `rtsoak campaign status` shows \
             what it measured",
            kexec::UNIT
        )));
    }
    Ok(Outcome::Pass)
}

fn status(state_dir: &Path) -> anyhow::Result<Outcome> {
    let doc = doc::load(state_dir)
        .with_context(|| format!("no campaign document in {}", state_dir.display()))?;
    print!("{}", rtsoak_report::campaign::render(&doc));
    Ok(Outcome::Pass)
}

fn wait(state_dir: &Path, bisect: bool) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        state_dir.is_dir(),
        "no campaign state directory {}: start a campaign first (`rtsoak campaign start`)",
        state_dir.display()
    );
    loop {
        if let Ok(doc) = doc::load(state_dir)
            && doc.finished()
        {
            print!("{}", rtsoak_report::campaign::render(&doc));
            return Ok(outcome(verdict_of(&doc), bisect));
        }
        std::thread::sleep(Duration::from_secs(10));
    }
}

fn abort(state_dir: &Path) -> anyhow::Result<Outcome> {
    let dir = StateDir::open(state_dir, false)?;
    let mut state = dir.load()?;
    let plan = crate::campaign::plan::parse("plan.toml", &dir.plan_text()?)?;
    let boot = crate::campaign::identity::read(&SysRoot::system());
    advance::abort(&mut state, &boot, crate::campaign::state::now_s());
    kexec::save(&dir, &plan, &state)?;
    let _ = rtsoak_sys::kexec::unload();
    kexec::systemctl(&["disable", kexec::UNIT])?;
    eprintln!("rtsoak campaign: aborted; {} is disabled", kexec::UNIT);
    Ok(Outcome::Pass)
}

fn run(path: &Path, output: Option<&Path>, bisect: bool) -> anyhow::Result<Outcome> {
    let (name, text, _) = read_plan(path)?;
    let dir: PathBuf =
        crate::store::new_result_dir(output, Path::new("rtsoak-results"), "campaign")?;
    let stop = StopFlag::install()?;
    let doc = qemu::run(&name, &text, &dir, &stop)?;
    print!("{}", rtsoak_report::campaign::render(&doc));
    eprintln!(
        "Campaign saved to {}",
        dir.join(doc::CAMPAIGN_FILE).display()
    );
    Ok(outcome(verdict_of(&doc), bisect))
}

fn report(
    path: &Path,
    format: &str,
    output: Option<&Path>,
    bisect: bool,
) -> anyhow::Result<Outcome> {
    let doc = doc::load(path)?;
    let bytes = match format {
        "markdown" => rtsoak_report::campaign::render_markdown(&doc).into_bytes(),
        "json" => rtsoak_report::campaign::render_json(&doc),
        "junit" => rtsoak_report::campaign::render_junit(&doc).into_bytes(),
        _ => rtsoak_report::campaign::render(&doc).into_bytes(),
    };
    match output {
        Some(file) => {
            crate::store::write_atomic(file, &bytes)?;
            eprintln!("Wrote {}", file.display());
        }
        None => {
            use std::io::Write;
            std::io::stdout().write_all(&bytes)?;
        }
    }
    Ok(outcome(verdict_of(&doc), bisect))
}
