//! The `clients` document as Markdown: the summary table, the real clients' runs, then per
//! adapter a table of findings and a table of canaries with the witness and the server's
//! outcome, and the tools listed to some clients only.

use super::human::{outcome_line, policy_line, stale_lines, which_way};
use super::model::{ClientFinding, ClientsReport, RenderStatus};
use crate::writers::markdown as md;
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
    out.push_str(&md::table(
        &["Adapter", "Rejected", "Fail", "Warn", "Info", "Ambiguous", "Drifting", "Canaries"],
        &rows,
    ));
    if !report.real_clients.is_empty() {
        out.push_str("\n### Real clients\n\n");
        let rows: Vec<Vec<String>> = report
            .real_clients
            .iter()
            .map(|r| {
                let what = match &r.status {
                    CaptureStatus::NotInstalled { install_hint } => install_hint.clone(),
                    CaptureStatus::WrongVersion { found, install_hint, .. } => format!(
                        "--pin runs only {}, found {}; {install_hint}",
                        r.pinned_version,
                        found.as_deref().unwrap_or("an unknown version")
                    ),
                    CaptureStatus::Broken { reason, .. } => reason.clone(),
                    _ => r.listing_failure.as_ref().map_or_else(String::new, |f| {
                        format!("lost the whole listing: {}", f.reason)
                    }),
                };
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
                    md::text(&what),
                ]
            })
            .collect();
        out.push_str(&md::table(
            &["Client", "Status", "Version", "Time", "Listed", "Shown", "Handshake", "Notes"],
            &rows,
        ));
    }
    for adapter in &report.adapters {
        let _ = write!(out, "\n### {}\n\n", md::code_span(adapter.as_str()));
        let (canaries, rules): (Vec<&ClientFinding>, Vec<&ClientFinding>) =
            report.findings().filter(|f| f.adapter == *adapter).partition(|f| f.canary.is_some());
        if rules.is_empty() {
            out.push_str("No findings.\n");
        } else {
            let rows: Vec<Vec<String>> = rules
                .iter()
                .map(|f| {
                    vec![
                        tool_cell(f),
                        md::code_span(f.rule),
                        severity_label(f),
                        md::code_span(&f.pointer),
                        md::text(&f.detail),
                        md::text(f.fix),
                    ]
                })
                .collect();
            out.push_str(&md::table(
                &["Tool", "Rule", "Severity", "Pointer", "Detail", "Fix"],
                &rows,
            ));
        }
        if !canaries.is_empty() {
            out.push_str("\nCanaries:\n\n");
            let rows: Vec<Vec<String>> = canaries
                .iter()
                .map(|c| {
                    vec![
                        tool_cell(c),
                        md::text(which_way(c)),
                        md::code_span(
                            &c.canary.as_ref().map(|p| p.witness.to_string()).unwrap_or_default(),
                        ),
                        md::text(&c.detail),
                        md::text(&outcome_line(c)),
                    ]
                })
                .collect();
            out.push_str(&md::table(
                &["Tool", "Direction", "Witness", "Rejected because", "Server outcome"],
                &rows,
            ));
        }
    }
    let partial: Vec<String> = report
        .tools
        .iter()
        .filter_map(|t| {
            let mut missing: Vec<&str> = t
                .adapters
                .iter()
                .filter(|a| a.status == RenderStatus::NotListed)
                .map(|a| a.adapter.as_str())
                .collect();
            if !t.listed_to_mcp_fuzz {
                missing.insert(0, "mcp-fuzz");
            }
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
    let stale = stale_lines(report);
    if !stale.is_empty() {
        out.push_str("\n### Stale baseline entries\n\n");
        for line in stale {
            let _ = writeln!(out, "- {}", md::text(&line));
        }
    }
    out
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
