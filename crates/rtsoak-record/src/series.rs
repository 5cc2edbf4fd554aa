//! The latency series a worker records, by name, and [`SeriesKey`], the key of every series map
//! in a result: an RT worker's series or a queue-noise worker's. The names are the keys of a
//! result's `series` maps and the `series` label of every export.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

impl std::fmt::Display for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A series as a result keys it: one of the RT pair's, or one of the queue noise's (every noise
/// worker of a role merged). It is written as its name (`delivery`, `noise_send_call`) and read
/// back only from one of those names.
///
/// It orders, compares and hashes as its name, so a map keyed by it keeps the alphabetical
/// order results have always had, and a name finds its key (`Borrow<str>`).
#[derive(Debug, Clone, Copy)]
pub enum SeriesKey {
    /// A series of the RT publisher or the RT subscriber.
    Rt(Series),
    /// A series of the noise publishers or the noise subscribers.
    Noise(Series),
}

impl SeriesKey {
    /// Every key there is, RT first (the names a result may hold).
    pub const ALL: [SeriesKey; 16] = {
        let series = [Series::PUBLISHER, Series::SUBSCRIBER];
        let mut all = [SeriesKey::Rt(Series::SendCall); 16];
        let mut i = 0;
        while i < 8 {
            let one = series[i / 4][i % 4];
            all[i] = SeriesKey::Rt(one);
            all[i + 8] = SeriesKey::Noise(one);
            i += 1;
        }
        all
    };

    /// The name in results and exports: the series' own for the RT pair; `noise_` and the
    /// series' for the noise, except a noise subscriber's two deliveries, which have always
    /// been `noise_own_delivery` (`delivery`) and `noise_delivery` (`other_delivery`).
    pub const fn name(self) -> &'static str {
        match self {
            SeriesKey::Rt(series) => series.name(),
            SeriesKey::Noise(series) => match series {
                Series::SendCall => "noise_send_call",
                Series::Fanout => "noise_fanout",
                Series::Timer => "noise_timer",
                Series::MemberRefresh => "noise_member_refresh",
                Series::Delivery => "noise_own_delivery",
                Series::OtherDelivery => "noise_delivery",
                Series::OwnWake => "noise_own_wake",
                Series::Handling => "noise_handling",
            },
        }
    }

    /// Whether a result keeps this series' histograms at full precision (three significant
    /// digits): the RT pair's headline figures, `send_call`, `delivery`, `timer` and
    /// `own_wake`. The diagnostic series (fan-out, member refresh, other deliveries, handling
    /// and every noise series) are stored at two, within 1 %, so that long results stay small;
    /// their summaries are taken before, from three.
    pub const fn is_headline(self) -> bool {
        matches!(
            self,
            SeriesKey::Rt(Series::SendCall | Series::Delivery | Series::Timer | Series::OwnWake)
        )
    }

    /// The key named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<SeriesKey> {
        Self::ALL.into_iter().find(|key| key.name() == name)
    }
}

impl From<Series> for SeriesKey {
    fn from(series: Series) -> Self {
        SeriesKey::Rt(series)
    }
}

impl PartialEq for SeriesKey {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for SeriesKey {}

impl Ord for SeriesKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for SeriesKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hash for SeriesKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl Borrow<str> for SeriesKey {
    fn borrow(&self) -> &str {
        self.name()
    }
}

impl std::fmt::Display for SeriesKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for SeriesKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for SeriesKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        SeriesKey::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown series `{name}`: this rtsoak knows {}; a result written by a newer \
                 rtsoak needs that version to read it",
                known_names()
            ))
        })
    }
}

fn known_names() -> String {
    let names: Vec<&str> = SeriesKey::ALL.iter().map(|key| key.name()).collect();
    names.join(", ")
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

    #[test]
    fn every_key_has_a_name_of_its_own() {
        let mut names: Vec<&str> = SeriesKey::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SeriesKey::ALL.len());
    }

    #[test]
    fn a_key_is_written_and_read_as_its_name() {
        for key in SeriesKey::ALL {
            let json = serde_json::to_string(&key).unwrap();
            assert_eq!(json, format!("\"{}\"", key.name()));
            assert_eq!(serde_json::from_str::<SeriesKey>(&json).unwrap(), key);
        }
        let noise = SeriesKey::Noise(Series::OtherDelivery);
        assert_eq!(noise.name(), "noise_delivery");
        assert_eq!(
            SeriesKey::Noise(Series::Delivery).name(),
            "noise_own_delivery"
        );
    }

    #[test]
    fn a_map_keyed_by_series_keeps_the_alphabetical_order_of_the_names() {
        let map: std::collections::BTreeMap<SeriesKey, ()> =
            SeriesKey::ALL.into_iter().map(|k| (k, ())).collect();
        let json = serde_json::to_string(&map).unwrap();
        let by_name: std::collections::BTreeMap<&str, ()> =
            SeriesKey::ALL.into_iter().map(|k| (k.name(), ())).collect();
        assert_eq!(json, serde_json::to_string(&by_name).unwrap());
        assert!(map.contains_key("send_call"));
    }

    #[test]
    fn an_unknown_name_is_an_error_that_names_it() {
        let error =
            serde_json::from_str::<std::collections::BTreeMap<SeriesKey, u8>>(r#"{"jitter": 1}"#)
                .unwrap_err();
        assert!(
            error.to_string().contains("unknown series `jitter`"),
            "{error}"
        );
    }
}
