//! Judging one reply by cause, not by transport shape: a handler exception that a high-level SDK
//! turned into a polite `isError` result is still a crash; an unreachable backend is not a bug in
//! input handling; a validation message is graceful.

use crate::client::{ExitInfo, Reply, excerpt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The outcome of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Outcome {
    /// A successful result.
    Ok,
    /// `isError: true` with a handled error (validation or otherwise deliberate).
    ToolError {
        /// The error text.
        text: String,
        /// Whether the text names an unreachable upstream (DNS, refused, 401/403/5xx, no API key).
        upstream: bool,
    },
    /// `isError: true` whose text is a raw exception (stack trace, `TypeError`, `AttributeError`...).
    HandlerException {
        /// The error text.
        text: String,
    },
    /// JSON-RPC -32602.
    InvalidParams {
        /// The error message.
        message: String,
    },
    /// JSON-RPC -32603.
    InternalError {
        /// The error message.
        message: String,
    },
    /// Any other JSON-RPC error.
    RpcError {
        /// The JSON-RPC error code (neither -32602 nor -32603).
        code: i64,
        /// The error's `message`, as sent.
        message: String,
    },
    /// No answer in time.
    Timeout,
    /// No answer in time, while the server's stderr showed an unreachable upstream or a retry
    /// loop: not the server's own hang.
    UpstreamTimeout {
        /// The stderr line that shows it.
        evidence: String,
    },
    /// Cancelled because it could not finish within `--max-call-time` (its progress rate, or
    /// still reporting progress at the limit).
    Slow {
        /// Why, with the estimate.
        detail: String,
    },
    /// The process died.
    Exited {
        /// The exit status or the signal that ended it.
        exit: ExitInfo,
        /// The last stderr lines.
        stderr: Vec<String>,
    },
    /// A reply that breaks JSON-RPC or the MCP result shape.
    ProtocolViolation {
        /// What is wrong.
        detail: String,
    },
    /// A successful result whose `structuredContent` breaks the tool's `outputSchema`.
    OutputSchemaViolation {
        /// What is wrong.
        detail: String,
    },
    /// A response larger than the limit.
    Oversize {
        /// Its size in bytes.
        bytes: u64,
    },
}

impl Outcome {
    /// The stable kebab-case name.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError { .. } => "tool-error",
            Self::HandlerException { .. } => "handler-exception",
            Self::InvalidParams { .. } => "invalid-params",
            Self::InternalError { .. } => "internal-error",
            Self::RpcError { .. } => "rpc-error",
            Self::Timeout => "timeout",
            Self::UpstreamTimeout { .. } => "upstream-timeout",
            Self::Slow { .. } => "slow",
            Self::Exited { .. } => "exited",
            Self::ProtocolViolation { .. } => "protocol-violation",
            Self::OutputSchemaViolation { .. } => "output-schema-violation",
            Self::Oversize { .. } => "oversize",
        }
    }

    /// Whether this is a graceful answer to invalid input.
    #[must_use]
    pub fn is_graceful(&self) -> bool {
        match self {
            Self::ToolError { .. } | Self::InvalidParams { .. } => true,
            Self::RpcError { message, .. } => looks_like_validation(message),
            _ => false,
        }
    }

    /// Whether this is a failure whatever the input (a crash, hang, protocol breach...).
    #[must_use]
    pub fn is_failure(&self) -> bool {
        match self {
            Self::HandlerException { .. }
            | Self::InternalError { .. }
            | Self::Timeout
            | Self::Exited { .. }
            | Self::ProtocolViolation { .. }
            | Self::OutputSchemaViolation { .. }
            | Self::Oversize { .. } => true,
            Self::RpcError { message, .. } => !looks_like_validation(message),
            _ => false,
        }
    }

    /// Whether this outcome is a failure finding for a case whose input is valid (or not): on
    /// invalid input anything but a graceful answer or acceptance, on valid input a failure.
    #[must_use]
    pub fn fails(&self, valid_input: bool) -> bool {
        if valid_input {
            self.is_failure()
        } else {
            !self.is_graceful() && !self.is_unjudged() && !matches!(self, Self::Ok)
        }
    }

    /// Whether this outcome names an unreachable upstream (an error that says so, or a timeout
    /// while stderr showed it).
    #[must_use]
    pub fn names_upstream(&self) -> bool {
        matches!(self, Self::ToolError { upstream: true, .. } | Self::UpstreamTimeout { .. })
    }

    /// Whether this outcome says nothing about input handling: slow work, a dead upstream.
    #[must_use]
    pub fn is_unjudged(&self) -> bool {
        matches!(self, Self::Slow { .. } | Self::UpstreamTimeout { .. })
    }

    /// The message or text carried, if any.
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::ToolError { text, .. } | Self::HandlerException { text } => Some(text),
            Self::InvalidParams { message }
            | Self::InternalError { message }
            | Self::RpcError { message, .. } => Some(message),
            Self::ProtocolViolation { detail }
            | Self::OutputSchemaViolation { detail }
            | Self::Slow { detail } => Some(detail),
            Self::UpstreamTimeout { evidence } => Some(evidence),
            _ => None,
        }
    }
}

