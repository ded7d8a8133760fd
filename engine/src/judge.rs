//! Judging one tool's results, in case order: whether the tool is unavailable (every call fails
//! the same way whatever the input), one finding per identity (the first, simplest case), and
//! the tool's score.

use crate::classify::Outcome;
use crate::finding::{FindingKind, Severity, ToolStatus};
use crate::plan::{Case, Mode};
use crate::report::{Finding, MAX_OTHER_CASES, Score, ToolReport};
use crate::tools::Tool;

/// Judges one tool's results (in case order): unavailable, or one finding per identity, each
/// with the index of its case; fills the tool's score.
pub(crate) fn judge(
    tool: &Tool,
    cases: &[Case],
    results: &[(usize, Outcome)],
    tr: &mut ToolReport,
) -> Vec<(Finding, Option<usize>)> {
    let mut tool_findings: Vec<(Finding, Option<usize>)> = Vec::new();
    // Input-independent failure: valid cases fail like the invalid ones, or name an
    // unreachable upstream.
    let valid_results: Vec<&Outcome> =
        results.iter().filter(|(i, _)| cases[*i].label.mode.is_valid()).map(|(_, o)| o).collect();
    // Only error answers can mean "unavailable": a crash, hang or bad result on every call is
    // a bug, however uniform.
    let error_answer = |o: &Outcome| {
        matches!(
            o,
            Outcome::ToolError { .. } | Outcome::InternalError { .. } | Outcome::RpcError { .. }
        )
    };
    let unavailable = !valid_results.is_empty()
        && valid_results.iter().all(|o| error_answer(o))
        && (valid_results.iter().all(|o| matches!(o, Outcome::ToolError { upstream: true, .. }))
            || same_message(results));
    if unavailable {
        tr.status = ToolStatus::Unavailable;
        let msg = valid_results.first().and_then(|o| o.message()).unwrap_or("").to_owned();
        tr.reason = Some(format!("every call fails the same way, whatever the input: {msg}"));
        tool_findings.push((
            Finding {
                outcome: valid_results.first().map(|o| (*o).clone()),
                ..Finding::general(
                    Some(tool.name.clone()),
                    FindingKind::ToolUnavailable,
                    Severity::Warning,
                    format!(
                        "every call fails the same way, whatever the input (left out of the score): {}",
                        clip(&msg)
                    ),
                )
            },
            None,
        ));
        return tool_findings;
    }
    for (i, outcome) in results {
        let case = &cases[*i];
        let found = if case.label.mode == Mode::Invalid {
            if outcome.is_graceful() {
                tr.graceful += 1;
                tr.scored += 1;
                None
            } else if matches!(outcome, Outcome::Ok) {
                Some((
                    FindingKind::AcceptsInvalid,
                    Severity::Warning,
                    format!("accepted invalid input ({}) without an error", case.label),
                ))
            } else {
                tr.scored += 1;
                Some((
                    FindingKind::of(outcome),
                    Severity::Failure,
                    format!("{} on invalid input ({})", describe(outcome), case.label),
                ))
            }
        } else if matches!(outcome, Outcome::OutputSchemaViolation { .. }) {
            Some((
                FindingKind::of(outcome),
                Severity::Failure,
                format!(
                    "the result breaks the tool's outputSchema: {}",
                    outcome.message().unwrap_or("")
                ),
            ))
        } else if outcome.is_failure() {
            let on = if case.label.fed.is_some() {
                format!("valid input ({})", case.label)
            } else {
                "valid input".to_owned()
            };
            Some((
                FindingKind::of(outcome),
                Severity::Failure,
                format!("{} on {on}", describe(outcome)),
            ))
        } else if matches!(outcome, Outcome::Ok) {
            None
        } else {
            Some((
                FindingKind::ValidCallFailed,
                Severity::Info,
                format!(
                    "valid call failed ({}) - may be a synthetic-input false positive",
                    describe(outcome)
                ),
            ))
        };
        if let Some((kind, severity, message)) = found {
            let f = finding(tool, case, outcome, kind, severity, message);
            if severity == Severity::Failure {
                push_by_cause(&mut tool_findings, f, *i);
            } else {
                push_once(&mut tool_findings, (f, Some(*i)));
            }
        }
    }
    tr.score = Score::new(tr.graceful, tr.scored).percent;
    tool_findings
}

