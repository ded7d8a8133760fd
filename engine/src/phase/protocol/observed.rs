//! Checks of what the whole run heard from the server, over either transport: its requests for
//! client features (sampling, elicitation, roots), its log messages, its progress, and how it
//! answered `logging/setLevel`. The connections note each in a shared record
//! ([`crate::transport::asks::Heard`]); these rows judge it at the end, in the protocol phase's
//! table and report shape. A check with nothing to judge is skipped, saying why.
//!
//! See: issue 31 item 4.

use super::checks::{Check, Context, How, Spec, Verdict};
use super::{Judged, Observed, Tally, fail};
use crate::finding::Severity;
use crate::transport::asks::Count;

/// The checks of what the run heard, in the order they are reported.
pub(super) const OBSERVED_CHECKS: &[Check] = &[
    Check {
        id: "client-capability-undeclared",
        title: "requests for client features the client did not declare (sampling, elicitation, roots), over the whole run",
        spec: Spec::Mcp("/basic/lifecycle#operation"),
        rationale: "both parties must only use capabilities that were successfully negotiated",
        expected: "none",
        how: How::Observed(undeclared),
    },
    Check {
        id: "sampling-request",
        title: "every `sampling/createMessage` the server sent during the run",
        spec: Spec::Mcp("/client/sampling"),
        rationale: "a sampling request carries messages to answer and a positive maxTokens, and tools only to a client that declared sampling.tools",
        expected: "non-empty messages, maxTokens > 0, no tools",
        how: How::Observed(sampling),
    },
    Check {
        id: "elicitation-request",
        title: "every `elicitation/create` the server sent during the run",
        spec: Spec::Mcp("/client/elicitation"),
        rationale: "a form elicitation asks the user something, with a flat schema whose required fields it defines; URL mode only to a client that declared it",
        expected: "a message, a consistent requestedSchema, form mode",
        how: How::Observed(elicitation),
    },
    Check {
        id: "logging-set-level",
        title: "`logging/setLevel` (debug) on each connection, the server having declared `logging`",
        spec: Spec::Mcp("/server/utilities/logging"),
        rationale: "a server that declares logging serves logging/setLevel",
        expected: "an empty result",
        how: How::Observed(set_level),
    },
    Check {
        id: "log-message",
        title: "every `notifications/message` the server sent during the run",
        spec: Spec::Mcp("/server/utilities/logging"),
        rationale: "a log message is one object with a level among RFC 5424's eight names and its data",
        expected: "params with `level` (debug ... emergency) and `data`",
        how: How::Observed(log_message),
    },
    Check {
        id: "list-changed",
        title: "every `notifications/{tools,prompts,resources}/list_changed` the server sent during the run",
        spec: Spec::Mcp("/server/tools#list-changed-notification"),
        rationale: "a server sends list_changed notifications for the lists whose listChanged capability it declared",
        expected: "only for a list declared with `listChanged: true`",
        how: How::Observed(list_changed),
    },
    Check {
        id: "progress-increases",
        title: "every `notifications/progress` the server sent during the run",
        spec: Spec::Mcp("/basic/utilities/progress"),
        rationale: "the progress value MUST increase with each notification, even if the total is unknown",
        expected: "each token's progress strictly increasing",
        how: How::Observed(progress),
    },
];

/// Judges every observed check into `tally`.
pub(super) fn judge_all(tally: &mut Tally, cx: &Context<'_>) {
    for c in OBSERVED_CHECKS {
        if let How::Observed(judge) = &c.how {
            match judge(cx) {
                Verdict::Judged(j) => tally.record(c, None, j),
                Verdict::Skip(why) => tally.skip(c, why),
            }
        }
    }
}

/// A count judged: skipped when nothing was heard, failed with `severity` when one broke the
/// rule, passed otherwise.
fn counted(count: &Count, what: &str, severity: Severity) -> Verdict {
    match (count.seen, &count.first_bad) {
        (0, _) => Verdict::Skip(format!("no {what} during the run")),
        (n, Some(first)) => Verdict::Judged(fail(
            Observed::said(format!(
                "{} of {}, first: {first}",
                count.bad,
                mcp_fuzz_model::text::count(n, what)
            )),
            severity,
        )),
        (n, None) => Verdict::Judged(Judged::Pass(format!(
            "{} as required",
            mcp_fuzz_model::text::count(n, what)
        ))),
    }
}

fn undeclared(cx: &Context<'_>) -> Verdict {
    match &cx.record.undeclared.first_bad {
        Some(first) => Verdict::Judged(fail(
            Observed::said(format!(
                "{}, first: {first}",
                mcp_fuzz_model::text::count(cx.record.undeclared.bad, "such request")
            )),
            Severity::Failure,
        )),
        None => Verdict::Judged(Judged::Pass("none".into())),
    }
}

fn sampling(cx: &Context<'_>) -> Verdict {
    if !cx.features.sampling {
        return Verdict::Skip(
            "sampling not declared (--client-capabilities sampling declares it)".into(),
        );
    }
    counted(&cx.record.sampling, "sampling request", Severity::Warning)
}

fn elicitation(cx: &Context<'_>) -> Verdict {
    if !cx.features.elicitation {
        return Verdict::Skip(
            "elicitation not declared (--client-capabilities elicitation declares it)".into(),
        );
    }
    counted(&cx.record.elicitation, "elicitation request", Severity::Warning)
}

fn set_level(cx: &Context<'_>) -> Verdict {
    if cx.record.set_level.seen == 0 {
        return Verdict::Skip("the server did not declare `logging`".into());
    }
    counted(&cx.record.set_level, "logging/setLevel request", Severity::Warning)
}

fn log_message(cx: &Context<'_>) -> Verdict {
    counted(&cx.record.log_messages, "log message", Severity::Warning)
}

fn list_changed(cx: &Context<'_>) -> Verdict {
    counted(&cx.record.list_changed, "list_changed notification", Severity::Warning)
}

fn progress(cx: &Context<'_>) -> Verdict {
    counted(&cx.record.progress, "progress notification", Severity::Failure)
}
