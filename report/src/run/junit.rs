//! The run report as JUnit XML: one `<testsuite>` per tool, one `<testcase>` per check (the
//! per-call finding kinds of the engine's catalogue), plus a `server` suite for server-wide checks.
//!
//! A check fails exactly when a finding of its kind fails the run (severity `failure`, not
//! baselined), so the XML agrees with the exit code; warnings, info and baselined findings are
//! kept in `<system-out>`. A tool that was not called has one skipped case, `not-run`, with the
//! reason.

use crate::writers::junit::{TestCase, TestSuite, TestSuites};
use mcp_fuzz_model::finding::FindingKind;
use mcp_fuzz_model::report::{Finding, Report};
use serde_json::Value;
use std::fmt::Write as _;

/// Checks every called tool gets, in this order.
pub const TOOL_CHECKS: &[FindingKind] = &[
    FindingKind::Exited,
    FindingKind::Hang,
    FindingKind::HandlerException,
    FindingKind::InternalError,
    FindingKind::RpcError,
    FindingKind::ProtocolViolation,
    FindingKind::OutputSchemaViolation,
    FindingKind::Oversize,
    FindingKind::AcceptsInvalid,
    FindingKind::ValidCallFailed,
    FindingKind::GaveUp,
];

/// Server-wide checks.
pub const SERVER_CHECKS: &[FindingKind] = &[
    FindingKind::MalformedTool,
    FindingKind::DuplicateTool,
    FindingKind::ToolsListTruncated,
    FindingKind::JunkOnStdout,
];

/// The XML document.
#[must_use]
pub fn render(r: &Report) -> String {
    let mut root = TestSuites::new("mcp-fuzz");
    root.time = Some(r.duration_secs);
    let mut server = TestSuite::new("server");
    server.properties = vec![
        ("seed".into(), r.seed.to_string()),
        ("server".into(), r.server.name.clone().unwrap_or_default()),
        ("serverVersion".into(), r.server.version.clone().unwrap_or_default()),
        ("score".into(), r.score.percent.map_or("n/a".into(), |p| format!("{p:.1}"))),
    ];
    if let Some(p) = &r.partition {
        server.properties.push(("partition".into(), p.clone()));
    }
    let server_findings: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.surface.is_none() && f.check.is_none())
        .filter(|f| {
            f.tool.is_none() || !r.tools.iter().any(|t| Some(t.name.as_str()) == f.tool.as_deref())
        })
        .collect();
    server.cases = checks(r, "server", SERVER_CHECKS, &server_findings);
    root.suites.push(server);
    if r.surfaces.is_some() {
        let mine: Vec<&Finding> = r.findings.iter().filter(|f| f.surface.is_some()).collect();
        let mut suite = TestSuite::new("beyond-tools");
        suite.cases = checks(r, "beyond-tools", &[], &mine);
        if suite.cases.is_empty() {
            suite.cases.push(TestCase::new("beyond-tools", "prompts-and-resources"));
        }
        root.suites.push(suite);
    }
    if let Some(p) = &r.protocol {
        root.suites.push(protocol_suite(r, p));
    }
    for t in &r.tools {
        let mine: Vec<&Finding> =
            r.findings.iter().filter(|f| f.tool.as_deref() == Some(t.name.as_str())).collect();
        let mut suite = TestSuite::new(t.name.clone());
        suite.properties = vec![
            ("status".into(), t.status.to_string()),
            ("cases".into(), t.total_cases().to_string()),
            ("score".into(), t.score.map_or("n/a".into(), |p| format!("{p:.1}"))),
        ];
        if t.status.was_called() {
            suite.cases = checks(r, &t.name, TOOL_CHECKS, &mine);
        } else {
            let reason = t.reason.clone().unwrap_or_else(|| t.status.to_string());
            suite.cases.push(TestCase::new(t.name.clone(), "not-run").skipped(reason));
            suite.cases.extend(checks(r, &t.name, &[], &mine));
        }
        root.suites.push(suite);
    }
    root.to_xml()
}

