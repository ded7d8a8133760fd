//! The `clients` document as Markdown: the summary table, the real clients' runs, then per
//! adapter a table of findings and a table of canaries with the witness and the server's
//! outcome, and the tools listed to some clients only.

use super::human::{not_listed_to, outcome_line, policy_line, stale_lines, which_way};
use super::model::{ClientFinding, ClientsReport, RealClientRun};
use crate::writers::markdown as md;
use mcp_fuzz_clients::AnyAdapter;
use mcp_fuzz_clients::real::CaptureStatus;
use std::fmt::Write as _;

/// The Markdown document, ending in a newline.
#[must_use]
pub fn render(report: &ClientsReport) -> String {
    let mut out = format!(
        "## mcp-fuzz clients: {}\n\n**Verdict: {}**: {}\n\n",
        md::code_span(report.source.trim_matches('`')),
        super::verdict_name(report.verdict),
        md::text(&policy_line(report))
    );
    out.push_str(&summary_table(report));
    if !report.real_clients.is_empty() {
        out.push_str("\n### Real clients\n\n");
        out.push_str(&real_clients_table(&report.real_clients));
    }
    for adapter in &report.adapters {
        adapter_section(&mut out, report, adapter);
    }
    listed_to_some_section(&mut out, report);
    stale_section(&mut out, report);
    out
}

/// One row per adapter: the tools it rejects and its findings by severity.
fn summary_table(report: &ClientsReport) -> String {
    let rows: Vec<Vec<String>> = report
        .summary
        .iter()
        .map(|row| {
            vec![
                md::code_span(row.adapter.as_str()),
                format!("{}/{}", row.rejected, row.tools),
                row.fail.to_string(),
                row.warn.to_string(),
                row.info.to_string(),
                row.ambiguous.to_string(),
                row.drifting.to_string(),
                row.canaries.to_string(),
            ]
        })
        .collect();
    md::table(
        &["Adapter", "Rejected", "Fail", "Warn", "Info", "Ambiguous", "Drifting", "Canaries"],
        &rows,
    )
}

/// One row per real client asked for: whether it ran, which version, how long, what it listed
/// and showed, its handshake, and what went wrong.
fn real_clients_table(runs: &[RealClientRun]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                md::code_span(r.adapter.as_str()),
                r.status_name().to_owned(),
                r.version.as_deref().map_or_else(|| "?".to_owned(), md::code_span),
                format!("{:.1} s", r.elapsed_ms as f64 / 1000.0),
                r.listed.map_or_else(|| "?".to_owned(), |n| n.to_string()),
                r.exposed.to_string(),
                r.handshake.as_ref().map_or_else(String::new, |h| {
                    md::text(&format!(
                        "{} {}",
                        h.protocol_version.as_deref().unwrap_or("?"),
                        h.capabilities
                    ))
                }),
                md::text(&real_client_note(r)),
            ]
        })
        .collect();
    md::table(
        &["Client", "Status", "Version", "Time", "Listed", "Shown", "Handshake", "Notes"],
        &rows,
    )
}

/// Why a real client did not run, or what it lost: the Notes cell.
fn real_client_note(r: &RealClientRun) -> String {
    match &r.status {
        CaptureStatus::NotInstalled { install_hint } => install_hint.clone(),
        CaptureStatus::WrongVersion { found, install_hint, .. } => format!(
            "--pin runs only {}, found {}; {install_hint}",
            r.pinned_version,
            found.as_deref().unwrap_or("an unknown version")
        ),
        CaptureStatus::Broken { reason, .. } => reason.clone(),
        _ => r
            .listing_failure
            .as_ref()
            .map_or_else(String::new, |f| format!("lost the whole listing: {}", f.reason)),
    }
}

/// One adapter's heading, its rule findings (or that there are none), then its canaries.
fn adapter_section(out: &mut String, report: &ClientsReport, adapter: &AnyAdapter) {
    let _ = write!(out, "\n### {}\n\n", md::code_span(adapter.as_str()));
    let (canaries, rules): (Vec<&ClientFinding>, Vec<&ClientFinding>) =
        report.findings().filter(|f| f.adapter == *adapter).partition(|f| f.canary.is_some());
    if rules.is_empty() {
        out.push_str("No findings.\n");
    } else {
        out.push_str(&findings_table(&rules));
    }
    if !canaries.is_empty() {
        out.push_str("\nCanaries:\n\n");
        out.push_str(&canaries_table(&canaries));
    }
}

/// One row per rule finding: where, which rule, how bad, what and the fix.
fn findings_table(rules: &[&ClientFinding]) -> String {
    table_of(rules, &["Tool", "Rule", "Severity", "Pointer", "Detail", "Fix"], |f| {
        vec![
            tool_cell(f),
            md::code_span(f.rule),
            severity_label(f),
            md::code_span(&f.pointer),
            md::text(&f.detail),
            md::text(f.fix),
        ]
    })
}

/// One row per canary: the witness, why the client rejects it and what the server did with it.
fn canaries_table(canaries: &[&ClientFinding]) -> String {
    let head = ["Tool", "Direction", "Witness", "Rejected because", "Server outcome"];
    table_of(canaries, &head, |c| {
        let witness = c.canary.as_ref().map(|p| p.witness.to_string()).unwrap_or_default();
        vec![
            tool_cell(c),
            md::text(which_way(c)),
            md::code_span(&witness),
            md::text(&c.detail),
            md::text(&outcome_line(c)),
        ]
    })
}

/// A table of findings with the columns `head`, one row of `cells` per finding.
fn table_of(
    findings: &[&ClientFinding],
    head: &[&str],
    cells: impl Fn(&ClientFinding) -> Vec<String>,
) -> String {
    let rows: Vec<Vec<String>> = findings.iter().map(|f| cells(f)).collect();
    md::table(head, &rows)
}

/// The tools the server listed to some handshakes only, with those it did not list them to.
fn listed_to_some_section(out: &mut String, report: &ClientsReport) {
    let partial: Vec<String> = report
        .tools
        .iter()
        .filter_map(|t| {
            let missing = not_listed_to(t);
            (!missing.is_empty()).then(|| {
                format!("- {}: not listed to {}", md::code_span(&t.name), missing.join(", "))
            })
        })
        .collect();
    if !partial.is_empty() {
        out.push_str("\n### Tools listed to some clients only\n\n");
        for line in partial {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// The baseline entries that no longer occur.
fn stale_section(out: &mut String, report: &ClientsReport) {
    let stale = stale_lines(report);
    if !stale.is_empty() {
        out.push_str("\n### Stale baseline entries\n\n");
        for line in stale {
            let _ = writeln!(out, "- {}", md::text(&line));
        }
    }
}

/// The severity with its qualifiers: `warn (ambiguous)`, `fail (baselined)`.
#[must_use]
pub fn severity_label(f: &ClientFinding) -> String {
    let mut s = f.severity.as_str().to_owned();
    if f.ambiguous {
        s.push_str(" (ambiguous)");
    }
    if f.baselined {
        s.push_str(" (baselined)");
    }
    s
}

fn tool_cell(f: &ClientFinding) -> String {
    f.tool.as_deref().map_or_else(|| "(listing)".to_owned(), md::code_span)
}
