//! The run's vocabulary of findings: what was found ([`FindingKind`], with its [`Rule`]), how much
//! it matters ([`Severity`]), what happened to each tool ([`ToolStatus`], [`SkipReason`]), why a
//! campaign stopped early ([`StopReason`]) and a finding's stable [`Identity`].
//!
//! Every document and format reads these types: the exit code is decided on them, never on
//! message text. The serialised names are the documented JSON strings (`docs/report.schema.json`)
//! and never change meaning; a kind this version does not know (read back from a newer report)
//! is kept verbatim as [`FindingKind::Other`].
//!
//! See: <https://github.com/schemathesis/schemathesis/blob/master/src/schemathesis/core/failures.py>.

use crate::outcome::Outcome;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// What a finding is about: an outcome kind of one call, or a tool- or server-level problem.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FindingKind {
    /// The server process died while handling a call.
    Exited,
    /// A call got no answer within the timeout.
    Timeout,
    /// An exception surfaced as an `isError` result.
    HandlerException,
    /// JSON-RPC -32603.
    InternalError,
    /// Another unexpected JSON-RPC error.
    RpcError,
    /// A reply that breaks JSON-RPC or the MCP result shape.
    ProtocolViolation,
    /// `structuredContent` that breaks the tool's `outputSchema`.
    OutputSchemaViolation,
    /// A response over the size limit.
    Oversize,
    /// An HTTP status (a `5xx`, a redirect...) where a JSON-RPC answer was due (streamable HTTP).
    HttpError,
    /// Invalid input answered with success.
    AcceptsInvalid,
    /// An error answered as an ordinary result, without `isError: true` (a warning, once per
    /// tool): clients and models read it as a success.
    UnflaggedError,
    /// A valid call failed (may be a synthetic-input false positive).
    ValidCallFailed,
    /// Every call fails the same way whatever the input.
    ToolUnavailable,
    /// The server died or hung so often on a tool that the run stopped calling it.
    GaveUp,
    /// A `tools/list` entry that is not a usable tool.
    MalformedTool,
    /// A tool name listed twice.
    DuplicateTool,
    /// `tools/list` pagination that repeats a cursor or never ends.
    ToolsListTruncated,
    /// Lines on stdout that are not JSON-RPC: what reports before run v2 said; such lines are now
    /// a `protocol-violation` (of the call in flight, or server-wide). Kept so that older reports
    /// and baselines read back.
    JunkOnStdout,
    /// An `inputSchema` that cannot be fuzzed.
    SchemaError,
    /// `null` for an optional property that does not allow it, accepted as if the property were
    /// absent (leniency, not a crash: an info, once per tool).
    NullAsAbsent,
    /// A string such as `"0"` or `"true"` accepted for a number or a boolean (lax coercion, as
    /// pydantic does by default: an info, once per tool).
    LaxCoercion,
    /// A call got no answer within the timeout, nor later while it was watched (up to
    /// `--max-call-time`).
    Hang,
    /// A call answered only after the timeout, or cancelled because its own progress showed it
    /// could not finish within `--max-call-time` (a warning: slow is not hung).
    Slow,
    /// A call got no answer in time while the server's stderr showed an unreachable upstream or
    /// a retry loop (not a bug of the server's own: an info).
    UpstreamTimeout,
    /// A failure that never showed again on a fresh server process: it needs the state that
    /// earlier calls left (a warning, with the failure it was).
    Flaky,
    /// The server process dies on (about) the same call number of every process, whatever the
    /// calls were: one server-wide failure, not the bug of the tools that happened to be called
    /// then.
    DiesAfterCalls,
    /// A call on a handle that an earlier call of the sequence closed or deleted crashed the
    /// server (or failed as a crash does) instead of answering a tool error.
    UseAfterDelete,
    /// A call on a well-formed handle that nobody issued crashed the server (or failed as a
    /// crash does) instead of answering a tool error.
    UnknownHandle,
    /// A read of a handle that an earlier call of the sequence had just created answered "not
    /// found".
    CreatedNotFound,
    /// A tool was called with valid cases and not one of them succeeded: its score says nothing
    /// about its real behaviour (a warning, once per tool).
    NoValidCallSucceeded,
    /// A protocol conformance check failed: a well-formed but wrong request (an unknown method,
    /// an unknown tool, a large request id, an unsupported protocol version...) did not get the
    /// answer the MCP specification requires.
    ProtocolNonconformance,
    /// Parameters of the wrong type (`tools/call` whose `arguments` is not an object) answered
    /// with -32603 Internal error instead of -32602 Invalid params: what TypeScript-SDK servers
    /// do (a warning naming the SDK behaviour).
    InvalidParamsAsInternalError,
    /// A tool did what its annotations say it does not: a `readOnlyHint: true` tool changed
    /// files or the server's state (a failure); a `destructiveHint: false` tool took something
    /// away, an `idempotentHint: true` one did more when called twice, an `openWorldHint:
    /// false` one reached the network (warnings); a tool without annotations changed files
    /// (an info).
    AnnotationMismatch,
    /// An annotation key that clients ignore because it is misspelled (`readonlyHint`,
    /// `read_only_hint`, `readOnly`): a warning naming the hint that was meant.
    MisnamedAnnotation,
    /// A string a tool wrote does not read back as written from the reader that shows it (a
    /// newline, tab, quote, non-ASCII text or a leading `#`/`-` lost, split or changed): a
    /// warning with the write and what the reader shows.
    RoundTripMismatch,
    /// A kind this version does not know, kept as written (from a newer report).
    Other(String),
}

