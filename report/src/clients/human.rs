//! The `clients` human summary: one table, then per tool the findings that matter and the
//! canaries, the listing's findings, stale baseline entries and the verdict.

use super::model::{CanaryOutcome, ClientFinding, ClientsReport, NOT_CALLED, NOT_SENDABLE};
use mcp_fuzz_clients::Severity;
use mcp_fuzz_clients::canary::Direction;
use std::fmt::Write as _;

/// The summary, ending in a newline.
#[must_use]
pub fn render(report: &ClientsReport) -> String {
    let mut s = String::new();
    let tools = report.tools.len();
    let _ = writeln!(
        s,
        "mcp-fuzz clients {}: {} ({tools} tool{})\n",
        report.tool_version,
        report.source,
        if tools == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        s,
        "{:<17} {:>9} {:>5} {:>5} {:>5} {:>9} {:>9} {:>8}",
        "ADAPTER", "REJECTED", "FAIL", "WARN", "INFO", "AMBIGUOUS", "DRIFTING", "CANARIES"
    );
    for row in &report.summary {
        let _ = writeln!(
            s,
            "{:<17} {:>9} {:>5} {:>5} {:>5} {:>9} {:>9} {:>8}",
            row.adapter.as_str(),
            format!("{}/{}", row.rejected, row.tools),
            row.fail.to_string(),
            row.warn.to_string(),
            row.info.to_string(),
            row.ambiguous.to_string(),
            row.drifting.to_string(),
            row.canaries.to_string(),
        );
    }
    for tool in &report.tools {
        let mut lines = String::new();
        for a in &tool.adapters {
            let adapter = a.adapter.as_str();
            for f in &a.findings {
                if f.severity == Severity::Info || f.ambiguous {
                    continue;
                }
                let _ = writeln!(
                    lines,
                    "  [{}{}] {adapter}: {} at {}: {}\n         fix: {}",
                    f.severity.as_str(),
                    if f.baselined { ", baselined" } else { "" },
                    f.rule,
                    f.pointer,
                    f.detail,
                    f.fix
                );
            }
            for c in &a.canaries {
                let Some(part) = &c.canary else { continue };
                let _ = writeln!(
                    lines,
                    "  canary {adapter} ({}): {}\n         {}",
                    which_way(c),
                    part.witness,
                    c.detail
                );
                let sent = match &part.outcome {
                    CanaryOutcome::Skipped { reason } => {
                        reason != NOT_CALLED && reason != NOT_SENDABLE
                    }
                    CanaryOutcome::Called { .. } => true,
                };
                if sent {
                    let _ = writeln!(lines, "         sent to the server: {}", outcome_line(c));
                }
            }
        }
        if !lines.is_empty() {
            let _ = writeln!(s, "\ntool `{}`\n{lines}", tool.name);
        }
    }
    for f in &report.listing_findings {
        let _ = writeln!(s, "{}: {}", f.rule, f.detail);
    }
    let stale = stale_lines(report);
    if !stale.is_empty() {
        let _ = writeln!(
            s,
            "\nstale baseline entries (no longer found; --update-baseline drops them):"
        );
        for line in stale {
            let _ = writeln!(s, "  {line}");
        }
    }
    let _ =
        writeln!(s, "\nVerdict: {} ({})", super::verdict_name(report.verdict), policy_line(report));
    s
}

/// What the server did with a canary, in one line.
#[must_use]
pub fn outcome_line(f: &ClientFinding) -> String {
    match f.canary.as_ref().map(|c| &c.outcome) {
        Some(CanaryOutcome::Called { verdict, outcome }) => {
            format!("{}: {}", super::call_verdict_name(*verdict), outcome.kind())
        }
        Some(CanaryOutcome::Skipped { reason }) => format!("not sent: {reason}"),
        None => "not sent: ".to_owned(),
    }
}

/// Which way a canary cuts, in words.
#[must_use]
pub fn which_way(f: &ClientFinding) -> &'static str {
    if f.canary.as_ref().is_some_and(|c| c.direction == Direction::RenderedAllowsServerRejects) {
        "the model may send, the server refuses"
    } else {
        "the server accepts, the model cannot send"
    }
}

/// The policy sentence shared by the human and Markdown summaries.
#[must_use]
pub fn policy_line(report: &ClientsReport) -> String {
    let mut s = format!(
        "{} finding{} fail --fail-on {}; ambiguous findings never fail",
        report.failures,
        if report.failures == 1 { "" } else { "s" },
        report.fail_on.as_str()
    );
    if let Some(b) = &report.baseline {
        let _ = write!(
            s,
            "; baseline {}: {} known, {} new, {} stale",
            b.file,
            b.known,
            b.new,
            b.stale.len()
        );
    }
    s
}

/// One line per stale baseline entry.
#[must_use]
pub fn stale_lines(report: &ClientsReport) -> Vec<String> {
    report
        .baseline
        .iter()
        .flat_map(|b| &b.stale)
        .map(|id| {
            format!(
                "{} {} at {} of {}",
                id.adapter,
                id.rule,
                id.pointer,
                id.tool.as_ref().map_or_else(|| "the listing".to_owned(), |t| format!("`{t}`"))
            )
        })
        .collect()
}
