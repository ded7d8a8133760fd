//! The `clients` document as JUnit XML: one suite per adapter, one case per tool (plus
//! `tools/list` when the listing has findings). A case fails exactly when one of its findings
//! fails the policy, so the XML agrees with the exit code; its other findings are kept in
//! `<system-out>`. A real client that was not captured has one skipped case saying why; its
//! cases are the tools otherwise, and a tool it does not show (`lost`) or was not listed
//! (`not-listed`) says so in its output.

use super::human::outcome_line;
use super::markdown::severity_label;
use super::model::{ClientFinding, ClientsReport, RenderStatus};
use super::policy::fails;
use crate::writers::junit;
use std::fmt::Write as _;

/// The XML document.
#[must_use]
pub fn render(report: &ClientsReport) -> String {
    let fail_on = report.fail_on;
    let all: Vec<&ClientFinding> = report.findings().collect();
    let mut root = junit::TestSuites::new("mcp-fuzz clients");
    for adapter in &report.adapters {
        let name = adapter.as_str();
        let mut suite = junit::TestSuite::new(name);
        suite.properties.push(("failOn".into(), fail_on.as_str().to_owned()));
        if let Some(run) = report.real_clients.iter().find(|r| *adapter == r.adapter)
            && !run.is_captured()
        {
            let reason = report
                .tools
                .iter()
                .flat_map(|t| &t.adapters)
                .find(|a| a.adapter == *adapter)
                .and_then(|a| a.reason.as_ref())
                .map_or_else(|| run.status_name().to_owned(), |r| r.reason.clone());
            suite.cases.push(
                junit::TestCase::new(name, "capture")
                    .skipped(format!("{}: {reason}", run.status_name())),
            );
            root.suites.push(suite);
            continue;
        }
        let mut cases: Vec<Option<&str>> =
            report.tools.iter().map(|t| Some(t.name.as_str())).collect();
        // A culprit that is not among the tools (a malformed listed item) is a case of its own.
        for f in all.iter().filter(|f| f.adapter == *adapter) {
            if let Some(t) = f.tool.as_deref()
                && !cases.contains(&Some(t))
            {
                cases.push(Some(t));
            }
        }
        if all.iter().any(|f| f.adapter == *adapter && f.tool.is_none()) {
            cases.push(None);
        }
        for tool in cases {
            let mine: Vec<&&ClientFinding> =
                all.iter().filter(|f| f.adapter == *adapter && f.tool.as_deref() == tool).collect();
            let case = junit::TestCase::new(name, tool.unwrap_or("tools/list"));
            let failing: Vec<&&ClientFinding> =
                mine.iter().copied().filter(|f| fails(f, fail_on)).collect();
            let entry = report
                .tools
                .iter()
                .find(|t| Some(t.name.as_str()) == tool)
                .and_then(|t| t.adapters.iter().find(|a| a.adapter == *adapter));
            let status = entry.and_then(|a| match a.status {
                RenderStatus::Lost => {
                    Some(format!("lost: {}", a.reason.as_ref().map_or("", |r| r.reason.as_str())))
                }
                RenderStatus::NotListed => {
                    Some("not listed: the server did not list it to this client".to_owned())
                }
                _ => None,
            });
            let body = status
                .into_iter()
                .chain(mine.iter().map(|f| finding_line(f)))
                .collect::<Vec<_>>()
                .join("\n");
            let case = if let Some(first) = failing.first() {
                let rules: Vec<&str> = failing.iter().map(|f| f.rule).collect();
                case.failed(
                    first.rule,
                    format!(
                        "{} finding{} fail --fail-on {}: {}",
                        failing.len(),
                        if failing.len() == 1 { "" } else { "s" },
                        fail_on.as_str(),
                        rules.join(", ")
                    ),
                    body,
                )
            } else if body.is_empty() {
                case
            } else {
                case.with_output(body)
            };
            suite.cases.push(case);
        }
        root.suites.push(suite);
    }
    root.to_xml()
}

/// One line per finding, for JUnit bodies.
fn finding_line(f: &ClientFinding) -> String {
    let mut s = format!("[{}] {} at {}: {}", severity_label(f), f.rule, f.pointer, f.detail);
    if let Some(c) = &f.canary {
        let _ = write!(s, "; witness {}; {}", c.witness, outcome_line(f));
    } else {
        let _ = write!(s, "; fix: {}", f.fix);
    }
    s
}
