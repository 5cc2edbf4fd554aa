//! Long runs, accelerated: at the shortest allowed period (50 us) a 30 s run sends 15 times
//! the messages of a 2 s one; the RT workers' peak memory must not grow with them. The figures
//! are printed for the record; the assertion is only "flat", never a latency.

mod common;

use common::saved_run;

fn peak_rss_bytes(duration: &str) -> (Vec<u64>, u64, usize) {
    let (dir, doc) = saved_run(&[
        "run",
        "-q",
        "--transport",
        "futex",
        "--profile",
        "ci",
        "--no-noise",
        "--period",
        "50us",
        "--interval",
        "1s",
        "--duration",
        duration,
    ]);
    let run = &doc.runs[0];
    let size = std::fs::metadata(dir.path().join("result.json"))
        .unwrap()
        .len() as usize;
    let peaks = run
        .workers
        .iter()
        .map(|w| w.hygiene.peak_rss_bytes)
        .collect();
    (peaks, run.integrity.sent, size)
}

#[test]
fn rt_worker_memory_stays_flat_over_fifteen_times_the_messages_at_the_shortest_period() {
    let (short, short_sent, short_size) = peak_rss_bytes("2s");
    let (long, long_sent, long_size) = peak_rss_bytes("30s");
    eprintln!(
        "peak RSS (publisher, subscriber): {short:?} bytes after {short_sent} messages, \
         {long:?} bytes after {long_sent} messages; result {short_size} vs {long_size} bytes"
    );
    assert!(long_sent > 5 * short_sent, "{long_sent} vs {short_sent}");
    assert_eq!(short.len(), 2);
    for (s, l) in short.iter().zip(&long) {
        assert!(*l <= s + 512 * 1024, "peak RSS grew from {s} to {l} bytes");
    }
}
