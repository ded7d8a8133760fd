//! The outcome of one call ([`Outcome`]), as the engine's judge decided it from the reply: its
//! kind, whether it is graceful or a failure, and its normalised cause (one bug gives one cause
//! whatever the input), which grouping and shrinking compare. How a server ended is
//! [`ExitInfo`].

use serde::{Deserialize, Serialize};

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
    /// A result without `isError: true` whose text reads as an error (`Error: ...`, a traceback,
    /// `{"status": "error"}`): the tool refused or failed but said so as a success, which clients
    /// and models read as one.
    UnflaggedError {
        /// The result's text.
        text: String,
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
        /// The message or the error's `data` names an unreachable upstream: not a bug of input
        /// handling (written only when true).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        upstream: bool,
    },
    /// Any other JSON-RPC error.
    RpcError {
        /// The JSON-RPC error code (neither -32602 nor -32603).
        code: i64,
        /// The error's `message`, as sent.
        message: String,
        /// The message reads as the tool's own refusal of its input (a validation message):
        /// judged once, when the reply was classified. Not part of the document (a report read
        /// back says `false`): only live outcomes are judged.
        #[serde(skip)]
        refusal: bool,
        /// The message or the error's `data` names an unreachable upstream: not a bug of input
        /// handling (written only when true).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        upstream: bool,
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
        /// Its size in bytes (with `at_least`: a lower bound).
        bytes: u64,
        /// Only a lower bound of the size is known: the body was refused once it passed the
        /// limit (over HTTP). Written only when true.
        #[serde(default, rename = "atLeast", skip_serializing_if = "std::ops::Not::not")]
        at_least: bool,
    },
    /// An HTTP answer in place of a JSON-RPC one (streamable HTTP): a server error status
    /// (`5xx`, `429`), a redirect, or another status that is not success.
    HttpError {
        /// The HTTP status.
        status: u16,
        /// The start of the body, when it said anything.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        detail: String,
    },
}

/// How the server process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitInfo {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Signal number, when killed by one.
    pub signal: Option<i32>,
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit status {c}"),
            (None, Some(s)) => write!(f, "killed by signal {s}"),
            _ => f.write_str("exited"),
        }
    }
}

/// What kind of outcome a call had: [`Outcome`] without its details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeKind {
    /// [`Outcome::Ok`].
    Ok,
    /// [`Outcome::ToolError`].
    ToolError,
    /// [`Outcome::UnflaggedError`].
    UnflaggedError,
    /// [`Outcome::HandlerException`].
    HandlerException,
    /// [`Outcome::InvalidParams`].
    InvalidParams,
    /// [`Outcome::InternalError`].
    InternalError,
    /// [`Outcome::RpcError`].
    RpcError,
    /// [`Outcome::Timeout`].
    Timeout,
    /// [`Outcome::UpstreamTimeout`].
    UpstreamTimeout,
    /// [`Outcome::Slow`].
    Slow,
    /// [`Outcome::Exited`].
    Exited,
    /// [`Outcome::ProtocolViolation`].
    ProtocolViolation,
    /// [`Outcome::OutputSchemaViolation`].
    OutputSchemaViolation,
    /// [`Outcome::Oversize`].
    Oversize,
    /// [`Outcome::HttpError`].
    HttpError,
}

impl OutcomeKind {
    /// The stable kebab-case name, as documents write it.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool-error",
            Self::UnflaggedError => "unflagged-error",
            Self::HandlerException => "handler-exception",
            Self::InvalidParams => "invalid-params",
            Self::InternalError => "internal-error",
            Self::RpcError => "rpc-error",
            Self::Timeout => "timeout",
            Self::UpstreamTimeout => "upstream-timeout",
            Self::Slow => "slow",
            Self::Exited => "exited",
            Self::ProtocolViolation => "protocol-violation",
            Self::OutputSchemaViolation => "output-schema-violation",
            Self::Oversize => "oversize",
            Self::HttpError => "http-error",
        }
    }
}

