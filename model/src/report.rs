//! The run report: the documented JSON shape (`docs/report.schema.json`, `reportVersion` 1),
//! serialisable and deserialisable, so a report read back from a shard's `report.json` renders
//! exactly like a fresh one. Fields a newer version adds are kept in `extra` and written back.
//!
//! The field order of every struct is the order of the JSON document.

use crate::case::CaseLabel;
use crate::facts::Facts;
use crate::finding::{FindingKind, Identity, Severity, SkipReason, ToolStatus};
use crate::outcome::{Outcome, OutcomeKind};
use crate::shrink::ShrinkStats;
use crate::steps::SeqStep;
use crate::target::Exchange;
pub use crate::target::{ServerInfo, TargetInfo};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The version of the JSON report's shape.
pub const REPORT_VERSION: u32 = 1;

/// The result of a run (or of merged shards).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always [`REPORT_VERSION`] when written by this version.
    pub report_version: u32,
    /// The mcp-fuzz version that wrote it.
    pub tool_version: String,
    /// The server, with every secret redacted.
    pub target: TargetInfo,
    /// What the server said about itself.
    pub server: ServerInfo,
    /// The run seed.
    pub seed: u64,
    /// The shard this report covers (`hash:M/N`, `count:M/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Per-tool status, in listing order.
    pub tools: Vec<ToolReport>,
    /// Every finding.
    pub findings: Vec<Finding>,
    /// The crash-resilience score.
    pub score: Score,
    /// Server restarts.
    pub restarts: u64,
    /// `tools/call` requests made.
    pub calls: u64,
    /// Server processes started ahead of need (warm spares: a restart took a ready process
    /// instead of waiting for a start); only for servers that start slowly.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spares: u64,
    /// Server processes replaced before the call number their predecessors died on (a call
    /// limit suspected during the run), so that no tool lost cases to it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recycled: u64,
    /// Wall time, in seconds.
    pub duration_secs: f64,
    /// What `--baseline` did, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
    /// Why the campaign stopped before calling every planned case, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The shard reports this one was merged from (`mcp-fuzz report merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergeSource>>,
    /// The sequence phase, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful: Option<StatefulSummary>,
    /// Prompts, resources, resource templates and completions, when the server offers any and
    /// the run called them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surfaces: Option<SurfacesSummary>,
    /// The protocol conformance phase, when it ran: its checks and its own score (never part
    /// of `score`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<ProtocolSummary>,
    /// Fields this version does not know (from a newer report), kept as read.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One tool's part of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReport {
    /// The tool's name.
    pub name: String,
    /// What happened to it.
    pub status: ToolStatus,
    /// Why it was skipped or stopped early, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cases executed, by mode.
    pub cases: CaseCounts,
    /// Invalid cases answered gracefully.
    pub graceful: u64,
    /// Invalid cases that count in the score.
    pub scored: u64,
    /// The tool's own score, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// How often each outcome kind was seen.
    pub outcomes: BTreeMap<String, u64>,
    /// Valid (and boundary) cases answered with a successful result (`None` in reports older
    /// than this field, and for tools not called).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_succeeded: Option<u64>,
    /// The valid cases made with value hints (`[hints]` in mcp-fuzz.toml), when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hinted: Option<Hinted>,
    /// Cases not sent because their class kept killing or hanging the server the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_sent: Vec<NotSent>,
    /// What its annotations claim and what its calls did to the sandbox (tools called in a
    /// sandbox only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<AnnotationCheck>,
    /// Fields this version does not know, kept as read.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// Why it was not called, typed (not serialised: `reason` carries its text).
    #[serde(skip)]
    pub skip: Option<SkipReason>,
    /// Some call of it outlasted its patience, or its time budget ran out: the sequence phase
    /// leaves it out (not serialised).
    #[serde(skip)]
    pub waited: bool,
}

impl ToolReport {
    /// "0 of 24 valid calls succeeded", for a tool that was called with valid cases and never
    /// answered one with success: its score then says nothing about its real behaviour.
    #[must_use]
    pub fn coverage_note(&self) -> Option<String> {
        let valid = self.cases.valid + self.cases.boundary;
        (self.status == ToolStatus::Tested && valid > 0 && self.valid_succeeded == Some(0))
            .then(|| format!("0 of {valid} valid calls succeeded"))
    }

