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
    "Cannot destructure property",
    "undefined is not",
    "is not iterable",
    "has no attribute",
    "object is not subscriptable",
    "'NoneType'",
    "panicked at",
    "nil pointer dereference",
    "index out of range",
];

/// Phrases only a runtime error writes: a text that holds one is an exception even when it also
/// reads like validation (Python's `list index out of range` holds "out of range").
const DEFINITE_EXCEPTIONS: &[&str] = &[
    "Traceback (most recent call last)",
    "list index out of range",
    "tuple index out of range",
    "string index out of range",
    "index out of range [",
    "division by zero",
    "divide by zero",
    "unsupported operand type(s)",
    "object is not subscriptable",
    "object is not iterable",
    "object is not callable",
    "has no attribute",
    "'NoneType' object",
    "is not a function",
    "Cannot read properties of",
    "Cannot read property",
    "Cannot destructure property",
    "undefined is not an object",
    "panicked at",
    "nil pointer dereference",
    "NullPointerException",
    "maximum recursion depth exceeded",
    "Maximum call stack size exceeded",
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
    "from network",
    "from the network",
    "Could not fetch",
    "could not fetch",
    "Failed to fetch",
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

/// Whether a text holds a stack frame: JavaScript (`at f (a.js:1:2)`), Python (`File "s.py",
/// line 3`), the JVM (`at a.B.c(B.java:5)`), .NET (`at A.B() in /app/B.cs:line 4`) or Go
/// (`/app/main.go:42 +0x1d` under `goroutine 1 [running]:`).
#[must_use]
pub fn stack_frame(text: &str) -> bool {
    const SOURCES: &[&str] =
        &[".js:", ".ts:", ".mjs:", "node:", ".java:", ".kt:", ".scala:", ".cs:line "];
    text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("at ") && SOURCES.iter().any(|s| t.contains(s))
    }) || text.lines().any(|l| l.trim_start().starts_with("File \"") && l.contains(", line "))
        || (text.contains("goroutine ") && text.lines().any(|l| l.contains(".go:")))
}

/// Whether a text reads as a runtime error whatever else it says: a stack frame, a phrase only a
/// runtime error writes ([`DEFINITE_EXCEPTIONS`]), or the bare repr of a Python `KeyError` (a
/// message that is one quoted word, `'user_id'`).
#[must_use]
pub fn reads_as_exception(text: &str) -> bool {
    stack_frame(text) || DEFINITE_EXCEPTIONS.iter().any(|m| text.contains(m)) || key_error(text)
}