impl std::fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Outcome {
    /// The outcome's kind.
    #[must_use]
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Self::Ok => OutcomeKind::Ok,
            Self::ToolError { .. } => OutcomeKind::ToolError,
            Self::UnflaggedError { .. } => OutcomeKind::UnflaggedError,
            Self::HandlerException { .. } => OutcomeKind::HandlerException,
            Self::InvalidParams { .. } => OutcomeKind::InvalidParams,
            Self::InternalError { .. } => OutcomeKind::InternalError,
            Self::RpcError { .. } => OutcomeKind::RpcError,
            Self::Timeout => OutcomeKind::Timeout,
            Self::UpstreamTimeout { .. } => OutcomeKind::UpstreamTimeout,
            Self::Slow { .. } => OutcomeKind::Slow,
            Self::Exited { .. } => OutcomeKind::Exited,
            Self::ProtocolViolation { .. } => OutcomeKind::ProtocolViolation,
            Self::OutputSchemaViolation { .. } => OutcomeKind::OutputSchemaViolation,
            Self::Oversize { .. } => OutcomeKind::Oversize,
            Self::HttpError { .. } => OutcomeKind::HttpError,
        }
    }

    /// Whether this is a graceful answer to invalid input.
    #[must_use]
    pub fn is_graceful(&self) -> bool {
        match self {
            Self::ToolError { .. } | Self::InvalidParams { .. } | Self::UnflaggedError { .. } => {
                true
            }
            Self::RpcError { refusal, upstream, .. } => *refusal && !upstream,
            _ => false,
        }
    }

    /// Whether this is a failure whatever the input (a crash, hang, protocol breach...).
    #[must_use]
    pub fn is_failure(&self) -> bool {
        match self {
            Self::InternalError { upstream, .. } => !upstream,
            Self::HandlerException { .. }
            | Self::Timeout
            | Self::Exited { .. }
            | Self::ProtocolViolation { .. }
            | Self::OutputSchemaViolation { .. }
            | Self::Oversize { .. }
            | Self::HttpError { .. } => true,
            Self::RpcError { refusal, upstream, .. } => !refusal && !upstream,
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
        matches!(
            self,
            Self::ToolError { upstream: true, .. }
                | Self::InternalError { upstream: true, .. }
                | Self::RpcError { upstream: true, .. }
                | Self::UpstreamTimeout { .. }
        )
    }

    /// Whether this outcome says nothing about input handling: slow work, a dead upstream (a
    /// timeout while stderr names it, or a JSON-RPC error naming it).
    #[must_use]
    pub fn is_unjudged(&self) -> bool {
        matches!(
            self,
            Self::Slow { .. }
                | Self::UpstreamTimeout { .. }
                | Self::InternalError { upstream: true, .. }
                | Self::RpcError { upstream: true, .. }
        )
    }

    /// The message or text carried, if any.
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::ToolError { text, .. }
            | Self::HandlerException { text }
            | Self::UnflaggedError { text } => Some(text),
            Self::InvalidParams { message }
            | Self::InternalError { message, .. }
            | Self::RpcError { message, .. } => Some(message),
            Self::ProtocolViolation { detail }
            | Self::OutputSchemaViolation { detail }
            | Self::Slow { detail } => Some(detail),
            Self::UpstreamTimeout { evidence } => Some(evidence),
            _ => None,
        }
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
            Self::RpcError { code, message, .. } => {
                format!("{kind} {code}: {}", normalise(message))
            }
            Self::HandlerException { text: m }
            | Self::InternalError { message: m, .. }
            | Self::InvalidParams { message: m }
            | Self::UnflaggedError { text: m }
            | Self::ToolError { text: m, .. } => format!("{kind}: {}", normalise(m)),
            // The breach, not the bytes quoted after it.
            Self::ProtocolViolation { detail } | Self::OutputSchemaViolation { detail } => {
                let what = detail.split(": `").next().unwrap_or(detail);
                // A JSON parser's own words (`invalid escape at line 1 column 79`) depend on
                // the bytes, not on the breach.
                let what = what
                    .rsplit_once(" (")
                    .filter(|(_, note)| note.contains(" at line "))
                    .map_or(what, |(breach, _)| breach);
                format!("{kind}: {}", normalise(what))
            }
            Self::Ok
            | Self::Timeout
            | Self::UpstreamTimeout { .. }
            | Self::Slow { .. }
            | Self::Oversize { .. } => kind.to_string(),
            // The status, not the body (it may echo the input).
            Self::HttpError { status, .. } => format!("{kind} {status}"),
        }
    }

    /// What tells two failures of one kind apart when one tool fails in several ways, for "still
    /// fails the same way": the breach for a protocol violation (`a response whose id has the
    /// wrong type` is not `a line that is not JSON`), and for a handler exception its exception
    /// name and the place it names (`KeyError at /app/tools.py:12`), or its first line
    /// normalised when it names neither. `None` for the other kinds: their message may echo the
    /// input, which a shrink step changes.
    #[must_use]
    pub fn cause_key(&self) -> Option<String> {
        match self {
            Self::ProtocolViolation { .. } | Self::HttpError { .. } => Some(self.cause()),
            Self::HandlerException { text } => {
                let (line, place) = cause_line(text);
                let name = is_exception_line(line).then(|| line.split(':').next().unwrap_or(line));
                Some(match (name, place) {
                    (Some(name), Some(place)) => format!("{name} at {place}"),
                    (Some(name), None) => name.to_owned(),
                    (None, Some(place)) => format!("at {place}"),
                    (None, None) => normalise(text),
                })
            }
            _ => None,
        }
    }

    /// The same outcome with every string value of `arguments` that its message or text echoes
    /// replaced by `…`, quoted or not: "Entity with name X not found" is one cause whatever X
    /// was. A value of three characters or more is replaced wherever it appears, a shorter one
    /// only as a word of its own (`ab` never eats a word), and an empty or blank one where the
    /// text holds a gap of two spaces or more. For the cause only; the evidence keeps the text
    /// as it came.
    ///
    /// See: issue 30 items 1 and 6 (30 findings of one message template, split by the name).
    #[must_use]
    pub fn without_echoes(&self, arguments: &serde_json::Map<String, serde_json::Value>) -> Self {
        let mut values = Vec::new();
        strings_of(&serde_json::Value::Object(arguments.clone()), &mut values);
        let blank = values.iter().any(|v| v.trim().is_empty());
        values.retain(|v| !v.trim().is_empty());
        // Longest first, so a value that holds another is replaced whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.chars().count()));
        let elide = |text: &str| {
            let mut t = values.iter().fold(text.to_owned(), |t, v| replace_echo(&t, v));
            if blank {
                t = gaps_elided(&t);
            }
            t
        };
        let mut out = self.clone();
        match &mut out {
            Self::ToolError { text, .. }
            | Self::HandlerException { text }
            | Self::UnflaggedError { text } => *text = elide(text),
            Self::InvalidParams { message }
            | Self::InternalError { message, .. }
            | Self::RpcError { message, .. } => *message = elide(message),
            _ => {}
        }
        out
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
            Self::RpcError { code, message, .. } => {
                specific(message).map(|m| format!("{kind} {code}: {m}"))
            }
            Self::HandlerException { text: m } | Self::InternalError { message: m, .. } => {
                specific(m).map(|m| format!("{kind}: {m}"))
            }
            Self::ProtocolViolation { .. } => Some(self.cause()),
            _ => None,
        }
    }
}

