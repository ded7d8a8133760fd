//! The `clients` document as JUnit XML: one suite per adapter, one case per tool (plus
//! `tools/list` when the listing has findings). A case fails exactly when one of its findings
//! fails the policy, so the XML agrees with the exit code; its other findings are kept in
//! `<system-out>`.

use super::human::outcome_line;
use super::markdown::severity_label;
use super::model::{ClientFinding, ClientsReport};
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
        let mut cases: Vec<Option<&str>> =
            report.tools.iter().map(|t| Some(t.name.as_str())).collect();
        if all.iter().any(|f| f.adapter == *adapter && f.tool.is_none()) {
            cases.push(None);
        }
        for tool in cases {
            let mine: Vec<&&ClientFinding> =
                all.iter().filter(|f| f.adapter == *adapter && f.tool.as_deref() == tool).collect();
            let case = junit::TestCase::new(name, tool.unwrap_or("tools/list"));
            let failing: Vec<&&ClientFinding> =
                mine.iter().copied().filter(|f| fails(f, fail_on)).collect();
            let body = mine.iter().map(|f| finding_line(f)).collect::<Vec<_>>().join("\n");
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
