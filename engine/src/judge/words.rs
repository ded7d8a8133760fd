//! The words of findings, in one place: what an outcome means ([`describe`], [`describe_request`]),
//! the one-line and capped forms of a server's text ([`first_line`], [`compact`], [`clip`]), and
//! a finding's kind, severity and message derived from its facts ([`derive`]). Every later step
//! adds a fact with [`learn`]; none writes or edits a message.

use mcp_fuzz_model::facts::{Fact, Facts, NeedsCalls, Reruns, Said, Scaling, Settled};
use mcp_fuzz_model::finding::{FindingKind, Severity};
use mcp_fuzz_model::outcome::Outcome;
use mcp_fuzz_model::report::Finding;
use mcp_fuzz_model::text;

pub use crate::transport::listing::{http_error, response_size};
use std::time::Duration;

/// What an outcome of a tool call means, in a few words; a settled timeout says how it ended.
#[must_use]
pub fn describe(o: &Outcome, settled: Option<Settled>) -> String {
    match o {
        Outcome::Exited { exit, .. } => format!("the server died ({exit})"),
        Outcome::Timeout => match settled {
            None => "no answer within the timeout".into(),
            Some(Settled::Slow { longest, timeout }) => {
                format!(
                    "answered only after {longest:.1} s (--timeout {timeout} s): slow, not hung"
                )
            }
            Some(Settled::Hang { watched: Some(w), timeout }) => {
                format!("no answer within {w:.0} s (--timeout {timeout} s)")
            }
            Some(Settled::Hang { watched: None, timeout }) => {
                format!("no answer within --timeout {timeout} s")
            }
        },
        Outcome::UpstreamTimeout { evidence } => format!(
            "no answer within the timeout while the server's stderr shows an unreachable upstream: {}",
            first_line(evidence)
        ),
        Outcome::Slow { detail } => format!("too slow: {detail}"),
        Outcome::HandlerException { text } => {
            format!("an exception surfaced as a tool error: {}", first_line(text))
        }
        Outcome::InternalError { message, .. } => {
            format!("JSON-RPC internal error -32603: {}", first_line(message))
        }
        Outcome::RpcError { code, message, .. } => {
            format!("JSON-RPC error {code}: {}", first_line(message))
        }
        Outcome::ProtocolViolation { detail } => format!("protocol violation: {detail}"),
        Outcome::Oversize { bytes, at_least } => {
            format!("{}, over --max-response-bytes", response_size(*bytes, *at_least))
        }
        Outcome::HttpError { status, detail } => http_error(*status, detail),
        Outcome::OutputSchemaViolation { detail } => format!("output-schema violation: {detail}"),
        Outcome::ToolError { text, .. } => format!("tool error: {}", first_line(text)),
        Outcome::UnflaggedError { text } => {
            format!("an error as an ordinary result: {}", first_line(text))
        }
        Outcome::InvalidParams { message } => format!("invalid params: {}", first_line(message)),
        Outcome::Ok => "ok".into(),
    }
}

/// What the outcome of a request beside tools (a prompt, a resource) means, in a few words.
#[must_use]
pub fn describe_request(o: &Outcome) -> String {
    match o {
        Outcome::Exited { exit, .. } => format!("the server process ended ({exit})"),
        Outcome::Timeout => "no answer within the timeout".into(),
        other => other.message().map_or_else(|| other.kind().to_string(), ToOwned::to_owned),
    }
}

/// The first meaningful line: not blank, not a lone brace of a pretty-printed JSON text.
#[must_use]
pub fn first_line(s: &str) -> String {
    text::first_line(s, text::LINE)
}

/// A server's text cut to one line's length.
#[must_use]
pub fn clip(s: &str) -> String {
    text::clip(s, text::LINE)
}

