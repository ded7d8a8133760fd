//! Judging one reply by cause, not by transport shape: a handler exception that a high-level SDK
//! turned into a polite `isError` result is still a crash; an unreachable backend is not a bug in
//! input handling; a validation message is graceful. This is the only place that turns a reply
//! into an [`Outcome`]: tool calls through [`classify`], the other requests (prompts, resources,
//! completions) through [`outcome`], and the answers a real client saw through [`response`].

use super::words::compact;
use crate::transport::{Reply, excerpt};
use mcp_fuzz_model::outcome::Outcome;
use mcp_fuzz_model::wording::{
    looks_like_exception, looks_like_retry, looks_like_upstream, looks_like_validation,
    reads_as_error_result, reads_as_exception,
};
use serde_json::Value;

/// Who sent the request a reply answers, which decides how its messages are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A `tools/call`: messages as sent (the judge reads them); a timeout while the server's
    /// stderr names an unreachable upstream is the upstream's.
    Tool,
    /// A request beside tools (`prompts/get`, `resources/read`...): messages on one line,
    /// capped, since JSON-RPC messages often hold a pretty-printed validation report.
    Surface,
}

/// Judges a reply to a `tools/call`. `output` validates `structuredContent` when the tool
/// declares an `outputSchema`; `stderr` is the server's last stderr lines (for deaths).
#[must_use]
pub fn classify(
    reply: Reply,
    output: Option<&jsonschema::Validator>,
    stderr: impl FnOnce() -> Vec<String>,
) -> Outcome {
    match reply {
        Reply::Result(v) => classify_result(&v, output),
        other => outcome(other, stderr, Caller::Tool),
    }
}

/// The outcome of a reply, judged by what it is rather than by what it carries: a result is
/// [`Outcome::Ok`] here (its shape is the caller's to check: a tool result's by [`classify`]).
#[must_use]
pub fn outcome(reply: Reply, stderr: impl FnOnce() -> Vec<String>, caller: Caller) -> Outcome {
    let text = |message: String| match caller {
        Caller::Tool => message,
        Caller::Surface => compact(&message),
    };
    match reply {
        Reply::Result(_) => Outcome::Ok,
        Reply::RpcError { code: -32602, message, .. } => {
            Outcome::InvalidParams { message: text(message) }
        }
        Reply::RpcError { code: -32603, message, data } => {
            let upstream = names_upstream(&message, data.as_ref());
            Outcome::InternalError { message: text(message), upstream }
        }
        Reply::RpcError { code, message, data } => {
            // The tool's own refusal, unless only a runtime error writes it: a Python
            // `IndexError` sent as a JSON-RPC error is a crash, valid input or not.
            let refusal = looks_like_validation(&message) && !reads_as_exception(&message);
            let upstream = names_upstream(&message, data.as_ref());
            Outcome::RpcError { code, message: text(message), refusal, upstream }
        }
        Reply::Timeout(_) if caller == Caller::Tool => {
            let stderr = stderr();
            match stderr.iter().rev().find(|l| looks_like_upstream(l) || looks_like_retry(l)) {
                Some(line) => Outcome::UpstreamTimeout { evidence: clip(line) },
                None => Outcome::Timeout,
            }
        }
        Reply::Timeout(_) => Outcome::Timeout,
        Reply::Slow(detail) => Outcome::Slow { detail },
        Reply::Exited(exit) => Outcome::Exited { exit, stderr: stderr() },
        Reply::Oversize { bytes, at_least } => Outcome::Oversize { bytes, at_least },
        Reply::Http { status, detail } => Outcome::HttpError { status, detail },
        Reply::Protocol(detail) => Outcome::ProtocolViolation { detail },
    }
}

/// Whether a JSON-RPC error names an unreachable upstream, in its message or its `data`: the
/// same wordings as an `isError` text or a stderr line, on every channel.
fn names_upstream(message: &str, data: Option<&Value>) -> bool {
    looks_like_upstream(message)
        || data.is_some_and(|d| match d {
            Value::String(s) => looks_like_upstream(s),
            other => looks_like_upstream(&other.to_string()),
        })
}

/// Judges a JSON-RPC response to a `tools/call` that came as a whole value (a real client's
/// call path, read from the wire): as [`classify`] judges a reply.
#[must_use]
pub fn response(response: &Value) -> Outcome {
    if let Some(result) = response.get("result") {
        return classify(Reply::Result(result.clone()), None, Vec::new);
    }
    if let Some(error) = response.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = error.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
        let data = error.get("data").cloned();
        return classify(Reply::RpcError { code, message, data }, None, Vec::new);
    }
    Outcome::ProtocolViolation { detail: "a response with neither `result` nor `error`".into() }
}

