//! What the plan says about the exports rendered from its result: the KCIDB origin, the name
//! KernelCI knows the submitting CI system by. It is part of the plan, so that `rtsoak report
//! --format kcidb` renders a saved result with the origin it was run with.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How the exports of this invocation name it (`[export]`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExportPlan {
    /// The KCIDB origin of the `kcidb` export's objects and ids (results written before it
    /// existed read as `rtsoak`, which they used).
    #[serde(default)]
    pub kcidb_origin: KcidbOrigin,
}

/// A KCIDB origin: lower-case ASCII letters, digits and `_`, at least one, as the KCIDB I/O
/// schema's `origin` pattern `^[a-z0-9_]+$` asks (every id starts with it and a `:`). A result
/// whose origin breaks the pattern does not load: the document it would give is refused by
/// KCIDB.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct KcidbOrigin(String);

/// The origin where none is configured: the tool's name.
pub const DEFAULT_KCIDB_ORIGIN: &str = "rtsoak";

/// What an origin may hold, for the messages that refuse one.
pub const KCIDB_ORIGIN_SYNTAX: &str = "the name your KCIDB submissions are made under, in \
     lower-case letters, digits and `_` only (KCIDB's pattern ^[a-z0-9_]+$), for example `my_lab`";

/// What is wrong with an origin, and what to give instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a KCIDB origin: give {}", KCIDB_ORIGIN_SYNTAX)]
pub struct KcidbOriginError {
    /// The text given, as given.
    pub given: String,
}

impl KcidbOrigin {
    /// `text` as an origin, if KCIDB takes it as one.
    pub fn new(text: &str) -> Result<Self, KcidbOriginError> {
        let valid = !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if valid {
            Ok(KcidbOrigin(text.to_string()))
        } else {
            Err(KcidbOriginError {
                given: text.to_string(),
            })
        }
    }

    /// The origin as KCIDB spells it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for KcidbOrigin {
    fn default() -> Self {
        KcidbOrigin(DEFAULT_KCIDB_ORIGIN.to_string())
    }
}

impl TryFrom<String> for KcidbOrigin {
    type Error = KcidbOriginError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        KcidbOrigin::new(&text)
    }
}

impl From<KcidbOrigin> for String {
    fn from(origin: KcidbOrigin) -> Self {
        origin.0
    }
}

impl std::str::FromStr for KcidbOrigin {
    type Err = KcidbOriginError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        KcidbOrigin::new(text)
    }
}

impl fmt::Display for KcidbOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_what_kcidbs_pattern_takes_and_nothing_else() {
        for good in ["rtsoak", "my_lab", "lab2", "_", "0"] {
            assert_eq!(KcidbOrigin::new(good).unwrap().as_str(), good);
        }
        for bad in ["", "My_Lab", "my-lab", "my lab", "lab:1", "läb", "lab\n"] {
            let error = KcidbOrigin::new(bad).unwrap_err();
            assert_eq!(error.given, bad);
            assert!(error.to_string().contains("^[a-z0-9_]+$"), "{error}");
        }
    }

    #[test]
    fn a_result_without_an_origin_reads_as_rtsoak_and_a_bad_one_does_not_load() {
        let plan: ExportPlan = serde_json::from_str("{}").unwrap();
        assert_eq!(plan.kcidb_origin.as_str(), DEFAULT_KCIDB_ORIGIN);
        let plan: ExportPlan = serde_json::from_str(r#"{"kcidb_origin": "my_lab"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&plan).unwrap(),
            r#"{"kcidb_origin":"my_lab"}"#
        );
        let error = serde_json::from_str::<ExportPlan>(r#"{"kcidb_origin": "My-Lab"}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("`My-Lab` is not a KCIDB origin"), "{error}");
    }
}
