//! `rtsoak probe`: the transport support matrix with the reason for each unsupported one.

use crate::exit::Outcome;
use crate::result::TransportSupport;
use crate::transport::REGISTRY;

/// Probe every registry transport and print the matrix.
pub fn probe(json: bool) -> anyhow::Result<Outcome> {
    let support = support_matrix();
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

/// Probe every transport in registry order.
pub fn support_matrix() -> Vec<TransportSupport> {
    REGISTRY
        .iter()
        .map(|t| TransportSupport {
            transport: t.name().to_string(),
            support: t.probe(),
        })
        .collect()
}
