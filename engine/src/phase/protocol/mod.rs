//! The protocol conformance phase: well-formed but wrong requests, each with the answer the MCP
//! specification (2025-11-25) or JSON-RPC 2.0 requires, sent over a raw stdio session on server
//! processes of their own (requests before `initialize` each get a fresh process). Each check
//! has a stable id, its specification URL and a one-line rationale; the results are the
//! report's `protocol` section with its own score, never part of the crash-resilience score.
//!
//! A failed check is a `protocol-nonconformance` finding: a failure when the server crashed or
//! went silent on a request it had to answer after the handshake, a warning otherwise (a wrong
//! error code, an echoed unsupported version). -32603 where -32602 is required is the
//! `invalid-params-as-internal-error` warning of its own, since every TypeScript-SDK server
//! does it.
//!
//! See: issue 15; <https://modelcontextprotocol.io/specification/2025-11-25>.

use crate::config::RunConfig;
use crate::finding::{FindingKind, Severity};
use crate::report::{CheckStatus, Finding, ProtocolCheck, ProtocolSummary};
use crate::transport::excerpt;
use crate::transport::raw::{Heard, RawSession};
use serde_json::{Value, json};
use std::time::Duration;

const SPEC: &str = "https://modelcontextprotocol.io/specification/2025-11-25";
const JSONRPC: &str = "https://www.jsonrpc.org/specification";

/// What the phase found.
pub struct Protocol {
    /// The report's `protocol` section.
    pub summary: ProtocolSummary,
    /// A finding per failed check.
    pub findings: Vec<Finding>,
}

/// The protocol version the probing session asks for.
const VERSION: &str = "2025-11-25";

/// Silences after which the remaining checks are skipped.
///
/// Why: each silence costs a timeout; two show a server that stopped answering.
const MAX_SILENCES: usize = 2;

/// Why the checks that call a tool are skipped when none may be called.
const NO_TOOL: &str =
    "no tool the gate allows calling (read-only by default; --include-destructive allows any)";

/// Why the checks after [`MAX_SILENCES`] silences are skipped.
fn stopped() -> String {
    format!("{MAX_SILENCES} earlier checks got no answer; the server stopped answering")
}

/// How a check judges what it heard: pass, or a failure with its severity and kind.
enum Judged {
    Pass(String),
    Fail { observed: String, severity: Severity, kind: FindingKind },
}

fn fail(observed: String, severity: Severity) -> Judged {
    Judged::Fail { observed, severity, kind: FindingKind::ProtocolNonconformance }
}

/// One check's description.
struct Check {
    id: &'static str,
    title: &'static str,
    spec: String,
    rationale: &'static str,
    expected: &'static str,
}

fn check(
    id: &'static str,
    title: &'static str,
    spec: String,
    rationale: &'static str,
    expected: &'static str,
) -> Check {
    Check { id, title, spec, rationale, expected }
}

/// Runs every check. `tool` is a tool the gate allows calling (for the `arguments` checks).
pub async fn run(cfg: &RunConfig, tool: Option<&str>) -> Protocol {
    let mut phase =
        Runner { cfg, session: None, results: Vec::new(), findings: Vec::new(), silences: 0 };
    if let Err(why) = phase.fresh().await {
        let summary = ProtocolSummary::of(Vec::new(), Some(why));
        return Protocol { summary, findings: Vec::new() };
    }
    phase.after_handshake(tool).await;
    phase.before_handshake().await;
    if let Some(s) = phase.session.take() {
        s.close().await;
    }
    Protocol {
        summary: ProtocolSummary::of(phase.results, None),
        findings: grouped(phase.findings),
    }
}

/// One finding per cause: checks that failed the same way (same kind and severity, and the same
/// error code, or the same observation) are one finding naming them all, with each check's own
/// finding as a member. rmcp answers -32601 to every `tools/call` whose params do not parse:
/// one bug, four checks.
fn grouped(findings: Vec<Finding>) -> Vec<Finding> {
    let key = |f: &Finding| {
        let observed = f.message.rsplit_once("; expected ").map_or("", |(_, rest)| rest);
        let got = observed.split_once(", got ").map_or(observed, |(_, g)| g);
        let cause = match got.strip_prefix("error ") {
            Some(rest) => rest.split(':').next().unwrap_or(rest).to_owned(),
            None => got.to_owned(),
        };
        (f.kind.clone(), f.severity, cause)
    };
    let mut groups: Vec<((FindingKind, Severity, String), Vec<Finding>)> = Vec::new();
    for f in findings {
        let k = key(&f);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(f),
            None => groups.push((k, vec![f])),
        }
    }
    groups
        .into_iter()
        .map(|(_, mut members)| {
            if members.len() == 1 {
                return members.remove(0);
            }
            let ids: Vec<String> = members.iter().filter_map(|m| m.check.clone()).collect();
            let first = &members[0];
            let tail = first.message.split_once(": ").map_or("", |(_, t)| t);
            let mut f = Finding::general(
                None,
                first.kind.clone(),
                first.severity,
                format!(
                    "{} checks failed the same way ({}); first, {tail}",
                    ids.len(),
                    ids.join(", ")
                ),
            );
            f.check = first.check.clone();
            f.request = first.request.clone();
            f.occurrences = members.len() as u64;
            f.members = members;
            f
        })
        .collect()
}