/// The values in `v`, at any depth, as a message would echo them: strings as they are, and an
/// object as JavaScript's `String()` writes one (`[object Object]`). Not numbers, booleans or
/// `null`: a message says "null" or a count of its own (`Cannot read properties of null`), and
/// eliding those only when an argument holds one would split one cause in two.
fn strings_of(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|i| strings_of(i, out)),
        serde_json::Value::Object(m) => {
            out.push("[object Object]".into());
            m.values().for_each(|i| strings_of(i, out));
        }
        _ => {}
    }
}

/// `text` with `value` replaced by `…`: anywhere when it has three characters or more, else only
/// where it stands as a word of its own (no letter or digit right before or after it).
fn replace_echo(text: &str, value: &str) -> String {
    if value.chars().count() >= 3 {
        return text.replace(value, "…");
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(value) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = rest[at + value.len()..].chars().next();
        out.push_str(&rest[..at]);
        if word(before) || word(after) {
            out.push_str(value);
        } else {
            out.push('…');
        }
        rest = &rest[at + value.len()..];
    }
    out.push_str(rest);
    out
}

/// `text` with every run of two blanks or more inside a line as ` … `: where an empty or blank
/// value was echoed between two words. A line's indentation is kept: a traceback's frames are
/// indented, and their place is read from them.
fn gaps_elided(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start_matches(' ');
        out.push_str(&line[..line.len() - body.len()]);
        let mut blanks = 0;
        for c in body.chars() {
            if c == ' ' {
                blanks += 1;
                continue;
            }
            match blanks {
                0 => {}
                1 => out.push(' '),
                _ => out.push_str(" … "),
            }
            blanks = 0;
            out.push(c);
        }
    }
    out
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

