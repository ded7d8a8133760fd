//! The finding kinds as stable rules: SARIF rule ids, JUnit check names, and the help text the
//! Markdown report shows. Ids are never reused; a new kind gets the next number. A kind this
//! table does not know (from a newer engine) maps to [`UNKNOWN`].

/// One finding kind.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable SARIF rule id.
    pub id: &'static str,
    /// The finding kind (`Finding::kind`).
    pub kind: &'static str,
    /// One sentence.
    pub short: &'static str,
    /// What a correct server does instead (the "expected" of a bug report).
    pub expected: &'static str,
    /// How to fix it.
    pub help: &'static str,
}

/// Every known kind, in id order.
pub const RULES: &[Rule] = &[
    Rule {
        id: "MCPF0001",
        kind: "exited",
        short: "The server process died while handling a tool call.",
        expected: "the server stays up and answers the call, with an isError result or a JSON-RPC -32602 error for bad input",
        help: "Validate the arguments before using them and catch errors in the handler; never exit or panic on input.",
    },
    Rule {
        id: "MCPF0002",
        kind: "timeout",
        short: "The tool call got no answer within the timeout.",
        expected: "an answer (a result or an error) within the timeout",
        help: "Bound every loop and wait in the handler by the input, reject inputs that would take too long, and answer every request.",
    },
    Rule {
        id: "MCPF0003",
        kind: "handler-exception",
        short: "An exception in the tool handler surfaced as an isError result with the raw exception text.",
        expected: "a validation message (isError: true with a readable reason, or JSON-RPC -32602), not a stack trace",
        help: "Validate the arguments against the tool's inputSchema and return a readable error; do not let exceptions escape the handler.",
    },
    Rule {
        id: "MCPF0004",
        kind: "internal-error",
        short: "The tool call was answered with JSON-RPC internal error -32603.",
        expected: "a graceful answer: an isError result with a readable reason, or JSON-RPC -32602 for invalid params",
        help: "Reject invalid arguments with -32602 or an isError result instead of failing internally.",
    },
    Rule {
        id: "MCPF0005",
        kind: "rpc-error",
        short: "The tool call was answered with an unexpected JSON-RPC error code.",
        expected: "a result, an isError result, or JSON-RPC -32602 for invalid params",
        help: "Use -32602 for invalid arguments and isError results for tool failures.",
    },
    Rule {
        id: "MCPF0006",
        kind: "protocol-violation",
        short: "The server broke JSON-RPC or the MCP result shape.",
        expected: "a well-formed JSON-RPC response whose result follows the MCP CallToolResult shape",
        help: "Write only JSON-RPC messages to stdout (log to stderr) and always include `content` in tool results.",
    },
    Rule {
        id: "MCPF0007",
        kind: "output-schema-violation",
        short: "A successful result breaks the tool's declared outputSchema.",
        expected: "structuredContent that validates against the tool's outputSchema",
        help: "Return structuredContent matching the outputSchema, or fix the schema.",
    },
    Rule {
        id: "MCPF0008",
        kind: "oversize",
        short: "The server answered with a response larger than the limit.",
        expected: "a response within --max-response-bytes",
        help: "Bound the size of results (paginate or truncate large outputs).",
    },
    Rule {
        id: "MCPF0009",
        kind: "accepts-invalid",
        short: "The tool accepted input that breaks its inputSchema.",
        expected: "an isError result or JSON-RPC -32602 naming the invalid argument",
        help: "Validate arguments against the inputSchema, or relax the schema to what the tool really accepts.",
    },
    Rule {
        id: "MCPF0010",
        kind: "valid-call-failed",
        short: "A call with schema-valid arguments failed (may be a synthetic-input false positive).",
        expected: "a successful result for input that satisfies the inputSchema",
        help: "Check whether the schema is too loose for what the tool needs (e.g. an id that must exist).",
    },
    Rule {
        id: "MCPF0011",
        kind: "tool-unavailable",
        short: "Every call fails the same way whatever the input (an upstream or configuration problem).",
        expected: "the tool's backend is reachable when the server runs",
        help: "Provide the tool's credentials or backend for the run, or skip the tool with --skip-tool.",
    },
    Rule {
        id: "MCPF0012",
        kind: "gave-up",
        short: "The server died or hung so often on one tool that the run stopped calling it.",
        expected: "a server that survives every call",
        help: "Fix the crash reported for this tool first; the rest of its cases were not run.",
    },
    Rule {
        id: "MCPF0013",
        kind: "malformed-tool",
        short: "An entry of tools/list is not a usable tool definition.",
        expected: "every tools/list entry has a name and an object inputSchema",
        help: "Fix the tool definition (name, inputSchema, annotations types).",
    },
    Rule {
        id: "MCPF0014",
        kind: "duplicate-tool",
        short: "tools/list lists the same tool name more than once.",
        expected: "unique tool names",
        help: "Give every tool a unique name.",
    },
    Rule {
        id: "MCPF0015",
        kind: "tools-list-truncated",
        short: "tools/list pagination repeats a cursor or never ends.",
        expected: "pagination that ends with no nextCursor",
        help: "Return a fresh cursor per page and none on the last page.",
    },
    Rule {
        id: "MCPF0016",
        kind: "junk-on-stdout",
        short: "The server wrote non-JSON-RPC lines to stdout.",
        expected: "only JSON-RPC messages on stdout",
        help: "Send logs and debug output to stderr.",
    },
    Rule {
        id: "MCPF0017",
        kind: "schema-error",
        short: "A tool's inputSchema cannot be used to generate arguments.",
        expected: "a valid, satisfiable JSON Schema as inputSchema",
        help: "Fix the inputSchema so that it is valid JSON Schema and some value satisfies it.",
    },
];

/// The rule for kinds this table does not list.
pub const UNKNOWN: Rule = Rule {
    id: "MCPF0000",
    kind: "other",
    short: "A finding of a kind this version of the report writer does not know.",
    expected: "see the finding's message",
    help: "See the finding's message; upgrade mcp-fuzz for a dedicated rule.",
};

/// The rule of a finding kind.
pub fn rule_for(kind: &str) -> &'static Rule {
    RULES.iter().find(|r| r.kind == kind).unwrap_or(&UNKNOWN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_kinds_are_unique_and_stable() {
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.id, format!("MCPF{:04}", i + 1), "ids are dense and in order");
            assert!(RULES[i + 1..].iter().all(|o| o.kind != r.kind), "duplicate kind {}", r.kind);
        }
        assert_eq!(rule_for("exited").id, "MCPF0001");
        assert_eq!(rule_for("no-such-kind").id, "MCPF0000");
    }
}
