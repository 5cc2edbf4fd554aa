//! A campaign document for people: its A/B/A table (for a bench campaign, exactly `bench
//! compare`'s: parent A, the child, parent B, the change against the parents' midpoint, the
//! drop-first change, the drift, the largest CV, the verdict), every boot with what became of
//! it, each point's boot-to-boot spread, the fingerprint, where the machine was left, and the
//! verdict with why; as terminal text, GitHub Markdown, and JUnit XML (a test case per row, one
//! for the campaign), and the document's JSON. Pure functions of the document.

use std::fmt::Write;

use rtsoak_analysis::bench::compare::{Comparison, Gates, Verdict};
use rtsoak_analysis::campaign::doc::CampaignDoc;
use rtsoak_analysis::campaign::fingerprint::Difference;
use rtsoak_analysis::campaign::judge::{BootResult, Reason};
use rtsoak_analysis::campaign::judge_bench::{BenchRow, RowReason as BenchReason};
use rtsoak_analysis::campaign::judge_soak::{Rate, RowReason as SoakReason, SoakRow};
use rtsoak_analysis::campaign::sequence::{Column, Role};
use rtsoak_analysis::campaign::state::{Fact, LeftIn, Measurement, Outcome, Phase};
use rtsoak_record::serde_id;

use super::comparison::Table;
use super::escape::terminal;

/// The document as `campaign.json` holds it: indented JSON with a trailing newline (every
/// boot's whole result is inside; `campaign report --format json` prints the same bytes), with
/// nothing a terminal acts on raw in it: the boots' results are foreign text.
pub fn render_json(doc: &CampaignDoc) -> Vec<u8> {
    let mut text =
        super::escape::pretty_json(doc).expect("a campaign document always serializes to JSON");
    text.push('\n');
    text.into_bytes()
}

/// The terminal view.
pub fn render(doc: &CampaignDoc) -> String {
    let mut out = String::new();
    for line in title(doc) {
        let _ = writeln!(out, "{}", terminal(&line));
    }
    super::details::lay_out(&mut out, &boots_table(doc));
    let notes = notes(doc);
    if !notes.is_empty() {
        let _ = writeln!(out);
        for line in &notes {
            let _ = writeln!(out, "{}", terminal(line));
        }
    }
    let _ = writeln!(out);
    if doc.judgement.bench.is_empty() {
        super::details::lay_out(&mut out, &soak_table(doc));
        for (row, reason) in soak_reasons(doc) {
            let _ = writeln!(out, "  {}: {}", terminal(&row), terminal(&reason));
        }
        let _ = writeln!(out, "verdict: {}", doc.judgement.verdict.name());
    } else {
        let labels: Vec<String> = columns_with_boots(doc)
            .into_iter()
            .map(|c| column_label(doc, c))
            .collect();
        let rows: Vec<(String, Comparison)> =
            doc.judgement.bench.iter().filter_map(shown_row).collect();
        out.push_str(&super::bench::render_comparison(
            &bench_name(doc),
            &labels,
            &rows,
            &gates(doc),
            doc.judgement.verdict.name(),
        ));
    }
    for reason in reasons(doc) {
        let _ = writeln!(out, "  {}", terminal(&reason));
    }
    for row in doc
        .judgement
        .bench
        .iter()
        .filter(|r| r.comparison.is_none())
    {
        for reason in bench_reasons(row) {
            let _ = writeln!(out, "  {}: {}", terminal(&row.series), terminal(&reason));
        }
    }
    out
}

/// The same as GitHub Markdown.
pub fn render_markdown(doc: &CampaignDoc) -> String {
    use super::escape::markdown as escape;
    use super::markdown::{bullets, table};
    let mut out = String::new();
    let title = title(doc);
    let _ = writeln!(out, "## {}", escape(&title[0]));
    bullets(&mut out, &title[1..]);
    if doc.judgement.bench.is_empty() {
        table(&mut out, &soak_table(doc));
    } else {
        table(&mut out, &bench_table(doc));
    }
    table(&mut out, &boots_table(doc));
    bullets(&mut out, &notes(doc));
    let _ = writeln!(
        out,
        "\n**Verdict: {}**",
        escape(doc.judgement.verdict.name())
    );
    let mut why = reasons(doc);
    why.extend(
        soak_reasons(doc)
            .into_iter()
            .map(|(r, w)| format!("{r}: {w}")),
    );
    for row in &doc.judgement.bench {
        why.extend(
            bench_reasons(row)
                .into_iter()
                .map(|w| format!("{}: {w}", row.series)),
        );
    }
    bullets(&mut out, &why);
    out
}