    /// "12 cases not sent: same cause as exited: status 7 (negative number at `/factor`)", for
    /// a tool whose cases of a class kept killing the server.
    #[must_use]
    pub fn not_sent_note(&self) -> Option<String> {
        let parts: Vec<String> = self
            .not_sent
            .iter()
            .map(|n| {
                format!(
                    "{} not sent: same cause as {} ({})",
                    crate::text::count(n.cases, "case"),
                    n.cause,
                    n.class
                )
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The note of the tool's line in a table: why it was not called or stopped, else what its
    /// coverage lacks; and the cases not sent, if any.
    #[must_use]
    pub fn note(&self) -> String {
        let first = if self.status == ToolStatus::Tested {
            self.coverage_note().or_else(|| self.hinted_note())
        } else {
            self.reason.clone()
        };
        let annotations = self.annotations.as_ref().and_then(AnnotationCheck::note_if_off);
        [first, self.not_sent_note(), annotations]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// "3 of 10 hinted calls succeeded", for a tool called with value hints.
    #[must_use]
    pub fn hinted_note(&self) -> Option<String> {
        self.hinted.map(|h| format!("{} of {} hinted calls succeeded", h.succeeded, h.calls))
    }

    /// A tool about to be run.
    #[must_use]
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            status: ToolStatus::Tested,
            reason: None,
            cases: CaseCounts::default(),
            graceful: 0,
            scored: 0,
            score: None,
            outcomes: BTreeMap::new(),
            valid_succeeded: None,
            hinted: None,
            not_sent: Vec::new(),
            annotations: None,
            extra: Map::new(),
            skip: None,
            waited: false,
        }
    }

    /// Marks the tool skipped, with the reason in words and typed.
    pub fn skip(&mut self, reason: SkipReason) {
        self.status = ToolStatus::Skipped;
        self.reason = Some(reason.to_string());
        self.skip = Some(reason);
    }

    /// Counts one call of the tool whose outcome was of `kind`.
    pub fn count(&mut self, kind: OutcomeKind) {
        *self.outcomes.entry(kind.as_str().to_owned()).or_default() += 1;
    }

    /// Whether some call of the tool had an outcome of `kind`.
    #[must_use]
    pub fn saw(&self, kind: OutcomeKind) -> bool {
        self.outcomes.contains_key(kind.as_str())
    }

    /// Cases executed, all modes.
    #[must_use]
    pub fn total_cases(&self) -> u64 {
        self.cases.boundary + self.cases.valid + self.cases.invalid
    }
}

/// Cases of a tool not sent: once the server died (or hung) the same way on three of them,
/// the cases sharing every trait of those (and with no case of the class surviving) are known
/// to end the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotSent {
    /// How many.
    pub cases: u64,
    /// The death's signature: the cause of its outcome (`exited: status 7`, `timeout`).
    pub cause: String,
    /// The traits the class shares, in words (`negative number at `/factor``).
    pub class: String,
}

/// Valid cases made with value hints: how many were called, how many succeeded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hinted {
    /// Hinted cases called (they count among the valid ones).
    pub calls: u64,
    /// Those answered with a successful result.
    pub succeeded: u64,
}

/// Cases executed, by mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseCounts {
    /// Boundary cases.
    pub boundary: u64,
    /// Random valid cases.
    pub valid: u64,
    /// Invalid cases.
    pub invalid: u64,
}

/// Something to fix, or to look at.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The tool, when the finding is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The prompt, resource, resource template or completion, when the finding is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<SurfaceRef>,
    /// The protocol conformance check, when the finding is about one (its `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// The JSON-RPC request that failed (method and params), for findings not about a tool
    /// call: what to send to reproduce it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// What was found.
    pub kind: FindingKind,
    /// How much it matters.
    pub severity: Severity,
    /// How the failing case was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<CaseLabel>,
    /// The exact arguments of the original failing call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// The outcome of that call, in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// One line saying what happened.
    pub message: String,
    /// The baseline lists it: it does not fail the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
    /// The smallest arguments found that still fail the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal_arguments: Option<Map<String, Value>>,
    /// Whether re-running the minimal arguments failed the same way only some of the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flaky: Option<bool>,
    /// What shrinking did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrink: Option<ShrinkStats>,
    /// The failure's cause, normalised ([`Outcome::cause`]): the failing cases of one tool with
    /// one cause are this one finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// How many cases failed with this cause (the finding shows the first, simplest one).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub occurrences: u64,
    /// The labels of the other cases that failed with this cause, in case order (at most
    /// [`MAX_OTHER_CASES`], except for invalid input accepted: every case of its rule family).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_cases: Vec<CaseLabel>,
    /// A server-wide finding about several tools: every tool, the one whose case is shown first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The findings a server-wide one stands for, one per tool, each as it would have been
    /// reported alone ([`crate::group`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Finding>,
    /// `dies-after-calls`: the lowest call number of a process on which the server died.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_call: Option<u64>,
    /// A death that a fresh process did not repeat: for each of its cases, the number of the
    /// call on its server process that died.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub death_calls: Vec<u64>,
    /// A failure that needs earlier calls: the calls of one server process, from its start, up
    /// to the failing one (the last step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequence: Vec<SeqStep>,
    /// The shortest sequence found that still fails the same way, when shorter or simpler than
    /// `sequence`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal_sequence: Option<Vec<SeqStep>>,
    /// Fields this version does not know, kept as read.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// What a case file needs beyond the report (not serialised).
    #[serde(skip)]
    pub evidence: Option<Box<Evidence>>,
    /// What the judge and the steps after it learned, for findings made from a case: the
    /// kind, severity and message are derived from them (not serialised; the words stay).
    #[serde(skip)]
    pub facts: Option<Box<Facts>>,
}

