//! Histograms as text in results: HdrHistogram's V2 format, DEFLATE-compressed, base64 (the
//! same "compressed histogram" the HdrHistogram interval log uses), so any HdrHistogram
//! implementation can decode them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Encode a histogram as base64 of its V2+DEFLATE serialization.
pub fn encode_histogram(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut bytes)
        .expect("serializing into memory cannot fail");
    STANDARD.encode(bytes)
}

/// Decode what [`encode_histogram`] wrote (or raw V2 bytes in base64).
pub fn decode_histogram(text: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|e| anyhow::anyhow!("histogram is not valid base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("histogram does not decode as HdrHistogram V2: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn a_histogram_survives_encoding() {
        let mut histogram = new_histogram();
        for value in [1_000, 2_000, 2_000, 150_000, 9_000_000] {
            histogram.record(value).unwrap();
        }
        let decoded = decode_histogram(&encode_histogram(&histogram)).unwrap();
        assert_eq!(decoded.len(), 5);
        assert_eq!(decoded.max(), histogram.max());
        assert_eq!(
            decoded.value_at_quantile(0.5),
            histogram.value_at_quantile(0.5)
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode_histogram("not base64 !").is_err());
        assert!(decode_histogram("AAAA").is_err());
    }
}
