//! What shrinking did ([`ShrinkStats`]) and how a failure looks for "still fails the same way"
//! ([`Signature`]): the plain data reports and case files keep. The search is the engine's.

use crate::outcome::Outcome;
use serde::{Deserialize, Serialize};

/// What shrinking did for one finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShrinkStats {
    /// Candidate calls made.
    pub steps: u32,
    /// Candidates that still failed the same way (each became the new smallest).
    pub accepted: u32,
    /// Why the search stopped early, if it did: `steps` or `time`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exhausted: Option<String>,
    /// Re-runs of the minimal case.
    pub reruns: u32,
    /// Re-runs that failed the same way.
    pub reproduced: u32,
    /// Re-runs on a fresh server process (no earlier calls), among `reruns`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fresh_reruns: u32,
    /// Fresh re-runs that failed the same way.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fresh_reproduced: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How a failure looks, for "still fails the same way".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signature {
    /// The outcome kind (`exited`, `internal-error`...).
    pub kind: String,
    /// The JSON-RPC error code, for error replies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// The exit status, for exits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal, for exits by signal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The panic location (`src/main.rs:10:5`), when the stderr of an exit names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub panic: Option<String>,
    /// What failed, for the kinds where one tool may fail in several ways: the breach of the wire
    /// for a protocol violation, the exception and its place for a handler exception
    /// ([`Outcome::cause_key`]). Absent from case files written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl Signature {
    /// The signature of an outcome.
    #[must_use]
    pub fn of(o: &Outcome) -> Self {
        let mut s = Self {
            kind: o.kind().to_string(),
            code: None,
            exit_code: None,
            signal: None,
            panic: None,
            cause: o.cause_key(),
        };
        match o {
            Outcome::InvalidParams { .. } => s.code = Some(-32602),
            Outcome::InternalError { .. } => s.code = Some(-32603),
            Outcome::RpcError { code, .. } => s.code = Some(*code),
            Outcome::Exited { exit, stderr } => {
                s.exit_code = exit.code;
                s.signal = exit.signal;
                s.panic = panic_location(stderr);
            }
            _ => {}
        }
        s
    }

    /// The signature of a call's outcome: [`Signature::of`], and for an error answer (a
    /// JSON-RPC error, a tool error) the message as its cause, with the values the call's
    /// `arguments` echo elided, so that an answer with another message is another failure.
    ///
    /// See: issue 30 item 7 (`@jpisnice/shadcn-ui-mcp-server` 2.0.0: a circuit breaker's
    /// "Service temporarily unavailable" stood in for the TypeError a fresh process showed,
    /// because only the kind and the code were compared).
    #[must_use]
    pub fn of_call(o: &Outcome, arguments: &serde_json::Map<String, serde_json::Value>) -> Self {
        let mut s = Self::of(o);
        let message = matches!(
            o,
            Outcome::InternalError { .. }
                | Outcome::RpcError { .. }
                | Outcome::InvalidParams { .. }
                | Outcome::ToolError { .. }
                | Outcome::UnflaggedError { .. }
        );
        if s.cause.is_none() && message {
            s.cause = Some(o.without_echoes(arguments).cause());
        }
        s
    }

    /// Whether the outcome of a call with `arguments` fails the same way ([`Signature::of_call`]).
    #[must_use]
    pub fn matches_call(
        &self,
        o: &Outcome,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> bool {
        self.same(&Self::of_call(o, arguments))
    }

    /// Whether `o` fails the same way. A panic location counts only when both sides name one:
    /// a panic line may be cut from a short stderr tail; so does a cause (a case file written
    /// before causes were kept has none).
    ///
    /// See: issue 30 item 4 (a tool with two wire bugs had all three findings "shrunk" to the
    /// input of the first, which failed with the same kind, not the same cause).
    #[must_use]
    pub fn matches(&self, o: &Outcome) -> bool {
        self.same(&Self::of(o))
    }

    /// Whether two signatures are one failure: a cause counts only when both have one, and one
    /// message template is one cause ([`crate::template::same_cause`]).
    fn same(&self, other: &Self) -> bool {
        let cause = match (&self.cause, &other.cause) {
            (Some(a), Some(b)) => crate::template::same_cause(a, b),
            _ => true,
        };
        self.kind == other.kind
            && self.code == other.code
            && self.exit_code == other.exit_code
            && self.signal == other.signal
            && (self.panic.is_none() || other.panic.is_none() || self.panic == other.panic)
            && cause
    }
}

/// The location of a Rust panic in stderr: `src/x.rs:10:5` from
/// `thread 'main' panicked at src/x.rs:10:5:` (the message may hold the input, the place does not).
fn panic_location(stderr: &[String]) -> Option<String> {
    stderr.iter().rev().find_map(|line| {
        let rest = line.split_once("panicked at ")?.1;
        let rest = rest.trim_end().trim_end_matches(':');
        // Old format: `panicked at 'message', src/x.rs:10:5`.
        let place = rest.rsplit_once(", ").map_or(rest, |(_, p)| p);
        Some(place.to_owned())
    })
}
