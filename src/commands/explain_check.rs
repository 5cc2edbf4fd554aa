//! `rtsoak explain-check`: stage the explainer's calibration inversion and say, round by round,
//! whether the explanation named what was staged.

use crate::exit::Outcome;
use rtsoak_measure::explain::calibrate;

pub(crate) fn explain_check(
    rounds: u32,
    cpus: Option<Vec<usize>>,
    keep_trace: Option<std::path::PathBuf>,
) -> anyhow::Result<Outcome> {
    let allowed = rtsoak_sys::sched::affinity();
    let cpus = cpus.unwrap_or_else(|| allowed.clone());
    let [holder_cpu, waiter_cpu] = match cpus.as_slice() {
        [a, b, ..] if a != b => [*a, *b],
        _ => {
            return usage(format!(
                "the calibration needs two different CPUs (the holder's, then the RT \
                 publisher's), not {}: give them with --cpus A,B",
                rtsoak_record::cpulist::format(&cpus)
            ));
        }
    };
    if let Some(cpu) = [holder_cpu, waiter_cpu]
        .into_iter()
        .find(|cpu| !allowed.contains(cpu))
    {
        return usage(format!(
            "CPU {cpu} is not one this process may use ({}): give two of those with --cpus A,B",
            rtsoak_record::cpulist::format(&allowed)
        ));
    }
    if let Some(path) = &keep_trace {
        check_trace_dir(path)?;
    }
    calibrate::check_privilege()?;
    println!(
        "explainer calibration: {rounds} round{}; a noise publisher (FIFO {}) and a burst thread \
         (FIFO {}, {} us) on CPU {holder_cpu}, the RT publisher (FIFO {}) on CPU {waiter_cpu}",
        if rounds == 1 { "" } else { "s" },
        calibrate::HOLDER_FIFO,
        calibrate::BURST_FIFO,
        calibrate::BURST_US,
        calibrate::RT_FIFO
    );
    let calibration = calibrate::run(rounds, holder_cpu, waiter_cpu, keep_trace)?;
    if calibration.restaged > 0 {
        println!(
            "{} attempts did not stage the inversion (the RT publisher asked after the burst, or \
             waited mostly after it) and were staged again",
            calibration.restaged
        );
    }
    let done = calibration.rounds;
    let mut right = 0;
    for (i, round) in done.iter().enumerate() {
        let said = rtsoak_report::why::why(&round.explained.why);
        let verdict = if round.wrong.is_empty() {
            right += 1;
            "right".to_string()
        } else {
            format!("WRONG: {}", round.wrong.join("; "))
        };
        println!(
            "round {}: the RT publisher waited {} us; {said} (staged: holder pid {}, burst pid \
             {}): {verdict}",
            i + 1,
            round.waited_us,
            round.holder_tid,
            round.burst_tid
        );
    }
    if right == done.len() {
        println!("PASS: {right} of {} rounds explained correctly", done.len());
        Ok(Outcome::Pass)
    } else {
        println!("FAIL: {right} of {} rounds explained correctly", done.len());
        Ok(Outcome::ThresholdBreach)
    }
}

/// A bad command line: said, and answered with exit code 2 before anything runs.
fn usage(message: String) -> anyhow::Result<Outcome> {
    eprintln!("Error: {message}");
    Ok(Outcome::Usage)
}

/// Refuse `--keep-trace`'s directory before anything is staged, as it would be refused when the
/// trace file is made (as root, one another user controls is refused, exit 2): never after a
/// tracefs instance and real-time threads were started for nothing.
fn check_trace_dir(path: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    rtsoak_sys::safe_dir::SafeDir::open(crate::store::parent_dir(path))
        .map(drop)
        .with_context(|| format!("--keep-trace {}: choose another place", path.display()))
}