/// The text blocks of a result's content, one per line.
fn texts(items: &[Value]) -> String {
    items
        .iter()
        .filter_map(|i| i.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

fn classify_result(v: &Value, output: Option<&jsonschema::Validator>) -> Outcome {
    let Some(obj) = v.as_object() else {
        return Outcome::ProtocolViolation {
            detail: format!("the result is not an object: {}", excerpt(v)),
        };
    };
    let is_error = match obj.get("isError") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Outcome::ProtocolViolation {
                detail: format!("`isError` is not a boolean: {}", excerpt(other)),
            };
        }
    };
    let Some(content) = obj.get("content") else {
        return Outcome::ProtocolViolation {
            detail: format!(
                "a tool result without `content`{}",
                if is_error { " (isError: true)" } else { "" }
            ),
        };
    };
    let Some(items) = content.as_array() else {
        return Outcome::ProtocolViolation {
            detail: format!("`content` is not an array: {}", excerpt(content)),
        };
    };
    if let Some(bad) = items.iter().find(|i| !i.get("type").is_some_and(Value::is_string)) {
        return Outcome::ProtocolViolation {
            detail: format!("a content block without a `type`: {}", excerpt(bad)),
        };
    }
    if is_error {
        let text = texts(items);
        // A message that only a runtime error writes (a stack frame, `list index out of range`)
        // is an exception even when it also reads like validation.
        if reads_as_exception(&text)
            || (looks_like_exception(&text) && !looks_like_validation(&text))
        {
            return Outcome::HandlerException { text: clip(&text) };
        }
        return Outcome::ToolError { upstream: looks_like_upstream(&text), text: clip(&text) };
    }
    let text = texts(items);
    if reads_as_error_result(&text) {
        return Outcome::UnflaggedError { text: clip(&text) };
    }
    if let Some(validator) = output {
        match obj.get("structuredContent") {
            None => {
                return Outcome::OutputSchemaViolation {
                    detail: "the tool declares an `outputSchema` but the result has no `structuredContent`".into(),
                };
            }
            Some(sc) => {
                if let Some(err) = validator.iter_errors(sc).next() {
                    return Outcome::OutputSchemaViolation {
                        detail: format!("`structuredContent{}` {err}", err.instance_path()),
                    };
                }
            }
        }
    }
    Outcome::Ok
}

/// Characters of tool text kept in a report.
const TEXT_CHARS: usize = 2_000;