struct Runner<'c> {
    cfg: &'c RunConfig,
    session: Option<RawSession>,
    results: Vec<ProtocolCheck>,
    findings: Vec<Finding>,
    silences: usize,
}

impl Runner<'_> {
    fn timeout(&self) -> Duration {
        self.cfg.server.timeout
    }

    /// A fresh process, initialised; why not, when it cannot be had.
    async fn fresh(&mut self) -> Result<(), String> {
        if let Some(s) = self.session.take() {
            s.close().await;
        }
        let mut s = RawSession::start(&self.cfg.server.target, &self.cfg.server.connect)
            .map_err(|e| format!("the protocol phase could not start the server: {e}"))?;
        match s.initialize(VERSION, self.cfg.server.connect.startup_timeout).await {
            Heard::Message(m) if m.get("result").is_some() => {
                self.session = Some(s);
                Ok(())
            }
            other => Err(format!("the raw handshake failed: {}", heard(&other))),
        }
    }

    /// A process that has not been sent anything.
    fn blank(&mut self) -> Result<RawSession, String> {
        RawSession::start(&self.cfg.server.target, &self.cfg.server.connect)
            .map_err(|e| format!("the server could not be started: {e}"))
    }

    fn record(&mut self, c: &Check, request: Option<Value>, judged: Judged) {
        let (status, observed) = match judged {
            Judged::Pass(o) => (CheckStatus::Pass, o),
            Judged::Fail { observed, severity, kind } => {
                let mut f = Finding::general(
                    None,
                    kind,
                    severity,
                    format!(
                        "{}: {}; expected {}, got {observed} ({})",
                        c.id, c.title, c.expected, c.spec
                    ),
                );
                f.check = Some(c.id.to_owned());
                f.request = request;
                self.findings.push(f);
                (CheckStatus::Fail, observed)
            }
        };
        self.push(c, status, observed);
    }

    fn skip(&mut self, c: &Check, why: String) {
        self.push(c, CheckStatus::Skip, why);
    }

    /// The check's line of the report.
    fn push(&mut self, c: &Check, status: CheckStatus, observed: String) {
        self.results.push(ProtocolCheck {
            id: c.id.to_owned(),
            title: c.title.to_owned(),
            spec_url: c.spec.clone(),
            rationale: c.rationale.to_owned(),
            expected: c.expected.to_owned(),
            status,
            observed,
        });
    }

    /// Sends one request on the probing session (restarted first when the last check killed
    /// it) and returns what answered it, with any other message heard meanwhile.
    async fn ask(
        &mut self,
        id: Value,
        method: &str,
        params: Option<Value>,
    ) -> Result<(Heard, Vec<Value>), String> {
        if self.silences >= MAX_SILENCES {
            return Err(stopped());
        }
        if self.session.as_ref().is_none_or(|s| s.exited().is_some()) {
            self.fresh().await?;
        }
        let timeout = self.timeout();
        let s = self.session.as_mut().expect("a session");
        let mut others = Vec::new();
        let h = s.request(&id, method, params, timeout, &mut others).await;
        if matches!(h, Heard::Silent) {
            self.silences += 1;
        }
        if matches!(h, Heard::Exited(_) | Heard::Closed | Heard::Silent)
            && let Some(s) = self.session.take()
        {
            s.close().await;
        }
        Ok((h, others))
    }

    /// Runs a request check: send, judge the answer, record. Silence is a failure, except for a
    /// check that calls a tool (the tool may have run with the arguments and be slow): a
    /// warning then.
    async fn request_check(
        &mut self,
        c: Check,
        id: Value,
        method: &str,
        params: Option<Value>,
        judge: impl Fn(&Value) -> Judged,
    ) {
        let calls_a_tool = params
            .as_ref()
            .is_some_and(|p| p.get("name").is_some_and(|n| n != "mcp_fuzz_no_such_tool"));
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        match self.ask(id, method, params).await {
            Err(why) => self.skip(&c, why),
            Ok((Heard::Message(m), _)) => {
                let judged = judge(&m);
                self.record(&c, Some(request), judged);
            }
            Ok((Heard::Silent, others)) if !others.is_empty() => {
                let observed = format!(
                    "no answer with the request's id; heard instead: {}",
                    excerpt(&others[0])
                );
                self.record(&c, Some(request), fail(observed, Severity::Failure));
            }
            Ok((Heard::Silent, _)) if calls_a_tool => {
                let observed =
                    "no answer within the timeout (the tool may have run with these arguments)"
                        .to_owned();
                let judged = if c.id == "tools-call-arguments-null" {
                    Judged::Pass(observed)
                } else {
                    fail(observed, Severity::Warning)
                };
                self.record(&c, Some(request), judged);
            }
            Ok((other, _)) => {
                let judged = fail(heard(&other), Severity::Failure);
                self.record(&c, Some(request), judged);
            }
        }
    }

    async fn after_handshake(&mut self, tool: Option<&str>) {
        self.request_check(
            check(
                "ping",
                "`ping` after the handshake",
                format!("{SPEC}/basic/utilities/ping"),
                "a receiver must answer ping promptly with an empty result",
                "an empty result `{}`",
            ),
            json!(101),
            "ping",
            None,
            |m| match m.get("result") {
                Some(r) if r.as_object().is_some_and(|o| o.keys().all(|k| k == "_meta")) => {
                    Judged::Pass("an empty result".into())
                }
                _ => fail(message(m), Severity::Warning),
            },
        )
        .await;
        self.request_check(
            check(
                "unknown-method",
                "a request with a method the server does not serve (`mcp-fuzz/no-such-method`)",
                format!("{JSONRPC}#error_object"),
                "JSON-RPC reserves -32601 for a method that does not exist or is not available",
                "error -32601 Method not found",
            ),
            json!(102),
            "mcp-fuzz/no-such-method",
            Some(json!({})),
            |m| match code(m) {
                Some(-32601) => Judged::Pass("error -32601".into()),
                _ => fail(message(m), Severity::Warning),
            },
        )
        .await;
        self.request_check(
            check(
                "tools-call-no-name",
                "`tools/call` without `name`",
                format!("{SPEC}/server/tools#error-handling"),
                "`name` is required; a request that lacks it has invalid params",
                "error -32602 Invalid params",
            ),
            json!(103),
            "tools/call",
            Some(json!({"arguments": {}})),
            invalid_params,
        )
        .await;
        self.request_check(
            check(
                "tools-call-unknown-tool",
                "`tools/call` naming a tool that is not listed",
                format!("{SPEC}/server/tools#error-handling"),
                "an unknown tool is a protocol error (-32602); a tool error result refuses it too",
                "error -32602, or a result with isError true",
            ),
            json!(104),
            "tools/call",
            Some(json!({"name": "mcp_fuzz_no_such_tool", "arguments": {}})),
            refused,
        )
        .await;
        let bad_arguments = [
            ("tools-call-arguments-array", "an array", json!(["a"])),
            ("tools-call-arguments-string", "a string", json!("a")),
            ("tools-call-arguments-number", "a number", json!(1)),
        ];
        for (n, (id, what, args)) in bad_arguments.into_iter().enumerate() {
            let c = Check {
                id,
                title: match what {
                    "an array" => "`tools/call` whose `arguments` is an array",
                    "a string" => "`tools/call` whose `arguments` is a string",
                    _ => "`tools/call` whose `arguments` is a number",
                },
                spec: format!("{SPEC}/server/tools#calling-tools"),
                rationale: "`arguments` is an object; params of the wrong type are invalid params",
                expected: "error -32602 Invalid params (or a result with isError true)",
            };
            match tool {
                Some(t) => {
                    self.request_check(
                        c,
                        json!(110 + n),
                        "tools/call",
                        Some(json!({"name": t, "arguments": args})),
                        refused,
                    )
                    .await
                }
                None => self.skip(&c, NO_TOOL.into()),
            }
        }
        let c = check(
            "tools-call-arguments-null",
            "`tools/call` whose `arguments` is null",
            format!("{SPEC}/server/tools#calling-tools"),
            "null is not an object; a server may refuse it or read it as no arguments, but must answer",
            "an error, or a result as for no arguments",
        );
        match tool {
            Some(t) => {
                self.request_check(
                    c,
                    json!(113),
                    "tools/call",
                    Some(json!({"name": t, "arguments": null})),
                    |m| Judged::Pass(message(m)),
                )
                .await
            }
            None => self.skip(&c, NO_TOOL.into()),
        }
        let large = json!(9_007_199_254_740_991_u64);
        self.request_check(
            check(
                "request-id-large-number",
                "`ping` with the request id 9007199254740991 (2^53 - 1)",
                format!("{SPEC}/basic#requests"),
                "a response carries the id of its request, unchanged",
                "a response with the same numeric id",
            ),
            large,
            "ping",
            None,
            |_| Judged::Pass("answered with the same id".into()),
        )
        .await;
        let long = json!(format!("mcp-fuzz-{}", "x".repeat(1_000)));
        self.request_check(
            check(
                "request-id-long-string",
                "`ping` with a 1,009-character string request id",
                format!("{SPEC}/basic#requests"),
                "a response carries the id of its request, unchanged, whatever its length",
                "a response with the same string id",
            ),
            long,
            "ping",
            None,
            |_| Judged::Pass("answered with the same id".into()),
        )
        .await;
        self.notification_check(
            check("cancel-in-flight", "`notifications/cancelled` for a request just sent (`tools/list`)", format!("{SPEC}/basic/utilities/cancellation"), "a cancellation is a notification: the server may answer the request or drop it, and never answers the notification", "no answer to the notification"),
            Some(json!(120)),
            "notifications/cancelled",
            json!({"requestId": 120, "reason": "mcp-fuzz: cancellation check"}),
        ).await;
        self.notification_check(
            check(
                "unknown-notification",
                "a notification with a method the server does not know",
                format!("{JSONRPC}#notification"),
                "a notification gets no response, whatever its method",
                "no answer",
            ),
            None,
            "notifications/mcp-fuzz-unknown",
            json!({}),
        )
        .await;
    }

    /// Sends a notification (after a request with id `first`, when given) and then a `ping`;
    /// any message before the ping's answer that is not the first request's answer answers the
    /// notification.
    async fn notification_check(
        &mut self,
        c: Check,
        first: Option<Value>,
        method: &str,
        params: Value,
    ) {
        if self.silences >= MAX_SILENCES {
            return self.skip(&c, stopped());
        }
        if self.session.as_ref().is_none_or(|s| s.exited().is_some())
            && let Err(why) = self.fresh().await
        {
            return self.skip(&c, why);
        }
        let timeout = self.timeout();
        let s = self.session.as_mut().expect("a session");
        if let Some(id) = &first {
            s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})).await;
        }
        s.notify(method, Some(params.clone())).await;
        let mut others = Vec::new();
        let ping = s.request(&json!(199), "ping", None, timeout, &mut others).await;
        let answers: Vec<&Value> = others
            .iter()
            .filter(|m| m.get("method").is_none() && m.get("id") != first.as_ref())
            .collect();
        let request = Some(json!({"jsonrpc": "2.0", "method": method, "params": params}));
        let judged = match (&ping, answers.first()) {
            (_, Some(a)) => {
                fail(format!("an answer to the notification: {}", excerpt(a)), Severity::Failure)
            }
            (Heard::Message(_), None) => Judged::Pass("no answer to the notification".into()),
            (other, None) => {
                fail(format!("the ping after it: {}", heard(other)), Severity::Failure)
            }
        };
        if matches!(ping, Heard::Silent) {
            self.silences += 1;
        }
        if !matches!(ping, Heard::Message(_))
            && let Some(s) = self.session.take()
        {
            s.close().await;
        }
        self.record(&c, request, judged);
    }

    /// Checks that need a process nobody has initialised.
    async fn before_handshake(&mut self) {
        let timeout = self.timeout();
        let startup = self.cfg.server.connect.startup_timeout;
        let c = check(
            "initialize-unsupported-version",
            "`initialize` asking for protocol version 1999-01-01",
            format!("{SPEC}/basic/lifecycle#version-negotiation"),
            "a server that does not support the requested version must answer with another version it supports",
            "a result whose protocolVersion is a version the server supports",
        );
        match self.blank() {
            Err(why) => self.skip(&c, why),
            Ok(mut s) => {
                let h = s.initialize("1999-01-01", startup).await;
                let judged = match &h {
                    Heard::Message(m) => {
                        match m.pointer("/result/protocolVersion").and_then(Value::as_str) {
                            Some("1999-01-01") => fail(
                                "the unsupported version 1999-01-01 echoed back".into(),
                                Severity::Warning,
                            ),
                            Some(v) => Judged::Pass(format!("protocolVersion {v}")),
                            None => fail(message(m), Severity::Warning),
                        }
                    }
                    other => fail(heard(other), Severity::Warning),
                };
                s.close().await;
                let request = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}});
                self.record(&c, Some(request), judged);
            }
        }
        let ping_first = check(
            "ping-before-initialize",
            "`ping` before `initialize`",
            format!("{SPEC}/basic/lifecycle#initialization"),
            "pings are the one request a client may send before the handshake ends; the server answers it",
            "an answer (an empty result)",
        );
        let list_first = check(
            "request-before-initialize",
            "`tools/list` before `initialize`",
            format!("{SPEC}/basic/lifecycle#initialization"),
            "clients should not send it and the specification does not say what a server answers, but it must answer and stay up",
            "an answer (an error, or a result), the process alive",
        );
        match self.blank() {
            Err(why) => {
                self.skip(&ping_first, why.clone());
                self.skip(&list_first, why);
            }
            Ok(mut s) => {
                let mut others = Vec::new();
                let h = s.request(&json!(1), "ping", None, timeout, &mut others).await;
                let judged = match &h {
                    Heard::Message(m) if m.get("result").is_some() => Judged::Pass(message(m)),
                    other => fail(heard(other), Severity::Warning),
                };
                self.record(
                    &ping_first,
                    Some(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
                    judged,
                );
                if s.exited().is_some() {
                    s.close().await;
                    s = match self.blank() {
                        Ok(s) => s,
                        Err(why) => return self.skip(&list_first, why),
                    };
                }
                let h = s.request(&json!(2), "tools/list", None, timeout, &mut others).await;
                let judged = match &h {
                    Heard::Message(m) => Judged::Pass(message(m)),
                    other => fail(heard(other), Severity::Warning),
                };
                s.close().await;
                self.record(
                    &list_first,
                    Some(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})),
                    judged,
                );
            }
        }
    }
}