/// JUnit XML: one test case per row (failure on a regression, skipped when inconclusive) and
/// one for the campaign itself (skipped, with why, when it cannot make a claim).
pub fn render_junit(doc: &CampaignDoc) -> String {
    use super::escape::{xml_attr as attr, xml_text as text};
    let mut cases: Vec<(String, Verdict, Vec<String>)> = Vec::new();
    cases.push(("campaign".into(), campaign_case_verdict(doc), reasons(doc)));
    for row in &doc.judgement.bench {
        let mut why: Vec<String> = row
            .comparison
            .as_ref()
            .map_or(Vec::new(), |c| c.reasons.clone());
        why.extend(bench_reasons(row));
        cases.push((row.series.clone(), row.verdict, why));
    }
    for row in &doc.judgement.soak {
        let why = row.reasons.iter().map(soak_reason_words).collect();
        cases.push((soak_row_name(row), row.verdict, why));
    }
    let failures = cases.iter().filter(|c| c.1 == Verdict::Regression).count();
    let skipped = cases
        .iter()
        .filter(|c| c.1 == Verdict::Inconclusive)
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rtsoak campaign\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"rtsoak.campaign.{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" timestamp=\"{}\">",
        attr(&doc.campaign_id),
        cases.len(),
        attr(doc.started_at.trim_end_matches('Z'))
    );
    for (name, verdict, why) in &cases {
        let message = attr(&why.join("; "));
        let _ = write!(
            out,
            "    <testcase classname=\"rtsoak.campaign\" name=\"{}\">",
            attr(name)
        );
        match verdict {
            Verdict::Regression => {
                let _ = write!(out, "<failure message=\"{message}\" type=\"regression\"/>");
            }
            Verdict::Inconclusive => {
                let _ = write!(out, "<skipped message=\"{message}\"/>");
            }
            Verdict::Improvement | Verdict::NoChange => {}
        }
        let _ = writeln!(
            out,
            "<system-out>{}</system-out></testcase>",
            text(&format!("{}: {}", verdict.name(), why.join("\n")))
        );
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn campaign_case_verdict(doc: &CampaignDoc) -> Verdict {
    if doc.judgement.reasons.is_empty() {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}

/// The first lines: what was compared, how, and where the campaign is.
fn title(doc: &CampaignDoc) -> Vec<String> {
    let plan = &doc.plan;
    let accel = doc
        .accel
        .map_or(String::new(), |a| format!(", {}", a.name()));
    let order: Vec<&str> = plan.order.iter().map(|r| r.name()).collect();
    let mut lines = vec![format!(
        "campaign {} ({}{accel}): rtsoak {}",
        doc.campaign_id,
        doc.driver.name(),
        plan.command.join(" ")
    )];
    if let Some(description) = &plan.description {
        lines.push(rtsoak_record::text::quote(description));
    }
    lines.push(format!(
        "order {} with {} boot(s) per step; parent = {}, child = {}",
        order.join(" "),
        plan.boots_per_step,
        point_label(doc, Role::Parent),
        point_label(doc, Role::Child)
    ));
    lines.push(match &doc.phase {
        Phase::Booting { seq } => {
            format!("under way: planned boot {} of {}", seq + 1, doc.boots.len())
        }
        Phase::Returning { .. } => "under way: returning to the kernel it started in".into(),
        Phase::Finished { why, left_in, .. } => {
            format!("ended ({}): {}", serde_id(why), left_in_words(doc, left_in))
        }
    });
    lines
}

/// `6.1-rt [6.1.0-50-rt-amd64]`: a point's label and the release it booted (or must boot).
fn point_label(doc: &CampaignDoc, role: Role) -> String {
    let release = doc
        .boots
        .iter()
        .filter(|b| b.slot.role == role)
        .flat_map(|b| &b.attempts)
        .find_map(|a| a.reached.as_ref().map(|r| r.facts.release.clone()))
        .or_else(|| doc.targets.get(&role).and_then(|t| t.release.clone()))
        .unwrap_or_else(|| "release unknown".into());
    format!("{} [{release}]", doc.plan.label(role))
}

fn column_label(doc: &CampaignDoc, column: Column) -> String {
    let role = if column == Column::Child {
        Role::Child
    } else {
        Role::Parent
    };
    point_label(doc, role)
}

/// The A/B/A table's columns the campaign has a boot in: parent A, the child, parent B, in order.
fn columns_with_boots(doc: &CampaignDoc) -> Vec<Column> {
    [Column::ParentA, Column::Child, Column::ParentB]
        .into_iter()
        .filter(|&column| doc.boots.iter().any(|b| b.slot.column == column))
        .collect()
}

fn bench_name(doc: &CampaignDoc) -> String {
    doc.plan.command.get(1).cloned().unwrap_or_default()
}

fn gates(doc: &CampaignDoc) -> Gates {
    Gates {
        signal_pct: doc.plan.judge.signal_pct,
        drift_pct: doc.plan.judge.drift_pct,
        cv_pct: doc.plan.judge.cv_pct,
    }
}

/// A row as `bench compare` prints it: the row's verdict, its reasons after the arithmetic's;
/// none for a row without a comparison (its reasons are printed with the verdict).
fn shown_row(row: &BenchRow) -> Option<(String, Comparison)> {
    let mut comparison = row.comparison.clone()?;
    comparison.verdict = row.verdict;
    comparison.reasons.extend(bench_reasons(row));
    Some((row.series.clone(), comparison))
}

/// The bench rows as a table (Markdown), with `bench compare`'s columns.
fn bench_table(doc: &CampaignDoc) -> Table {
    let mut header: Vec<String> = vec!["series".into()];
    let columns = columns_with_boots(doc);
    header.extend(columns.iter().map(|c| column_label(doc, *c)));
    header.extend(["vs midpoint", "drop-first", "drift", "max CV", "verdict"].map(String::from));
    let rows = doc
        .judgement
        .bench
        .iter()
        .map(|row| {
            let mut cells = vec![row.series.clone()];
            match &row.comparison {
                Some(c) => {
                    cells.extend(c.means_ns_per_op.iter().map(|m| format!("{m:.3}")));
                    cells.push(format!("{:+.3}%", c.change_pct));
                    cells.push(format!("{:+.3}%", c.change_drop_first_pct));
                    cells.push(c.drift_pct.map_or("n/a".into(), |d| format!("{d:+.3}%")));
                    cells.push(format!("{:.3}%", c.max_cv_pct));
                }
                None => cells.extend((0..columns.len() + 4).map(|_| "-".to_string())),
            }
            cells.push(row.verdict.name().into());
            cells
        })
        .collect();
    let g = gates(doc);
    Table {
        heading: format!(
            "ns per operation; gates fixed in advance: signal {:.3}%, drift {:.3}%, CV {:.3}% (each boot's rounds)",
            g.signal_pct, g.drift_pct, g.cv_pct
        ),
        header,
        rows,
    }
}

/// The soak rows: over-threshold samples per million per column, the tests, the verdict.
fn soak_table(doc: &CampaignDoc) -> Table {
    let per_million = |rate: &Rate| {
        format!(
            "{:.1} ({}/{})",
            rate.per_million(),
            rate.over_threshold,
            rate.samples
        )
    };
    let rows = doc
        .judgement
        .soak
        .iter()
        .map(|row| {
            vec![
                soak_row_name(row),
                per_million(&row.parent_a),
                per_million(&row.child),
                row.parent_b.as_ref().map_or("-".into(), per_million),
                format!("{:.2e}", row.p_higher),
                format!("{:.2e}", row.p_lower),
                row.drift_p.map_or("-".into(), |p| format!("{p:.2e}")),
                row.verdict.name().into(),
            ]
        })
        .collect();
    let j = &doc.plan.judge;
    Table {
        heading: format!(
            "over-threshold samples per million (count/samples), every boot of a column added; \
             exact rate tests at alpha {}, minimum effect {}x and {} per million",
            j.alpha, j.min_rate_ratio, j.min_rate_change_per_million
        ),
        header: [
            "transport series",
            "parent A",
            "child",
            "parent B",
            "p higher",
            "p lower",
            "drift p",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

fn soak_row_name(row: &SoakRow) -> String {
    let setup = row
        .ring_setup
        .map_or(String::new(), |s| format!(" ({})", s.name()));
    format!("{}{setup} {}", row.transport, row.series)
}

/// Every planned boot: its point, step, kernel, tries, how it settled, what became of it.
fn boots_table(doc: &CampaignDoc) -> Table {
    let rows = doc
        .boots
        .iter()
        .map(|boot| {
            let last = boot.attempts.last();
            let reached = last.and_then(|a| a.reached.as_ref());
            let settled = last
                .and_then(|a| a.measurement.as_ref())
                .map_or("-".into(), |m| {
                    format!(
                        "{}{:.1}% idle after {:.0} s",
                        m.settled
                            .systemd
                            .as_ref()
                            .map_or(String::new(), |s| format!("{s}, ")),
                        m.settled.idle_percent,
                        m.settled.waited_s
                    )
                });
            let outcome = last.map_or("not booted".to_string(), |a| match &a.outcome {
                Some(outcome) => outcome_words(doc, outcome, a.measurement.as_ref()),
                None => "under way".into(),
            });
            vec![
                format!("{} {}", boot.slot.seq, doc.plan.label(boot.slot.role)),
                column_word(boot.slot.column).into(),
                reached.map_or("-".into(), |r| r.facts.release.clone()),
                boot.attempts.len().to_string(),
                settled,
                figure(doc, boot.slot.seq, boot.result.as_ref()),
                outcome,
            ]
        })
        .collect();
    Table {
        heading: "boots (figure: the first series' mean ns/op, or the soak's verdict)".into(),
        header: [
            "boot", "as", "kernel", "tries", "settled", "figure", "outcome",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

fn column_word(column: Column) -> &'static str {
    match column {
        Column::ParentA => "parent A",
        Column::Child => "child",
        Column::ParentB => "parent B",
        Column::ParentMiddle => "parent (range)",
    }
}

/// A boot's figure: its mean ns/op of the first series as the judgement took it, or its
/// soak's verdict.
fn figure(doc: &CampaignDoc, seq: usize, result: Option<&BootResult>) -> String {
    match result {
        None => "-".into(),
        Some(BootResult::Bench(_)) => doc
            .judgement
            .bench
            .first()
            .and_then(|row| row.boots.iter().find(|b| b.seq == seq))
            .map_or("-".into(), |b| format!("{:.3}", b.mean_ns_per_op)),
        Some(BootResult::Soak(result)) => result
            .verdict
            .as_ref()
            .map_or("-".into(), |v| v.status.word().to_ascii_lowercase()),
    }
}

/// What became of a try, in words.
fn outcome_words(
    doc: &CampaignDoc,
    outcome: &Outcome,
    measurement: Option<&Measurement>,
) -> String {
    match outcome {
        Outcome::Measured => "measured".into(),
        Outcome::CommandFailed => {
            let how = measurement.map_or(String::new(), |m| match (m.exit_code, m.signal) {
                (Some(code), _) => format!(" (exit {code})"),
                (None, Some(signal)) => format!(" (signal {signal})"),
                _ => String::new(),
            });
            format!("the command saved no result{how}")
        }
        Outcome::WrongKernel { mismatches } => {
            let facts: Vec<String> = mismatches
                .iter()
                .map(|m| match m.fact {
                    Fact::Cmdline => format!("the command line lacks {}", m.expected),
                    Fact::Token => format!("token {} (meant {})", m.found, m.expected),
                    Fact::Release => format!("release {} (meant {})", m.found, m.expected),
                    Fact::BuildId => format!("build id {} (meant {})", m.found, m.expected),
                })
                .collect();
            format!("wrong kernel: {}", facts.join("; "))
        }
        Outcome::FellBack { after_s, found } => format!(
            "fell back to {} after {after_s} s (not the boot loaded: a panic, a watchdog or a reset)",
            found.release
        ),
        Outcome::DeadlineMissed { after_s } => format!(
            "no result within the {} s deadline ({after_s} s)",
            doc.plan.deadline_s
        ),
        Outcome::LostBoot { .. } => "the boot ended before its result was saved".into(),
        Outcome::SettleTimeout => format!("did not settle within {} s", doc.plan.settle.timeout_s),
        Outcome::LoadFailed { message, .. } => format!("not loaded: {message}"),
        Outcome::Interrupted => "interrupted (the campaign was stopped)".into(),
        Outcome::NoReport { after_s } => format!(
            "the guest ended after {after_s} s without reporting (a panic, or its init failed)"
        ),
    }
}

fn left_in_words(doc: &CampaignDoc, left_in: &LeftIn) -> String {
    match left_in {
        LeftIn::Start => format!(
            "the machine is back in the kernel it started in ({})",
            doc.start.facts.release
        ),
        LeftIn::LastBoot => "the machine was left in its last boot".into(),
        LeftIn::Reboot => "the machine rebooted through its firmware".into(),
        LeftIn::NotStart { found } => format!(
            "meant to return to {}, the machine is in {} instead",
            doc.start.facts.release, found.release
        ),
    }
}

/// The lines between the boots and the verdict: spread, fingerprint.
fn notes(doc: &CampaignDoc) -> Vec<String> {
    let mut lines = Vec::new();
    for row in &doc.judgement.bench {
        for spread in &row.spread {
            let label = doc.plan.label(spread.role);
            lines.push(match spread.boot_cv_pct {
                Some(cv) => format!(
                    "{} {label}: {} boots, {:.3}-{:.3} ns/op, spread {:.2}%, boot-to-boot CV {cv:.2}%",
                    row.series,
                    spread.boots,
                    spread.min_ns_per_op,
                    spread.max_ns_per_op,
                    spread.spread_pct,
                ),
                None => format!(
                    "{} {label}: 1 boot, {:.3} ns/op (no spread to show)",
                    row.series, spread.min_ns_per_op
                ),
            });
        }
    }
    let varied = &doc.judgement.varied_parameters;
    let except = if varied.is_empty() {
        String::new()
    } else {
        format!(" (apart from {}, which the plan varies)", varied.join(", "))
    };
    if doc.judgement.fingerprint_differences.is_empty() {
        lines.push(format!(
            "host fingerprint: the same on every measured boot{except}"
        ));
    } else {
        lines.push(format!("host fingerprint DIFFERS between boots{except}:"));
        lines.extend(
            doc.judgement
                .fingerprint_differences
                .iter()
                .map(difference_words),
        );
    }
    lines
}

fn difference_words(d: &Difference) -> String {
    format!(
        "  {}: boot {} has {:?}, boot {} {:?}",
        d.field.name(),
        d.boot,
        d.value,
        d.reference_boot,
        d.reference
    )
}

/// Why the campaign as a whole makes no claim.
fn reasons(doc: &CampaignDoc) -> Vec<String> {
    doc.judgement
        .reasons
        .iter()
        .map(|reason| match reason {
            Reason::BootsMissing { seqs } => format!(
                "planned boot(s) {} saved no result (see the boots above)",
                boot_list(seqs)
            ),
            Reason::ColumnMissing { column } => {
                format!("no boot of {} measured", column_word(*column))
            }
            Reason::FingerprintDiffers => {
                "the host fingerprint differs between boots (above): the points are not comparable"
                    .into()
            }
            Reason::Emulated => {
                "the guests ran under TCG, qemu's emulator: their timings mean nothing".into()
            }
            Reason::WrongResult { seq } => {
                format!("boot {seq} saved the result of another command than the plan's")
            }
            Reason::ConfigDiffers { reference_seq, seq } => {
                format!("boots {reference_seq} and {seq} ran the bench with different settings")
            }
        })
        .collect()
}

/// Boot numbers as a list: `2, 5`.
fn boot_list(seqs: &[usize]) -> String {
    let seqs: Vec<String> = seqs.iter().map(usize::to_string).collect();
    seqs.join(", ")
}

fn bench_reasons(row: &BenchRow) -> Vec<String> {
    row.reasons
        .iter()
        .map(|r| bench_reason_words(row, r))
        .collect()
}

fn bench_reason_words(row: &BenchRow, reason: &BenchReason) -> String {
    match reason {
        BenchReason::BootCv { seq, cv_pct } => {
            format!("boot {seq}'s rounds have a CV of {cv_pct:.3}%, beyond the CV gate")
        }
        BenchReason::SeriesMissing { seq } => format!("boot {seq} has no series {}", row.series),
        BenchReason::NotCompared => {
            "not compared: a column the plan has (parent A, the child, parent B) measured nothing"
                .into()
        }
        BenchReason::WithinParentsRange => {
            let parent = row.spread.iter().find(|s| s.role == Role::Parent);
            format!(
                "the child does not lie beyond the parents' boot-to-boot range{}: no claim",
                parent.map_or(String::new(), |p| format!(
                    " ({:.3}-{:.3} ns/op)",
                    p.min_ns_per_op, p.max_ns_per_op
                ))
            )
        }
    }
}

fn soak_reasons(doc: &CampaignDoc) -> Vec<(String, String)> {
    doc.judgement
        .soak
        .iter()
        .flat_map(|row| {
            row.reasons
                .iter()
                .map(move |r| (soak_row_name(row), soak_reason_words(r)))
        })
        .collect()
}

fn soak_reason_words(reason: &SoakReason) -> String {
    match reason {
        SoakReason::NotMeasured { seq } => format!("not measured on boot {seq}"),
        SoakReason::ParentFailed { seq } => {
            format!("parent boot {seq} lost messages or failed: no claim")
        }
        SoakReason::ChildFailed { seqs } => format!(
            "the child lost messages or failed on boot(s) {}",
            boot_list(seqs)
        ),
        SoakReason::ThresholdsDiffer => "boots ran with different thresholds".into(),
        SoakReason::ParentsDiffer { p_value } => {
            format!("parent A and parent B differ (p = {p_value:.2e}): the parents drifted")
        }
        SoakReason::WithinParentsRange => {
            "a child boot lies within the parents' boot-to-boot range: no claim".into()
        }
    }
}
