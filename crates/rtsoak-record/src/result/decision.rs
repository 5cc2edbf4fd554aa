//! The record of what a comparison decides, as a result holds it: per series the transports
//! ranked by their over-threshold rate, which do not differ from the fewest and which have
//! significantly more, each claim with its p-value, and each explained transport's main cause.
//! `rtsoak_analysis::judge::decision` makes it.

use serde::{Deserialize, Serialize};

use super::cause::Cause;
use crate::{RingSetup, Series};

/// What a comparison decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The threshold the spikes are counted over, ns.
    pub threshold_ns: u64,
    /// The significance level of every claim.
    pub alpha: f64,
    /// Per series (`send_call`, `delivery`), the transports ranked and what differs.
    pub series: Vec<SeriesDecision>,
    /// Per explained transport, the main cause of its spikes.
    pub causes: Vec<MainCause>,
}

/// One series' ranking and the claims it supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesDecision {
    /// `send_call` or `delivery`.
    pub series: Series,
    /// Every measured transport with samples of the series, fewest spikes first.
    pub ranking: Vec<Rate>,
    /// The fewest spikes, and those that do not differ from it significantly, by label.
    pub fewest: Vec<String>,
    /// Pairs significantly different: `lower` has fewer than `higher`.
    pub significant: Vec<Claim>,
    /// Pairs not significantly different: each of `fewest` against the first of them.
    pub not_significant: Vec<Claim>,
    /// The decision in one sentence, as the build that saved the result worded the fields
    /// above, for readers of the JSON. rtsoak never reads it back: its views word the fields
    /// again. None until the report words it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence: Option<String>,
}

/// One transport's over-threshold rate in a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Registry name.
    pub transport: String,
    /// Its ring setup, in a ring-setup comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<RingSetup>,
    /// How tables name it.
    pub label: String,
    /// Samples over the threshold.
    pub over_threshold: u64,
    /// Samples.
    pub count: u64,
    /// Over-threshold samples per million.
    pub per_million: f64,
    /// Its exact 95 % interval, per million.
    pub low_per_million: f64,
    /// ...
    pub high_per_million: f64,
}

/// Two transports' rates compared: `lower` has the lower rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The lower rate's label.
    pub lower: String,
    /// The higher rate's label.
    pub higher: String,
    /// Two-sided p-value of the exact test that the two rates differ.
    pub p_value: f64,
}

/// What held an explained transport's RT tasks back most often.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MainCause {
    /// How tables name the transport.
    pub label: String,
    /// The series with the most spikes (`send_call` or `delivery`).
    pub series: Series,
    /// Its spikes over the threshold, and how many were kept (and so could be explained).
    pub over_threshold: u64,
    /// ...
    pub kept: u64,
    /// The main cause; none where the unexplained spikes are the larger share.
    pub cause: Option<Cause>,
    /// Its share of the kept spikes, percent.
    pub share_percent: f64,
    /// The median time it held the RT task back within a spike, us (none for `unexplained`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_us: Option<u64>,
    /// The line version 2 wrote for it, kept as it was (its earliest builds wrote the median
    /// only there); none from version 3, whose report words the fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence: Option<String>,
}
