//! rtsoak's generalized Pareto fit of the excesses on stdin (whitespace-separated, any unit),
//! printed as one JSON object: `{"xi": .., "sigma": .., "log_likelihood": ..}`, or `null` where
//! there is nothing to fit. The analysis tests cross-check it against scipy's `genpareto.fit`
//! on samples whose true shape they know, so the check never depends on this machine's spikes.
//!
//! `cargo run --example gpd_fit < excesses.txt`

use std::io::Read;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    let excesses = text
        .split_whitespace()
        .map(str::parse::<f64>)
        .collect::<Result<Vec<f64>, _>>()?;
    match rtsoak_analysis::tail::gpd::fit(&excesses) {
        Some((gpd, log_likelihood)) => println!(
            "{{\"xi\": {}, \"sigma\": {}, \"log_likelihood\": {}}}",
            gpd.xi, gpd.sigma, log_likelihood
        ),
        None => println!("null"),
    }
    Ok(())
}
