//! The `clients` document as Markdown: the summary table, then per adapter a table of findings
//! and a table of canaries with the witness and the server's outcome.

use super::human::{outcome_line, policy_line, stale_lines, which_way};
use super::model::{ClientFinding, ClientsReport};
use crate::writers::markdown as md;
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
