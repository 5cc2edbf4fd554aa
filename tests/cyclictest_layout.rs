//! The cyclictest export against the real thing: the `cyclictest -h` output of the rt-tests
//! package installed here (`.ci/run` installs it), made by running cyclictest for a moment, and
//! the export of a real rtsoak run must have the same layout line for line: the same line
//! kinds in the same order, the same field widths and the same separators (a space after the
//! bucket, TABs between counts, a space before each footer field, an empty last line).

mod common;

use std::process::Command;

use common::{is_root, load, rtsoak, serial, skip};

/// The layout of one line: every run of digits becomes as many `9`s, the fields after the
/// first (a one-character separator before the same number of digits, one or more times)
/// become one field and `…` (so the column count does not matter), and the thread number goes.
fn shape(line: &str) -> String {
    // (the text before a run of digits, the run's length); the text after the last run.
    let mut fields: Vec<(String, usize)> = Vec::new();
    let mut text = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut digits = 1;
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
                digits += 1;
            }
            fields.push((std::mem::take(&mut text), digits));
        } else {
            text.push(c);
        }
    }
    let mut shaped = String::new();
    let mut i = 0;
    while i < fields.len() {
        let (before, digits) = &fields[i];
        let mut repeated = i + 1;
        let column = before == " " || before == "\t";
        while column && repeated < fields.len() && fields[repeated] == fields[i] {
            repeated += 1;
        }
        shaped.push_str(before);
        shaped.push_str(&"9".repeat(*digits));
        if column {
            shaped.push('…');
        }
        i = repeated;
    }
    shaped.push_str(&text);
    if let Some(rest) = shaped.strip_prefix("# Thread ") {
        shaped = format!("# Thread N{}", rest.trim_start_matches('9'));
    }
    shaped
}

/// The layout of a whole file from its `# Histogram` line on: the shape of each line, runs of
/// one shape kept once. `# Thread` lines are checked against cyclictest's format on their own
/// (a thread with overflows lists them, one without does not) and kept as one kind.
fn layout(text: &str) -> Vec<String> {
    let thread_line = |line: &str| {
        let Some(rest) = line.strip_prefix("# Thread ") else {
            return false;
        };
        let (number, cycles) = rest.split_once(':').unwrap();
        assert!(number.chars().all(|c| c.is_ascii_digit()), "{line:?}");
        let (listed, others) = match cycles.split_once(" # ") {
            Some((listed, others)) => (listed, Some(others)),
            None => (cycles, None),
        };
        assert!(
            listed.is_empty() || listed.split(' ').skip(1).all(|c| c.len() >= 5),
            "cycles are ' %05lu': {line:?}"
        );
        if let Some(others) = others {
            let count = others.strip_suffix(" others").expect("' # %05lu others'");
            assert_eq!(count.len(), 5, "{line:?}");
        }
        true
    };
    let mut shapes: Vec<String> = Vec::new();
    for line in text.lines().skip_while(|l| *l != "# Histogram") {
        let shaped = if thread_line(line) {
            "# Thread N:…".to_string()
        } else {
            shape(line)
        };
        if shapes.last() != Some(&shaped) {
            shapes.push(shaped);
        }
    }
    assert!(text.ends_with("\n\n"), "an empty last line");
    shapes
}

#[test]
fn the_shape_of_a_line_keeps_separators_and_widths_but_not_values() {
    let row = shape("000012 000345\t000000\t000001");
    assert_eq!(row, "999999 999999…\t999999…");
    assert_eq!(
        row,
        shape("000012 000345\t000000"),
        "the column count does not matter"
    );
    assert_ne!(
        row,
        shape("000012\t000345\t000000"),
        "the separator after the bucket does"
    );
    assert_ne!(
        row,
        shape("000012 00345\t000000"),
        "nor does a field's width"
    );
    let footer = shape("# Min Latencies: 00032 00065");
    assert_eq!(footer, "# Min Latencies: 99999 99999…");
    assert_eq!(footer, shape("# Min Latencies: 00032 00065 00001"));
    assert_ne!(footer, shape("# Min Latencies:00032 00065"));
    assert_eq!(
        shape("# Thread 12: 00001 # 00003 others"),
        "# Thread N: 99999 # 99999 others"
    );
}

#[test]
fn the_cyclictest_export_has_the_layout_of_the_real_cyclictest() {
    let _serial = serial();
    if !is_root() {
        return skip("cyclictest needs root for its SCHED_FIFO threads");
    }
    let Ok(real) = Command::new("cyclictest")
        .args([
            "-q", "-m", "-t2", "-p80", "-i", "200", "-l", "300", "-h", "30",
        ])
        .output()
    else {
        return skip("cyclictest not found: install rt-tests (apt-get install rt-tests)");
    };
    assert!(
        real.status.success(),
        "cyclictest failed: {}",
        String::from_utf8_lossy(&real.stderr)
    );
    let real = String::from_utf8(real.stdout).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let run = rtsoak()
        .args([
            "compare",
            "-q",
            "--profile",
            "ci",
            "-t",
            "eventfd,futex-syscall",
        ])
        .args(["--duration", "1s", "--export", "cyclictest", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    common::assert_passed_or_starved(&run, &load(dir.path()));
    let ours = std::fs::read_to_string(dir.path().join("histogram.txt")).unwrap();

    let (real_layout, our_layout) = (layout(&real), layout(&ours));
    assert_eq!(
        our_layout, real_layout,
        "rtsoak's histogram.txt and cyclictest -h differ in layout\n--- cyclictest:\n{real}"
    );
    // The counts mean the same: each column's rows add up to its `# Total:`.
    let doc = load(dir.path());
    assert!(!doc.runs.is_empty());
    let total: Vec<u64> = ours.lines().find(|l| l.starts_with("# Total:")).unwrap()
        ["# Total:".len()..]
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let mut sums = vec![0u64; total.len()];
    for row in ours
        .lines()
        .skip_while(|l| *l != "# Histogram")
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
    {
        for (sum, count) in sums.iter_mut().zip(row.split_whitespace().skip(1)) {
            *sum += count.parse::<u64>().unwrap();
        }
    }
    assert_eq!(sums, total);
}
