//! The latency series a worker records, by name. The names are the keys of a result's
//! `series` maps and the `series` label of every export.

use serde::{Deserialize, Serialize};

/// One latency series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Series {
    /// Publisher: the timed send call that wakes the RT subscriber.
    SendCall,
    /// Publisher: all send calls of one message, fan-out to noise subscribers included.
    Fanout,
    /// Publisher: how late the periodic timer woke it.
    Timer,
    /// Publisher: a wake-target refresh after a membership change, outside the send call.
    MemberRefresh,
    /// RT subscriber: publish to observation of the RT publisher's messages.
    Delivery,
    /// RT subscriber: the same for noise publishers' messages.
    OtherDelivery,
    /// RT subscriber: publish to the arrival of the RT publisher's own wake.
    OwnWake,
    /// RT subscriber: wakeup to the end of its handling (drain and re-arm).
    Handling,
}

impl Series {
    /// The publisher's series, in the order of its report (interval frames index into it).
    pub const PUBLISHER: [Series; 4] = [
        Series::SendCall,
        Series::Fanout,
        Series::Timer,
        Series::MemberRefresh,
    ];
    /// The subscriber's series, in the order of its report.
    pub const SUBSCRIBER: [Series; 4] = [
        Series::Delivery,
        Series::OtherDelivery,
        Series::OwnWake,
        Series::Handling,
    ];
    /// The series every export writes, in their order.
    pub const REPORTED: [Series; 7] = [
        Series::SendCall,
        Series::Delivery,
        Series::Timer,
        Series::Fanout,
        Series::OwnWake,
        Series::Handling,
        Series::MemberRefresh,
    ];

    /// The name in results and exports (`send_call`).
    pub const fn name(self) -> &'static str {
        match self {
            Series::SendCall => "send_call",
            Series::Fanout => "fanout",
            Series::Timer => "timer",
            Series::MemberRefresh => "member_refresh",
            Series::Delivery => "delivery",
            Series::OtherDelivery => "other_delivery",
            Series::OwnWake => "own_wake",
            Series::Handling => "handling",
        }
    }
}

/// The names of `series`, in order (for tables of names built at compile time).
pub const fn series_names<const N: usize>(series: [Series; N]) -> [&'static str; N] {
    let mut names = [""; N];
    let mut i = 0;
    while i < N {
        names[i] = series[i].name();
        i += 1;
    }
    names
}

impl std::fmt::Display for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_spelling() {
        for series in Series::PUBLISHER.into_iter().chain(Series::SUBSCRIBER) {
            let json = serde_json::to_string(&series).unwrap();
            assert_eq!(json, format!("\"{}\"", series.name()));
        }
    }
}