/// A finding kind as a stable rule: SARIF id, JUnit check name, and the help text of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The stable SARIF rule id (`MCPF0001`); never reused for another kind.
    pub id: &'static str,
    /// The kind's documented name (`exited`).
    pub name: &'static str,
    /// One sentence saying what was seen.
    pub short: &'static str,
    /// What a correct server does instead (the "expected" of a bug report).
    pub expected: &'static str,
    /// How to fix it.
    pub help: &'static str,
}

/// The rule of kinds this version does not know.
pub const UNKNOWN_RULE: Rule = Rule {
    id: "MCPF0000",
    name: "other",
    short: "A finding of a kind this version of the report writer does not know.",
    expected: "see the finding's message",
    help: "See the finding's message; upgrade mcp-fuzz for a dedicated rule.",
};

/// Every known kind with its rule, in id order. A new kind takes the next id.
pub const KINDS: &[(FindingKind, Rule)] = &[
    (
        FindingKind::Exited,
        Rule {
            id: "MCPF0001",
            name: "exited",
            short: "The server process died while handling a tool call.",
            expected: "the server stays up and answers the call, with an isError result or a JSON-RPC -32602 error for bad input",
            help: "Validate the arguments before using them and catch errors in the handler; never exit or panic on input.",
        },
    ),
    (
        FindingKind::Timeout,
        Rule {
            id: "MCPF0002",
            name: "timeout",
            short: "The tool call got no answer within the timeout.",
            expected: "an answer (a result or an error) within the timeout",
            help: "Bound every loop and wait in the handler by the input, reject inputs that would take too long, and answer every request.",
        },
    ),
    (
        FindingKind::HandlerException,
        Rule {
            id: "MCPF0003",
            name: "handler-exception",
            short: "An exception in the tool handler surfaced as an isError result with the raw exception text.",
            expected: "a validation message (isError: true with a readable reason, or JSON-RPC -32602), not a stack trace",
            help: "Validate the arguments against the tool's inputSchema and return a readable error; do not let exceptions escape the handler.",
        },
    ),
    (
        FindingKind::InternalError,
        Rule {
            id: "MCPF0004",
            name: "internal-error",
            short: "The tool call was answered with JSON-RPC internal error -32603.",
            expected: "a graceful answer: an isError result with a readable reason, or JSON-RPC -32602 for invalid params",
            help: "Reject invalid arguments with -32602 or an isError result instead of failing internally.",
        },
    ),
    (
        FindingKind::RpcError,
        Rule {
            id: "MCPF0005",
            name: "rpc-error",
            short: "The tool call was answered with an unexpected JSON-RPC error code.",
            expected: "a result, an isError result, or JSON-RPC -32602 for invalid params",
            help: "Use -32602 for invalid arguments and isError results for tool failures.",
        },
    ),
    (
        FindingKind::ProtocolViolation,
        Rule {
            id: "MCPF0006",
            name: "protocol-violation",
            short: "The server broke JSON-RPC or the MCP result shape.",
            expected: "a well-formed JSON-RPC response whose result follows the MCP CallToolResult shape",
            help: "Send only well-formed JSON-RPC messages (over stdio, nothing else on stdout: log to stderr) and always include `content` in tool results.",
        },
    ),
    (
        FindingKind::OutputSchemaViolation,
        Rule {
            id: "MCPF0007",
            name: "output-schema-violation",
            short: "A successful result breaks the tool's declared outputSchema.",
            expected: "structuredContent that validates against the tool's outputSchema",
            help: "Return structuredContent matching the outputSchema, or fix the schema.",
        },
    ),
    (
        FindingKind::Oversize,
        Rule {
            id: "MCPF0008",
            name: "oversize",
            short: "The server answered with a response larger than the limit.",
            expected: "a response within --max-response-bytes",
            help: "Bound the size of results (paginate or truncate large outputs).",
        },
    ),
    (
        FindingKind::AcceptsInvalid,
        Rule {
            id: "MCPF0009",
            name: "accepts-invalid",
            short: "The tool accepted input that breaks its inputSchema.",
            expected: "an isError result or JSON-RPC -32602 naming the invalid argument",
            help: "Validate arguments against the inputSchema, or relax the schema to what the tool really accepts.",
        },
    ),
    (
        FindingKind::ValidCallFailed,
        Rule {
            id: "MCPF0010",
            name: "valid-call-failed",
            short: "A call with schema-valid arguments failed (may be a synthetic-input false positive).",
            expected: "a successful result for input that satisfies the inputSchema",
            help: "Check whether the schema is too loose for what the tool needs (e.g. an id that must exist).",
        },
    ),
    (
        FindingKind::ToolUnavailable,
        Rule {
            id: "MCPF0011",
            name: "tool-unavailable",
            short: "Every call fails the same way whatever the input (an upstream or configuration problem).",
            expected: "the tool's backend is reachable when the server runs",
            help: "Provide the tool's credentials or backend for the run, or skip the tool with --skip-tool.",
        },
    ),
    (
        FindingKind::GaveUp,
        Rule {
            id: "MCPF0012",
            name: "gave-up",
            short: "The server died or hung so often on one tool that the run stopped calling it.",
            expected: "a server that survives every call",
            help: "Fix the crash reported for this tool first; the rest of its cases were not run.",
        },
    ),
    (
        FindingKind::MalformedTool,
        Rule {
            id: "MCPF0013",
            name: "malformed-tool",
            short: "An entry of tools/list is not a usable tool definition.",
            expected: "every tools/list entry has a name and an object inputSchema",
            help: "Fix the tool definition (name, inputSchema, annotations types).",
        },
    ),
    (
        FindingKind::DuplicateTool,
        Rule {
            id: "MCPF0014",
            name: "duplicate-tool",
            short: "tools/list lists the same tool name more than once.",
            expected: "unique tool names",
            help: "Give every tool a unique name.",
        },
    ),
    (
        FindingKind::ToolsListTruncated,
        Rule {
            id: "MCPF0015",
            name: "tools-list-truncated",
            short: "tools/list pagination repeats a cursor or never ends.",
            expected: "pagination that ends with no nextCursor",
            help: "Return a fresh cursor per page and none on the last page.",
        },
    ),
    (
        FindingKind::JunkOnStdout,
        Rule {
            id: "MCPF0016",
            name: "junk-on-stdout",
            short: "The server wrote non-JSON-RPC lines to stdout.",
            expected: "only JSON-RPC messages on stdout",
            help: "Send logs and debug output to stderr.",
        },
    ),
    (
        FindingKind::SchemaError,
        Rule {
            id: "MCPF0017",
            name: "schema-error",
            short: "A tool's inputSchema cannot be used to generate arguments.",
            expected: "a valid, satisfiable JSON Schema as inputSchema",
            help: "Fix the inputSchema so that it is valid JSON Schema and some value satisfies it.",
        },
    ),
    (
        FindingKind::NullAsAbsent,
        Rule {
            id: "MCPF0018",
            name: "null-as-absent",
            short: "The tool treats null for an optional property as if the property were absent.",
            expected: "null rejected where the schema does not allow it",
            help: "Declare the property nullable (type [\"...\", \"null\"]) or reject null.",
        },
    ),
    (
        FindingKind::LaxCoercion,
        Rule {
            id: "MCPF0019",
            name: "lax-coercion",
            short: "The tool accepts a string such as \"0\" or \"true\" for a number or a boolean.",
            expected: "a value of the declared type",
            help: "Validate strictly (pydantic: strict mode) or declare the string form in the schema.",
        },
    ),
    (
        FindingKind::Hang,
        Rule {
            id: "MCPF0020",
            name: "hang",
            short: "The tool call got no answer within the timeout, nor later while it was watched.",
            expected: "an answer (a result or an error) within the timeout, or progress notifications while the work goes on",
            help: "Bound every loop and wait in the handler by the input, reject inputs that would take too long, and answer every request.",
        },
    ),
    (
        FindingKind::Slow,
        Rule {
            id: "MCPF0021",
            name: "slow",
            short: "The tool call was answered only after the timeout, or its progress showed it could not finish within the call limit.",
            expected: "an answer within the timeout, or progress notifications at a rate that finishes within --max-call-time",
            help: "Bound the work by the input (cap counts and sizes in the inputSchema), send progress notifications for long work, and honour notifications/cancelled.",
        },
    ),
    (
        FindingKind::UpstreamTimeout,
        Rule {
            id: "MCPF0022",
            name: "upstream-timeout",
            short: "The tool call got no answer in time while the server's stderr showed an unreachable upstream or a retry loop.",
            expected: "a prompt isError result naming the upstream when it cannot be reached",
            help: "Bound retries of upstream calls and answer with a readable error when the upstream is down; provide the upstream (network, credentials) for a meaningful run.",
        },
    ),
    (
        FindingKind::Flaky,
        Rule {
            id: "MCPF0023",
            name: "flaky",
            short: "A failure that did not show again on a fresh server process: it depends on what earlier calls did to the server's state.",
            expected: "the same answer to the same input, whatever came before",
            help: "Look for state that earlier calls change: a circuit breaker, a cache, a counter, a leaked handle; the finding's stderr and exchange show the failing call.",
        },
    ),
    (
        FindingKind::DiesAfterCalls,
        Rule {
            id: "MCPF0024",
            name: "dies-after-calls",
            short: "The server process dies after about the same number of calls every time, whatever the calls were.",
            expected: "a server that serves any number of calls",
            help: "Something each call leaves behind runs out (memory, file handles, connections, a counter): find what a call allocates or counts and never gives back; the stderr shows the death.",
        },
    ),
    (
        FindingKind::UseAfterDelete,
        Rule {
            id: "MCPF0025",
            name: "use-after-delete",
            short: "A call on a handle that was just closed or deleted crashed the server.",
            expected: "a tool error such as \"not found\" or \"closed\"",
            help: "Look the handle up before using it and answer a tool error when it is gone; the minimal sequence shows the create, the delete and the call.",
        },
    ),
    (
        FindingKind::UnknownHandle,
        Rule {
            id: "MCPF0026",
            name: "unknown-handle",
            short: "A call on a well-formed handle that was never issued crashed the server.",
            expected: "a tool error such as \"not found\"",
            help: "Do not assume that a well-formed id exists: look it up and answer a tool error when it does not.",
        },
    ),
    (
        FindingKind::CreatedNotFound,
        Rule {
            id: "MCPF0027",
            name: "created-not-found",
            short: "A handle that a call had just created was not found by the next call.",
            expected: "the thing just created, readable at once",
            help: "Store a created thing under the handle you return (and make it visible before answering); the minimal sequence shows the create and the read.",
        },
    ),
    (
        FindingKind::NoValidCallSucceeded,
        Rule {
            id: "MCPF0028",
            name: "no-valid-call-succeeded",
            short: "Not one schema-valid call of the tool succeeded: the score says nothing about this tool's real behaviour.",
            expected: "some valid calls that reach the tool's real work",
            help: "Add value hints for the arguments the tool needs to exist (paths, ids, repositories) to mcp-fuzz.toml's [hints] table; `mcp-fuzz init` writes stubs for them.",
        },
    ),
    (
        FindingKind::ProtocolNonconformance,
        Rule {
            id: "MCPF0029",
            name: "protocol-nonconformance",
            short: "A well-formed but wrong request did not get the answer the MCP specification requires.",
            expected: "the answer the check's specification section requires (its specUrl)",
            help: "Follow the specification section the check names; most SDKs do this for you when requests go through their dispatcher rather than a hand-written loop.",
        },
    ),
    (
        FindingKind::InvalidParamsAsInternalError,
        Rule {
            id: "MCPF0030",
            name: "invalid-params-as-internal-error",
            short: "Parameters of the wrong type were answered with -32603 Internal error instead of -32602 Invalid params.",
            expected: "JSON-RPC error -32602 Invalid params for parameters of the wrong type",
            help: "Validate the request's params before dispatch and answer -32602; TypeScript-SDK servers answer -32603 here, which clients read as a server fault rather than their own mistake.",
        },
    ),
    (
        FindingKind::UnflaggedError,
        Rule {
            id: "MCPF0031",
            name: "unflagged-error",
            short: "The tool answered an error as an ordinary result, without isError: true.",
            expected: "a result with isError: true (or a JSON-RPC error) for a call that failed",
            help: "Set isError: true on results that report an error (the SDKs do when the handler raises or throws); clients and models read a result without it as a success.",
        },
    ),
    (
        FindingKind::HttpError,
        Rule {
            id: "MCPF0032",
            name: "http-error",
            short: "A request over streamable HTTP was answered with an HTTP error status or a redirect instead of a JSON-RPC answer.",
            expected: "200 with a JSON-RPC response (application/json, or text/event-stream carrying it)",
            help: "Answer every request POST with a JSON-RPC response: report a failure as a JSON-RPC error or an isError result, not as HTTP 5xx (clients drop the call, and proxies may retry it), and serve the endpoint at the URL clients are given (no redirects).",
        },
    ),
    (
        FindingKind::AnnotationMismatch,
        Rule {
            id: "MCPF0033",
            name: "annotation-mismatch",
            short: "A tool did what its annotations say it does not: a readOnlyHint tool changed files or the server's state, a destructiveHint: false tool took something away, an idempotentHint tool did more when called twice, an openWorldHint: false tool reached the network, or a tool changed files without declaring annotations at all.",
            expected: "a readOnlyHint: true tool that leaves its environment as it found it",
            help: "Clients act on annotations without checking them (readOnlyHint tools run with less or no confirmation): make the tool do what they say (a read-only tool leaves files and state alone, a non-destructive one only adds, an idempotent one does nothing more when called again, a closed world stays off the network), or declare what it does (readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true); the finding names what changed and the call.",
        },
    ),
    (
        FindingKind::MisnamedAnnotation,
        Rule {
            id: "MCPF0034",
            name: "misnamed-annotation",
            short: "An annotation key is a misspelling of a hint that clients read, so they ignore it.",
            expected: "the hint under its exact name (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)",
            help: "Rename the key to the hint it means; clients match hint names exactly, so a misspelled one counts as absent (and readOnlyHint absent means not read-only).",
        },
    ),
    (
        FindingKind::RoundTripMismatch,
        Rule {
            id: "MCPF0035",
            name: "round-trip-mismatch",
            short: "A string a tool wrote does not read back as written: a newline, tab, quote, non-ASCII text or a leading # or - was lost, changed or split into another record.",
            expected: "every string a successful write stored reads back unchanged from the server's readers",
            help: "Store and show written text as it was given: escape it where the store's format gives characters a meaning (one record per line, Markdown, CSV), so a newline cannot make a second record a model never wrote.",
        },
    ),
];