/// One case per conformance check: failed when its finding fails the run, its finding's text as
/// output when it is only a warning, skipped with its reason.
fn protocol_suite(r: &Report, p: &mcp_fuzz_model::report::ProtocolSummary) -> TestSuite {
    use mcp_fuzz_model::report::CheckStatus;
    let mut suite = TestSuite::new("protocol");
    suite.properties = vec![("score".into(), p.score.map_or("n/a".into(), |s| format!("{s:.1}")))];
    for c in &p.checks {
        let case = TestCase::new("protocol", c.id.clone());
        let is = |f: &Finding| f.check.as_deref() == Some(c.id.as_str());
        let finding = r.findings.iter().find(|f| is(f) || f.members.iter().any(is));
        suite.cases.push(match (c.status, finding) {
            (CheckStatus::Skip, _) => case.skipped(c.observed.clone()),
            (CheckStatus::Fail, Some(f)) if f.fails() => {
                let body = format!("{}\nspec: {}\nexpected: {}", f.message, c.spec_url, c.expected);
                case.failed(f.kind.as_str(), f.message.clone(), body)
            }
            (CheckStatus::Fail, Some(f)) => {
                case.with_output(format!("[{}] {}", f.severity, f.message))
            }
            _ => case,
        });
    }
    suite
}

/// One case per check in `fixed`, then one per other kind found, in first-seen order.
fn checks(
    r: &Report,
    classname: &str,
    fixed: &[FindingKind],
    findings: &[&Finding],
) -> Vec<TestCase> {
    let mut kinds: Vec<&FindingKind> = fixed.iter().collect();
    for f in findings {
        if !kinds.contains(&&f.kind) {
            kinds.push(&f.kind);
        }
    }
    kinds
        .into_iter()
        .map(|kind| {
            let of_kind: Vec<&&Finding> = findings.iter().filter(|f| &f.kind == kind).collect();
            let case = TestCase::new(classname, kind.as_str());
            let failing: Vec<&&&Finding> = of_kind.iter().filter(|f| f.fails()).collect();
            let case = if let Some(first) = failing.first() {
                let mut body = String::new();
                for f in &failing {
                    describe(&mut body, r, f);
                }
                let message = if failing.len() > 1 {
                    format!("{} (and {} more)", first.message, failing.len() - 1)
                } else {
                    first.message.clone()
                };
                let _ = write!(body, "expected: {}", kind.rule().expected);
                case.failed(kind.as_str(), message, body)
            } else {
                case
            };
            if of_kind.len() > failing.len() {
                let mut out = String::new();
                for f in of_kind.iter().filter(|f| !f.fails()) {
                    let _ = writeln!(
                        out,
                        "[{}{}] {}",
                        f.severity,
                        if f.baselined { ", baselined" } else { "" },
                        f.message
                    );
                }
                case.with_output(out)
            } else {
                case
            }
        })
        .collect()
}

fn describe(body: &mut String, r: &Report, f: &Finding) {
    let _ = writeln!(body, "{}", f.message);
    if let Some(c) = &f.case {
        let _ = writeln!(body, "case: {}", c);
    }
    if let Some(more) = super::other_cases_text(f) {
        let _ = writeln!(body, "same cause: {more}");
    }
    if let Some((head, lines)) = super::sequence_text(f) {
        let _ = writeln!(body, "sequence: {head}");
        for (i, (call, note)) in lines.iter().enumerate() {
            let _ = writeln!(body, "  {}. {call} {note}", i + 1);
        }
    } else if let Some(a) = &f.arguments {
        let _ = writeln!(body, "arguments: {}", Value::Object(a.clone()));
    }
    if let Some(o) = &f.outcome {
        let _ = writeln!(body, "outcome: {}", serde_json::to_value(o).unwrap_or(Value::Null));
    }
    if let Some(line) = super::replay_text(r, f) {
        let _ = writeln!(body, "replay: {line}");
    }
    body.push('\n');
}
