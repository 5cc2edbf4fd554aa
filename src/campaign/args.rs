//! The `rtsoak campaign` command line (clap derive). Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::Subcommand;

/// The formats `campaign report` writes.
pub(crate) const FORMATS: &[&str] = &["table", "markdown", "json", "junit"];

/// `rtsoak campaign ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum CampaignCommand {
    /// Check a plan without booting anything: its keys, its command, every image (opened
    /// checked, hashed, and, for kexec, loaded once with kexec_file_load and unloaded), and
    /// the boots it plans.
    Check {
        /// The plan (TOML; docs/campaign.md).
        plan: PathBuf,
        /// Check it for the qemu driver (`campaign run`) instead of kexec on this machine.
        #[arg(long)]
        qemu: bool,
    },
    /// Start a campaign on this machine with kexec: check everything, keep the state in the
    /// state directory, enable rtsoak-campaign.service (which carries it on after every boot)
    /// and kexec into the first point. Needs root and systemd.
    Start {
        /// The plan (TOML; docs/campaign.md).
        plan: PathBuf,
        /// The state directory.
        #[arg(long, default_value = super::kexec::STATE_DIR, value_name = "DIR")]
        state: PathBuf,
    },
    /// Carry a kexec campaign on after a boot (what rtsoak-campaign.service runs): check the
    /// boot, settle, measure, save, kexec into the next point or end.
    Resume {
        /// The state directory.
        #[arg(long, default_value = super::kexec::STATE_DIR, value_name = "DIR")]
        state: PathBuf,
    },
    /// Show where a kexec campaign is: every boot so far, the table, the verdict so far.
    Status {
        /// The state directory.
        #[arg(long, default_value = super::kexec::STATE_DIR, value_name = "DIR")]
        state: PathBuf,
    },
    /// Wait until a kexec campaign has ended, then print its table and exit with its verdict
    /// (from a build host: `ssh board rtsoak campaign wait --bisect`).
    Wait {
        /// The state directory.
        #[arg(long, default_value = super::kexec::STATE_DIR, value_name = "DIR")]
        state: PathBuf,
        /// Exit for `git bisect run`: 0 no regression, 1 regression, 125 inconclusive, 128 an
        /// error.
        #[arg(long)]
        bisect: bool,
    },
    /// End a kexec campaign where it is: the boot under way recorded as interrupted, the unit
    /// disabled, any loaded kernel unloaded; what was measured is kept.
    Abort {
        /// The state directory.
        #[arg(long, default_value = super::kexec::STATE_DIR, value_name = "DIR")]
        state: PathBuf,
    },
    /// Run a campaign from this host, one qemu guest per boot (KVM where it works, else TCG),
    /// print the table and exit with the verdict. Needs root.
    Run {
        /// The plan (TOML; docs/campaign.md).
        plan: PathBuf,
        /// The campaign directory (default: `rtsoak-results/<UTC time>-campaign`).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Exit for `git bisect run`: 0 no regression, 1 regression, 125 inconclusive, 128 an
        /// error.
        #[arg(long)]
        bisect: bool,
    },
    /// Render a campaign document (its campaign.json, or its directory).
    Report {
        /// The campaign document or directory.
        campaign: PathBuf,
        /// Output format.
        #[arg(short, long, default_value = "table",
            value_parser = clap::builder::PossibleValuesParser::new(FORMATS))]
        format: String,
        /// Write to this file instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Exit for `git bisect run`: 0 no regression, 1 regression, 125 inconclusive, 128 an
        /// error.
        #[arg(long)]
        bisect: bool,
    },
    /// Inside a qemu guest: run the boot's order from the host's share.
    #[command(hide = true)]
    Guest {
        /// The 9p share holding the boot's order.
        #[arg(long, value_name = "DIR")]
        share: PathBuf,
    },
}
