//! Every rendering rtsoak prints or writes: pure functions from a document to text or bytes, so
//! every format is produced from the saved data alone (never from a second measurement) and
//! snapshot-tested without I/O. The result formats are below; beside them, `rtsoak probe`'s
//! report ([`probe`]), the microbenchmarks' summaries ([`mod@bench`]), a baseline comparison
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

mod actions;
pub mod bench;
mod board;
pub mod campaign;
mod causes;
mod comparison;
mod cpu_wait;
mod cyclictest;
pub mod decision;
mod details;
pub mod diff;
pub mod escape;
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
mod output;
pub mod probe;
mod prometheus;
mod tail;
pub mod terminal;
mod text;
pub mod textfile;
pub mod verdict_text;
pub mod why;

pub use output::{NamedFile, Render};

/// One output format.
pub struct Format {
    /// Name on the command line (`--format NAME`).
    pub name: &'static str,
    /// File name when written into a result directory (a directory's, for a directory format).
    pub file_name: &'static str,
    /// One line for `--help` and the README.
    pub about: &'static str,
    /// The renderer: one file, or a directory of them.
    pub render: Render,
}

/// Every output format, in the order the README lists them.
pub const FORMATS: &[Format] = &[
    Format {
        name: "table",
        file_name: "table.txt",
        about: "the headline view for a terminal: one table, the decision, the verdict, the top caveats (what `run` and `compare` print)",
        render: Render::File(|doc| {
            headline::render(doc, headline::NARROWEST, "rtsoak").into_bytes()
        }),
    },
    Format {
        name: "details",
        file_name: "details.txt",
        about: "every other table for a terminal: integrity, each series, rate tests, causes, rounds, legend, every caveat (what `--details` adds)",
        render: Render::File(|doc| details::render(doc).into_bytes()),
    },
    Format {
        name: "markdown",
        file_name: "table.md",
        about: "the headline view and the details as GitHub Markdown",
        render: Render::File(|doc| markdown::render(doc).into_bytes()),
    },
    Format {
        name: "json",
        file_name: "result.json",
        about: "the result document itself (docs/result-schema.md)",
        render: Render::File(json::render),
    },
    Format {
        name: "hdr-log",
        file_name: "intervals.hlog",
        about: "HdrHistogram interval log, one tag per transport and series, for the HdrHistogram tools",
        render: Render::File(|doc| hdr_log::render(doc).into_bytes()),
    },
    Format {
        name: "hgrm",
        file_name: "hgrm",
        about: "a directory of HdrHistogram percentile distributions, one `.hgrm` file per transport and series (`hgrm/eventfd.delivery.hgrm`), values in us, for HdrHistogram's plotter",
        render: Render::Directory(hgrm::render),
    },
    Format {
        name: "cyclictest",
        file_name: "histogram.txt",
        about: "cyclictest `# Histogram` file: 1 us buckets, one column per transport and series",
        render: Render::File(|doc| cyclictest::render(doc).into_bytes()),
    },
    Format {
        name: "junit",
        file_name: "junit.xml",
        about: "JUnit XML for Jenkins and GitLab: a testcase per transport and check (run, lost messages, transport errors, verdict), figures as properties",
        render: Render::File(|doc| junit::render(doc).into_bytes()),
    },
    Format {
        name: "kcidb",
        file_name: "kcidb.json",
        about: "KCIDB I/O v4.5 for KernelCI: a test per transport and series, path rtsoak.<transport>.<series>, the kernel and board as its environment",
        render: Render::File(kcidb::render),
    },
    Format {
        name: "lava",
        file_name: "lava-test-cases.sh",
        about: "LAVA: a `lava-test-case NAME --result R --measurement V --units U` line per transport and figure, then the caveats, each reason of the verdict as a case after its sentence, and the verdict; replay in a LAVA test shell (inside one, rtsoak prints the signals itself)",
        render: Render::File(|doc| lava::render(doc).into_bytes()),
    },
    Format {
        name: "prometheus",
        file_name: "rtsoak.prom",
        about: "Prometheus text format for the node_exporter textfile collector",
        render: Render::File(|doc| prometheus::render(doc).into_bytes()),
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

    /// What another user could have put in a result: a title change, a screen clear, a
    /// carriage return that hides the line, C1 CSI, a right-to-left override, a character
    /// XML 1.0 forbids, Markdown and XML markup, and a line break before a forgery.
    const HOSTILE: &str =
        "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{9b}31m\u{202e}\u{fffe}|<b>&`x`\nFORGED line";

    /// Nothing in `text` that a terminal acts on (line breaks and the cyclictest file's TABs
    /// are the format's own), and no line that starts with what followed a line break.
    fn assert_inert(what: &str, text: &str) {
        let active: Vec<char> = text
            .chars()
            .filter(|&c| rtsoak_record::text::acts_on(c) && c != '\n' && c != '\t')
            .collect();
        assert!(
            active.is_empty(),
            "{what}: {:?} in\n{text}",
            &active[..active.len().min(8)]
        );
        assert!(
            !text
                .lines()
                .any(|line| line.trim_start().starts_with("FORGED")),
            "{what}: a forged line in\n{text}"
        );
    }

    #[test]
    fn every_format_shows_every_foreign_text_of_a_result_escaped() {
        let mut doc = rtsoak_testing::fixture::two_round_doc();
        doc.decision = Some(crate::decision::worded(
            rtsoak_analysis::judge::decision::decide(&doc),
        ));
        doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
        let doc = rtsoak_testing::fixture::with_foreign_text(&doc, HOSTILE);
        assert!(
            doc.runs[0].transport.ends_with(HOSTILE),
            "labels are foreign too"
        );
        assert!(doc.host.hostname.as_deref().unwrap().ends_with(HOSTILE));
        for format in FORMATS {
            // A directory format's files: each one's name and content, in turn.
            let bytes = match format.render {
                Render::File(render) => render(&doc),
                Render::Directory(render) => render(&doc)
                    .into_iter()
                    .flat_map(|file| [file.name.into_bytes(), b"\n".to_vec(), file.bytes])
                    .flatten()
                    .collect(),
            };
            let text = String::from_utf8(bytes).unwrap();
            if format.name == "junit" {
                // Element text keeps the line breaks a message has: XML's lines are not the
                // report's structure.
                let active = |c: char| rtsoak_record::text::acts_on(c) && c != '\n';
                assert!(!text.chars().any(active), "{text}");
            } else {
                assert_inert(format.name, &text);
            }
        }
        assert_inert("details", &terminal::render(&doc, true, None, "rtsoak"));
        assert_inert("textfile", &textfile::render(&doc));
        for line in journal::transport_lines(&doc)
            .into_iter()
            .chain(journal::verdict_lines(doc.verdict.as_ref().unwrap()))
        {
            assert_inert("journal", &line);
        }
        let diff = rtsoak_analysis::judge::diff(HOSTILE, &doc, &doc, &Default::default());
        assert_inert("diff", &diff::render(&diff));
        assert_inert("diff --markdown", &diff::markdown(&diff));
    }

    #[test]
    fn the_junit_of_a_result_full_of_what_xml_forbids_parses() {
        let doc = rtsoak_testing::fixture::with_foreign_text(
            &rtsoak_testing::fixture::two_round_doc(),
            HOSTILE,
        );
        let xml = junit::render(&doc);
        if let Some(root) = rtsoak_testing::python_check::xml_root(&xml) {
            assert_eq!(root, "testsuites");
        }
    }

    #[test]
    fn every_format_renders_the_fixture_to_something() {
        let doc = rtsoak_testing::fixture::two_round_doc();
        for format in FORMATS {
            let empty = match format.render {
                Render::File(render) => render(&doc).is_empty(),
                Render::Directory(render) => render(&doc).is_empty(),
            };
            assert!(!empty, "{}", format.name);
        }
    }
}