/// Markers of a raw exception surfacing as text (JS, Python, Rust, Go, Java).
const EXCEPTION_MARKERS: &[&str] = &[
    "Traceback (most recent call last)",
    "TypeError",
    "ReferenceError",
    "RangeError",
    "SyntaxError: ",
    "AttributeError",
    "KeyError",
    "IndexError",
    "NameError",
    "UnboundLocalError",
    "ZeroDivisionError",
    "NullPointerException",
    "is not a function",
    "Cannot read properties of",
    "Cannot read property",
    "undefined is not",
    "is not iterable",
    "has no attribute",
    "object is not subscriptable",
    "'NoneType'",
    "panicked at",
    "nil pointer dereference",
    "index out of range",
];

/// Markers of a validation message.
const VALIDATION_MARKERS: &[&str] = &[
    "input validation error",
    "validation error",
    "invalid arguments",
    "invalid argument",
    "invalid params",
    "invalid parameter",
    "invalid input",
    "invalid value",
    "invalid type",
    "-32602",
    "must be",
    "is required",
    "required property",
    "required field",
    "missing required",
    "field required",
    "expected ",
    "should be",
    "not valid",
    "is not allowed",
    "additional properties",
    "unrecognized key",
    "does not match",
    "out of range",
];

/// Markers of an unreachable upstream (not a bug in input handling).
const UPSTREAM_MARKERS: &[&str] = &[
    "EAI_AGAIN",
    "ECONNREFUSED",
    "EHOSTUNREACH",
    "ENETUNREACH",
    "ECONNABORTED",
    "socket hang up",
    "Could not connect",
    "could not connect",
    "Failed to connect",
    "failed to connect",
    "network connection",
    "network error",
    "Network error",
    "connection issue",
    "connection error",
    "Connection error",
    "429 Too Many Requests",
    "500 Internal Server Error from",
    "ENOTFOUND",
    "ECONNRESET",
    "ETIMEDOUT",
    "getaddrinfo",
    "fetch failed",
    "connection refused",
    "Connection refused",
    "Name or service not known",
    "Temporary failure in name resolution",
    "401 Unauthorized",
    "403 Forbidden",
    "Unauthorized",
    "Forbidden",
    "502 Bad Gateway",
    "503 Service Unavailable",
    "504 Gateway",
    "API key",
    "api key",
    "API_KEY",
    "api_key",
    "credentials",
    "not authenticated",
];

fn js_stack_frame(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("at ")
            && (t.contains(".js:")
                || t.contains(".ts:")
                || t.contains(".mjs:")
                || t.contains("node:"))
    }) || text.lines().any(|l| l.trim_start().starts_with("File \"") && l.contains(", line "))
}

/// Whether a message reads like input validation.
#[must_use]
pub fn looks_like_validation(text: &str) -> bool {
    let lower = text.to_lowercase();
    VALIDATION_MARKERS.iter().any(|m| lower.contains(m))
}

/// Whether a text reads like a raw exception.
#[must_use]
pub fn looks_like_exception(text: &str) -> bool {
    js_stack_frame(text) || EXCEPTION_MARKERS.iter().any(|m| text.contains(m))
}

/// Whether a text names an unreachable upstream.
#[must_use]
pub fn looks_like_upstream(text: &str) -> bool {
    UPSTREAM_MARKERS.iter().any(|m| text.contains(m))
}

/// Whether a log line shows a retry loop (`connection error; retrying in 1s`).
#[must_use]
pub fn looks_like_retry(line: &str) -> bool {
    let lower = line.to_lowercase();
    lower.contains("retrying") || lower.contains("retry in") || lower.contains("will retry")
}