/// What a tool's annotations claim, and what its calls were seen to do to the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationCheck {
    /// The hints it declares, as listed (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
    /// `openWorldHint`; absent ones are left out).
    pub claimed: BTreeMap<String, bool>,
    /// The files (relative to the sandbox) its calls created, changed or removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// What that makes of its hints.
    pub verdict: AnnotationVerdict,
    /// Why it could not be checked, or what changed that no call of it repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The verdict of an [`AnnotationCheck`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnnotationVerdict {
    /// What its calls did fits what it claims.
    Consistent,
    /// It claims `readOnlyHint: true` and a call of it changed files.
    Mismatch,
    /// It changed files and declares no annotations.
    Unannotated,
    /// Files changed while its cases ran, but no call of it repeated the change (a restart's
    /// start-up, or another tool's late call): not blamed.
    Unexplained,
    /// Its effects could not be compared (the sandbox tree is too big).
    Unchecked,
}

impl AnnotationCheck {
    /// "annotations: readOnlyHint but created out.txt", when something is off.
    #[must_use]
    pub fn note_if_off(&self) -> Option<String> {
        let files = || {
            let shown: Vec<&str> = self.files.iter().take(3).map(String::as_str).collect();
            let more = self.files.len().saturating_sub(3);
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!("{}{tail}", shown.join(", "))
        };
        match self.verdict {
            AnnotationVerdict::Mismatch => Some(match &self.note {
                Some(note) => format!("annotations: {note}"),
                None => format!("annotations: readOnlyHint, but changed {}", files()),
            }),
            AnnotationVerdict::Unannotated => {
                Some(format!("annotations: none, but changed {}", files()))
            }
            AnnotationVerdict::Unchecked => {
                Some(format!("annotations: {}", self.note.as_deref().unwrap_or("not checked")))
            }
            AnnotationVerdict::Consistent | AnnotationVerdict::Unexplained => None,
        }
    }
}

/// Other cases of one cause kept on its finding.
pub const MAX_OTHER_CASES: usize = 10;

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn one() -> u64 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_one(n: &u64) -> bool {
    *n == 1
}

impl Finding {
    /// A finding about a tool (or, without one, the server) as a whole, not about one case.
    #[must_use]
    pub fn general(
        tool: Option<String>,
        kind: FindingKind,
        severity: Severity,
        message: String,
    ) -> Self {
        Self {
            tool,
            surface: None,
            check: None,
            request: None,
            kind,
            severity,
            case: None,
            arguments: None,
            outcome: None,
            message,
            baselined: false,
            minimal_arguments: None,
            flaky: None,
            shrink: None,
            cause: None,
            occurrences: 1,
            other_cases: Vec::new(),
            tools: Vec::new(),
            members: Vec::new(),
            at_call: None,
            death_calls: Vec::new(),
            sequence: Vec::new(),
            minimal_sequence: None,
            extra: Map::new(),
            evidence: None,
            facts: None,
        }
    }

    /// The stable identity: tool, kind, and the case label's mutation and pointer; for one cause
    /// seen on several tools, the kind and the cause; for invalid input accepted, the tool and
    /// the rule family (its cause), whichever case came first.
    #[must_use]
    pub fn identity(&self) -> Identity {
        if self.tool.is_none() && !self.tools.is_empty() {
            let cause = (self.kind != FindingKind::DiesAfterCalls).then(|| self.cause.clone());
            return Identity {
                tool: None,
                kind: self.kind.clone(),
                mutation: None,
                pointer: None,
                cause: cause.flatten(),
                surface: None,
            };
        }
        if self.kind == FindingKind::AcceptsInvalid && self.cause.is_some() {
            return Identity {
                tool: self.tool.clone(),
                kind: self.kind.clone(),
                mutation: None,
                pointer: None,
                cause: self.cause.clone(),
                surface: None,
            };
        }
        Identity {
            tool: self.tool.clone(),
            kind: self.kind.clone(),
            mutation: self.case.as_ref().and_then(|c| c.mutation.clone()),
            pointer: self.case.as_ref().and_then(|c| c.pointer.clone()),
            cause: None,
            surface: self.surface.as_ref().map(ToString::to_string).or_else(|| self.check.clone()),
        }
    }

