//! The protocol checks, as a static, ordered table: each has a stable id, a title, the
//! specification section behind it, why, what a conforming server answers, and how it is sent
//! and judged. The runner (`mod.rs`) runs them in table order; a server reached over HTTP gets
//! [`HTTP_CHECKS`] instead, the transport's own rules, judged in `http.rs`.
//!
//! To add a check: a row here (a new id, never reused), with a judge function below when none
//! of the existing ones fits.

use super::{Judged, Observed, fail};
use crate::finding::{FindingKind, Severity};
use crate::transport::asks::{ClientFeatures, Record};
use serde_json::{Value, json};

const SPEC: &str = "https://modelcontextprotocol.io/specification/2025-11-25";
const JSONRPC: &str = "https://www.jsonrpc.org/specification";

/// One check.
pub(super) struct Check {
    /// Its stable id (`ping`, `unknown-method`).
    pub id: &'static str,
    /// What is sent, in words.
    pub title: &'static str,
    /// The specification section behind it.
    pub spec: Spec,
    /// Why a server must answer as expected.
    pub rationale: &'static str,
    /// What a conforming server answers.
    pub expected: &'static str,
    /// How it is sent and judged.
    pub how: How,
}

/// A section of a specification.
#[derive(Clone, Copy)]
pub(super) enum Spec {
    /// MCP 2025-11-25, the path below the specification's root (`/basic/utilities/ping`).
    Mcp(&'static str),
    /// JSON-RPC 2.0, an anchor of its page (`#error_object`).
    JsonRpc(&'static str),
}

impl Spec {
    /// The section's URL.
    pub fn url(self) -> String {
        match self {
            Self::Mcp(path) => format!("{SPEC}{path}"),
            Self::JsonRpc(anchor) => format!("{JSONRPC}{anchor}"),
        }
    }
}

/// How a check is sent and judged.
pub(super) enum How {
    /// A request on the initialised session, judged by its answer.
    Request {
        /// Its id.
        id: fn() -> Value,
        /// Its method.
        method: &'static str,
        /// Its params.
        params: Params,
        /// What its answer means.
        judge: fn(&Value) -> Judged,
        /// What silence means.
        silence: Silence,
    },
    /// A notification on the initialised session (after a request with this id, when given),
    /// then a `ping`: nothing may answer the notification.
    Notification {
        /// The id of a `tools/list` request sent just before it, if any.
        after_request: Option<u64>,
        /// Its method.
        method: &'static str,
        /// Its params.
        params: fn() -> Value,
    },
    /// `initialize` with this protocol version, on a process nobody has initialised.
    Initialize {
        /// The version asked for.
        version: &'static str,
    },
    /// A request before `initialize`, on a process nobody has initialised (consecutive rows
    /// share one process while it lives).
    BeforeInitialize {
        /// Its id.
        id: u64,
        /// Its method.
        method: &'static str,
        /// What its answer means.
        judge: fn(&Value) -> Judged,
    },
    /// A raw HTTP request of the streamable HTTP transport's own rules (`http.rs`).
    Http(Rule),
    /// Nothing sent: what the whole run heard, judged (`observed.rs`).
    Observed(fn(&Context<'_>) -> Verdict),
}

/// What an observed check judges.
pub(super) struct Context<'a> {
    /// What the run heard.
    pub record: &'a Record,
    /// The client features declared.
    pub features: ClientFeatures,
}

/// An observed check's verdict: judged, or skipped with the reason.
pub(super) enum Verdict {
    Judged(Judged),
    Skip(String),
}

/// A request's params.
pub(super) enum Params {
    /// None.
    None,
    /// Always the same.
    Fixed(fn() -> Value),
    /// Built around a tool the gate allows calling: the check is skipped when there is none.
    Tool(fn(&str) -> Value),
}

impl Params {
    /// The params to send, calling `tool` where they name one; `None` (the check is skipped)
    /// when they need a tool and there is none.
    pub fn with_tool(&self, tool: Option<&str>) -> Option<Option<Value>> {
        match self {
            Self::None => Some(None),
            Self::Fixed(p) => Some(Some(p())),
            Self::Tool(p) => tool.map(|t| Some(p(t))),
        }
    }
}

/// What silence (no answer within the timeout) means for a request check.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Silence {
    /// A failure: the server had to answer.
    Fails,
    /// A warning: the tool may have run with these arguments and be slow.
    ToolMayRun,
    /// A pass: the tool may have run with these arguments, which a server may accept.
    Passes,
}

/// Every check, in the order they run: on the initialised session first, then those that need
/// a process nobody has initialised.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "ping",
        title: "`ping` after the handshake",
        spec: Spec::Mcp("/basic/utilities/ping"),
        rationale: "a receiver must answer ping promptly with an empty result",
        expected: "an empty result `{}`",
        how: How::Request {
            id: || json!(101),
            method: "ping",
            params: Params::None,
            judge: empty_result,
            silence: Silence::Fails,
        },
    },
    Check {
        id: "unknown-method",
        title: "a request with a method the server does not serve (`mcp-fuzz/no-such-method`)",
        spec: Spec::JsonRpc("#error_object"),
        rationale: "JSON-RPC reserves -32601 for a method that does not exist or is not available",
        expected: "error -32601 Method not found",
        how: How::Request {
            id: || json!(102),
            method: "mcp-fuzz/no-such-method",
            params: Params::Fixed(|| json!({})),
            judge: method_not_found,
            silence: Silence::Fails,
        },
    },
    Check {
        id: "resource-not-found",
        title: "`resources/read` of a resource that does not exist (`mcp-fuzz://no-such-resource`)",
        spec: Spec::Mcp("/server/resources#error-handling"),
        rationale: "a resource that is not found is the client's mistake: -32002 in 2025-11-25, -32602 Invalid params from 2026-07-28 (SEP-2164, clients accept both), never a fault such as -32603 or 0",
        expected: "error -32002 or -32602 (or -32601 from a server without resources)",
        how: How::Request {
            id: || json!(103),
            method: "resources/read",
            params: Params::Fixed(|| json!({"uri": "mcp-fuzz://no-such-resource"})),
            judge: resource_not_found,
            silence: Silence::Fails,
        },
    },
    Check {
        id: "tools-call-no-name",
        title: "`tools/call` without `name`",
        spec: Spec::Mcp("/server/tools#error-handling"),
        rationale: "`name` is required; a request that lacks it has invalid params",
        expected: "error -32602 Invalid params",
        how: How::Request {
            id: || json!(103),
            method: "tools/call",
            params: Params::Fixed(|| json!({"arguments": {}})),
            judge: invalid_params,
            silence: Silence::Fails,
        },
    },
    Check {
        id: "tools-call-unknown-tool",
        title: "`tools/call` naming a tool that is not listed",
        spec: Spec::Mcp("/server/tools#error-handling"),
        rationale: "an unknown tool is a protocol error (-32602); a tool error result refuses it too",
        expected: "error -32602, or a result with isError true",
        how: How::Request {
            id: || json!(104),
            method: "tools/call",
            params: Params::Fixed(|| json!({"name": "mcp_fuzz_no_such_tool", "arguments": {}})),
            judge: refused,
            silence: Silence::Fails,
        },
    },
    Check {
        id: "tools-call-arguments-array",
        title: "`tools/call` whose `arguments` is an array",
        spec: Spec::Mcp("/server/tools#calling-tools"),
        rationale: "`arguments` is an object; params of the wrong type are invalid params",
        expected: "error -32602 Invalid params (or a result with isError true)",
        how: How::Request {
            id: || json!(110),
            method: "tools/call",
            params: Params::Tool(|t| json!({"name": t, "arguments": ["a"]})),
            judge: refused,
            silence: Silence::ToolMayRun,
        },
    },
    Check {
        id: "tools-call-arguments-string",
        title: "`tools/call` whose `arguments` is a string",
        spec: Spec::Mcp("/server/tools#calling-tools"),
        rationale: "`arguments` is an object; params of the wrong type are invalid params",
        expected: "error -32602 Invalid params (or a result with isError true)",
        how: How::Request {
            id: || json!(111),
            method: "tools/call",
            params: Params::Tool(|t| json!({"name": t, "arguments": "a"})),
            judge: refused,
            silence: Silence::ToolMayRun,
        },
    },
    Check {
        id: "tools-call-arguments-number",
        title: "`tools/call` whose `arguments` is a number",
        spec: Spec::Mcp("/server/tools#calling-tools"),
        rationale: "`arguments` is an object; params of the wrong type are invalid params",
        expected: "error -32602 Invalid params (or a result with isError true)",
        how: How::Request {
            id: || json!(112),
            method: "tools/call",
            params: Params::Tool(|t| json!({"name": t, "arguments": 1})),
            judge: refused,
            silence: Silence::ToolMayRun,
        },
    },
    Check {
        id: "tools-call-arguments-null",
        title: "`tools/call` whose `arguments` is null",
        spec: Spec::Mcp("/server/tools#calling-tools"),
        rationale: "null is not an object; a server may refuse it or read it as no arguments, but must answer",
        expected: "an error, or a result as for no arguments",
        how: How::Request {
            id: || json!(113),
            method: "tools/call",
            params: Params::Tool(|t| json!({"name": t, "arguments": null})),
            judge: any_answer,
            silence: Silence::Passes,
        },
    },
    Check {
        id: "request-id-large-number",
        title: "`ping` with the request id 9007199254740991 (2^53 - 1)",
        spec: Spec::Mcp("/basic#requests"),
        rationale: "a response carries the id of its request, unchanged",
        expected: "a response with the same numeric id",
        how: How::Request {
            id: || json!(9_007_199_254_740_991_u64),
            method: "ping",
            params: Params::None,
            judge: same_id,
            silence: Silence::Fails,
        },
    },
    Check {
        id: "request-id-long-string",
        title: "`ping` with a 1,009-character string request id",
        spec: Spec::Mcp("/basic#requests"),
        rationale: "a response carries the id of its request, unchanged, whatever its length",
        expected: "a response with the same string id",
        how: How::Request {
            id: || json!(format!("mcp-fuzz-{}", "x".repeat(1_000))),
            method: "ping",
            params: Params::None,
            judge: same_id,
            silence: Silence::Fails,
        },
    },
    Check {
        id: "cancel-in-flight",
        title: "`notifications/cancelled` for a request just sent (`tools/list`)",
        spec: Spec::Mcp("/basic/utilities/cancellation"),
        rationale: "a cancellation is a notification: the server may answer the request or drop it, and never answers the notification",
        expected: "no answer to the notification",
        how: How::Notification {
            after_request: Some(120),
            method: "notifications/cancelled",
            params: || json!({"requestId": 120, "reason": "mcp-fuzz: cancellation check"}),
        },
    },
    Check {
        id: "unknown-notification",
        title: "a notification with a method the server does not know",
        spec: Spec::JsonRpc("#notification"),
        rationale: "a notification gets no response, whatever its method",
        expected: "no answer",
        how: How::Notification {
            after_request: None,
            method: "notifications/mcp-fuzz-unknown",
            params: || json!({}),
        },
    },
    Check {
        id: "initialize-unsupported-version",
        title: "`initialize` asking for protocol version 1999-01-01",
        spec: Spec::Mcp("/basic/lifecycle#version-negotiation"),
        rationale: "a server that does not support the requested version must answer with another version it supports",
        expected: "a result whose protocolVersion is a version the server supports",
        how: How::Initialize { version: "1999-01-01" },
    },
    Check {
        id: "ping-before-initialize",
        title: "`ping` before `initialize`",
        spec: Spec::Mcp("/basic/lifecycle#initialization"),
        rationale: "pings are the one request a client may send before the handshake ends; the server answers it",
        expected: "an answer (an empty result)",
        how: How::BeforeInitialize { id: 1, method: "ping", judge: a_result },
    },
    Check {
        id: "request-before-initialize",
        title: "`tools/list` before `initialize`",
        spec: Spec::Mcp("/basic/lifecycle#initialization"),
        rationale: "clients should not send it and the specification does not say what a server answers, but it must answer and stay up",
        expected: "an answer (an error, or a result), the process alive",
        how: How::BeforeInitialize { id: 2, method: "tools/list", judge: any_answer },
    },
];