/// Judges a reply. `output` validates `structuredContent` when the tool declares an
/// `outputSchema`; `stderr` is the server's last stderr lines (for deaths).
#[must_use]
pub fn classify(
    reply: Reply,
    output: Option<&jsonschema::Validator>,
    stderr: impl FnOnce() -> Vec<String>,
) -> Outcome {
    match reply {
        Reply::Result(v) => classify_result(&v, output),
        Reply::RpcError { code: -32602, message } => Outcome::InvalidParams { message },
        Reply::RpcError { code: -32603, message } => Outcome::InternalError { message },
        Reply::RpcError { code, message } => Outcome::RpcError { code, message },
        Reply::Timeout(_) => {
            let stderr = stderr();
            match stderr.iter().rev().find(|l| looks_like_upstream(l) || looks_like_retry(l)) {
                Some(line) => Outcome::UpstreamTimeout { evidence: clip(line) },
                None => Outcome::Timeout,
            }
        }
        Reply::Slow(detail) => Outcome::Slow { detail },
        Reply::Exited(exit) => Outcome::Exited { exit, stderr: stderr() },
        Reply::Oversize(bytes) => Outcome::Oversize { bytes },
        Reply::Protocol(detail) => Outcome::ProtocolViolation { detail },
    }
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
        let text: String = items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        // A validation message with a stack trace is still an exception surfacing.
        if looks_like_exception(&text)
            && !(looks_like_validation(&text)
                && !js_stack_frame(&text)
                && !text.contains("Traceback"))
        {
            return Outcome::HandlerException { text: clip(&text) };
        }
        return Outcome::ToolError { upstream: looks_like_upstream(&text), text: clip(&text) };
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
    if s.chars().count() > TEXT_CHARS {
        format!("{}…", s.chars().take(TEXT_CHARS).collect::<String>())
    } else {
        s.to_owned()
    }
}

impl Outcome {
    /// The cause of a failure, normalised so that one bug gives one text whatever the input:
    /// the kind, the JSON-RPC code, the exception (class and message) or panic location, the
    /// exit status. Digits become `#` and quoted values `'…'`: they are usually the input (or
    /// its type) echoed back.
    #[must_use]
    pub fn cause(&self) -> String {
        let kind = self.kind();
        match self {
            Self::Exited { exit, stderr } => match crash_site(stderr, Quoted::Elided) {
                Some(site) => format!("{kind}: {exit}: {site}"),
                None => format!("{kind}: {exit}"),
            },
            Self::RpcError { code, message } => format!("{kind} {code}: {}", normalise(message)),
            Self::HandlerException { text: m }
            | Self::InternalError { message: m }
            | Self::InvalidParams { message: m }
            | Self::ToolError { text: m, .. } => format!("{kind}: {}", normalise(m)),
            // The breach, not the bytes quoted after it.
            Self::ProtocolViolation { detail } | Self::OutputSchemaViolation { detail } => {
                let what = detail.split(": `").next().unwrap_or(detail);
                format!("{kind}: {}", normalise(what))
            }
            Self::Ok
            | Self::Timeout
            | Self::UpstreamTimeout { .. }
            | Self::Slow { .. }
            | Self::Oversize { .. } => kind.to_owned(),
        }
    }

    /// The cause as it reads in any tool, for one bug seen on several tools: only a cause that
    /// names a place or a message precise enough that two tools sharing it share the code (a
    /// panic location, an exception line or an error message with its quoted values kept, a
    /// breach of the wire format). `None` for causes as general as a timeout, a bare exit status
    /// or "Internal error".
    #[must_use]
    pub fn shared_cause(&self) -> Option<String> {
        let kind = self.kind();
        match self {
            Self::Exited { exit, stderr } => {
                crash_site(stderr, Quoted::Kept).map(|site| format!("{kind}: {exit}: {site}"))
            }
            Self::RpcError { code, message } => {
                specific(message).map(|m| format!("{kind} {code}: {m}"))
            }
            Self::HandlerException { text: m } | Self::InternalError { message: m } => {
                specific(m).map(|m| format!("{kind}: {m}"))
            }
            Self::ProtocolViolation { .. } => Some(self.cause()),
            _ => None,
        }
    }
}

/// An error text normalised with its quoted values kept, when it says more than a generic
/// JSON-RPC phrase.
fn specific(text: &str) -> Option<String> {
    let line = normalise_with(text, Quoted::Kept);
    let words = line.split_whitespace().filter(|w| w.chars().any(char::is_alphabetic)).count();
    let generic = ["internal error", "internal server error", "error", "unknown error"]
        .iter()
        .any(|g| line.trim_end_matches('.').eq_ignore_ascii_case(g));
    (words >= 3 && !generic).then_some(line)
}

/// Whether normalising a text elides its quoted values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quoted {
    Elided,
    Kept,
}

/// Where a crashed process says it failed: a Rust panic's location, or the last
/// `SomeError: message` line of a Python traceback or a Node.js stack.
fn crash_site(stderr: &[String], quoted: Quoted) -> Option<String> {
    if let Some(at) = stderr.iter().find_map(|l| l.split_once("panicked at ").map(|(_, r)| r)) {
        return Some(format!("panic at {}", at.trim_end_matches(':')));
    }
    stderr
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| is_exception_line(l))
        .map(|l| normalise_with(l, quoted))
}