fn clip(s: &str) -> String {
    mcp_fuzz_model::text::clip(s, TEXT_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fuzz_model::outcome::OutcomeKind;
    use serde_json::json;

    fn result(v: Value) -> Outcome {
        classify(Reply::Result(v), None, Vec::new)
    }

    fn err_text(t: &str) -> Outcome {
        result(json!({"content": [{"type": "text", "text": t}], "isError": true}))
    }

    #[test]
    fn exceptions_delivered_politely_are_exceptions() {
        for t in [
            "TypeError: Cannot read properties of undefined (reading 'toLowerCase')\n    at format (/app/server.js:12:20)",
            "x.toLowerCase is not a function",
            "Error executing tool shout: 'NoneType' object has no attribute 'upper'",
            "Traceback (most recent call last):\n  File \"server.py\", line 3, in f\nKeyError: 'a'",
        ] {
            assert_eq!(err_text(t).kind(), OutcomeKind::HandlerException, "{t}");
        }
    }

    #[test]
    fn validation_messages_are_graceful() {
        for t in [
            "Input validation error: Invalid arguments for tool echo: expected string, received number",
            "MCP error -32602: Invalid params",
            "Error executing tool checked: 1 validation error for checkedArguments\ncount\n  Input should be greater than or equal to 0",
            "email must be a valid email",
        ] {
            let o = err_text(t);
            assert_eq!(o.kind(), OutcomeKind::ToolError, "{t}");
            assert!(o.is_graceful());
        }
    }

    #[test]
    fn upstream_failures_are_marked() {
        assert_eq!(
            err_text("fetch failed: getaddrinfo EAI_AGAIN api.example.com"),
            Outcome::ToolError {
                text: "fetch failed: getaddrinfo EAI_AGAIN api.example.com".into(),
                upstream: true
            }
        );
    }

    #[test]
    fn result_shape_breaches_are_protocol_violations() {
        assert_eq!(result(json!({"isError": true})).kind(), OutcomeKind::ProtocolViolation);
        assert_eq!(result(json!({})).kind(), OutcomeKind::ProtocolViolation);
        assert_eq!(result(json!({"content": "text"})).kind(), OutcomeKind::ProtocolViolation);
        assert_eq!(result(json!(5)).kind(), OutcomeKind::ProtocolViolation);
        assert_eq!(result(json!({"content": []})).kind(), OutcomeKind::Ok);
    }

    #[test]
    fn output_schemas_are_checked() {
        let v = jsonschema::validator_for(&json!({"type": "object", "required": ["count"], "properties": {"count": {"type": "integer"}}}))
            .expect("schema");
        let o = classify(
            Reply::Result(json!({"content": [], "structuredContent": {"count": "many"}})),
            Some(&v),
            Vec::new,
        );
        assert_eq!(o.kind(), OutcomeKind::OutputSchemaViolation);
        let o = classify(Reply::Result(json!({"content": []})), Some(&v), Vec::new);
        assert_eq!(o.kind(), OutcomeKind::OutputSchemaViolation);
        let o = classify(
            Reply::Result(json!({"content": [], "structuredContent": {"count": 2}})),
            Some(&v),
            Vec::new,
        );
        assert_eq!(o, Outcome::Ok);
    }

    #[test]
    fn rpc_codes_map_to_kinds() {
        let c = |code| {
            classify(Reply::RpcError { code, message: "x".into(), data: None }, None, Vec::new)
                .kind()
        };
        assert_eq!(c(-32602), OutcomeKind::InvalidParams);
        assert_eq!(c(-32603), OutcomeKind::InternalError);
        assert_eq!(c(-32000), OutcomeKind::RpcError);
    }

    #[test]
    fn an_unreachable_upstream_is_read_on_every_channel() {
        let rpc = |code, message: &str, data| {
            classify(Reply::RpcError { code, message: message.into(), data }, None, Vec::new)
        };
        let chart = rpc(
            -32603,
            "Failed to generate chart: getaddrinfo ENOTFOUND antv-studio.alipay.com",
            None,
        );
        assert!(chart.names_upstream() && chart.is_unjudged() && !chart.is_failure(), "{chart:?}");
        let data = rpc(
            -32000,
            "upstream request failed",
            Some(json!({"cause": "connect ECONNREFUSED 10.0.0.1:443"})),
        );
        assert!(data.names_upstream() && !data.is_graceful(), "{data:?}");
        let own = rpc(-32603, "boom", None);
        assert!(!own.names_upstream() && own.is_failure());
        assert!(rpc(-32000, "count must be positive", None).is_graceful(), "a refusal");
    }

    #[test]
    fn an_exception_sent_as_a_json_rpc_error_is_a_crash_whatever_the_input() {
        // See: issue 30 item 2 (an IndexError's text with code 0 was a "valid call failed" info
        // while a KeyError's from the same tool was a failure).
        for message in ["list index out of range", "'user_id'", "division by zero"] {
            let o = classify(
                Reply::RpcError { code: 0, message: message.into(), data: None },
                None,
                Vec::new,
            );
            assert!(o.is_failure() && !o.is_graceful(), "{message}: {o:?}");
            assert!(o.fails(true) && o.fails(false), "{message}");
        }
        let text = |t: &str| {
            classify(
                Reply::Result(json!({"content": [{"type": "text", "text": t}], "isError": true})),
                None,
                Vec::new,
            )
        };
        assert_eq!(text("list index out of range").kind(), OutcomeKind::HandlerException);
        assert_eq!(text("value 200 out of range").kind(), OutcomeKind::ToolError);
    }

    #[test]
    fn an_error_written_as_an_ordinary_result_is_told_apart() {
        // See: issue 30 item 8 (`mcp-taskmanager`: "360 of 360 valid calls succeeded").
        let result = |t: &str, is_error: bool| {
            classify(
                Reply::Result(
                    json!({"content": [{"type": "text", "text": t}], "isError": is_error}),
                ),
                None,
                Vec::new,
            )
        };
        let unflagged = result("Error: task 7 not found", false);
        assert_eq!(unflagged.kind(), OutcomeKind::UnflaggedError);
        assert!(unflagged.is_graceful() && !unflagged.is_failure(), "a refusal, said wrong");
        assert_eq!(result(r#"{"status": "error"}"#, false).kind(), OutcomeKind::UnflaggedError);
        assert_eq!(result("Error: task 7 not found", true).kind(), OutcomeKind::ToolError);
        assert_eq!(result("Task 7: water the plants", false).kind(), OutcomeKind::Ok);
    }

    #[test]
    fn a_whole_response_is_judged_as_a_reply() {
        let tool_error = json!({"result": {"content": [], "isError": true}});
        assert!(response(&tool_error).is_graceful());
        let ok = json!({"result": {"content": [{"type": "text", "text": "{}"}]}});
        assert_eq!(response(&ok), Outcome::Ok);
        assert!(response(&json!({"error": {"code": -32602, "message": "bad"}})).is_graceful());
        assert!(matches!(
            response(&json!({"jsonrpc": "2.0", "id": 1})),
            Outcome::ProtocolViolation { .. }
        ));
    }
}