/// `'user_id'`: what `str(KeyError("user_id"))` is, and so what a Python server whose handler
/// raised it answers.
fn key_error(text: &str) -> bool {
    let t = text.trim();
    t.len() >= 3
        && t.starts_with('\'')
        && t.ends_with('\'')
        && !t[1..t.len() - 1].contains(['\'', ' ', '\n'])
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

/// How the first line of an error written as an ordinary result starts (compared in lower case).
const ERROR_RESULT_PREFIXES: &[&str] = &[
    "error:",
    "error -",
    "error executing",
    "error calling",
    "error occurred",
    "an error occurred",
    "exception:",
    "failed to ",
    "fatal:",
    "traceback (most recent call last)",
];

/// The most characters a result text may have to be read as an error: a long text that starts
/// with "Error:" is more likely a log or a document the tool returned.
const MAX_ERROR_RESULT: usize = 2_000;

/// Whether a tool result's text reads as an error although `isError` is not set: its first line
/// starts like an error (`Error: ...`, `Failed to ...`, a traceback), it reads as a runtime
/// error ([`reads_as_exception`]), or it is a JSON object that says it failed
/// (`{"status": "error"}`, `{"success": false, ...}`, `{"error": "..."}` alone or with a
/// message). Clients and models read such a result as a success.
///
/// See: issue 30 item 8 (`mcp-taskmanager`: "360 of 360 valid calls succeeded", its errors
/// being ordinary results).
#[must_use]
pub fn reads_as_error_result(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.chars().count() > MAX_ERROR_RESULT {
        return false;
    }
    if let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(t) {
        return json_says_failed(&o);
    }
    let first = t.lines().next().unwrap_or("").to_lowercase();
    ERROR_RESULT_PREFIXES.iter().any(|p| first.starts_with(p)) || reads_as_exception(t)
}

/// A JSON result that says it failed: a status of error, a false success flag, or an error
/// member with little else beside it.
fn json_says_failed(o: &serde_json::Map<String, serde_json::Value>) -> bool {
    use serde_json::Value;
    let status = ["status", "result", "state"].iter().filter_map(|k| o.get(*k)).any(|v| {
        v.as_str().is_some_and(|s| {
            matches!(s.to_lowercase().as_str(), "error" | "failed" | "failure" | "fail")
        })
    });
    let flag =
        ["success", "ok", "succeeded"].iter().any(|k| o.get(*k) == Some(&Value::Bool(false)));
    let error = o.get("error").is_some_and(|e| match e {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.trim().is_empty(),
        _ => true,
    });
    let others = o
        .keys()
        .filter(|k| !matches!(k.as_str(), "error" | "message" | "code" | "details"))
        .count();
    status || flag || (error && others == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per wording the judge reads, with a message a real server wrote.
    #[test]
    fn exceptions_are_told_apart_from_refusals_row_by_row() {
        let exceptions = [
            "Traceback (most recent call last):\n  File \"s.py\", line 3, in f\nKeyError: 'a'",
            "list index out of range",
            "tuple index out of range",
            "string index out of range",
            "runtime error: index out of range [5] with length 3",
            "division by zero",
            "attempt to divide by zero",
            "unsupported operand type(s) for +: 'int' and 'str'",
            "'int' object is not subscriptable",
            "'NoneType' object is not iterable",
            "'str' object is not callable",
            "'dict' object has no attribute 'upper'",
            "'NoneType' object has no attribute 'get'",
            "x.toLowerCase is not a function",
            "Cannot read properties of undefined (reading 'length')",
            "Cannot read property 'length' of undefined",
            "Cannot destructure property 'pageType' of 'undefined' as it is undefined.",
            "undefined is not an object (evaluating 'a.b')",
            "thread 'main' panicked at src/main.rs:10:5",
            "runtime error: invalid memory address or nil pointer dereference",
            "java.lang.NullPointerException",
            "maximum recursion depth exceeded while calling a Python object",
            "Maximum call stack size exceeded",
            "'user_id'",
            "java.lang.IllegalStateException: empty\n\tat a.Q.take(Q.java:9)",
            "System.InvalidOperationException: x\n   at A.B() in /app/B.cs:line 4",
            "panic: boom\n\ngoroutine 1 [running]:\nmain.f()\n\t/app/main.go:42 +0x1d",
        ];
        for text in exceptions {
            assert!(reads_as_exception(text), "{text}");
        }
        let refusals = [
            "value 200 out of range (0-100)",
            "Input validation error: count must be positive",
            "'id' is a required property",
            "Invalid arguments for tool echo: expected string, received number",
            "user 'bob' not found",
            "''",
        ];
        for text in refusals {
            assert!(!reads_as_exception(text), "{text}");
        }
        assert!(looks_like_validation("value 200 out of range (0-100)"));
        assert!(looks_like_validation("list index out of range"), "it reads like both");
    }

    /// One row per way a real server wrote an error as an ordinary result, and texts that only
    /// look close.
    #[test]
    fn errors_written_as_results_are_read_row_by_row() {
        let errors = [
            "Error: Request not found",
            "error: no such task",
            "ERROR - database locked",
            "Error executing tool list_tasks: 'NoneType' object has no attribute 'get'",
            "An error occurred: timeout",
            "Failed to read file: ENOENT",
            "Exception: bad state",
            "fatal: not a git repository",
            "Traceback (most recent call last):\n  File \"s.py\", line 3, in f\nKeyError: 'a'",
            "list index out of range",
            r#"{"status": "error", "message": "sheet not found"}"#,
            r#"{"success": false, "error": "no such workbook"}"#,
            r#"{"error": "not found"}"#,
            r#"{"error": {"code": 5, "message": "x"}}"#,
        ];
        for text in errors {
            assert!(reads_as_error_result(text), "{text}");
        }
        let results = [
            "Hello, Error",
            "Errors found: 0",
            "The function returns an Error: see below",
            r#"{"status": "ok", "error": null}"#,
            r#"{"error": "", "items": []}"#,
            r#"{"items": [], "error": "partial", "total": 3}"#,
            r#"{"success": true}"#,
            "",
            &format!("Error: {}", "x".repeat(2_100)),
        ];
        for text in results {
            assert!(!reads_as_error_result(text), "{text}");
        }
    }

    #[test]
    fn an_unreachable_upstream_and_a_retry_loop_are_read() {
        assert!(looks_like_upstream("getaddrinfo ENOTFOUND api.example.com"));
        assert!(looks_like_upstream("connect ECONNREFUSED 127.0.0.1:9"));
        assert!(!looks_like_upstream("count must be positive"));
        // @jpisnice/shadcn-ui-mcp-server 2.0.0 offline (issue 30).
        assert!(looks_like_upstream(
            "Error listing themes: Could not fetch or parse tweakcn presets from network or local file"
        ));
        assert!(looks_like_retry("connection error; retrying in 1s"));
    }
}