    /// What the finding is about, in words: the tool, the prompt or resource (`prompt
    /// summarize`), the protocol check (`protocol unknown-method`), or `server`.
    #[must_use]
    pub fn subject(&self) -> String {
        match (&self.tool, &self.surface, &self.check) {
            (Some(t), _, _) => t.clone(),
            (None, Some(s), _) => s.to_string(),
            (None, None, Some(c)) => format!("protocol {c}"),
            _ => "server".into(),
        }
    }

    /// Whether the finding is about `tool`: its own, or one of a server-wide finding's tools.
    #[must_use]
    pub fn concerns(&self, tool: &str) -> bool {
        self.tool.as_deref() == Some(tool) || self.tools.iter().any(|t| t == tool)
    }

    /// The tool its case (and a replay of it) calls: its own, or the first of a server-wide
    /// finding's tools.
    #[must_use]
    pub fn case_tool(&self) -> Option<&str> {
        self.tool.as_deref().or(self.tools.first().map(String::as_str))
    }

    /// Whether it fails the run: a failure the baseline does not accept.
    #[must_use]
    pub fn fails(&self) -> bool {
        self.severity == Severity::Failure && !self.baselined
    }

    /// The smallest arguments known to reproduce it: the shrunk ones, else the ones sent.
    #[must_use]
    pub fn smallest_arguments(&self) -> Option<&Map<String, Value>> {
        self.minimal_arguments.as_ref().or(self.arguments.as_ref())
    }

    /// What to do about it, chosen from the facts: for a failure that needs earlier calls (and
    /// whose kind does not say so already), what to look for in them; for a crash on valid
    /// input, a failure with no input to blame or a tool that fails alike on every call without
    /// naming an upstream, words of their own; else its kind's help.
    #[must_use]
    pub fn fix(&self) -> &'static str {
        let state_kind = matches!(
            self.kind,
            FindingKind::UseAfterDelete | FindingKind::UnknownHandle | FindingKind::CreatedNotFound
        );
        let on_valid = self.case.as_ref().is_some_and(|c| c.mode.is_valid());
        let upstream = self.outcome.as_ref().is_some_and(Outcome::names_upstream);
        if !self.sequence.is_empty() && !state_kind {
            return "It needs the earlier calls of its sequence: look for what they leave behind \
                    (an open handle, a counter, a cache, a half-done write) and release, bound or \
                    check it; the minimal sequence shows the calls.";
        }
        // The rule's help assumes the usual case; these facts change what to do.
        // See: issue 30 item 8 (a -32603 on valid input said "Reject invalid arguments").
        match self.kind {
            FindingKind::InternalError | FindingKind::RpcError | FindingKind::HandlerException
                if on_valid =>
            {
                "The input was valid: fix the fault it reached (the message or stack names it); \
                 a valid call succeeds, or answers an isError result saying what is missing."
            }
            FindingKind::ValidCallFailed if self.severity == Severity::Failure => {
                "No input is to blame: fix what the message names (a value the tool cannot \
                 serialise, a file, setting or state it assumes)."
            }
            FindingKind::ProtocolViolation
                if self.surface.is_some()
                    && matches!(self.outcome, Some(Outcome::ProtocolViolation { .. })) =>
            {
                "Answer in the shape the specification gives for this request (the message names \
                 the rule broken): a prompt's messages, a resource's contents, at most 100 \
                 completion values with a consistent total."
            }
            FindingKind::ToolUnavailable if !upstream => {
                "Every call failed the same way whatever its input: if the tool needs a backend \
                 or credentials, provide them for the run (or --skip-tool it); if not, the \
                 failure is the tool's own and its message names it."
            }
            FindingKind::ProtocolNonconformance
                if self.check.as_deref().is_some_and(|c| c.starts_with("http-origin")) =>
            {
                "Validate Origin (and Host) on every request: refuse an Origin that is not your \
                 own with 403 (the TypeScript SDK's `allowedOrigins` with \
                 `enableDnsRebindingProtection`, rmcp's `with_allowed_origins`, FastMCP's \
                 transport security settings), and bind 127.0.0.1 when serving locally."
            }
            FindingKind::ProtocolNonconformance
                if self.check.as_deref().is_some_and(|c| c.starts_with("http-")) =>
            {
                "Follow the streamable HTTP transport's rule the check names (its specUrl): the \
                 status code it gives is what clients act on (404 starts a new session, 400 \
                 names a bad request, 202 acknowledges a notification)."
            }
            _ => self.kind.rule().help,
        }
    }

    /// The shortest sequence known to reproduce it (empty for a single call).
    #[must_use]
    pub fn smallest_sequence(&self) -> &[SeqStep] {
        self.minimal_sequence.as_deref().unwrap_or(&self.sequence)
    }
}