/// [`normalise`], eliding quoted values or not: the line that names the cause ([`cause_line`]),
/// with the place it names, when it names one, kept as written.
fn normalise_with(text: &str, quoted: Quoted) -> String {
    let (line, place) = cause_line(text);
    let mut out = normalise_line(line, quoted);
    if let Some(place) = place {
        out.push_str(&format!(" (at {place})"));
    }
    out
}

/// The line of an error text that names its cause, and the innermost place in the code it names,
/// if any: for a Python traceback its last exception line (`KeyError: 'a'`, the header
/// `Traceback (most recent call last):` says nothing) and its last `File "...", line N` frame;
/// for a Node.js, JVM or .NET stack its first exception line (a chained JVM exception's root
/// `Caused by:`) and the first `at` frame (after it); for a Go panic its message and first
/// `.go:N` frame; for a Rust panic its message and `src/x.rs:L:C`; else the first meaningful
/// line (not blank, not a lone brace).
///
/// See: issue 30 item 1 (three tools' different exceptions were one cause, `Traceback (most
/// recent call last):`).
fn cause_line(text: &str) -> (&str, Option<String>) {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    if text.contains("Traceback (most recent call last)") {
        let exception = lines().rev().find(|l| is_exception_line(l));
        let frame = lines().rev().find_map(python_frame);
        if let Some(line) = exception {
            return (line, frame);
        }
    }
    let first = lines().find(|l| !matches!(*l, "{" | "[" | "}" | "]")).unwrap_or("");
    if let Some(panic) = lines().find_map(|l| l.strip_prefix("panic: ")) {
        // Go: `panic: runtime error: ...`, then `goroutine 1 [running]:` and its frames.
        return (panic, lines().find_map(go_frame));
    }
    if let Some(place) = lines().find_map(rust_panic) {
        // Rust: `thread 'main' panicked at src/x.rs:10:5:` then the message.
        let mut after = lines().skip_while(|l| !l.contains("panicked at ")).skip(1);
        return (after.next().unwrap_or(first), Some(place));
    }
    // A chained JVM exception: its root cause (the last `Caused by:`) and that one's frames.
    let root = lines().filter(|l| l.starts_with("Caused by: ")).count();
    let from_root = || {
        let mut seen = 0;
        lines().filter(move |l| {
            seen += usize::from(l.starts_with("Caused by: "));
            root == 0 || seen >= root
        })
    };
    if let Some(at) = from_root().find_map(|l| node_frame(l).or_else(|| jvm_frame(l))) {
        // Node.js, the JVM and .NET: the exception, then `at` frames.
        let exception = from_root()
            .map(|l| unhandled(l.strip_prefix("Caused by: ").unwrap_or(l)))
            .find(|l| is_exception_line(l))
            .unwrap_or(first);
        return (exception, Some(at));
    }
    (first, None)
}

/// A .NET runtime's `Unhandled exception. System.X: ...` without its prefix.
fn unhandled(line: &str) -> &str {
    line.strip_prefix("Unhandled exception. ").unwrap_or(line)
}

