//! The wordings that tell what an error's text means, in one place: a raw exception (a stack
//! trace, `TypeError`, `KeyError`...), an unreachable upstream (DNS, refused connections,
//! 401/403/5xx, a missing API key), a retry loop, or a validation message (the tool's own
//! refusal of its input). The judge reads every reply and stderr line through these tables.

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

/// Whether a text holds a stack frame: JavaScript (`at f (a.js:1:2)`) or Python (`File "s.py",
/// line 3`).
#[must_use]
pub fn stack_frame(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("at ")
            && (t.contains(".js:")
                || t.contains(".ts:")
                || t.contains(".mjs:")
                || t.contains("node:"))
    }) || text.lines().any(|l| l.trim_start().starts_with("File \"") && l.contains(", line "))
}

/// Whether a text reads like a raw exception.
#[must_use]
pub fn looks_like_exception(text: &str) -> bool {
    stack_frame(text) || EXCEPTION_MARKERS.iter().any(|m| text.contains(m))
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
/// Whether a message reads like input validation.
#[must_use]
pub fn looks_like_validation(text: &str) -> bool {
    let lower = text.to_lowercase();
    VALIDATION_MARKERS.iter().any(|m| lower.contains(m))
}