/// All invalid and valid cases failed with the same message: the input does not matter.
fn same_message(results: &[(usize, Outcome)]) -> bool {
    let mut msgs = results.iter().map(|(_, o)| (o.kind(), o.message().unwrap_or("")));
    let Some(first) = msgs.next() else { return false };
    first.0 != "ok" && first.0 != "invalid-params" && results.len() >= 2 && msgs.all(|m| m == first)
}

/// What an outcome means, in a few words.
pub(crate) fn describe(o: &Outcome) -> String {
    match o {
        Outcome::Exited { exit, .. } => format!("the server died ({exit})"),
        Outcome::Timeout => "no answer within the timeout".into(),
        Outcome::HandlerException { text } => {
            format!("an exception surfaced as a tool error: {}", first_line(text))
        }
        Outcome::InternalError { message } => {
            format!("JSON-RPC internal error -32603: {}", first_line(message))
        }
        Outcome::RpcError { code, message } => {
            format!("JSON-RPC error {code}: {}", first_line(message))
        }
        Outcome::ProtocolViolation { detail } => format!("protocol violation: {detail}"),
        Outcome::Oversize { bytes } => {
            format!("a {bytes}-byte response, over --max-response-bytes")
        }
        Outcome::OutputSchemaViolation { detail } => format!("output-schema violation: {detail}"),
        Outcome::ToolError { text, .. } => format!("tool error: {}", first_line(text)),
        Outcome::InvalidParams { message } => format!("invalid params: {}", first_line(message)),
        Outcome::Ok => "ok".into(),
    }
}

/// The first meaningful line: not blank, not a lone brace of a pretty-printed JSON text.
fn first_line(s: &str) -> String {
    let meaningful = |l: &&str| !l.trim().is_empty() && !matches!(l.trim(), "{" | "[" | "}" | "]");
    clip(s.lines().find(meaningful).unwrap_or("").trim())
}

pub(crate) fn clip(s: &str) -> String {
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s.to_owned()
    }
}

fn finding(
    tool: &Tool,
    case: &Case,
    outcome: &Outcome,
    kind: FindingKind,
    severity: Severity,
    message: String,
) -> Finding {
    Finding {
        case: Some(case.label.clone()),
        arguments: Some(case.arguments.clone()),
        outcome: Some(outcome.clone()),
        ..Finding::general(Some(tool.name.clone()), kind, severity, message)
    }
}

/// Keeps one failure finding per cause: the first, simplest case, counting the others and
/// naming the first few.
fn push_by_cause(list: &mut Vec<(Finding, Option<usize>)>, mut f: Finding, index: usize) {
    let cause = f.outcome.as_ref().map(Outcome::cause);
    let same = list
        .iter_mut()
        .find(|(g, _)| g.severity == Severity::Failure && g.kind == f.kind && g.cause == cause);
    match same {
        Some((g, _)) => {
            g.occurrences += 1;
            if let Some(label) = f.case.take().filter(|_| g.other_cases.len() < MAX_OTHER_CASES) {
                g.other_cases.push(label);
            }
        }
        None => {
            f.cause = cause;
            list.push((f, Some(index)));
        }
    }
}

/// Keeps one finding per identity: the first, simplest case.
fn push_once(list: &mut Vec<(Finding, Option<usize>)>, f: (Finding, Option<usize>)) {
    let identity = f.0.identity();
    if !list.iter().any(|(g, _)| g.identity() == identity) {
        list.push(f);
    }
}

/// The finding of a tool whose `inputSchema` cannot be fuzzed.
pub(crate) fn schema_finding(tool: &str, msg: &str) -> Finding {
    Finding::general(
        Some(tool.to_owned()),
        FindingKind::SchemaError,
        Severity::Warning,
        format!("the tool's inputSchema cannot be fuzzed: {msg}"),
    )
}
