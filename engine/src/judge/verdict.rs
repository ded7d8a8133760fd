//! Judging one tool's results, in case order: whether the tool is unavailable (every call fails
//! the same way whatever the input), one finding per identity (the first, simplest case), and
//! the tool's score. A finding made from a case says how it was seen ([`Said`]); its words come
//! from [`super::words`].

use super::words::{self, clip, describe};
use super::{Found, unchecked};
use crate::finding::{FindingKind, Severity, ToolStatus};
use crate::judge::Outcome;
use crate::report::{Finding, Hinted, MAX_OTHER_CASES, Score, ToolReport};
use crate::transport::listing::Tool;
use mcp_fuzz_model::case::{Case, CaseLabel, Mode};
use mcp_fuzz_model::facts::Said;
use mcp_fuzz_model::outcome::OutcomeKind;
use mcp_fuzz_model::template::{self, same_cause};

/// Judges one tool's results (in case order): unavailable, or one finding per identity, each
/// with the index of its case; fills the tool's score.
pub(crate) fn judge(
    tool: &Tool,
    cases: &[Case],
    results: &[(usize, Outcome)],
    tr: &mut ToolReport,
) -> Vec<Found> {
    if let Some(f) = unavailable(tool, cases, results, tr) {
        return vec![(f, None)];
    }
    let mut tool_findings: Vec<Found> = Vec::new();
    for (i, outcome) in results {
        let Some(f) = case_verdict(tool, &cases[*i], outcome, tr) else { continue };
        let by_cause = f.severity == Severity::Failure
            || matches!(
                f.kind,
                FindingKind::NullAsAbsent
                    | FindingKind::LaxCoercion
                    | FindingKind::Slow
                    | FindingKind::UpstreamTimeout
            );
        if by_cause {
            push_by_cause(&mut tool_findings, f, *i);
        } else if f.kind == FindingKind::AcceptsInvalid {
            unchecked::push(&mut tool_findings, f, *i);
        } else if f.kind == FindingKind::UnflaggedError {
            push_per_kind(&mut tool_findings, f, *i);
        } else {
            push_once(&mut tool_findings, (f, Some(*i)));
        }
    }
    unchecked::reword(&mut tool_findings);
    tr.score = Score::new(tr.graceful, tr.scored).percent;
    tr.hinted = hinted(cases, results);
    let note = no_valid_call_succeeded(tool, tr, &tool_findings);
    tool_findings.extend(note);
    tool_findings
}

/// Input-independent failure: valid cases fail like the invalid ones, or name an unreachable
/// upstream. Only error answers can mean "unavailable": a crash, hang or bad result on every
/// call is a bug, however uniform. Marks the tool and returns its one finding.
fn unavailable(
    tool: &Tool,
    cases: &[Case],
    results: &[(usize, Outcome)],
    tr: &mut ToolReport,
) -> Option<Finding> {
    let valid_results: Vec<&Outcome> =
        results.iter().filter(|(i, _)| cases[*i].label.mode.is_valid()).map(|(_, o)| o).collect();
    let error_answer = |o: &Outcome| {
        matches!(
            o,
            Outcome::ToolError { .. }
                | Outcome::UnflaggedError { .. }
                | Outcome::InternalError { .. }
                | Outcome::RpcError { .. }
        )
    };
    let upstream = valid_results.iter().all(|o| o.names_upstream());
    let unavailable = !valid_results.is_empty()
        && (upstream || (valid_results.iter().all(|o| error_answer(o)) && same_message(results)));
    if !unavailable {
        return None;
    }
    if !upstream && needs_no_arguments(tool) {
        return Some(fails_without_input(tool, cases, results));
    }
    tr.status = ToolStatus::Unavailable;
    let msg = valid_results.first().and_then(|o| o.message()).unwrap_or("").to_owned();
    let how = if upstream {
        "every call fails on an unreachable upstream"
    } else {
        "every call fails the same way"
    };
    tr.reason = Some(format!("{how}, whatever the input: {msg}"));
    let called_no_more = if results.len() < cases.len() {
        format!("; called no more after {} calls", results.len())
    } else {
        String::new()
    };
    Some(Finding {
        outcome: valid_results.first().map(|o| (*o).clone()),
        ..Finding::general(
            Some(tool.name.clone()),
            FindingKind::ToolUnavailable,
            Severity::Warning,
            format!(
                "{how}, whatever the input (left out of the score{called_no_more}): {}",
                clip(&msg)
            ),
        )
    })
}

