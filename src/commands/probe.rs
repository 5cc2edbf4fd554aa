//! `rtsoak probe`: the system check for the CPUs a run would use, and the transport support
//! matrix with the reason for each unsupported one.

use serde::Serialize;

use crate::exit::Outcome;
use crate::preflight;
use crate::profile::{self, CpuTopology, Overrides};
use crate::sysinfo::{SysRoot, host_facts};
use rtsoak_measure::transport;
use rtsoak_record::TransportSupport;
use rtsoak_record::{HostFacts, SystemCheck};

/// What `rtsoak probe --json` prints.
#[derive(Debug, Serialize)]
struct ProbeReport<'a> {
    /// The machine.
    host: &'a HostFacts,
    /// The whole check.
    system_check: &'a SystemCheck,
    /// Every registry transport with its support.
    support: &'a [TransportSupport],
}

/// Check the system for the RT CPUs the profile would pick here (or `rt_cpus`) and print the
/// verdicts, the matrix and the summary.
pub(super) fn probe(
    json: bool,
    rt_cpus: Option<Vec<usize>>,
    profile_name: &str,
) -> anyhow::Result<Outcome> {
    let root = SysRoot::system();
    let host = host_facts(&root);
    let (name, profile) = profile::load(profile_name)?;
    let overrides = Overrides {
        rt_cpus,
        ..Overrides::default()
    };
    let topology = CpuTopology {
        online: host.online_cpus(),
        isolated: host.isolated_cpus(),
    };
    let plan = profile::resolve(
        &name,
        &profile,
        &overrides,
        &topology,
        &rtsoak_record::transport::Name::all(),
    )?;
    let support = transport::support_matrix(&plan.abi);
    let privileges = preflight::try_privileges(plan.rt.policy, plan.rt.publisher_priority);
    let check = preflight::check(&root, &plan.rt_cpus(), &privileges, &support);
    if json {
        let report = ProbeReport {
            host: &host,
            system_check: &check,
            support: &support,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!(
            "{}",
            rtsoak_report::probe::render(&check, &host, &support, transport::about)
        );
    }
    Ok(Outcome::Pass)
}