/// An empty result (only `_meta` allowed) passes.
fn empty_result(m: &Value) -> Judged {
    match m.get("result") {
        Some(r) if r.as_object().is_some_and(|o| o.keys().all(|k| k == "_meta")) => {
            Judged::Pass("an empty result".into())
        }
        _ => fail(Observed::of(m), Severity::Warning),
    }
}

/// -32601 passes.
fn method_not_found(m: &Value) -> Judged {
    match code(m) {
        Some(-32601) => Judged::Pass("error -32601".into()),
        _ => fail(Observed::of(m), Severity::Warning),
    }
}

/// -32002 (2025-11-25) and -32602 (2026-07-28, SEP-2164) pass, and -32601 (no resources
/// served); anything else is a warning.
fn resource_not_found(m: &Value) -> Judged {
    match code(m) {
        Some(c @ (-32002 | -32602)) => Judged::Pass(format!("error {c}")),
        Some(-32601) => Judged::Pass("error -32601 (the server serves no resources)".into()),
        _ => fail(Observed::of(m), Severity::Warning),
    }
}

/// -32602 passes; -32603 is the SDK behaviour of its own kind; anything else fails.
pub(super) fn invalid_params(m: &Value) -> Judged {
    match code(m) {
        Some(-32602) => Judged::Pass("error -32602".into()),
        Some(-32603) => Judged::Fail {
            observed: Observed::of(m),
            severity: Severity::Warning,
            kind: FindingKind::InvalidParamsAsInternalError,
        },
        _ => fail(Observed::of(m), Severity::Warning),
    }
}

