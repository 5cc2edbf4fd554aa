//! The actions' lines among a comparison's notes (`--on-threshold`, `--on-end`): how often a
//! run's fired and on what, its first firing's sample and how each of its actions went, the
//! actions that did not succeed, and each on-end action.
//!
//! Owns: the words for an action's outcome. Text from elsewhere (an error) is shown escaped.

use std::collections::BTreeMap;

use rtsoak_record::result::actions::{ActionRecord, ActionStatus, RunActions};
use rtsoak_record::text::visible;

use crate::text::us;

/// The lines of one run (`name`) whose on-threshold limit was `limit_ns`: none where nothing
/// crossed it.
pub(crate) fn run_lines(name: &str, actions: &RunActions, limit_ns: u64) -> Vec<String> {
    let Some(first) = actions.firings.first() else {
        return if actions.crossed == 0 {
            Vec::new()
        } else {
            vec![format!(
                "{name}: --on-threshold: {} samples over {} us, none fired",
                actions.crossed,
                us(limit_ns)
            )]
        };
    };
    let sample = &first.sample;
    let done: Vec<String> = first.actions.iter().map(after_sample).collect();
    let mut lines = vec![format!(
        "{name}: --on-threshold fired {} ({} samples over {} us, {} missed); first: {} {} us \
         (message {}, {:.3} s in): {}",
        times(actions.firings.len()),
        actions.crossed,
        us(limit_ns),
        actions.missed,
        sample.series.name(),
        us(sample.latency_ns),
        sample.seq,
        sample.observed_at_ns as f64 / 1e9,
        done.join(", ")
    )];
    lines.extend(shortfalls(name, actions));
    lines
}

/// The lines of the on-end actions, one each.
pub(crate) fn end_lines(records: &[ActionRecord]) -> Vec<String> {
    records
        .iter()
        .map(|record| format!("--on-end: {}", outcome(record)))
        .collect()
}

/// An on-threshold action: how long after its sample it began, and how it ended (why it did
/// not succeed is in its own line).
fn after_sample(record: &ActionRecord) -> String {
    let delay_ms = record.delay_ns.unwrap_or(0) as f64 / 1e6;
    format!(
        "{} began {delay_ms:.2} ms after it: {}",
        record.kind.name(),
        ending(record)
    )
}

/// How an action ended, with why where it did not succeed: `exec done (exit 0)`,
/// `signal failed: process 12 has ended`.
fn outcome(record: &ActionRecord) -> String {
    let kind = record.kind.name();
    match &record.error {
        Some(error) => format!("{kind} {}: {}", ending(record), visible(error)),
        None => format!("{kind} {}", ending(record)),
    }
}

/// `done (exit 0)`, `done to trace-end-1.txt`, `timed out (signal 15)`.
fn ending(record: &ActionRecord) -> String {
    let exit = match (record.exit_code, record.exit_signal) {
        (Some(code), _) => format!(" (exit {code})"),
        (None, Some(signal)) => format!(" (signal {signal})"),
        (None, None) => String::new(),
    };
    let file = record
        .file
        .as_deref()
        .map(|file| format!(" to {}", visible(file)))
        .unwrap_or_default();
    format!("{}{exit}{file}", status_word(record.status))
}

/// `once`, `2 times`.
fn times(count: usize) -> String {
    match count {
        1 => "once".to_string(),
        count => format!("{count} times"),
    }
}

fn status_word(status: ActionStatus) -> &'static str {
    match status {
        ActionStatus::Done => "done",
        ActionStatus::Failed => "failed",
        ActionStatus::TimedOut => "timed out",
        ActionStatus::Busy => "busy (its command still ran)",
    }
}

/// Per kind and status, the on-threshold actions that did not succeed, with the first's error.
fn shortfalls(name: &str, actions: &RunActions) -> Vec<String> {
    let mut counts: BTreeMap<(&str, &str), (usize, Option<&str>)> = BTreeMap::new();
    for record in actions.firings.iter().flat_map(|f| &f.actions) {
        if record.status == ActionStatus::Done {
            continue;
        }
        let entry = counts
            .entry((record.kind.name(), status_word(record.status)))
            .or_insert((0, record.error.as_deref()));
        entry.0 += 1;
    }
    counts
        .into_iter()
        .map(|((kind, status), (count, error))| {
            let why = error
                .map(|e| format!(" (first: {})", visible(e)))
                .unwrap_or_default();
            format!(
                "{name}: --on-threshold {kind} {status} {}{why}",
                times(count)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::Series;
    use rtsoak_record::action::ActionKind;
    use rtsoak_record::result::actions::{FiredSample, Firing};

    fn record(kind: ActionKind, status: ActionStatus) -> ActionRecord {
        ActionRecord {
            kind,
            started_at: "2026-12-05T12:00:00Z".into(),
            at_ns: Some(2_000_000),
            delay_ns: Some(85_000),
            duration_ns: 1_000,
            status,
            pid: None,
            exit_code: None,
            exit_signal: None,
            file: None,
            truncated: false,
            error: None,
        }
    }

    fn firing(actions: Vec<ActionRecord>) -> Firing {
        Firing {
            sample: FiredSample {
                series: Series::Delivery,
                transport: "futex".into(),
                latency_ns: 123_400,
                seq: 812,
                at_ns: 1_800_000,
                observed_at_ns: 1_923_400,
            },
            actions,
        }
    }

    #[test]
    fn a_run_says_how_often_it_fired_on_what_and_how_its_first_actions_went() {
        let mut exec = record(ActionKind::Exec, ActionStatus::Done);
        exec.exit_code = Some(0);
        let mut late = record(ActionKind::Exec, ActionStatus::TimedOut);
        late.error = Some("still running\x1b[2J".into());
        let actions = RunActions {
            crossed: 40,
            missed: 0,
            firings: vec![
                firing(vec![record(ActionKind::Continue, ActionStatus::Done), exec]),
                firing(vec![record(ActionKind::Continue, ActionStatus::Done), late]),
            ],
        };
        let lines = run_lines("futex", &actions, 100_000);
        assert_eq!(
            lines[0],
            "futex: --on-threshold fired 2 times (40 samples over 100.0 us, 0 missed); first: \
             delivery 123.4 us (message 812, 0.002 s in): continue began 0.09 ms after it: done, \
             exec began 0.09 ms after it: done (exit 0)"
        );
        assert_eq!(
            lines[1],
            "futex: --on-threshold exec timed out once (first: still running\\x1b[2J)"
        );
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn a_run_that_never_crossed_says_nothing_and_one_that_could_not_fire_says_so() {
        assert!(run_lines("futex", &RunActions::default(), 1_000).is_empty());
        let crossed = RunActions {
            crossed: 3,
            ..RunActions::default()
        };
        assert_eq!(
            run_lines("futex", &crossed, 1_000),
            ["futex: --on-threshold: 3 samples over 1.0 us, none fired"]
        );
    }

    #[test]
    fn an_on_end_action_says_how_it_ended() {
        let mut trace = record(ActionKind::Trace, ActionStatus::Done);
        trace.file = Some("trace-end-1.txt".into());
        assert_eq!(
            end_lines(&[trace]),
            ["--on-end: trace done to trace-end-1.txt"]
        );
    }
}
