//! `clients --call`: which canaries are sent, by which route, and what each answer means.
//!
//! The sending itself (a server session, a real client's call path) is the binary's; this module
//! plans the sends from a report ([`Plan::new`]), judges each answer as `run` judges a call
//! ([`through_outcome`], [`direct_outcome`]) and writes the outcomes back ([`Plan::apply`]).

use super::model::{CallVerdict, CanaryOutcome, ClientsReport, Through as Via};
use mcp_fuzz_clients::Severity;
use mcp_fuzz_clients::canary::Direction;
use mcp_fuzz_clients::real::{RealClient, Through};
use mcp_fuzz_model::finding::gate;
use mcp_fuzz_model::outcome::{ExitInfo, Outcome};
use serde_json::Value;

/// How a canary is sent: by mcp-fuzz itself, or through a real client that can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// mcp-fuzz sends it to the server.
    Direct,
    /// The client's own call path sends it (mcpo's `POST`, the Inspector CLI's `tools/call`).
    Through(RealClient),
}

/// One distinct call to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// How.
    pub route: Route,
    /// The tool's index in the report's `tools`.
    pub tool: usize,
    /// The arguments: the canary's witness.
    pub witness: Value,
}

/// Every distinct call `--call` makes, and which canaries each answers.
#[derive(Debug, Default)]
pub struct Plan {
    /// The calls, each once however many canaries share it.
    pub sends: Vec<Delivery>,
    /// The outcome decided before sending (gated, not an object), by send.
    decided: Vec<Option<CanaryOutcome>>,
    /// (tool, adapter, canary, send) for every canary.
    slots: Vec<(usize, usize, usize, usize)>,
}

impl Plan {
    /// Every canary of the first kind (the rendering allows it, the server's schema rejects
    /// it). A canary of a client that `can_call` goes through that client; the others are
    /// direct. A tool not annotated `readOnlyHint: true` (by `read_only`, per report tool) is
    /// not called unless `include_destructive`; a witness that is not an object is not sent.
    #[must_use]
    pub fn new(
        report: &ClientsReport,
        read_only: &[Option<bool>],
        include_destructive: bool,
        can_call: impl Fn(RealClient) -> bool,
    ) -> Self {
        let mut plan = Self::default();
        for (t, tool) in report.tools.iter().enumerate() {
            for (a, entry) in tool.adapters.iter().enumerate() {
                for (c, canary) in entry.canaries.iter().enumerate() {
                    let Some(part) = canary.canary.as_ref() else { continue };
                    if part.direction != Direction::RenderedAllowsServerRejects {
                        continue;
                    }
                    let route = match entry.adapter.real() {
                        Some(client) if can_call(client) => Route::Through(client),
                        _ => Route::Direct,
                    };
                    let send = Delivery { route, tool: t, witness: part.witness.clone() };
                    let index = plan.sends.iter().position(|s| *s == send).unwrap_or_else(|| {
                        let gated = gate(read_only.get(t).copied().flatten(), include_destructive);
                        let gate = if let Some(why) = gated {
                            Some(skipped(&why.to_string()))
                        } else if !part.witness.is_object() {
                            Some(skipped(
                                "the canary is not a JSON object, so it cannot be sent as arguments",
                            ))
                        } else {
                            None
                        };
                        plan.sends.push(send);
                        plan.decided.push(gate);
                        plan.sends.len() - 1
                    });
                    plan.slots.push((t, a, c, index));
                }
            }
        }
        plan
    }

    /// The sends on `route` still to make.
    #[must_use]
    pub fn todo(&self, route: Route) -> Vec<usize> {
        (0..self.sends.len())
            .filter(|&i| self.sends[i].route == route && self.decided[i].is_none())
            .collect()
    }

    /// Records the outcome of send `index`.
    pub fn decide(&mut self, index: usize, outcome: CanaryOutcome) {
        self.decided[index] = Some(outcome);
    }

    /// Writes every canary's outcome into `report` (a canary the server fails on becomes a
    /// `fail` finding) and sets `canaryCallFailures`.
    pub fn apply(self, report: &mut ClientsReport) {
        let mut failures = 0_u64;
        for (t, a, c, index) in self.slots {
            let outcome = self.decided[index].clone().unwrap_or_else(|| skipped("not sent"));
            let canary = &mut report.tools[t].adapters[a].canaries[c];
            if matches!(outcome, CanaryOutcome::Called { verdict: CallVerdict::Failure, .. }) {
                failures += 1;
                canary.severity = Severity::Fail;
            }
            if let Some(part) = canary.canary.as_mut() {
                part.outcome = outcome;
            }
        }
        report.canary_call_failures = Some(failures);
    }
}

/// A canary that was not sent, and why.
#[must_use]
pub fn skipped(reason: &str) -> CanaryOutcome {
    CanaryOutcome::Skipped { reason: reason.to_owned() }
}

/// A canary mcp-fuzz sent itself, with the engine's judgement of the answer.
#[must_use]
pub fn direct_outcome(outcome: Outcome) -> CanaryOutcome {
    CanaryOutcome::Called { verdict: verdict(&outcome), outcome, through: None }
}