impl FindingKind {
    /// The kind of a call outcome (`ok` and the graceful outcomes have kinds too, but are never
    /// findings of their own).
    #[must_use]
    pub fn of(outcome: &Outcome) -> Self {
        Self::from_name(outcome.kind().as_str())
    }

    /// The kind with this documented name; unknown names are kept as [`FindingKind::Other`].
    #[must_use]
    pub fn from_name(name: &str) -> Self {
        KINDS
            .iter()
            .find(|(_, rule)| rule.name == name)
            .map_or_else(|| Self::Other(name.to_owned()), |(kind, _)| kind.clone())
    }

    /// The documented name.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Other(name) => name,
            known => known.rule().name,
        }
    }

    /// The kind's rule ([`UNKNOWN_RULE`] for kinds this version does not know).
    #[must_use]
    pub fn rule(&self) -> &'static Rule {
        KINDS.iter().find(|(kind, _)| kind == self).map_or(&UNKNOWN_RULE, |(_, rule)| rule)
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FindingKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FindingKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from_name(&String::deserialize(d)?))
    }
}

/// How much a finding matters, in order: `Info < Warning < Failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; may be a false positive.
    Info,
    /// A problem that does not fail the run.
    Warning,
    /// Counts against the server and fails the run.
    Failure,
}