/// Whether the tool's input schema requires nothing: a call with no arguments is valid.
fn needs_no_arguments(tool: &Tool) -> bool {
    let schema = tool.input_schema.as_ref();
    schema.and_then(|s| s.get("required")).and_then(|r| r.as_array()).is_none_or(Vec::is_empty)
}

/// Every call of a tool that needs no arguments failed the same way: no generated value can be
/// to blame and no value hint can help, so it is the tool's own failure (on its first valid
/// case), not an unavailable tool.
///
/// See: issue 30 item 8 (`mcp-mathematics` `list_functions {}` cannot serialise its `inf`
/// constants on any call; it was "add value hints").
fn fails_without_input(tool: &Tool, cases: &[Case], results: &[(usize, Outcome)]) -> Finding {
    let (i, outcome) =
        results.iter().find(|(i, _)| cases[*i].label.mode.is_valid()).unwrap_or(&results[0]);
    let message = format!(
        "every call failed the same way although the tool needs no arguments ({}): no input is to blame",
        describe(outcome, None)
    );
    finding(tool, &cases[*i], outcome, FindingKind::ValidCallFailed, Severity::Failure, &message)
}

/// One case's finding, if its outcome is one; counts the tool's graceful and scored cases.
fn case_verdict(
    tool: &Tool,
    case: &Case,
    outcome: &Outcome,
    tr: &mut ToolReport,
) -> Option<Finding> {
    let made = |said| {
        let mut f = finding(tool, case, outcome, FindingKind::of(outcome), Severity::Failure, "");
        words::said(&mut f, said);
        Some(f)
    };
    if outcome.is_unjudged() {
        // Slow work or a dead upstream says nothing about input handling: out of the score.
        return made(Said::Unjudged);
    }
    if case.label.mode == Mode::Invalid {
        if outcome.is_graceful() {
            tr.graceful += 1;
            tr.scored += 1;
            return unflagged(tool, case, outcome);
        }
        if matches!(outcome, Outcome::Ok) {
            let (kind, severity, message) = leniency(tool, case).unwrap_or_else(|| {
                (
                    FindingKind::AcceptsInvalid,
                    Severity::Warning,
                    format!("accepted invalid input ({}) without an error", case.label),
                )
            });
            return Some(finding(tool, case, outcome, kind, severity, &message));
        }
        tr.scored += 1;
        return made(Said::OnInvalid { label: case.label.to_string() });
    }
    if matches!(outcome, Outcome::OutputSchemaViolation { .. }) {
        return made(Said::OutputSchema);
    }
    if outcome.is_failure() {
        let fed = case.label.fed.is_some().then(|| case.label.to_string());
        return made(Said::OnValid { fed });
    }
    if matches!(outcome, Outcome::Ok) {
        return None;
    }
    if let Some(f) = unflagged(tool, case, outcome) {
        return Some(f);
    }
    let message = format!(
        "valid call failed ({}) - may be a synthetic-input false positive",
        describe(outcome, None)
    );
    Some(finding(tool, case, outcome, FindingKind::ValidCallFailed, Severity::Info, &message))
}