/// What a call of `witness` through `client` means: the server's JSON-RPC response, read from the
/// wire (never from the client's words), is judged by `judge` (the engine's, as `run` judges a
/// call). `sent` is reported only when the client rewrote the witness on the way.
#[must_use]
pub fn through_outcome(
    client: RealClient,
    answer: Through,
    witness: &Value,
    judge: impl FnOnce(&Value) -> Outcome,
) -> CanaryOutcome {
    let via = |said: String, sent: Value| {
        let sent = (sent != *witness).then_some(sent);
        Some(Via { client, said, sent })
    };
    let called = |outcome: Outcome, said: String, sent: Value| CanaryOutcome::Called {
        verdict: verdict(&outcome),
        outcome,
        through: via(said, sent),
    };
    match answer {
        Through::Answered { sent, response, client: said } => called(judge(&response), said, sent),
        Through::NotSent { client: said } => {
            CanaryOutcome::Blocked { through: Via { client, said, sent: None } }
        }
        Through::ServerExited { sent, status, client: said } => {
            // The shell's status: a signal N is 128 + N.
            let exit = match status {
                Some(s) if s > 128 => ExitInfo { code: None, signal: Some(s - 128) },
                other => ExitInfo { code: other, signal: None },
            };
            called(Outcome::Exited { exit, stderr: Vec::new() }, said, sent)
        }
        Through::NoAnswer { sent, client: said } => called(Outcome::Timeout, said, sent),
        _ => skipped(&format!("{client} answered in a way this mcp-fuzz does not know")),
    }
}

fn verdict(outcome: &Outcome) -> CallVerdict {
    if outcome.is_failure() {
        CallVerdict::Failure
    } else if outcome.is_graceful() {
        CallVerdict::Graceful
    } else {
        CallVerdict::Accepted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn said(outcome: &CanaryOutcome) -> (&'static str, Option<&Via>) {
        match outcome {
            CanaryOutcome::Called { verdict, through, .. } => {
                (super::super::call_verdict_name(*verdict), through.as_ref())
            }
            CanaryOutcome::Blocked { through } => ("blocked", Some(through)),
            CanaryOutcome::Skipped { .. } => ("skipped", None),
        }
    }

    /// A judge that calls every `result` accepted and every `error` graceful, as the engine
    /// would for these answers (its classifier is tested in the engine).
    fn judge(response: &Value) -> Outcome {
        if response.get("result").is_some() {
            Outcome::Ok
        } else {
            Outcome::InvalidParams { message: "bad".into() }
        }
    }

    #[test]
    fn an_answer_read_from_the_wire_is_judged_by_the_judge() {
        let witness = json!({"q": ""});
        let refusal = json!({"error": {"code": -32602, "message": "bad"}});
        let answer = Through::Answered {
            sent: witness.clone(),
            response: refusal.clone(),
            client: "HTTP 500".into(),
        };
        let mut seen = None;
        let outcome = through_outcome(RealClient::Mcpo, answer, &witness, |r| {
            seen = Some(r.clone());
            judge(r)
        });
        assert_eq!(seen, Some(refusal), "the response, not the client's words");
        let (verdict, via) = said(&outcome);
        assert_eq!(verdict, "graceful");
        let via = via.expect("through mcpo");
        assert_eq!(
            (via.client, via.said.as_str(), &via.sent),
            (RealClient::Mcpo, "HTTP 500", &None)
        );

        let ok = json!({"result": {"content": [{"type": "text", "text": "{}"}]}});
        let answer = Through::Answered { sent: json!({}), response: ok, client: "HTTP 200".into() };
        let outcome = through_outcome(RealClient::Mcpo, answer, &witness, judge);
        let (verdict, via) = said(&outcome);
        assert_eq!(verdict, "accepted");
        assert_eq!(via.and_then(|v| v.sent.clone()), Some(json!({})), "the client's rewrite");
    }

    #[test]
    fn a_refusal_by_the_client_is_blocked_and_a_death_or_silence_is_a_failure() {
        let witness = json!({"n": "many"});
        let refused = Through::NotSent { client: "HTTP 422".into() };
        assert_eq!(said(&through_outcome(RealClient::Mcpo, refused, &witness, judge)).0, "blocked");

        let died = Through::ServerExited {
            sent: witness.clone(),
            status: Some(134),
            client: "HTTP 500".into(),
        };
        let CanaryOutcome::Called { verdict, outcome: Outcome::Exited { exit, .. }, .. } =
            through_outcome(RealClient::Inspector, died, &witness, judge)
        else {
            panic!("a death is an exit");
        };
        assert_eq!(verdict, CallVerdict::Failure);
        assert_eq!((exit.code, exit.signal), (None, Some(6)), "128 + SIGABRT");

        let silent = Through::NoAnswer { sent: witness.clone(), client: String::new() };
        let outcome = through_outcome(RealClient::Inspector, silent, &witness, judge);
        assert!(matches!(
            outcome,
            CanaryOutcome::Called { verdict: CallVerdict::Failure, outcome: Outcome::Timeout, .. }
        ));
    }
}
