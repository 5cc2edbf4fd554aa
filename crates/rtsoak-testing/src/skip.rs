//! The one way a check says it was skipped.

/// Say why a check is skipped, so a skip is never silent; in CI (`RTSOAK_CI` set, as `.ci/run`
/// does) fail instead, since CI is where every check must run.
pub fn skip(reason: &str) {
    assert!(
        std::env::var_os("RTSOAK_CI").is_none(),
        "a check CI must run was skipped: {reason}"
    );
    eprintln!("SKIPPED: {reason}");
}