/// An error answered as an ordinary result: a warning, on valid and invalid input alike (an
/// invalid case still counts as handled: the tool refused it).
fn unflagged(tool: &Tool, case: &Case, outcome: &Outcome) -> Option<Finding> {
    let Outcome::UnflaggedError { text } = outcome else { return None };
    let message = format!(
        "answered an error as an ordinary result, without isError: true ({}): clients read it as a success",
        clip(text)
    );
    Some(finding(tool, case, outcome, FindingKind::UnflaggedError, Severity::Warning, &message))
}

/// The valid cases made with value hints, and how many of them succeeded.
fn hinted(cases: &[Case], results: &[(usize, Outcome)]) -> Option<Hinted> {
    let hinted: Vec<&Outcome> = results
        .iter()
        .filter(|(i, _)| !cases[*i].label.hinted.is_empty())
        .map(|(_, o)| o)
        .collect();
    (!hinted.is_empty()).then(|| Hinted {
        calls: hinted.len() as u64,
        succeeded: hinted.iter().filter(|o| matches!(o, Outcome::Ok)).count() as u64,
    })
}

/// Valid calls that all ended in graceful errors reached nothing: say so, once per tool (a
/// failure on a valid case already says more).
fn no_valid_call_succeeded(tool: &Tool, tr: &ToolReport, found: &[Found]) -> Option<Found> {
    let valid_failure = |f: &Finding| {
        f.severity == Severity::Failure && f.case.as_ref().is_some_and(|c| c.mode.is_valid())
    };
    let note = tr.coverage_note()?;
    if found.iter().any(|(f, _)| valid_failure(f)) {
        return None;
    }
    let message =
        format!("{note}: the score says nothing about this tool's real behaviour; add value hints");
    let kind = FindingKind::NoValidCallSucceeded;
    Some((Finding::general(Some(tool.name.clone()), kind, Severity::Warning, message), None))
}

/// All invalid and valid cases failed with the same message: the input does not matter.
fn same_message(results: &[(usize, Outcome)]) -> bool {
    let mut msgs = results.iter().map(|(_, o)| (o.kind(), o.message().unwrap_or("")));
    let Some(first) = msgs.next() else { return false };
    !matches!(first.0, OutcomeKind::Ok | OutcomeKind::InvalidParams)
        && results.len() >= 2
        && msgs.all(|m| m == first)
}

/// A finding about one case of `tool`.
fn finding(
    tool: &Tool,
    case: &Case,
    outcome: &Outcome,
    kind: FindingKind,
    severity: Severity,
    message: &str,
) -> Finding {
    Finding {
        case: Some(case.label.clone()),
        arguments: Some(case.arguments.clone()),
        outcome: Some(outcome.clone()),
        ..Finding::general(Some(tool.name.clone()), kind, severity, message.to_owned())
    }
}

/// Invalid input accepted in a way that is leniency rather than a missing check: `null` for an
/// optional property (treated as absent), or a number or boolean spelt as a string.
fn leniency(tool: &Tool, case: &Case) -> Option<(FindingKind, Severity, String)> {
    let pointer = case.label.pointer.as_deref()?;
    let sent = serde_json::Value::Object(case.arguments.clone()).pointer(pointer).cloned();
    match (case.label.mutation.as_deref()?, sent?) {
        ("unexpected-null", serde_json::Value::Null) if is_optional(tool.input(), pointer) => {
            Some((
                FindingKind::NullAsAbsent,
                Severity::Info,
                format!(
                    "treats null as absent (`{pointer}` accepted null): declare it nullable or reject it"
                ),
            ))
        }
        ("wrong-type", serde_json::Value::String(s))
            if s.parse::<f64>().is_ok() || s == "true" || s == "false" =>
        {
            Some((
                FindingKind::LaxCoercion,
                Severity::Info,
                format!(
                    "coerces strings such as {s:?} to the declared type (`{pointer}`): validate strictly or declare the string form"
                ),
            ))
        }
        _ => None,
    }
}

