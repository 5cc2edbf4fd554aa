//! Every rendering rtsoak prints or writes: pure functions from a document to text or bytes, so
//! every format is produced from the saved data alone (never from a second measurement) and
//! snapshot-tested without I/O. The result formats are below; beside them, `rtsoak probe`'s
//! report ([`probe`]), the microbenchmarks' summaries ([`bench`]), a baseline comparison
//! ([`diff`]) and the lines a scheduled run leaves in the journal ([`journal`]).
//!
//! [`FORMATS`] is the one registry of output formats: `rtsoak report --format`, `--export`, the
//! README and a test all read it. Adding a format is one file here and one line in it. This file
//! is the registry only: what the formats share (units, the reported series) is in [`text`], the
//! terminal view in [`terminal`]. Nothing in this module reads files, the clock or the system.

#![forbid(unsafe_code)]
// A function a reader can hold in their head: at most 100 lines (clippy.toml), product code
// only (`tests/architecture.rs` refuses an `allow` that would let one through).
#![cfg_attr(not(test), deny(clippy::too_many_lines))]

pub mod bench;
mod causes;
mod comparison;
mod cyclictest;
mod details;
pub mod diff;
mod floor;
mod hdr_log;
mod headline;
mod hgrm;
mod identity;
pub mod journal;
pub mod json;
mod junit;
mod kcidb;
pub mod lava;
mod markdown;
pub mod probe;
mod prometheus;
mod tail;
pub mod terminal;
mod text;
pub mod textfile;
pub mod verdict_text;

use rtsoak_record::result::ResultDoc;

/// One output format.
pub struct Format {
    /// Name on the command line (`--format NAME`).
    pub name: &'static str,
    /// File name when written into a result directory.
    pub file_name: &'static str,
    /// One line for `--help` and the README.
    pub about: &'static str,
    /// The renderer.
    pub render: fn(&ResultDoc) -> Vec<u8>,
}

/// Every output format, in the order the README lists them.
pub const FORMATS: &[Format] = &[
    Format {
        name: "table",
        file_name: "table.txt",
        about: "the headline view for a terminal: one table, the decision, the verdict, the top caveats (what `run` and `compare` print)",
        render: |doc| headline::render(doc).into_bytes(),
    },
    Format {
        name: "details",
        file_name: "details.txt",
        about: "every other table for a terminal: integrity, each series, rate tests, causes, rounds, legend, every caveat (what `--details` adds)",
        render: |doc| details::render(doc).into_bytes(),
    },
    Format {
        name: "markdown",
        file_name: "table.md",
        about: "the headline view and the details as GitHub Markdown",
        render: |doc| markdown::render(doc).into_bytes(),
    },
    Format {
        name: "json",
        file_name: "result.json",
        about: "the result document itself (docs/result-schema.md)",
        render: json::render,
    },
    Format {
        name: "hdr-log",
        file_name: "intervals.hlog",
        about: "HdrHistogram interval log, one tag per transport and series, for the HdrHistogram tools",
        render: |doc| hdr_log::render(doc).into_bytes(),
    },
    Format {
        name: "hgrm",
        file_name: "percentiles.hgrm",
        about: "HdrHistogram percentile distribution per transport and series, values in us",
        render: |doc| hgrm::render(doc).into_bytes(),
    },
    Format {
        name: "cyclictest",
        file_name: "histogram.txt",
        about: "cyclictest `# Histogram` file: 1 us buckets, one column per transport and series",
        render: |doc| cyclictest::render(doc).into_bytes(),
    },
    Format {
        name: "junit",
        file_name: "junit.xml",
        about: "JUnit XML for Jenkins and GitLab: a testcase per transport and check (run, lost messages, transport errors, verdict), figures as properties",
        render: |doc| junit::render(doc).into_bytes(),
    },
    Format {
        name: "kcidb",
        file_name: "kcidb.json",
        about: "KCIDB I/O v4.5 for KernelCI: a test per transport and series, path rtsoak.<transport>.<series>, the kernel and board as its environment",
        render: kcidb::render,
    },
    Format {
        name: "lava",
        file_name: "lava-test-cases.sh",
        about: "LAVA: a `lava-test-case NAME --result R --measurement V --units U` line per transport and figure, then the verdict; run where `lava-test-case` is on PATH",
        render: |doc| lava::render(doc).into_bytes(),
    },
    Format {
        name: "prometheus",
        file_name: "rtsoak.prom",
        about: "Prometheus text format for the node_exporter textfile collector",
        render: |doc| prometheus::render(doc).into_bytes(),
    },
];

/// The format called `name`.
pub fn by_name(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.name == name)
}

/// Every format name, in registry order.
pub fn names() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_are_unique_and_so_are_their_file_names() {
        let mut names = names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FORMATS.len());
        let mut files: Vec<&str> = FORMATS.iter().map(|f| f.file_name).collect();
        files.sort();
        files.dedup();
        assert_eq!(files.len(), FORMATS.len());
    }

    #[test]
    fn the_readme_documents_every_format() {
        let readme = include_str!("../../../README.md");
        for format in FORMATS {
            assert!(
                readme.contains(&format!("| `{}` |", format.name)),
                "README.md has no row for the `{}` format",
                format.name
            );
        }
    }

    #[test]
    fn every_format_renders_the_fixture_to_something() {
        let doc = rtsoak_testing::fixture::two_round_doc();
        for format in FORMATS {
            assert!(!(format.render)(&doc).is_empty(), "{}", format.name);
        }
    }
}