/// The calls sent to one server process, from its start: tool and arguments.
pub type History = std::sync::Arc<Vec<(String, Map<String, Value>)>>;

/// What was recorded when the minimal case was re-run, for case files.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// The exchange of the last re-run (a failing one when any failed).
    pub exchange: Option<Exchange>,
    /// The server's stderr tail after that call.
    pub stderr: Vec<String>,
    /// The outcome of that call.
    pub minimal_outcome: Option<Outcome>,
    /// The tool's outputSchema, needed to judge a replay.
    pub output_schema: Option<Value>,
    /// For random cases: the sampler draw that made the case.
    pub draw: Option<u64>,
    /// For a failure that a fresh process did not repeat: the calls its process had been sent,
    /// the failing one last (replayed to find the calls it needs).
    pub history: Option<History>,
}

/// What `--baseline` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineSummary {
    /// The baseline file, as given.
    pub file: String,
    /// Findings the baseline accepts (they do not fail the run).
    pub known: u64,
    /// Findings the baseline does not list.
    pub new: u64,
    /// Baselined findings that no longer occur.
    pub stale: Vec<Identity>,
}

/// The sequence phase: what it walked and what it learned of the tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSummary {
    /// Walks run (each from a fresh server process).
    pub sequences: u64,
    /// Calls the walks made.
    pub steps: u64,
    /// The tools the walks could call (the gate's), in listing order.
    pub tools: Vec<String>,
    /// Families named from the tool names (`create_x` / `get_x` / `delete_x`), with two tools
    /// or more.
    pub families: Vec<StateFamily>,
    /// Producer -> consumer pairs seen working: a value one tool returned, another took and
    /// answered successfully.
    pub links: Vec<StateLink>,
    /// Findings the phase reported.
    pub findings: u64,
    /// Why the phase did not walk, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The tools of one family, by what they do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateFamily {
    /// The thing they act on (`entity`, `file`).
    pub noun: String,
    /// `create_x`, `open_x`, `start_x`...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub creates: Vec<String>,
    /// `list_x`, `search_x`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lists: Vec<String>,
    /// `get_x`, `read_x`, `status_x`...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// `update_x`, `set_x`...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updates: Vec<String>,
    /// `delete_x`, `close_x`, `stop_x`...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletes: Vec<String>,
}

impl StateFamily {
    /// How many tools it has.
    #[must_use]
    pub fn tools(&self) -> usize {
        self.creates.len()
            + self.lists.len()
            + self.reads.len()
            + self.updates.len()
            + self.deletes.len()
    }
}

/// A value one tool returned that another took, with success.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateLink {
    /// The producer.
    pub from: String,
    /// The consumer.
    pub to: String,
    /// The property the value was returned under.
    pub via: String,
    /// Successful calls of the consumer with such a value.
    pub calls: u64,
}

/// One shard of a merged report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeSource {
    /// The shard's report file, as given.
    pub file: String,
    /// The shard's partition.
    pub partition: Option<String>,
}