/// Whether the property at instance `pointer` is an optional member of a plain object schema
/// (found through `properties` only; anything else is not known to be optional).
fn is_optional(schema: &serde_json::Value, pointer: &str) -> bool {
    let segments = mcp_fuzz_generators::pointer::tokens(pointer);
    let Some((last, path)) = segments.split_last() else { return false };
    let mut at = schema;
    for seg in path {
        match at.get("properties").and_then(|p| p.get(seg)) {
            Some(next) => at = next,
            None => return false,
        }
    }
    at.get("properties").and_then(|p| p.get(last)).is_some()
        && !at
            .get("required")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(last)))
}

/// Keeps one failure finding per cause: the first, simplest case, counting the others and
/// naming the first few.
fn push_by_cause(list: &mut Vec<Found>, mut f: Finding, index: usize) {
    let cause = f.outcome.as_ref().map(|o| match &f.arguments {
        Some(args) => o.without_echoes(args).cause(),
        None => o.cause(),
    });
    let one = |g: &Option<String>| match (g, &cause) {
        (Some(g), Some(c)) => same_cause(g, c),
        (g, c) => g == c,
    };
    // An error message on valid input and the same one on invalid input are kept apart until
    // shrinking has re-run them: a circuit breaker answers both alike, and a fresh process may
    // show two bugs behind it (merged again after when they are one, [`merge_same_cause`]).
    let valid = |g: &Finding| g.case.as_ref().is_some_and(|c| c.mode.is_valid());
    let split = matches!(f.outcome, Some(Outcome::InternalError { .. } | Outcome::RpcError { .. }));
    let same = list.iter_mut().find(|(g, _)| {
        g.severity == f.severity
            && g.kind == f.kind
            && one(&g.cause)
            && (!split || valid(g) == valid(&f))
    });
    match same {
        Some((g, _)) => {
            // The template is the cause of them all.
            if let (Some(t), Some(c)) = (&cause, &g.cause)
                && template::fits(t, c)
            {
                g.cause = cause;
            }
            absorb(g, 1, f.case.take());
        }
        None => {
            f.cause = cause;
            list.push((f, Some(index)));
        }
    }
}

/// Merges the findings of one tool made from cases that have one kind, severity and cause once
/// shrinking and re-runs have settled them (a failure whose fresh re-run showed another bug
/// took that bug's cause; two failures of one message, on valid and on invalid input, may both
/// turn out flaky): the first keeps its case, and counts and names the others'.
pub(crate) fn merge_same_cause(list: &mut Vec<Found>) {
    let mut i = 0;
    while i < list.len() {
        let mut j = i + 1;
        while j < list.len() {
            let (a, b) = (&list[i].0, &list[j].0);
            let one = a.severity == b.severity
                && a.kind == b.kind
                && a.case.is_some()
                && b.case.is_some()
                && matches!((&a.cause, &b.cause), (Some(x), Some(y)) if same_cause(x, y));
            if one {
                let (mut b, _) = list.remove(j);
                absorb(
                    &mut list[i].0,
                    b.occurrences,
                    b.case.take().into_iter().chain(b.other_cases),
                );
            } else {
                j += 1;
            }
        }
        i += 1;
    }
}

/// Keeps one finding per kind: the first, simplest case, counting the others and naming the
/// first few.
fn push_per_kind(list: &mut Vec<Found>, mut f: Finding, index: usize) {
    match list.iter_mut().find(|(g, _)| g.kind == f.kind) {
        Some((g, _)) => absorb(g, 1, f.case.take()),
        None => list.push((f, Some(index))),
    }
}

/// Counts `occurrences` more cases on `g` and names their labels, up to [`MAX_OTHER_CASES`].
fn absorb(g: &mut Finding, occurrences: u64, labels: impl IntoIterator<Item = CaseLabel>) {
    g.occurrences += occurrences;
    let room = MAX_OTHER_CASES.saturating_sub(g.other_cases.len());
    g.other_cases.extend(labels.into_iter().take(room));
}