/// `at com.example.Tools.handle(Tools.java:42)` as `Tools.java:42`, and `at App.Tools.Handle()
/// in /app/Tools.cs:line 42` as `/app/Tools.cs:42`.
fn jvm_frame(line: &str) -> Option<String> {
    let rest = line.strip_prefix("at ")?;
    if let Some((_, place)) = rest.rsplit_once(" in ") {
        let (path, number) = place.rsplit_once(":line ")?;
        return number.chars().all(|c| c.is_ascii_digit()).then(|| format!("{path}:{number}"));
    }
    let inner = rest.rsplit_once('(')?.1.trim_end_matches(')');
    let source = [".java:", ".kt:", ".scala:", ".groovy:"].iter().any(|e| inner.contains(e));
    source.then(|| inner.to_owned())
}

/// A Go frame's place: `/app/main.go:42 +0x1d` as `/app/main.go:42`.
fn go_frame(line: &str) -> Option<String> {
    let place = line.split(" +0x").next().unwrap_or(line);
    let (path, number) = place.rsplit_once(".go:")?;
    (!number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
        .then(|| format!("{path}.go:{number}"))
}

/// A Rust panic's place: `thread 'main' panicked at src/main.rs:10:5:` as `src/main.rs:10:5`.
fn rust_panic(line: &str) -> Option<String> {
    let rest = line.split_once("panicked at ")?.1.trim_end_matches(':');
    // Before Rust 1.73: `panicked at 'message', src/x.rs:10:5`.
    let place = rest.rsplit_once(", ").map_or(rest, |(_, p)| p);
    place.contains(".rs:").then(|| place.to_owned())
}

/// `File "/app/server.py", line 12, in handler` as `/app/server.py:12`.
fn python_frame(line: &str) -> Option<String> {
    let rest = line.strip_prefix("File \"")?;
    let (path, rest) = rest.split_once('"')?;
    let number: String =
        rest.strip_prefix(", line ")?.chars().take_while(char::is_ascii_digit).collect();
    (!number.is_empty()).then(|| format!("{path}:{number}"))
}

/// `at plotPoint (/app/dist/plot.js:27:31)` or `at /app/dist/plot.js:27:31` as
/// `/app/dist/plot.js:27:31`.
fn node_frame(line: &str) -> Option<String> {
    let rest = line.strip_prefix("at ")?;
    let place = match rest.rsplit_once('(') {
        Some((_, inner)) => inner.trim_end_matches(')'),
        None => rest,
    };
    let script = [".js:", ".ts:", ".mjs:", ".cjs:"].iter().any(|e| place.contains(e));
    script.then(|| place.to_owned())
}

/// One line, digits as `#`, quoted values as `'…'` unless kept, at most 160 characters.
fn normalise_line(line: &str, quoted: Quoted) -> String {
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
    use super::*;

    #[test]
    fn an_empty_value_echoed_keeps_a_traceback_s_frame() {
        // fx-tracebacks: with `name: ""`, the indentation of every frame was elided as an echoed
        // gap, so the frame was lost and the same bug had two causes.
        let text = "Traceback (most recent call last):\n  File \"/app/gamma.py\", line 7, in first\n    raise\nIndexError: list index out of range";
        let o = Outcome::HandlerException { text: text.into() };
        let args = serde_json::json!({"name": ""});
        let args = args.as_object().expect("object");
        assert_eq!(o.without_echoes(args).cause(), o.cause());
        assert!(o.cause().ends_with("(at /app/gamma.py:7)"), "{}", o.cause());
        assert_eq!(gaps_elided("Entity with name  not found"), "Entity with name … not found");
    }

    #[test]
    fn a_message_that_echoes_the_input_has_one_cause_whatever_the_input() {
        let args = |name: &str| {
            serde_json::json!({"names": [name], "limit": 3}).as_object().expect("object").clone()
        };
        let err = |name: &str| Outcome::InternalError {
            message: format!("Entity with name {name} not found"),
            upstream: false,
        };
        let a = err("fooBar").without_echoes(&args("fooBar"));
        let b = err("zz top").without_echoes(&args("zz top"));
        assert_eq!(a.cause(), b.cause());
        assert_eq!(a.cause(), "internal-error: Entity with name … not found");
        // A short value goes only where it is a word of its own: "it" would eat "with".
        for name in ["", " ", "y", "é", "😀", "\\p", "it"] {
            assert_eq!(err(name).without_echoes(&args(name)).cause(), a.cause(), "{name:?}");
        }
        let any = |v: serde_json::Value| {
            let args = serde_json::json!({"entities": [{"name": v.clone()}]});
            let text = match &v {
                serde_json::Value::Object(_) => "[object Object]".to_owned(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            err(&text).without_echoes(args.as_object().expect("object")).cause()
        };
        assert_eq!(
            any(serde_json::json!({"a": 1})),
            a.cause(),
            "an object as JavaScript writes it"
        );
        let null = Outcome::InternalError {
            message: "Cannot read properties of null (reading 'x')".into(),
            upstream: false,
        };
        let with_null = serde_json::json!({"a": null});
        assert_eq!(
            null.without_echoes(with_null.as_object().expect("object")).cause(),
            null.cause(),
            "a null argument does not change a message's own null"
        );
        let inside = Outcome::InternalError { message: "it broke within".into(), upstream: false };
        assert_eq!(inside.without_echoes(&args("it")).message(), Some("… broke within"));
    }

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
        // A traceback is named by its exception and its innermost frame, not by its header.
        let traceback = |exception: &str, line: u32| {
            exc(&format!(
                "Traceback (most recent call last):\n  File \"/app/lib/mcp.py\", line 88, in call\n    return f(**args)\n  File \"/app/tools.py\", line {line}, in handler\n    x = d[key]\n{exception}"
            ))
        };
        assert_eq!(
            traceback("KeyError: 'user_id'", 12).cause(),
            "handler-exception: KeyError: '…' (at /app/tools.py:12)"
        );
        assert_ne!(
            traceback("KeyError: 'user_id'", 12).shared_cause(),
            traceback("IndexError: list index out of range", 30).shared_cause(),
            "two exceptions of two tools are two causes"
        );
        assert_ne!(
            traceback("KeyError: 'a'", 12).shared_cause(),
            traceback("KeyError: 'a'", 40).shared_cause(),
            "one exception line at two places is two causes"
        );
        let node = exc(
            "TypeError: Cannot read properties of undefined (reading 'x')\n    at plotPoint (/app/dist/plot.js:27:31)\n    at fire (/app/node_modules/opossum/lib/circuit.js:712:23)",
        );
        assert_eq!(
            node.cause(),
            "handler-exception: TypeError: Cannot read properties of undefined (reading '…') (at /app/dist/plot.js:27:31)"
        );
        // The JVM (the root of a chain), .NET, Go and Rust: the exception and its first frame.
        let rows = [
            (
                "java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"s\" is null\n\tat com.example.Tools.handle(Tools.java:42)\n\tat com.example.Server.call(Server.java:10)",
                "java.lang.NullPointerException: Cannot invoke \"…\" because \"…\" is null (at Tools.java:42)",
            ),
            (
                "java.lang.RuntimeException: wrapped\n\tat a.B.c(B.java:5)\nCaused by: java.lang.IllegalStateException: empty queue\n\tat a.Q.take(Q.kt:9)\n\t... 3 more",
                "java.lang.IllegalStateException: empty queue (at Q.kt:9)",
            ),
            (
                "Unhandled exception. System.NullReferenceException: Object reference not set to an instance of an object.\n   at App.Tools.Handle(String name) in /app/Tools.cs:line 42\n   at App.Program.Main()",
                "System.NullReferenceException: Object reference not set to an instance of an object. (at /app/Tools.cs:42)",
            ),
            (
                "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.handler(...)\n\t/app/main.go:42 +0x1d\nmain.main()\n\t/app/main.go:10 +0x25",
                "runtime error: index out of range [#] with length # (at /app/main.go:42)",
            ),
            (
                "thread 'main' panicked at src/tools.rs:10:5:\nattempt to divide by zero\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
                "attempt to divide by zero (at src/tools.rs:10:5)",
            ),
        ];
        for (text, cause) in rows {
            assert_eq!(exc(text).cause(), format!("handler-exception: {cause}"), "{text}");
        }
        let rpc = Outcome::RpcError {
            code: -32000,
            message: "boom 3".into(),
            refusal: false,
            upstream: false,
        };
        assert_eq!(rpc.cause(), "rpc-error -32000: boom #");
    }
}
