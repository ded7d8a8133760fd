//! The `clients` human summary: one table, the real clients' runs, then per tool the findings
//! that matter and the canaries, the tools listed to some clients only, the listing's findings,
//! stale baseline entries and the verdict.

use super::model::{
    CanaryOutcome, ClientFinding, ClientsReport, NOT_CALLED, NOT_SENDABLE, RealClientRun,
    RenderStatus, ToolEntry,
};
use mcp_fuzz_clients::canary::Direction;
use mcp_fuzz_clients::real::CaptureStatus;
use mcp_fuzz_clients::{RealRule, Severity};
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
    let width = report.summary.iter().map(|r| r.adapter.as_str().len()).max().unwrap_or(0).max(17);
    let _ = writeln!(
        s,
        "{:<width$} {:>9} {:>5} {:>5} {:>5} {:>9} {:>9} {:>8}",
        "ADAPTER", "REJECTED", "FAIL", "WARN", "INFO", "AMBIGUOUS", "DRIFTING", "CANARIES"
    );
    for row in &report.summary {
        let _ = writeln!(
            s,
            "{:<width$} {:>9} {:>5} {:>5} {:>5} {:>9} {:>9} {:>8}",
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
    if report.summary.iter().any(|r| r.info + r.ambiguous + r.drifting > 0) {
        let _ = writeln!(
            s,
            "(info and ambiguous findings, and drift without a finding, are listed in --format json \
             only)"
        );
    }
    if !report.real_clients.is_empty() {
        real_clients(&mut s, &report.real_clients);
        renamed(&mut s, report);
    }
    for tool in &report.tools {
        let mut lines = String::new();
        for a in &tool.adapters {
            let adapter = a.adapter.as_str();
            for f in &a.findings {
                if f.severity == Severity::Info || f.ambiguous {
                    continue;
                }
                let at =
                    if f.pointer.is_empty() { String::new() } else { format!(" at {}", f.pointer) };
                let _ = writeln!(
                    lines,
                    "  [{}{}] {adapter}: {}{at}: {}\n         fix: {}",
                    f.severity.as_str(),
                    if f.baselined { ", baselined" } else { "" },
                    f.rule,
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
                    CanaryOutcome::Called { .. } | CanaryOutcome::Blocked { .. } => true,
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
    listed_to_some(&mut s, report);
    for f in &report.listing_findings {
        let tool = f.tool.as_ref().map(|t| format!(" (`{t}`)")).unwrap_or_default();
        // A rule another adapter shares (anthropic-strict-api reuses anthropic-strict's) says
        // whose finding it is.
        let adapter = f.adapter.as_str();
        let whose = if f.rule.starts_with(&format!("{adapter}/")) {
            String::new()
        } else {
            format!("{adapter}: ")
        };
        let _ = writeln!(s, "{whose}{}{tool}: {}", f.rule, f.detail);
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

/// The real clients' runs: status, version, time, what was listed and shown, the handshake;
/// then what went wrong with each client that was not captured.
fn real_clients(s: &mut String, runs: &[RealClientRun]) {
    let _ = writeln!(
        s,
        "\n{:<12} {:<13} {:>8} {:>7} {:>6} {:>5}  HANDSHAKE",
        "REAL CLIENT", "STATUS", "VERSION", "TIME", "LISTED", "SHOWN"
    );
    for r in runs {
        let handshake = r.handshake.as_ref().map_or_else(String::new, |h| {
            let caps: Vec<&str> = h
                .capabilities
                .as_object()
                .map(|c| c.keys().map(String::as_str).collect())
                .unwrap_or_default();
            format!(
                "{} {}",
                h.protocol_version.as_deref().unwrap_or("?"),
                if caps.is_empty() { "(no capabilities)".to_owned() } else { caps.join(", ") }
            )
        });
        let served = match r.served {
            super::model::Served::Server => "",
            super::model::Served::Listing => " [stand-in serving the listing]",
        };
        let _ = writeln!(
            s,
            "{:<12} {:<13} {:>8} {:>6.1}s {:>6} {:>5}  {handshake}{served}",
            r.adapter.as_str(),
            r.status_name(),
            r.version.as_deref().unwrap_or("?"),
            r.elapsed_ms as f64 / 1000.0,
            r.listed.map_or_else(|| "?".to_owned(), |n| n.to_string()),
            r.exposed
        );
    }
    for r in runs {
        let pinned = r.pinned_version;
        match &r.status {
            CaptureStatus::Captured => {
                if r.version.as_deref() != Some(pinned) {
                    let _ = writeln!(
                        s,
                        "  {}: version {} is not the pinned {pinned} (what mcp-fuzz's tables and \
                         recordings describe); --pin runs only {pinned}",
                        r.adapter,
                        r.version.as_deref().unwrap_or("unknown")
                    );
                }
                if let Some(f) = &r.listing_failure {
                    let _ = writeln!(
                        s,
                        "  {}: lost the whole listing ({}); culprits: {}",
                        r.adapter,
                        f.reason,
                        if f.culprits.is_empty() {
                            "not found".to_owned()
                        } else {
                            f.culprits
                                .iter()
                                .map(|c| format!("`{c}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    );
                }
            }
            CaptureStatus::NotInstalled { install_hint } => {
                let _ = writeln!(s, "  {}: not installed: {install_hint}", r.adapter);
            }
            CaptureStatus::WrongVersion { found, program, install_hint } => {
                let _ = writeln!(
                    s,
                    "  {}: --pin runs only {pinned}, found {} at {}; {install_hint}",
                    r.adapter,
                    found.as_deref().unwrap_or("an unknown version"),
                    program.display()
                );
            }
            CaptureStatus::Broken { reason, stderr_tail } => {
                let _ = writeln!(s, "  {}: broken: {reason}", r.adapter);
                if !stderr_tail.trim().is_empty() {
                    let _ = writeln!(s, "    its stderr ended with:");
                    for line in stderr_tail.lines() {
                        let _ = writeln!(s, "      {line}");
                    }
                }
            }
            _ => {}
        }
    }
}

/// Per real client, the names it shows the model rewritten or cut (beyond its fixed prefix).
fn renamed(s: &mut String, report: &ClientsReport) {
    for run in &report.real_clients {
        let rule = RealRule::NameRewritten.of(run.adapter).id;
        let names: Vec<String> = report
            .tools
            .iter()
            .filter_map(|t| {
                let entry = t.adapters.iter().find(|a| a.adapter == run.adapter)?;
                entry.findings.iter().any(|f| f.rule == rule).then(|| {
                    format!("`{}` as `{}`", t.name, entry.shown_name.as_deref().unwrap_or("?"))
                })
            })
            .collect();
        if let Some(first) = names.first() {
            let more = match names.len() {
                1 => String::new(),
                2 => format!(", {}", names[1]),
                n => format!(", {} and {} more", names[1], n - 2),
            };
            let _ = writeln!(
                s,
                "  {}: {} name{} shown to the model rewritten or cut: {first}{more}",
                run.adapter,
                names.len(),
                if names.len() == 1 { "" } else { "s" }
            );
        }
    }
}

/// Tools the server listed to some handshakes only (mcp-fuzz's own included).
fn listed_to_some(s: &mut String, report: &ClientsReport) {
    let mut lines = Vec::new();
    for tool in &report.tools {
        let missing = not_listed_to(tool);
        if !missing.is_empty() {
            lines.push(format!("  `{}`: not listed to {}", tool.name, missing.join(", ")));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(
            s,
            "\ntools the server listed to some handshakes only (each client declares its own \
             protocol version and capabilities; see the handshakes above):"
        );
        for line in lines {
            let _ = writeln!(s, "{line}");
        }
    }
}

/// The handshakes the server did not list `tool` to: mcp-fuzz's first, then the adapters' in
/// adapter order.
#[must_use]
pub fn not_listed_to(tool: &ToolEntry) -> Vec<&str> {
    let mut missing: Vec<&str> = tool
        .adapters
        .iter()
        .filter(|a| a.status == RenderStatus::NotListed)
        .map(|a| a.adapter.as_str())
        .collect();
    if !tool.listed_to_mcp_fuzz {
        missing.insert(0, "mcp-fuzz");
    }
    missing
}

/// What the server did with a canary, in one line.
#[must_use]
pub fn outcome_line(f: &ClientFinding) -> String {
    match f.canary.as_ref().map(|c| &c.outcome) {
        Some(CanaryOutcome::Called { verdict, outcome, through }) => {
            let via = through.as_ref().map_or_else(String::new, |t| {
                let rewritten = t.sent.as_ref().map_or_else(String::new, |sent| {
                    format!(", which sent {} instead", one_line(&sent.to_string()))
                });
                format!(" (through {}{rewritten}: {})", t.client, one_line(&t.said))
            });
            format!("{}: {}{via}", super::call_verdict_name(*verdict), outcome.kind())
        }
        Some(CanaryOutcome::Blocked { through }) => format!(
            "refused by {} before the server saw it: {}",
            through.client,
            one_line(&through.said)
        ),
        Some(CanaryOutcome::Skipped { reason }) => format!("not sent: {reason}"),
        None => "not sent: ".to_owned(),
    }
}

/// The first line of `text`, cut at 160 characters.
fn one_line(text: &str) -> String {
    crate::text::clip(text.lines().next().unwrap_or_default())
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