/// [`invalid_params`], but a result with `isError: true` refuses too.
pub(super) fn refused(m: &Value) -> Judged {
    if m.pointer("/result/isError") == Some(&Value::Bool(true)) {
        return Judged::Pass(format!("a tool error result: {}", Observed::of(m).text));
    }
    invalid_params(m)
}

/// Any answer passes.
fn any_answer(m: &Value) -> Judged {
    Judged::Pass(Observed::of(m).text)
}

/// An answer with the request's id passes (the session only hands over such answers).
fn same_id(_: &Value) -> Judged {
    Judged::Pass("answered with the same id".into())
}

/// A result passes.
fn a_result(m: &Value) -> Judged {
    if m.get("result").is_some() {
        Judged::Pass(Observed::of(m).text)
    } else {
        fail(Observed::of(m), Severity::Warning)
    }
}

/// The error code of an error response.
pub(super) fn code(m: &Value) -> Option<i64> {
    m.pointer("/error/code").and_then(Value::as_i64)
}

/// What one HTTP check sends and how it is judged.
pub(super) enum Rule {
    /// The addresses a server mcp-fuzz started listens on: loopback only.
    BindsLoopback,
    /// `initialize` with a foreign `Origin` (the `Host` unchanged): 403.
    OriginForeign,
    /// `initialize` with a foreign `Host` and `Origin` (a DNS-rebinding page): refused.
    OriginForeignHost,
    /// `initialize` with the endpoint's own `Origin`: served (so that a 403 above means
    /// something).
    OriginOwn,
    /// The session id issued: visible ASCII only.
    SessionIdVisible,
    /// `ping` without the session id: 400.
    SessionMissing,
    /// `ping` with a session id nobody issued: 404.
    SessionUnknown,
    /// `ping` with an unsupported `MCP-Protocol-Version`: 400.
    VersionUnsupported,
    /// `ping` without `MCP-Protocol-Version`: served (2025-03-26 is assumed).
    VersionAbsent,
    /// `ping` accepting `application/json` only: 406, or a JSON answer.
    AcceptJsonOnly,
    /// A POST of a notification: 202 without a body, or a 4xx.
    Notification,
    /// A POST of a JSON-RPC response: 202 without a body, or a 4xx.
    Response,
    /// GET for the server's stream: `text/event-stream`, or 405.
    GetStream,
    /// A JSON-RPC batch (removed in 2025-06-18): refused.
    Batch,
    /// The SSE event ids of the session's streams so far: unique.
    EventIds,
    /// With `--header Authorization`: a request without it gets 401 pointing at RFC 9728
    /// metadata.
    AuthMetadata,
    /// `DELETE` of the session, then `ping` in it: 404 (or 405 for the `DELETE`).
    SessionDeleted,
}

