//! One transport's figures as test cases, named `<transport>[.<ring setup>].<figure>` and
//! `<transport>.<series>.<figure>`: the integrity counts, then per judged series the
//! over-threshold rate, the percentiles and the longest sample. A figure fails where the verdict
//! failed it: the limit that judges that very figure was breached (`longest` by
//! `verdict.max_delivery_us`, `over-threshold` by `verdict.max_over_threshold[_per_million]`,
//! `missed-periods` by `verdict.max_missed_periods`), a message was lost, the transport failed,
//! the run did not complete. A figure no limit judges (the percentiles) passes with its value.
//! An unsupported transport's figures are skipped, and so is `messages` where the verdict is
//! inconclusive for this transport.

use super::{Case, Measurement, Outcome};
use crate::text::{is_about, us};
use rtsoak_analysis::merge::TransportRuns;
use rtsoak_record::result::verdict::Limit;
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Series, SeriesKey};

/// The series whose figures are reported: the two the verdict judges.
const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// What the verdict says of one transport's figures.
struct Judged<'a> {
    doc: &'a ResultDoc,
    t: &'a TransportRuns<'a>,
}

impl Judged<'_> {
    /// True if the verdict breached one of `limits` for this transport (and `series`, if any).
    fn breached(&self, limits: &[Limit], series: Option<Series>) -> bool {
        let Some(verdict) = &self.doc.verdict else {
            return false;
        };
        verdict.breaches.iter().any(|b| {
            limits.contains(&b.what)
                && is_about(self.t, &b.transport, b.ring_setup)
                && (series.is_none() || b.series == series)
        })
    }

    /// True if a reason the verdict is inconclusive is about this transport.
    fn inconclusive(&self) -> bool {
        self.doc.verdict.as_ref().is_some_and(|v| {
            v.inconclusive
                .iter()
                .any(|i| is_about(self.t, &i.transport, i.ring_setup))
        })
    }

    /// `failed` as a result: skip for an unsupported transport.
    fn outcome(&self, failed: bool) -> Outcome {
        match (self.t.status == RunStatus::Unsupported, failed) {
            (true, _) => Outcome::Skip,
            (false, true) => Outcome::Fail,
            (false, false) => Outcome::Pass,
        }
    }
}

/// The test cases of transport `t`'s figures.
pub(super) fn cases(doc: &ResultDoc, t: &TransportRuns<'_>) -> Vec<Case> {
    let judged = Judged { doc, t };
    let prefix = match t.ring_setup {
        Some(setup) => format!("{}.{}", t.transport, setup.name()),
        None => t.transport.to_string(),
    };
    let case = |figure: &str, outcome, value: String, units| {
        Case::new(
            &format!("{prefix}.{figure}"),
            outcome,
            Some(Measurement { value, units }),
        )
    };
    let i = &t.integrity;
    let messages = match judged.outcome(t.status != RunStatus::Completed) {
        Outcome::Pass if judged.inconclusive() => Outcome::Skip,
        outcome => outcome,
    };
    let missed = judged.breached(&[Limit::MaxMissedPeriods], None);
    let failures = i.transport_failures();
    let mut out = vec![
        case("messages", messages, i.sent.to_string(), "messages"),
        case(
            "missed-periods",
            judged.outcome(missed),
            i.missed_periods.to_string(),
            "periods",
        ),
        case(
            "lost",
            judged.outcome(i.lost > 0),
            i.lost.to_string(),
            "messages",
        ),
        case(
            "transport-errors",
            judged.outcome(!failures.is_empty()),
            i.transport_errors().to_string(),
            "errors",
        ),
    ];
    for series in SERIES {
        out.extend(series_cases(&judged, series, &prefix));
    }
    out
}

/// The figures of one judged series, where the transport recorded it: the over-threshold
/// rate, the percentiles where the histograms decoded, and the longest sample.
fn series_cases(judged: &Judged<'_>, series: Series, prefix: &str) -> Vec<Case> {
    let Some(merged) = judged.t.series.get(&SeriesKey::Rt(series)) else {
        return Vec::new();
    };
    let name = series.name();
    let s = &merged.summary;
    let longest_limit = match series {
        Series::SendCall => Limit::MaxSendCall,
        _ => Limit::MaxDelivery,
    };
    let rate_limits = [Limit::MaxOverThreshold, Limit::MaxOverThresholdPerMillion];
    let case = |figure: &str, failed: bool, value: String, units| {
        Case::new(
            &format!("{prefix}.{name}.{figure}"),
            judged.outcome(failed),
            Some(Measurement { value, units }),
        )
    };
    let mut out = vec![case(
        "over-threshold",
        judged.breached(&rate_limits, Some(series)),
        format!("{:.1}", s.over_threshold_per_million()),
        "per-million",
    )];
    if merged.percentiles_known() {
        for (figure, ns) in [
            ("p99", s.p99_ns),
            ("p99_9", s.p99_9_ns),
            ("p99_99", s.p99_99_ns),
        ] {
            out.push(case(figure, false, us(ns), "us"));
        }
    }
    out.push(case(
        "longest",
        judged.breached(&[longest_limit], Some(series)),
        us(s.max_ns),
        "us",
    ));
    out
}