/// Keeps one finding per identity: the first, simplest case.
fn push_once(list: &mut Vec<Found>, f: Found) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fuzz_model::case::{CaseLabel, Mode};
    use serde_json::json;

    fn invalid(mutation: &str, pointer: &str, args: serde_json::Value) -> Case {
        Case {
            label: CaseLabel {
                mutation: Some(mutation.into()),
                pointer: Some(pointer.into()),
                keyword: Some("type".into()),
                ..CaseLabel::of(Mode::Invalid)
            },
            arguments: args.as_object().expect("object").clone(),
            draw: None,
        }
    }

    #[test]
    fn leniency_is_told_apart_from_a_missing_check() {
        let schema = json!({"type": "object", "required": ["id"], "properties": {
            "id": {"type": "string"}, "limit": {"type": "integer"},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}}});
        let tool = Tool::new("t", schema);
        let kind = |c: &Case| leniency(&tool, c).map(|(k, s, _)| (k, s));
        let null_optional = invalid("unexpected-null", "/limit", json!({"id": "a", "limit": null}));
        assert_eq!(kind(&null_optional), Some((FindingKind::NullAsAbsent, Severity::Info)));
        let nested =
            invalid("unexpected-null", "/opts/deep", json!({"id": "a", "opts": {"deep": null}}));
        assert_eq!(kind(&nested), Some((FindingKind::NullAsAbsent, Severity::Info)));
        let null_required = invalid("unexpected-null", "/id", json!({"id": null}));
        assert_eq!(kind(&null_required), None, "null for a required property is accepts-invalid");
        let coerced = invalid("wrong-type", "/limit", json!({"id": "a", "limit": "0"}));
        assert_eq!(kind(&coerced), Some((FindingKind::LaxCoercion, Severity::Info)));
        let other = invalid("wrong-type", "/limit", json!({"id": "a", "limit": "abc"}));
        assert_eq!(kind(&other), None);
    }
    #[test]
    fn a_tool_that_needs_no_arguments_and_always_fails_is_a_failure_not_unavailable() {
        // See: issue 30 item 8.
        let valid = |args: serde_json::Value| Case {
            label: CaseLabel::of(Mode::Valid),
            arguments: args.as_object().expect("object").clone(),
            draw: None,
        };
        let error = || Outcome::ToolError {
            text: "Object of type float is not JSON serializable: inf".into(),
            upstream: false,
        };
        let judge_tool = |schema: serde_json::Value, cases: &[Case]| {
            let results: Vec<(usize, Outcome)> = (0..cases.len()).map(|i| (i, error())).collect();
            let mut tr = ToolReport::new("list_functions");
            let found = judge(&Tool::new("list_functions", schema), cases, &results, &mut tr);
            (found, tr.status)
        };
        let cases = [
            valid(json!({})),
            valid(json!({})),
            invalid("unexpected-property", "/x", json!({"x": 1})),
        ];
        let (found, status) = judge_tool(json!({"type": "object", "properties": {}}), &cases);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0].0;
        assert_eq!((f.kind.clone(), f.severity), (FindingKind::ValidCallFailed, Severity::Failure));
        assert!(f.message.contains("needs no arguments"), "{}", f.message);
        assert!(f.fix().starts_with("No input is to blame"), "{}", f.fix());
        assert_ne!(status, ToolStatus::Unavailable);
        // A tool with a required argument failing alike stays unavailable, with a fix that
        // does not assume a backend.
        let required =
            json!({"type": "object", "required": ["q"], "properties": {"q": {"type": "string"}}});
        let cases = [
            valid(json!({"q": "a"})),
            valid(json!({"q": "b"})),
            invalid("missing-required", "/q", json!({})),
        ];
        let (found, status) = judge_tool(required, &cases);
        assert_eq!(status, ToolStatus::Unavailable);
        assert_eq!(found[0].0.kind, FindingKind::ToolUnavailable);
        assert!(
            found[0].0.fix().starts_with("Every call failed the same way"),
            "{}",
            found[0].0.fix()
        );
    }
}