/// A server's message on one line, capped: JSON-RPC messages often hold a pretty-printed
/// validation report.
#[must_use]
pub fn compact(s: &str) -> String {
    clip(&s.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// What a hang that is slow work says: `slow by input, not hung: the time follows ...`.
#[must_use]
pub fn slow_by_input(s: &Scaling, max_call_time: Duration) -> String {
    let points: Vec<String> =
        s.points.iter().map(|(v, t)| format!("{t:.2} s at {}", short(*v))).collect();
    let limit = max_call_time.as_secs_f64();
    let past = if s.estimate > limit {
        format!("past --max-call-time {limit} s")
    } else {
        format!("within --max-call-time {limit} s")
    };
    // A top-level property by its name, anything deeper by its pointer.
    let name = s.pointer.strip_prefix('/').filter(|n| !n.contains('/'));
    format!(
        "slow by input, not hung: the time follows `{}` ({}), so about {} at {}, {past}",
        name.unwrap_or(&s.pointer),
        points.join(", "),
        text::duration(s.estimate),
        short(s.value)
    )
}

/// A number as a person reads it: integers without a fraction, else at most 3 decimals.
fn short(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// Starts a finding's facts with how the judge saw it, and derives its words.
pub fn said(f: &mut Finding, said: Said) {
    f.facts = Some(Box::new(Facts::new(said)));
    derive(f);
}

/// Adds what a step learned to a finding made from a case, and derives its words again. A
/// finding the judge did not make from a case (no facts) keeps its words.
pub fn learn(f: &mut Finding, fact: Fact) {
    if let Some(facts) = f.facts.as_mut() {
        facts.learned.push(fact);
        derive(f);
    }
}

/// A finding's kind, severity and message, from its outcome and its facts: the one place they
/// are decided for a finding made from a case.
pub fn derive(f: &mut Finding) {
    let (Some(facts), Some(outcome)) = (f.facts.as_deref(), f.outcome.as_ref()) else { return };
    let settled = facts.settled();
    let what = describe(outcome, settled);
    let (mut kind, mut severity, mut message) = match &facts.said {
        Said::OnInvalid { label } => (
            FindingKind::of(outcome),
            Severity::Failure,
            format!("{what} on invalid input ({label})"),
        ),
        Said::OnValid { fed: Some(label) } => (
            FindingKind::of(outcome),
            Severity::Failure,
            format!("{what} on valid input ({label})"),
        ),
        Said::OnValid { fed: None } => {
            (FindingKind::of(outcome), Severity::Failure, format!("{what} on valid input"))
        }
        Said::OutputSchema => (
            FindingKind::of(outcome),
            Severity::Failure,
            format!(
                "the result breaks the tool's outputSchema: {}",
                outcome.message().unwrap_or("")
            ),
        ),
        Said::Unjudged => {
            let severity = if matches!(outcome, Outcome::Slow { .. }) {
                Severity::Warning
            } else {
                Severity::Info
            };
            (FindingKind::of(outcome), severity, what)
        }
    };
    if let Some(s) = settled.filter(|_| kind == FindingKind::Timeout) {
        (kind, severity) = match s {
            Settled::Slow { .. } => (FindingKind::Slow, Severity::Warning),
            Settled::Hang { .. } => (FindingKind::Hang, severity),
        };
    }
    if let Some((scaling, max_call_time)) = facts.slow_by_input() {
        (kind, severity, message) =
            (FindingKind::Slow, Severity::Warning, slow_by_input(scaling, max_call_time));
    }
    match (facts.needs_history(), facts.needs_calls()) {
        (Some(r), None) => {
            (kind, severity) = (FindingKind::Flaky, Severity::Warning);
            message.push_str(&not_on_a_fresh_process(r));
        }
        (r, Some(n)) => {
            // Replayed with its calls it fails every time: the failure it was, with them.
            if let Some(r) = r.filter(|r| r.reproduced > 0) {
                message.push_str(&not_on_a_fresh_process(r));
            }
            (kind, severity) = (FindingKind::of(outcome), Severity::Failure);
            message.push_str(&needs_calls(n));
        }
        (None, None) => {}
    }
    if facts.after_upstream() {
        (kind, severity) = (FindingKind::of(outcome), Severity::Info);
        message.push_str(
            "; replayed from a fresh process, it comes only after calls that failed on an \
             unreachable upstream: a circuit breaker or retry limit, not a bug of these calls",
        );
    }
    if let Some(first) = facts.poisoned() {
        message.push_str(&format!(
            "; later calls on that process answered `{first}` (the state this failure left; it \
             shows again on a fresh process)"
        ));
    }
    if let Some(first) = facts.long_lived() {
        message.push_str(&format!(
            " (found on a fresh process; the process that had served earlier calls answered `{first}` instead: a circuit breaker or a state earlier calls left)"
        ));
    }
    if facts.expected_slow() && kind == FindingKind::Slow {
        severity = Severity::Info;
        message.push_str(" (expected: expected-slow in mcp-fuzz.toml)");
    }
    (f.kind, f.severity, f.message) = (kind, severity, message);
}

/// What re-runs that never failed on a fresh process say.
fn not_on_a_fresh_process(r: Reruns) -> String {
    let Reruns { reproduced: n, of } = r;
    if n == 0 {
        format!("; it did not fail again in {of} re-runs, one of them on a fresh server process")
    } else {
        format!(
            "; it failed again on {n} of {of} re-runs, never on a fresh server process: only \
             after earlier calls"
        )
    }
}

/// What a failure that needs its process's earlier calls says.
fn needs_calls(n: NeedsCalls) -> String {
    format!(
        "; it needs earlier calls: {} call(s) from a fresh process fail the same way every time \
         ({} before it in the process's history)",
        n.steps, n.before
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fuzz_model::outcome::ExitInfo;

    fn case_finding(outcome: Outcome, said: Said) -> Finding {
        let mut f = Finding::general(
            Some("t".into()),
            FindingKind::Other("x".into()),
            Severity::Info,
            String::new(),
        );
        f.outcome = Some(outcome);
        super::said(&mut f, said);
        f
    }

    #[test]
    fn a_timeout_says_how_it_was_settled() {
        let mut f = case_finding(Outcome::Timeout, Said::OnValid { fed: None });
        assert_eq!((f.kind.clone(), f.severity), (FindingKind::Timeout, Severity::Failure));
        assert_eq!(f.message, "no answer within the timeout on valid input");
        learn(&mut f, Fact::Settled(Settled::Slow { longest: 12.34, timeout: 10.0 }));
        assert_eq!((f.kind.clone(), f.severity), (FindingKind::Slow, Severity::Warning));
        assert_eq!(
            f.message,
            "answered only after 12.3 s (--timeout 10 s): slow, not hung on valid input"
        );
        learn(&mut f, Fact::ExpectedSlow);
        assert_eq!(f.severity, Severity::Info);
        assert!(f.message.ends_with(" (expected: expected-slow in mcp-fuzz.toml)"));
        let mut h = case_finding(Outcome::Timeout, Said::OnInvalid { label: "boundary".into() });
        learn(&mut h, Fact::Settled(Settled::Hang { watched: Some(20.2), timeout: 10.0 }));
        assert_eq!((h.kind, h.severity), (FindingKind::Hang, Severity::Failure));
        assert_eq!(h.message, "no answer within 20 s (--timeout 10 s) on invalid input (boundary)");
    }

    #[test]
    fn a_failure_that_needs_earlier_calls_is_flaky_until_they_are_found() {
        let died =
            Outcome::Exited { exit: ExitInfo { code: Some(3), signal: None }, stderr: Vec::new() };
        let mut f = case_finding(died, Said::OnValid { fed: None });
        learn(&mut f, Fact::NeedsHistory(Reruns { reproduced: 0, of: 4 }));
        assert_eq!((f.kind.clone(), f.severity), (FindingKind::Flaky, Severity::Warning));
        assert_eq!(
            f.message,
            "the server died (exit status 3) on valid input; it did not fail again in 4 re-runs, \
             one of them on a fresh server process"
        );
        learn(&mut f, Fact::NeedsCalls(NeedsCalls { steps: 2, before: 9 }));
        assert_eq!((f.kind.clone(), f.severity), (FindingKind::Exited, Severity::Failure));
        assert_eq!(
            f.message,
            "the server died (exit status 3) on valid input; it needs earlier calls: 2 call(s) \
             from a fresh process fail the same way every time (9 before it in the process's \
             history)"
        );
    }

    #[test]
    fn a_hang_proved_slow_by_input_says_what_its_time_follows() {
        let mut f = case_finding(Outcome::Timeout, Said::OnValid { fed: None });
        let scaling =
            Scaling::fit("/duration".into(), [(0.8, 0.81), (0.4, 0.41), (0.2, 0.21)], 821.0)
                .expect("a line");
        learn(&mut f, Fact::SlowByInput { scaling, max_call_time: Duration::from_secs(20) });
        assert_eq!((f.kind, f.severity), (FindingKind::Slow, Severity::Warning));
        assert!(
            f.message.starts_with(
                "slow by input, not hung: the time follows `duration` (0.81 s at 0.8, 0.41 s at \
                 0.4, 0.21 s at 0.2), so about 14 minutes at 821, past --max-call-time 20 s"
            ),
            "{}",
            f.message
        );
    }

    #[test]
    fn a_finding_not_made_from_a_case_keeps_its_words() {
        let mut f =
            Finding::general(None, FindingKind::GaveUp, Severity::Warning, "as said".into());
        learn(&mut f, Fact::ExpectedSlow);
        assert_eq!(f.message, "as said");
        assert!(f.facts.is_none());
    }
}