impl Report {
    /// How many tested tools were really exercised (a valid call succeeded), with the valid
    /// and hinted calls that succeeded; what the others' scores are worth. `None` when no
    /// tested tool says (reports older than `validSucceeded`).
    #[must_use]
    pub fn coverage_summary(&self) -> Option<String> {
        let tested: Vec<&ToolReport> = self
            .tools
            .iter()
            .filter(|t| t.status == ToolStatus::Tested && t.valid_succeeded.is_some())
            .collect();
        let sum = |f: fn(&ToolReport) -> u64| tested.iter().map(|t| f(t)).sum::<u64>();
        let exercised = tested.iter().filter(|t| t.valid_succeeded > Some(0)).count();
        let ok = sum(|t| t.valid_succeeded.unwrap_or(0));
        let valid = sum(|t| t.cases.valid + t.cases.boundary);
        let hinted = sum(|t| t.hinted.map_or(0, |h| h.calls));
        let hinted_ok = sum(|t| t.hinted.map_or(0, |h| h.succeeded));
        // A failure on valid input explains why no valid call worked better than missing
        // hints do (a tool with no arguments whose every call fails: no hint can help).
        let explained = |t: &ToolReport| {
            self.findings.iter().any(|f| {
                f.concerns(&t.name)
                    && f.severity == Severity::Failure
                    && f.case.as_ref().is_some_and(|c| c.mode.is_valid())
            })
        };
        let blind = tested.iter().filter(|t| t.coverage_note().is_some() && !explained(t)).count();
        let mut s = format!(
            "{exercised} of {} tested tool(s) exercised (a valid call succeeded); {ok} of {valid} \
             valid calls succeeded",
            tested.len()
        );
        if hinted > 0 {
            s.push_str(&format!(", {hinted_ok} of {hinted} hinted ones"));
        }
        if blind > 0 {
            s.push_str(&format!(
                "; {blind} had no valid call succeed: their scores say nothing about their real \
                 behaviour (the generated values may name nothing that exists: paths, ids, \
                 repositories; add value hints)"
            ));
        }
        (!tested.is_empty()).then_some(s)
    }

    /// Tools actually called.
    #[must_use]
    pub fn tested(&self) -> usize {
        self.tools.iter().filter(|t| t.status.was_called()).count()
    }

    /// Findings that fail the run.
    #[must_use]
    pub fn failures(&self) -> usize {
        self.findings.iter().filter(|f| f.fails()).count()
    }

    /// Whether this is a `--partition` shard whose share held no testable tool: not a failure
    /// of the server; the merged report decides.
    #[must_use]
    pub fn is_empty_shard(&self) -> bool {
        self.partition.is_some()
            && self.tested() == 0
            && self.tools.iter().any(|t| matches!(t.skip, Some(SkipReason::NotInPartition(_))))
    }
}

/// A letter grade of a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Grade {
    /// 95% and more.
    A,
    /// 85% and more.
    B,
    /// 70% and more.
    C,
    /// 50% and more.
    D,
    /// Below 50%.
    F,
}

impl Grade {
    /// The grade of a score in percent.
    #[must_use]
    pub fn of(percent: f64) -> Self {
        match percent {
            p if p >= 95.0 => Self::A,
            p if p >= 85.0 => Self::B,
            p if p >= 70.0 => Self::C,
            p if p >= 50.0 => Self::D,
            _ => Self::F,
        }
    }

    /// The letter as reports show it (`A`...`F`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::A => "A",
            Self::B => "B",
            Self::C => "C",
            Self::D => "D",
            Self::F => "F",
        }
    }
}

/// The crash-resilience score: graceful answers over the invalid cases that count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// Invalid cases answered gracefully.
    pub graceful: u64,
    /// Invalid cases that count (accepted invalid input does not).
    pub scored: u64,
    /// The percentage, to one decimal, when any case counted.
    pub percent: Option<f64>,
    /// The letter grade of the percentage.
    pub grade: Option<Grade>,
}

impl Score {
    /// The score of `graceful` out of `scored`.
    #[must_use]
    pub fn new(graceful: u64, scored: u64) -> Self {
        #[expect(clippy::cast_precision_loss, reason = "case counts are small")]
        let percent =
            (scored > 0).then(|| ((graceful as f64 * 1000.0 / scored as f64).round()) / 10.0);
        Self { graceful, scored, percent, grade: percent.map(Grade::of) }
    }