impl Severity {
    /// The documented name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Failure => "failure",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to a tool in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolStatus {
    /// Called with its cases.
    Tested,
    /// Not called ([`SkipReason`] says why).
    Skipped,
    /// Called, but every call failed the same way whatever the input; left out of the score.
    Unavailable,
    /// Called until it died or hung too often.
    GaveUp,
    /// Its `inputSchema` cannot be fuzzed.
    SchemaError,
}

impl ToolStatus {
    /// The documented name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tested => "tested",
            Self::Skipped => "skipped",
            Self::Unavailable => "unavailable",
            Self::GaveUp => "gave-up",
            Self::SchemaError => "schema-error",
        }
    }

    /// Whether the tool was called at all.
    #[must_use]
    pub fn was_called(self) -> bool {
        matches!(self, Self::Tested | Self::Unavailable | Self::GaveUp)
    }
}

impl fmt::Display for ToolStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a tool was not called. Its `Display` is the report's `reason` text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// `--skip-tool` names it.
    Excluded,
    /// `--tool` is given and does not name it.
    NotSelected,
    /// A per-tool override in the config file sets `skip = true`.
    SkippedByConfig,
    /// Not annotated `readOnlyHint: true` and `--include-destructive` not given; `Some(false)`
    /// when it is annotated `readOnlyHint: false`.
    NotReadOnly(Option<bool>),
    /// Another shard's tool (`--partition`).
    NotInPartition(crate::partition::Partition),
    /// The run stopped before reaching it.
    NotReached(StopReason),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Excluded => f.write_str("excluded by --skip-tool"),
            Self::NotSelected => f.write_str("not selected by --tool"),
            Self::SkippedByConfig => f.write_str("skipped by an override in mcp-fuzz.toml"),
            Self::NotReadOnly(Some(false)) => {
                f.write_str("annotated readOnlyHint: false; pass --include-destructive to call it")
            }
            Self::NotReadOnly(_) => f.write_str(
                "not annotated readOnlyHint: true; pass --include-destructive to call it",
            ),
            Self::NotInPartition(p) => write!(f, "not in partition {}/{}", p.shard, p.total),
            Self::NotReached(why) => write!(f, "not reached: {why}"),
        }
    }
}