const fn check(
    id: &'static str,
    title: &'static str,
    anchor: &'static str,
    rationale: &'static str,
    expected: &'static str,
    rule: Rule,
) -> Check {
    Check { id, title, spec: Spec::Mcp(anchor), rationale, expected, how: How::Http(rule) }
}

/// Every HTTP check, in the order they run (the session's `DELETE` last).
pub(super) const HTTP_CHECKS: &[Check] = &[
    check(
        "http-binds-loopback",
        "the addresses the server mcp-fuzz started listens on",
        "/basic/transports#security-warning",
        "when running locally, servers SHOULD bind only to localhost (127.0.0.1) rather than all network interfaces (0.0.0.0)",
        "loopback addresses only",
        Rule::BindsLoopback,
    ),
    check(
        "http-origin-foreign",
        "`initialize` with a foreign `Origin` header",
        "/basic/transports#security-warning",
        "servers MUST validate the Origin header; present and invalid, they MUST answer 403 Forbidden (DNS rebinding)",
        "HTTP 403",
        Rule::OriginForeign,
    ),
    check(
        "http-origin-foreign-host",
        "`initialize` with a foreign `Host` and `Origin` (a DNS-rebinding page)",
        "/basic/transports#security-warning",
        "a page on another site that rebinds its name to this machine must not reach the server",
        "an HTTP 4xx refusal",
        Rule::OriginForeignHost,
    ),
    check(
        "http-origin-own",
        "`initialize` with the endpoint's own `Origin`",
        "/basic/transports#security-warning",
        "a server that refuses every Origin refuses browsers on its own site too; a 403 to a foreign one means something only when its own is served",
        "HTTP 2xx",
        Rule::OriginOwn,
    ),
    check(
        "http-session-id-visible",
        "the `Mcp-Session-Id` the server issued",
        "/basic/transports#session-management",
        "the session ID MUST only contain visible ASCII characters (0x21 to 0x7E)",
        "visible ASCII only",
        Rule::SessionIdVisible,
    ),
    check(
        "http-session-missing",
        "`ping` without the `Mcp-Session-Id` the server issued",
        "/basic/transports#session-management",
        "servers that require a session ID SHOULD answer requests without one (other than initialization) with 400 Bad Request",
        "HTTP 400",
        Rule::SessionMissing,
    ),
    check(
        "http-session-unknown",
        "`ping` with an `Mcp-Session-Id` the server never issued",
        "/basic/transports#session-management",
        "a request with a session ID the server does not know (ended, or never issued) gets 404 Not Found, upon which the client starts a new session",
        "HTTP 404",
        Rule::SessionUnknown,
    ),
    check(
        "http-protocol-version-unsupported",
        "`ping` with `MCP-Protocol-Version: 1999-01-01`",
        "/basic/transports#protocol-version-header",
        "a request with an invalid or unsupported MCP-Protocol-Version MUST get 400 Bad Request",
        "HTTP 400",
        Rule::VersionUnsupported,
    ),
    check(
        "http-protocol-version-absent",
        "`ping` without `MCP-Protocol-Version`",
        "/basic/transports#protocol-version-header",
        "without the header the server SHOULD assume 2025-03-26 (backwards compatibility) and serve the request",
        "HTTP 2xx with the ping's answer",
        Rule::VersionAbsent,
    ),
    check(
        "http-accept-json-only",
        "`ping` with `Accept: application/json` only",
        "/basic/transports#sending-messages-to-the-server",
        "a client that cannot read an event stream must get an answer it can read, or a refusal",
        "HTTP 406, or the answer as application/json",
        Rule::AcceptJsonOnly,
    ),
    check(
        "http-post-notification",
        "a POST of a notification (`notifications/cancelled` of no request)",
        "/basic/transports#sending-messages-to-the-server",
        "a notification the server accepts MUST get 202 Accepted with no body; one it cannot accept an HTTP error status",
        "HTTP 202 without a body, or a 4xx",
        Rule::Notification,
    ),
    check(
        "http-post-response",
        "a POST of a JSON-RPC response to no request",
        "/basic/transports#sending-messages-to-the-server",
        "a response the server accepts MUST get 202 Accepted with no body; one it cannot accept an HTTP error status",
        "HTTP 202 without a body, or a 4xx",
        Rule::Response,
    ),
    check(
        "http-get-stream",
        "GET of the endpoint with `Accept: text/event-stream`",
        "/basic/transports#listening-for-messages-from-the-server",
        "the server MUST either answer with Content-Type: text/event-stream or with 405 Method Not Allowed",
        "HTTP 200 text/event-stream, or 405",
        Rule::GetStream,
    ),
    check(
        "http-batch",
        "a JSON-RPC batch (an array of two `ping`s)",
        "/basic/transports#sending-messages-to-the-server",
        "the body of a POST MUST be a single JSON-RPC request, notification or response (batching was removed in revision 2025-06-18): a server that processes a batch invites clients to rely on it",
        "a refusal (HTTP 4xx or a JSON-RPC error)",
        Rule::Batch,
    ),
    check(
        "http-sse-event-ids",
        "the SSE event ids of the session's streams (every check's answer so far)",
        "/basic/transports#resumability-and-redelivery",
        "an event ID MUST be globally unique across all streams within the session: a client resuming with Last-Event-ID names one event",
        "no event id twice",
        Rule::EventIds,
    ),
    check(
        "http-auth-metadata",
        "`ping` without the `Authorization` header given with --header",
        "/basic/authorization#authorization-server-location",
        "a server that needs authorization MUST point clients at its RFC 9728 protected resource metadata (WWW-Authenticate resource_metadata, or the well-known URL); a client cannot find its authorization server otherwise",
        "HTTP 401 whose metadata names the resource and its authorization servers",
        Rule::AuthMetadata,
    ),
    check(
        "http-session-deleted",
        "`DELETE` of the session, then `ping` in it",
        "/basic/transports#session-management",
        "after a session ends, the server MUST answer requests with its ID with 404 Not Found (it MAY refuse the DELETE with 405)",
        "HTTP 404 after the DELETE (or 405 for the DELETE)",
        Rule::SessionDeleted,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_section_is_linked() {
        for (i, c) in CHECKS.iter().enumerate() {
            assert!(CHECKS[i + 1..].iter().all(|o| o.id != c.id), "duplicate id {}", c.id);
            assert!(c.spec.url().starts_with("https://"), "{}", c.id);
        }
    }

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