    /// The run's score from its tools: unavailable tools are left out (their failures say
    /// nothing about input handling).
    #[must_use]
    pub fn of(tools: &[ToolReport]) -> Self {
        let (graceful, scored) = tools
            .iter()
            .filter(|t| t.status != ToolStatus::Unavailable)
            .fold((0, 0), |(g, s), t| (g + t.graceful, s + t.scored));
        Self::new(graceful, scored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "reportVersion": 1, "toolVersion": "0.1.0",
            "target": {"transport": "stdio", "command": ["srv"], "env": [], "inheritEnv": false, "cwd": null},
            "server": {"name": "s", "version": "1", "protocolVersion": "2025-06-18"},
            "seed": 3,
            "tools": [{"name": "t", "status": "tested", "cases": {"boundary": 1, "valid": 2, "invalid": 3},
                       "graceful": 2, "scored": 3, "score": 66.7, "outcomes": {"exited": 1, "ok": 3},
                       "elapsedSecs": 0.5}],
            "findings": [{"tool": "t", "kind": "exited", "severity": "failure",
                          "case": {"mode": "invalid", "mutation": "wrong-type", "pointer": "/a", "keyword": "type"},
                          "arguments": {"a": 1, "b": [1, 2]}, "outcome": {"kind": "exited", "exit": {"code": 3, "signal": null}, "stderr": []},
                          "message": "m", "minimalArguments": {"a": 1}, "flaky": false, "evidence": {"stderr": ["x"]}}],
            "score": {"graceful": 2, "scored": 3, "percent": 66.7, "grade": "D"},
            "restarts": 1, "calls": 6, "durationSecs": 0.25, "stopped": "time budget", "fromTheFuture": true
        })
    }

    #[test]
    fn a_report_read_back_writes_the_same_document() {
        let report: Report = serde_json::from_value(sample()).expect("reads");
        assert_eq!(serde_json::to_value(&report).expect("writes"), sample());
        let f = &report.findings[0];
        assert_eq!(f.smallest_arguments().map(Map::len), Some(1), "the shrunk arguments win");
        assert_eq!(f.identity().kind, FindingKind::Exited);
        assert_eq!(report.failures(), 1);
        assert_eq!(report.tested(), 1);
        assert!(!report.is_empty_shard());
    }

    #[test]
    fn fix_texts_fit_the_facts_one_per_text() {
        // See: issue 30 item 8.
        let of = |kind: &str, severity: &str, mode: &str, outcome: Value| {
            let f: Finding = serde_json::from_value(json!({
                "tool": "t", "kind": kind, "severity": severity, "case": {"mode": mode},
                "arguments": {}, "outcome": outcome, "message": "m"
            }))
            .expect("a finding");
            f.fix()
        };
        let internal = json!({"kind": "internal-error", "message": "boom", "upstream": false});
        assert!(
            of("internal-error", "failure", "valid", internal.clone())
                .starts_with("The input was valid")
        );
        assert!(
            of("internal-error", "failure", "invalid", internal)
                .starts_with("Reject invalid arguments")
        );
        let exception = json!({"kind": "handler-exception", "text": "TypeError: x"});
        assert!(
            of("handler-exception", "failure", "valid", exception)
                .starts_with("The input was valid")
        );
        let error = json!({"kind": "tool-error", "text": "inf", "upstream": false});
        assert!(
            of("valid-call-failed", "failure", "valid", error.clone())
                .starts_with("No input is to blame")
        );
        assert!(
            of("valid-call-failed", "info", "valid", error.clone())
                .starts_with("Check whether the schema")
        );
        assert!(
            of("tool-unavailable", "warning", "valid", error)
                .starts_with("Every call failed the same way")
        );
        let down =
            json!({"kind": "tool-error", "text": "getaddrinfo ENOTFOUND x", "upstream": true});
        assert!(
            of("tool-unavailable", "warning", "valid", down)
                .starts_with("Provide the tool's credentials")
        );
        let breach = json!({"kind": "protocol-violation", "detail": "101 values"});
        let completion: Finding = serde_json::from_value(json!({
            "surface": {"kind": "completion", "name": "ref/prompt p", "argument": "a"},
            "kind": "protocol-violation", "severity": "failure", "outcome": breach, "message": "m"
        }))
        .expect("a finding");
        assert!(completion.fix().starts_with("Answer in the shape"), "{}", completion.fix());
        assert!(
            of("protocol-violation", "failure", "valid", breach)
                .starts_with("Send only well-formed JSON-RPC")
        );
    }

    #[test]
    fn baselined_failures_do_not_fail_the_run() {
        let mut report: Report = serde_json::from_value(sample()).expect("reads");
        report.findings[0].baselined = true;
        assert_eq!(report.failures(), 0);
        assert_eq!(
            serde_json::to_value(&report).expect("writes")["findings"][0]["baselined"],
            true
        );
    }

    #[test]
    fn the_score_leaves_unavailable_tools_out() {
        let tool = |status, graceful, scored| ToolReport {
            status,
            graceful,
            scored,
            ..ToolReport::new("t")
        };
        let s = Score::of(&[
            tool(ToolStatus::Tested, 2, 3),
            tool(ToolStatus::Unavailable, 0, 5),
            tool(ToolStatus::GaveUp, 0, 1),
        ]);
        assert_eq!((s.graceful, s.scored, s.percent, s.grade), (2, 4, Some(50.0), Some(Grade::D)));
        assert_eq!(Score::of(&[tool(ToolStatus::Skipped, 0, 0)]).percent, None);
        assert_eq!(Score::new(1, 3).percent, Some(33.3));
        assert_eq!(
            [Grade::of(100.0), Grade::of(90.0), Grade::of(10.0)],
            [Grade::A, Grade::B, Grade::F]
        );
    }
}

