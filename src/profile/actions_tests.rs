use super::*;
use crate::profile::parse;

const THRESHOLD_NS: u64 = 100_000;

fn resolved(profile: &str, ov: &Overrides) -> Result<ActionPlan, String> {
    let profile = parse("x", profile).map_err(|e| e.to_string())?;
    resolve_actions(&profile.actions, ov, THRESHOLD_NS).map_err(|e| e.to_string())
}

#[test]
fn no_action_is_an_empty_plan_whatever_the_defaults() {
    assert_eq!(
        resolved("", &Overrides::default()),
        Ok(ActionPlan::default())
    );
}

#[test]
fn the_keys_resolve_with_their_defaults_the_threshold_delivery_first_only_and_10_s() {
    let plan = resolved(
        "[actions]\non_threshold = [\"continue\"]\non_end = [\"exec=/bin/true\"]\n",
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(plan.on_threshold, vec![Action::Continue]);
    assert_eq!(plan.on_end.len(), 1);
    assert_eq!(plan.limit_ns, THRESHOLD_NS);
    assert_eq!(plan.series, vec![Series::Delivery]);
    assert_eq!(plan.every_ns, None);
    assert_eq!(plan.timeout_ns, 10_000_000_000);
}

#[test]
fn the_flags_win_over_the_keys() {
    let profile = "[actions]\non_threshold = [\"trace\"]\nlimit_us = 300\nevery_ms = 5\n\
                   series = [\"delivery\"]\n";
    let ov = Overrides {
        on_threshold: vec![Action::Continue],
        on_threshold_limit_ns: Some(2_000),
        on_threshold_every_ns: Some(50_000_000),
        on_threshold_series: Some(vec![Series::SendCall, Series::Delivery, Series::SendCall]),
        ..Overrides::default()
    };
    let plan = resolved(profile, &ov).unwrap();
    assert_eq!(plan.on_threshold, vec![Action::Continue]);
    assert_eq!(plan.limit_ns, 2_000);
    assert_eq!(plan.every_ns, Some(50_000_000));
    assert_eq!(plan.series, vec![Series::SendCall, Series::Delivery]);
    let plan = resolved(profile, &Overrides::default()).unwrap();
    assert_eq!((plan.limit_ns, plan.every_ns), (300_000, Some(5_000_000)));
}

#[test]
fn a_badly_spelled_action_in_a_profile_names_the_key_and_the_forms() {
    let error = resolved(
        "[actions]\non_end = [\"signal=USR1\"]\n",
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(error.contains("actions.on_end"), "{error}");
    assert!(error.contains("\"signal=USR1\""), "{error}");
    assert!(error.contains("pid=PID"), "{error}");
}

#[test]
fn an_option_without_an_action_to_apply_to_is_refused() {
    for (profile, key) in [
        ("[actions]\nlimit_us = 5\n", "actions.limit_us"),
        ("[actions]\nevery_ms = 5\n", "actions.every_ms"),
        ("[actions]\nseries = [\"send_call\"]\n", "actions.series"),
        (
            "[actions]\non_end = [\"trace\"]\nlimit_us = 5\n",
            "actions.limit_us",
        ),
        (
            "[actions]\non_threshold = [\"trace\"]\ntimeout_s = 5\n",
            "actions.timeout_s",
        ),
    ] {
        let error = resolved(profile, &Overrides::default()).unwrap_err();
        assert!(error.contains(key), "{profile}: {error}");
        assert!(error.contains("action for it to"), "{error}");
    }
    let ov = Overrides {
        on_threshold_limit_ns: Some(5_000),
        ..Overrides::default()
    };
    let error = resolved("", &ov).unwrap_err();
    assert!(error.contains("--on-threshold ACTION"), "{error}");
}

#[test]
fn out_of_range_options_and_series_no_action_watches_are_refused_with_the_range() {
    for (profile, says) in [
        ("limit_us = 0", "1..=10000000 (microseconds)"),
        ("every_ms = 0", "1..=3600000 (milliseconds)"),
        ("series = [\"timer\"]", "`delivery`, `send_call` or both"),
        ("series = []", "`delivery`, `send_call` or both"),
    ] {
        let text = format!("[actions]\non_threshold = [\"continue\"]\n{profile}\n");
        let error = resolved(&text, &Overrides::default()).unwrap_err();
        assert!(error.contains(says), "{profile}: {error}");
    }
    let ov = Overrides {
        on_threshold: vec![Action::Continue],
        on_threshold_every_ns: Some(10_000),
        ..Overrides::default()
    };
    let error = resolved("", &ov).unwrap_err();
    assert!(error.contains("(from the command line)"), "{error}");
    assert!(parse_series("fanout").unwrap_err().contains("send-call"));
    assert_eq!(parse_series("send-call"), Ok(Series::SendCall));
}

#[test]
fn an_unknown_key_of_the_section_is_refused_naming_it() {
    let error = resolved(
        "[actions]\non_treshold = [\"trace\"]\n",
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(error.contains("on_treshold"), "{error}");
}