/// `ZeroDivisionError: division by zero`, `TypeError: Cannot read ...`, `KeyError`.
fn is_exception_line(line: &str) -> bool {
    let name = line.split(':').next().unwrap_or("");
    let last = name.rsplit('.').next().unwrap_or(name);
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && (last.ends_with("Error") || last.ends_with("Exception"))
}

/// The first meaningful line of `text` (not a lone brace), digits as `#`, quoted values as
/// `'…'`, at most 160 characters.
fn normalise(text: &str) -> String {
    normalise_with(text, Quoted::Elided)
}

/// [`normalise`], eliding quoted values or not.
fn normalise_with(text: &str, quoted: Quoted) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !matches!(*l, "{" | "[" | "}" | "]"))
        .unwrap_or("");
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('#');
        } else if quoted == Quoted::Elided && matches!(c, '\'' | '"' | '`') {
            // Quoted text is nearly always a value (the input, its type name, a key).
            chars.by_ref().take_while(|&d| d != c).for_each(drop);
            out.push_str(&format!("{c}…{c}"));
        } else {
            out.push(c);
        }
        if out.chars().count() >= 160 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_bug_has_one_cause_whatever_the_input() {
        let exc = |t: &str| Outcome::HandlerException { text: t.to_owned() };
        assert_eq!(
            exc("Error executing tool shout: 'NoneType' object has no attribute 'upper'").cause(),
            "handler-exception: Error executing tool shout: '…' object has no attribute '…'"
        );
        assert_eq!(
            exc("Error executing tool shout: 'int' object has no attribute 'upper'").cause(),
            exc("Error executing tool shout: 'dict' object has no attribute 'upper'").cause(),
            "one bug whatever the type of the input"
        );
        assert_eq!(
            exc("TypeError: x is 12 long\n  at f (a.js:3:4)").cause(),
            exc("TypeError: x is 7 long\n  at f (a.js:3:4)").cause()
        );
        let long_a = exc("no note 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' found").cause();
        assert_eq!(
            long_a,
            exc("no note 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' found").cause()
        );
        let died = |lines: &[&str]| Outcome::Exited {
            exit: ExitInfo { code: Some(101), signal: None },
            stderr: lines.iter().map(|l| (*l).to_owned()).collect(),
        };
        let panic =
            died(&["thread 'main' panicked at src/search.rs:88:24:", "attempt to divide by zero"]);
        assert_eq!(panic.cause(), "exited: exit status 101: panic at src/search.rs:88:24");
        let py = died(&[
            "Traceback (most recent call last):",
            "  File \"s.py\", line 3",
            "ZeroDivisionError: division by zero",
        ]);
        assert_eq!(py.cause(), "exited: exit status 101: ZeroDivisionError: division by zero");
        assert_eq!(died(&["bye"]).cause(), "exited: exit status 101");
        let pv = |d: &str| Outcome::ProtocolViolation { detail: d.to_owned() };
        assert_eq!(
            pv("a line (at byte 12): `junk: 1`").cause(),
            pv("a line (at byte 9): `junk: 2`").cause()
        );
        assert_eq!(Outcome::Timeout.cause(), "timeout");
        let rpc = Outcome::RpcError { code: -32000, message: "boom 3".into() };
        assert_eq!(rpc.cause(), "rpc-error -32000: boom #");
    }

    use super::*;
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
            assert_eq!(err_text(t).kind(), "handler-exception", "{t}");
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
            assert_eq!(o.kind(), "tool-error", "{t}");
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
        assert_eq!(result(json!({"isError": true})).kind(), "protocol-violation");
        assert_eq!(result(json!({})).kind(), "protocol-violation");
        assert_eq!(result(json!({"content": "text"})).kind(), "protocol-violation");
        assert_eq!(result(json!(5)).kind(), "protocol-violation");
        assert_eq!(result(json!({"content": []})).kind(), "ok");
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
        assert_eq!(o.kind(), "output-schema-violation");
        let o = classify(Reply::Result(json!({"content": []})), Some(&v), Vec::new);
        assert_eq!(o.kind(), "output-schema-violation");
        let o = classify(
            Reply::Result(json!({"content": [], "structuredContent": {"count": 2}})),
            Some(&v),
            Vec::new,
        );
        assert_eq!(o, Outcome::Ok);
    }

    #[test]
    fn rpc_codes_map_to_kinds() {
        let c =
            |code| classify(Reply::RpcError { code, message: "x".into() }, None, Vec::new).kind();
        assert_eq!(c(-32602), "invalid-params");
        assert_eq!(c(-32603), "internal-error");
        assert_eq!(c(-32000), "rpc-error");
    }
}