/// The read-only gate, the one rule for every command that calls tools (`run`, `clients
/// --call`): a tool is called only when annotated `readOnlyHint: true`, unless destructive
/// tools are allowed (`--include-destructive`). Why it is not called, when it is not; the
/// reason's words are the gate's one wording.
#[must_use]
pub fn gate(read_only: Option<bool>, include_destructive: bool) -> Option<SkipReason> {
    (read_only != Some(true) && !include_destructive).then_some(SkipReason::NotReadOnly(read_only))
}

/// Why the campaign stopped before calling every planned case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// `--max-failures N` was reached.
    MaxFailures(usize),
    /// `--time-budget` ran out.
    TimeBudget,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MaxFailures(n) => write!(f, "--max-failures {n} was reached"),
            Self::TimeBudget => f.write_str("the run's --time-budget ran out"),
        }
    }
}

/// A finding's stable identity: what a baseline stores, SARIF fingerprints and merge compares.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Identity {
    /// The tool (absent for server-wide findings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The finding kind.
    pub kind: FindingKind,
    /// The case's mutation, for findings on invalid cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation: Option<String>,
    /// The case's JSON pointer, for findings on invalid cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The cause, for one cause seen on several tools (a server-wide finding: no tool, no case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The prompt, resource, template or completion (`prompt summarize`), or the protocol
    /// check's id, for findings about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_dense_stable_and_unique() {
        for (i, (kind, rule)) in KINDS.iter().enumerate() {
            assert_eq!(rule.id, format!("MCPF{:04}", i + 1), "ids are dense and in order");
            assert_eq!(kind.rule().id, rule.id);
            assert!(KINDS[i + 1..].iter().all(|(_, o)| o.name != rule.name), "duplicate {kind}");
            assert_eq!(&FindingKind::from_name(rule.name), kind, "names round-trip");
        }
        assert_eq!(FindingKind::Exited.rule().id, "MCPF0001");
    }

    #[test]
    fn unknown_kinds_are_kept_verbatim() {
        let kind: FindingKind = serde_json::from_str("\"from-the-future\"").expect("reads");
        assert_eq!(kind, FindingKind::Other("from-the-future".into()));
        assert_eq!(kind.rule().id, UNKNOWN_RULE.id);
        assert_eq!(serde_json::to_string(&kind).expect("writes"), "\"from-the-future\"");
        assert_eq!(serde_json::to_string(&FindingKind::GaveUp).expect("writes"), "\"gave-up\"");
    }

    #[test]
    fn severities_are_ordered_and_named() {
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Failure);
        assert_eq!(serde_json::to_string(&Severity::Warning).expect("writes"), "\"warning\"");
    }

    #[test]
    fn skip_reasons_read_as_the_report_says_them() {
        let p = "count:2/3".parse().expect("partition");
        assert_eq!(SkipReason::NotInPartition(p).to_string(), "not in partition 2/3");
        assert_eq!(
            SkipReason::NotReached(StopReason::MaxFailures(2)).to_string(),
            "not reached: --max-failures 2 was reached"
        );
        assert!(SkipReason::NotReadOnly(Some(false)).to_string().starts_with("annotated"));
        assert_eq!(gate(Some(true), false), None);
        assert_eq!(gate(None, true), None);
        assert_eq!(gate(Some(false), false), Some(SkipReason::NotReadOnly(Some(false))));
    }
}