/// A prompt, resource, resource template or completion a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceRef {
    /// Which surface.
    pub kind: SurfaceKind,
    /// The prompt's name, the resource's URI or the template's URI template.
    pub name: String,
    /// For a completion: the argument (or template variable) completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument: Option<String>,
}

impl std::fmt::Display for SurfaceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind.as_str(), self.name)?;
        match &self.argument {
            Some(a) => write!(f, " ({a})"),
            None => Ok(()),
        }
    }
}

/// The surfaces of a server beside its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SurfaceKind {
    /// `prompts/get`.
    Prompt,
    /// `resources/read` of a listed resource (or of an unknown URI).
    Resource,
    /// `resources/read` of a URI expanded from a `resources/templates/list` template.
    ResourceTemplate,
    /// `completion/complete` for a prompt argument or a template variable.
    Completion,
}

impl SurfaceKind {
    /// The documented name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Resource => "resource",
            Self::ResourceTemplate => "resource-template",
            Self::Completion => "completion",
        }
    }
}

/// Prompts, resources, templates and completions: what was listed and called, per item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfacesSummary {
    /// Each prompt of `prompts/list`, in listing order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<SurfaceItem>,
    /// Each resource of `resources/list` read (at most a bounded count), plus unknown URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<SurfaceItem>,
    /// Each template of `resources/templates/list`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<SurfaceItem>,
    /// `completion/complete` requests, per prompt argument and template variable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completions: Vec<SurfaceItem>,
    /// Why a surface was not called: by surface name (`prompts`, `resources`, `completions`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, String>,
    /// Requests made.
    pub requests: u64,
}

/// One prompt, resource, template or completion target: how its requests were answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceItem {
    /// The prompt's name, the resource's URI, the template, or `prompt:argument`.
    pub name: String,
    /// Requests made.
    pub requests: u64,
    /// Answered with a valid result.
    pub succeeded: u64,
    /// Answered with a JSON-RPC error (how a server refuses bad input).
    pub errors: u64,
    /// How often each outcome kind was seen.
    pub outcomes: BTreeMap<String, u64>,
}

/// The protocol conformance phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProtocolSummary {
    /// Every check, in the order run.
    pub checks: Vec<ProtocolCheck>,
    /// Checks passed.
    pub passed: u64,
    /// Checks failed (a failure or a warning finding each).
    pub failed: u64,
    /// Checks not run, each with its reason.
    pub skipped: u64,
    /// Passed over run, in percent (`None` when none ran): its own score, never part of the
    /// crash-resilience score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Why the whole phase did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Lines on stdout that are not JSON the checks' sessions skipped (the tools phase reports
    /// them as protocol violations).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_lines: u64,
}

/// One conformance check and what the server answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProtocolCheck {
    /// Stable id (`unknown-method`).
    pub id: String,
    /// What is sent, in words.
    pub title: String,
    /// The specification section that requires the answer.
    pub spec_url: String,
    /// Why the answer is required, in one line.
    pub rationale: String,
    /// The answer required.
    pub expected: String,
    /// `pass`, `fail` or `skip`.
    pub status: CheckStatus,
    /// What the server answered (or why the check was skipped).
    pub observed: String,
}

/// How a conformance check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    /// The server answered as required.
    Pass,
    /// It did not: a finding says how much it matters.
    Fail,
    /// Not run (why in `observed`).
    Skip,
}

impl ProtocolSummary {
    /// Counts and score from the checks.
    #[must_use]
    pub fn of(checks: Vec<ProtocolCheck>, reason: Option<String>) -> Self {
        let count = |s| checks.iter().filter(|c| c.status == s).count() as u64;
        let (passed, failed, skipped) =
            (count(CheckStatus::Pass), count(CheckStatus::Fail), count(CheckStatus::Skip));
        let ran = passed + failed;
        let score = (ran > 0).then(|| (passed as f64 * 1000.0 / ran as f64).round() / 10.0);
        Self { checks, passed, failed, skipped, score, reason, skipped_lines: 0 }
    }

    /// The same, with the count of lines that are not JSON the sessions skipped.
    #[must_use]
    pub fn skipping(self, lines: u64) -> Self {
        Self { skipped_lines: lines, ..self }
    }
}
