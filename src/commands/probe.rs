//! `rtsoak probe`: the transport support matrix with the reason for each unsupported one.

use crate::exit::Outcome;
use crate::result::TransportSupport;
use crate::transport::REGISTRY;

/// Probe every registry transport and print the matrix.
pub fn probe(json: bool) -> anyhow::Result<Outcome> {
    let (_, profile) = crate::profile::load("default")?;
    let support = support_matrix(&profile.abi);
    if json {
        println!("{}", serde_json::to_string_pretty(&support)?);
        return Ok(Outcome::Pass);
    }
    let width = REGISTRY.iter().map(|t| t.name().len()).max().unwrap_or(0);
    for (transport, entry) in REGISTRY.iter().zip(&support) {
        println!(
            "{:<width$}  {:<11}  {}",
            transport.name(),
            if entry.support.is_supported() {
                "supported"
            } else {
                "UNSUPPORTED"
            },
            if entry.support.is_supported() {
                transport.about().to_string()
            } else {
                entry.support.reason()
            }
        );
    }
    Ok(Outcome::Pass)
}

/// Probe every transport in registry order, with `abi` for the unmerged ones.
pub fn support_matrix(abi: &crate::abi::PatchedAbi) -> Vec<TransportSupport> {
    REGISTRY
        .iter()
        .map(|t| TransportSupport {
            transport: t.name().to_string(),
            support: t.probe(abi),
        })
        .collect()
}