/// -32602 passes; -32603 is the SDK behaviour of its own kind; anything else fails.
fn invalid_params(m: &Value) -> Judged {
    match code(m) {
        Some(-32602) => Judged::Pass("error -32602".into()),
        Some(-32603) => Judged::Fail {
            observed: message(m),
            severity: Severity::Warning,
            kind: FindingKind::InvalidParamsAsInternalError,
        },
        _ => fail(message(m), Severity::Warning),
    }
}

/// [`invalid_params`], but a result with `isError: true` refuses too.
fn refused(m: &Value) -> Judged {
    if m.pointer("/result/isError") == Some(&Value::Bool(true)) {
        return Judged::Pass(format!("a tool error result: {}", message(m)));
    }
    invalid_params(m)
}

/// The error code of an error response.
fn code(m: &Value) -> Option<i64> {
    m.pointer("/error/code").and_then(Value::as_i64)
}

/// A response in words: its error code and message, or its result (capped).
fn message(m: &Value) -> String {
    if let Some(e) = m.get("error") {
        let code = e.get("code").map_or_else(|| "without a code".into(), ToString::to_string);
        let text = e.get("message").and_then(Value::as_str).unwrap_or_default();
        return format!("error {code}: {}", crate::judge::words::compact(text));
    }
    match m.get("result") {
        Some(r) => format!("result {}", excerpt(r)),
        None => format!("a message with neither result nor error: {}", excerpt(m)),
    }
}

/// What was heard instead of a message.
fn heard(h: &Heard) -> String {
    match h {
        Heard::Message(m) => message(m),
        Heard::Junk(line) => format!("a line that is not JSON: {line:?}"),
        Heard::Oversize(n) => format!("a {n}-byte line, over --max-response-bytes"),
        Heard::Exited(info) => format!("the server process ended ({info})"),
        Heard::Closed => "stdout closed".into(),
        Heard::Silent => "no answer within the timeout".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minus_32603_for_invalid_params_is_its_own_kind() {
        let internal =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}});
        assert!(matches!(
            invalid_params(&internal),
            Judged::Fail { kind: FindingKind::InvalidParamsAsInternalError, .. }
        ));
        let right = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}});
        assert!(matches!(invalid_params(&right), Judged::Pass(_)));
        let tool_error =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true, "content": []}});
        assert!(matches!(refused(&tool_error), Judged::Pass(_)));
        let served = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        assert!(matches!(
            refused(&served),
            Judged::Fail { kind: FindingKind::ProtocolNonconformance, .. }
        ));
    }
}
