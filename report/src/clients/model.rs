//! The `clients` document (`docs/clients.schema.json`, `clientsVersion` 1) as typed data: built
//! from the clients crate's analysis, completed by `--call` (canary outcomes) and by the policy
//! (`--fail-on`, `--baseline`; see `super::policy`). The field order of every struct is the
//! order of the JSON document.

use crate::baseline::Key;
use mcp_fuzz_clients::analysis::{AdapterResult, Analysis};
use mcp_fuzz_clients::canary::{Canary, Direction};
use mcp_fuzz_clients::diff::Drift;
use mcp_fuzz_clients::real::{Capture, CaptureStatus, Handshake, RealClient, ReasonSource};
use mcp_fuzz_clients::real_analysis::{CaptureAnalysis, CapturedResult, Seen};
use mcp_fuzz_clients::{AnyAdapter, Finding, Severity, Source, canary_rule, rule};
use mcp_fuzz_model::outcome::Outcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the JSON document; bump on any incompatible change.
pub const CLIENTS_VERSION: u64 = 1;

/// The reason of a canary's outcome when `--call` was not given.
pub const NOT_CALLED: &str = "pass --call to send it to the server";

/// The reason of a canary's outcome when the client cannot send it (it is never sent).
pub const NOT_SENDABLE: &str =
    "the client cannot send it; only canaries the rendering allows are sent";

/// The whole document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientsReport {
    /// Always [`CLIENTS_VERSION`].
    pub clients_version: u64,
    /// The mcp-fuzz version that wrote it.
    pub tool_version: String,
    /// Where the tools came from (a file, a schema, a server), as shown to the user.
    pub source: String,
    /// The seed of the canary samples.
    pub seed: u64,
    /// The adapters applied, in report order: the modelled ones, then the real clients.
    pub adapters: Vec<AnyAdapter>,
    /// One row per adapter.
    pub summary: Vec<AdapterSummary>,
    /// Per real client asked for: whether it ran, which version, its handshake, what it lost.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub real_clients: Vec<RealClientRun>,
    /// What the live listing said besides the tools.
    pub listing: Listing,
    /// Findings about the whole listing (per-request limits).
    pub listing_findings: Vec<ClientFinding>,
    /// Per tool, every adapter's result.
    pub tools: Vec<ToolEntry>,
    /// Canaries sent with `--call` on which the server failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canary_call_failures: Option<u64>,
    /// What `--baseline` did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
    /// The lowest severity that fails.
    pub fail_on: FailOn,
    /// Findings that fail the policy.
    pub failures: u64,
    /// `pass` or `fail`.
    pub verdict: Verdict,
}

/// One adapter's counts.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterSummary {
    /// The adapter these counts are for.
    pub adapter: AnyAdapter,
    /// Tools rendered (a real client: the tools the server listed to it).
    pub tools: u64,
    /// Tools the client rejects (a real client: does not show the model).
    pub rejected: u64,
    /// A real client: the report's tools the server did not list to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_listed: Option<u64>,
    /// `fail` findings (not ambiguous).
    pub fail: u64,
    /// `warn` findings (not ambiguous).
    pub warn: u64,
    /// `info` findings (not ambiguous).
    pub info: u64,
    /// Ambiguous findings of any severity.
    pub ambiguous: u64,
    /// Tools whose rendering drifts from the advertised schema.
    pub drifting: u64,
    /// Canaries found.
    pub canaries: u64,
}

/// The live listing's extras.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Listing {
    /// Listed items that are not usable tools.
    pub problems: Vec<Value>,
    /// Why listing stopped early, if it did.
    pub truncated: Option<String>,
}

/// One tool.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// The tool's name.
    pub name: String,
    /// `false` when only real clients saw the tool: the server listed it to their handshakes,
    /// not to mcp-fuzz's.
    #[serde(skip_serializing_if = "std::clone::Clone::clone")]
    pub listed_to_mcp_fuzz: bool,
    /// Each adapter's result, in adapter order.
    pub adapters: Vec<AdapterEntry>,
}

/// One adapter's result for one tool.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterEntry {
    /// The adapter that rendered the tool.
    pub adapter: AnyAdapter,
    /// Whether the client rejects the tool.
    pub status: RenderStatus,
    /// A real client: the name it shows the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown_name: Option<String>,
    /// A real client that groups tools: the group (Codex CLI: `mcp__srv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Why the tool is `lost` or `not-captured`, in the client's words where it gave any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// A real client: what its log says about the tool, and other facts worth knowing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The rule findings.
    pub findings: Vec<ClientFinding>,
    /// What the client sends to the model.
    pub rendered: Rendered,
    /// Every difference from the advertised schema.
    pub drift: Vec<Drift>,
    /// Where the comparison stopped early.
    pub comparison_stopped: Vec<String>,
    /// Values on which the rendering and the server disagree.
    pub canaries: Vec<ClientFinding>,
    /// Why some canary searches ended without an answer.
    pub canary_notes: Vec<String>,
}

/// Whether a client accepts a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenderStatus {
    /// The client sends it to the model.
    Accepted,
    /// A modelled client refuses it.
    Rejected,
    /// A real client: the server listed it to the client, which does not show it to the model.
    Lost,
    /// A real client: the server did not list it to this client's handshake.
    NotListed,
    /// A real client that was not captured (not installed, another version with `--pin`,
    /// broken): nothing is known.
    NotCaptured,
}

/// Why a real client does not show a tool.
#[derive(Debug, Clone, Serialize)]
pub struct Reason {
    /// In the client's words where it gave any.
    pub reason: String,
    /// Where that comes from.
    pub source: ReasonSource,
}

/// Where a real client's server came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Served {
    /// The client started the server command itself, with its own handshake.
    Server,
    /// The client was pointed at mcp-fuzz's stand-in serving the listing (a `--tools` file,
    /// `--schema`, or `--http`, whose listing mcp-fuzz read with its own handshake).
    Listing,
}

/// One real client's run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RealClientRun {
    /// The client.
    pub adapter: RealClient,
    /// `captured`, `not-installed`, `wrong-version` or `broken`, with what goes with it.
    #[serde(flatten)]
    pub status: CaptureStatus,
    /// The version that ran (or was found), when known.
    pub version: Option<String>,
    /// The version `scripts/install-clients.sh` installs; `--pin` runs only this one.
    pub pinned_version: &'static str,
    /// The executable that ran (or was found).
    pub program: Option<String>,
    /// Whether the client ran the server or mcp-fuzz's stand-in for the listing.
    pub served: Served,
    /// Wall time of the capture, bisection included.
    pub elapsed_ms: u64,
    /// What the client declared in `initialize`.
    pub handshake: Option<Handshake>,
    /// How many tools the server listed to this client (`null`: not seen).
    pub listed: Option<u64>,
    /// How many of them the client shows the model.
    pub exposed: u64,
    /// The client lost every tool because of some (a proxy refused to start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing_failure: Option<LostListing>,
    /// Other things the capture noted (log lines, output cut).
    pub notes: Vec<String>,
}

/// A listing a real client lost as a whole.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LostListing {
    /// What the client said about the listing.
    pub reason: String,
    /// Where that comes from.
    pub source: ReasonSource,
    /// The tools that cause it (each is a `listing-lost` finding).
    pub culprits: Vec<String>,
    /// Extra client runs spent finding them.
    pub probes: u64,
}

impl RealClientRun {
    /// The run record of a capture; `served` says what the client was pointed at.
    #[must_use]
    pub fn of(capture: &Capture, served: Served) -> Self {
        Self {
            adapter: capture.client,
            status: capture.status.clone(),
            version: capture.version.clone(),
            pinned_version: capture.client.pinned_version(),
            program: capture.program.as_ref().map(|p| p.display().to_string()),
            served,
            elapsed_ms: u64::try_from(capture.elapsed.as_millis()).unwrap_or(u64::MAX),
            handshake: capture.handshake.clone(),
            listed: capture.server_tools.as_ref().map(|t| t.len() as u64),
            exposed: capture.tools.iter().filter(|t| t.server_name.is_some()).count() as u64,
            listing_failure: capture.listing_failure.as_ref().map(|f| LostListing {
                reason: f.reason.clone(),
                source: f.source,
                culprits: f.culprits.iter().map(|c| c.name.clone()).collect(),
                probes: f.probes as u64,
            }),
            notes: capture.notes.clone(),
        }
    }

    /// Whether the client ran and was read.
    #[must_use]
    pub fn is_captured(&self) -> bool {
        self.status == CaptureStatus::Captured
    }

    /// The status's name (`captured`, `not-installed`, `wrong-version`, `broken`).
    #[must_use]
    pub fn status_name(&self) -> &'static str {
        match self.status {
            CaptureStatus::Captured => "captured",
            CaptureStatus::NotInstalled { .. } => "not-installed",
            CaptureStatus::WrongVersion { .. } => "wrong-version",
            _ => "broken",
        }
    }
}

/// The rendered schemas.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rendered {
    /// The input schema, `null` when rejected.
    pub input_schema: Option<Value>,
    /// The output schema the client keeps, if any.
    pub output_schema: Option<Value>,
}

/// A finding of the document: a rule finding, or a canary (with `canary` set).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientFinding {
    /// The adapter that reported it.
    pub adapter: AnyAdapter,
    /// The rule id.
    pub rule: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// Ambiguous findings never fail.
    pub ambiguous: bool,
    /// The tool, `None` for the whole listing.
    pub tool: Option<String>,
    /// JSON pointer into the tool definition.
    pub pointer: String,
    /// What was found, specifically.
    pub detail: String,
    /// The published source of the rule.
    pub source: Source,
    /// How to fix it.
    pub fix: &'static str,
    /// For canaries: the witness and what the server did with it.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryPart>,
    /// The baseline lists it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
}

/// What a canary adds to a finding.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryPart {
    /// Which side allows the witness.
    pub direction: Direction,
    /// A value one schema allows and the other rejects.
    pub witness: Value,
    /// Whether the witness needs a property the advertised schema never declared.
    pub open_content: bool,
    /// What happened when it was (or was not) sent.
    pub outcome: CanaryOutcome,
}

/// What the server did with a canary.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum CanaryOutcome {
    /// Not sent.
    Skipped {
        /// Why it was not sent (not asked to, not read-only, not an object...).
        reason: String,
    },
    /// Sent with `--call`.
    Called {
        /// How the answer counts.
        verdict: CallVerdict,
        /// The answer, judged as `run` judges it.
        outcome: Outcome,
        /// A real client that can call (mcpo, the Inspector CLI): the call went through it, and
        /// this is what the client said (mcpo's HTTP status and body, the CLI's output). Absent:
        /// mcp-fuzz sent it to the server itself.
        #[serde(skip_serializing_if = "Option::is_none")]
        through: Option<Through>,
    },
    /// `--call`, through a real client that refused the arguments itself: the server never saw
    /// them (the client enforces more than the schema it shows).
    Blocked {
        /// The client and what it said.
        through: Through,
    },
}

/// The real client a canary was sent through, and what it said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Through {
    /// The client.
    pub client: RealClient,
    /// Its words: mcpo's HTTP status and body, the Inspector CLI's output.
    pub said: String,
    /// The arguments the server received, when the client rewrote the canary on the way (mcpo
    /// drops properties its model does not declare; the Inspector CLI converts values to their
    /// schema type, "many" for an integer becoming null). Absent: the server
    /// received the canary as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<Value>,
}

/// How a canary's answer counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallVerdict {
    /// A crash, hang or other failure: a `fail` finding.
    Failure,
    /// Rejected gracefully (tool error, invalid params).
    Graceful,
    /// Accepted as if valid (the server's schema is stricter than what it does).
    Accepted,
}

/// The lowest severity that fails `clients`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Only `fail` findings.
    Fail,
    /// `fail` and `warn` findings.
    Warn,
}

impl FailOn {
    /// `fail` or `warn`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Warn => "warn",
        }
    }
}

/// Whether the policy passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No finding fails the policy.
    Pass,
    /// Some finding fails it.
    Fail,
}

/// What `--baseline` did.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineSummary {
    /// The baseline file, as given.
    pub file: String,
    /// Findings the baseline accepts.
    pub known: u64,
    /// Findings (not ambiguous, not info) it does not list.
    pub new: u64,
    /// Entries that no longer occur.
    pub stale: Vec<ClientsIdentity>,
}

/// Where the tools came from.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// As shown to the user.
    pub origin: String,
    /// Listed items that are not usable tools (live servers only).
    pub problems: Vec<Value>,
    /// Why listing stopped early (live servers only).
    pub truncated: Option<String>,
}

impl ClientFinding {
    /// A rule finding of the analysis, with its rule's source and fix.
    #[must_use]
    pub fn of(f: &Finding) -> Self {
        let r = rule(f.rule);
        Self {
            adapter: f.adapter,
            rule: f.rule,
            severity: f.severity,
            ambiguous: f.ambiguous,
            tool: f.tool.clone(),
            pointer: f.pointer.clone(),
            detail: f.detail.clone(),
            source: r.source,
            fix: r.fix,
            canary: None,
            baselined: false,
        }
    }

    /// A canary as a finding of its adapter's canary rule, with the witness and (until `--call`
    /// sends it) an outcome saying it was not sent.
    #[must_use]
    pub fn of_canary(tool: &str, adapter: AnyAdapter, c: &Canary) -> Self {
        let r = canary_rule(adapter, c.direction);
        let reason = match c.direction {
            Direction::RenderedAllowsServerRejects => NOT_CALLED,
            Direction::ServerAllowsRenderedRejects => NOT_SENDABLE,
        };
        Self {
            adapter,
            rule: r.id,
            severity: r.severity,
            ambiguous: r.ambiguous,
            tool: Some(tool.to_owned()),
            pointer: format!("/inputSchema{}", c.pointer),
            detail: c.detail.clone(),
            source: r.source,
            fix: r.fix,
            canary: Some(CanaryPart {
                direction: c.direction,
                witness: c.value.clone(),
                open_content: c.open_content,
                outcome: CanaryOutcome::Skipped { reason: reason.to_owned() },
            }),
            baselined: false,
        }
    }
}

impl ClientsReport {
    /// The document of an analysis, before `--call` and the policy (which set `failOn`,
    /// `failures` and `verdict`; until then the verdict is `pass` with no failure).
    #[must_use]
    pub fn new(input: &Input, analysis: &Analysis, seed: u64) -> Self {
        let mut summary = Vec::new();
        let mut per_tool: Vec<Vec<AdapterEntry>> = vec![Vec::new(); analysis.tools.len()];
        let mut listing_findings = Vec::new();
        for (a, adapter) in analysis.adapters.iter().enumerate() {
            let mut row = AdapterSummary {
                adapter: (*adapter).into(),
                tools: analysis.tools.len() as u64,
                rejected: 0,
                not_listed: None,
                fail: 0,
                warn: 0,
                info: 0,
                ambiguous: 0,
                drifting: 0,
                canaries: 0,
            };
            for (t, tool) in analysis.tools.iter().enumerate() {
                let result = &analysis.results[t][a];
                row.rejected += u64::from(result.rendering.rejected());
                row.drifting += u64::from(result.comparison.drifts());
                row.canaries += result.canaries.canaries.len() as u64;
                count(&mut row, &result.rendering.findings);
                per_tool[t].push(entry(&tool.name, result));
            }
            count(&mut row, &analysis.listing[a]);
            listing_findings.extend(analysis.listing[a].iter().map(ClientFinding::of));
            summary.push(row);
        }
        Self {
            clients_version: CLIENTS_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            source: input.origin.clone(),
            seed,
            adapters: analysis.adapters.iter().map(|&a| a.into()).collect(),
            summary,
            real_clients: Vec::new(),
            listing: Listing {
                problems: input.problems.clone(),
                truncated: input.truncated.clone(),
            },
            listing_findings,
            tools: analysis
                .tools
                .iter()
                .zip(per_tool)
                .map(|(tool, adapters)| ToolEntry {
                    name: tool.name.clone(),
                    listed_to_mcp_fuzz: true,
                    adapters,
                })
                .collect(),
            canary_call_failures: None,
            baseline: None,
            fail_on: FailOn::Fail,
            failures: 0,
            verdict: Verdict::Pass,
        }
    }

    /// Adds a real client's run and its judged capture (results in the order of the report's
    /// tools; a client that was not captured has none, and each tool is `not-captured`).
    pub fn add_real(&mut self, run: RealClientRun, analysis: &CaptureAnalysis) {
        let adapter = AnyAdapter::Real(run.adapter);
        let mut row = AdapterSummary {
            adapter,
            tools: 0,
            rejected: 0,
            not_listed: Some(0),
            fail: 0,
            warn: 0,
            info: 0,
            ambiguous: 0,
            drifting: 0,
            canaries: 0,
        };
        let why_not = not_captured_reason(&run);
        for (t, tool) in self.tools.iter_mut().enumerate() {
            let entry = match analysis.results.get(t) {
                Some(result) => {
                    match result.seen {
                        Seen::NotListed => *row.not_listed.get_or_insert(0) += 1,
                        Seen::Lost => {
                            row.tools += 1;
                            row.rejected += 1;
                        }
                        Seen::Exposed => {
                            row.tools += 1;
                            row.drifting += u64::from(result.comparison.drifts());
                        }
                    }
                    row.canaries += result.canaries.canaries.len() as u64;
                    count(&mut row, &result.findings);
                    real_entry(&tool.name, adapter, result)
                }
                None => AdapterEntry {
                    adapter,
                    status: RenderStatus::NotCaptured,
                    shown_name: None,
                    namespace: None,
                    reason: Some(Reason { reason: why_not.clone(), source: ReasonSource::Silent }),
                    notes: Vec::new(),
                    findings: Vec::new(),
                    rendered: Rendered { input_schema: None, output_schema: None },
                    drift: Vec::new(),
                    comparison_stopped: Vec::new(),
                    canaries: Vec::new(),
                    canary_notes: Vec::new(),
                },
            };
            tool.adapters.push(entry);
        }
        count(&mut row, &analysis.listing);
        self.listing_findings.extend(analysis.listing.iter().map(ClientFinding::of));
        self.adapters.push(adapter);
        self.summary.push(row);
        self.real_clients.push(run);
    }

    /// Every finding: per tool and adapter its rule findings then its canaries, then the
    /// listing's findings.
    pub fn findings(&self) -> impl Iterator<Item = &ClientFinding> {
        self.tools
            .iter()
            .flat_map(|t| t.adapters.iter())
            .flat_map(|a| a.findings.iter().chain(&a.canaries))
            .chain(&self.listing_findings)
    }

    /// Every finding, mutably, in the order of [`ClientsReport::findings`].
    pub fn findings_mut(&mut self) -> impl Iterator<Item = &mut ClientFinding> {
        self.tools
            .iter_mut()
            .flat_map(|t| t.adapters.iter_mut())
            .flat_map(|a| a.findings.iter_mut().chain(a.canaries.iter_mut()))
            .chain(self.listing_findings.iter_mut())
    }
}

/// Why a real client has no result: its status in words.
fn not_captured_reason(run: &RealClientRun) -> String {
    match &run.status {
        CaptureStatus::Captured => "captured".into(),
        CaptureStatus::NotInstalled { .. } => format!("{} is not installed", run.adapter),
        CaptureStatus::WrongVersion { found, .. } => format!(
            "{} {} was found and --pin runs only {}",
            run.adapter,
            found.as_deref().unwrap_or("of an unknown version"),
            run.pinned_version
        ),
        CaptureStatus::Broken { reason, .. } => {
            format!("{} could not be captured: {reason}", run.adapter)
        }
        _ => format!("{} was not captured", run.adapter),
    }
}

fn real_entry(tool: &str, adapter: AnyAdapter, result: &CapturedResult) -> AdapterEntry {
    AdapterEntry {
        adapter,
        status: match result.seen {
            Seen::Exposed => RenderStatus::Accepted,
            Seen::Lost => RenderStatus::Lost,
            Seen::NotListed => RenderStatus::NotListed,
        },
        shown_name: result.shown_name.clone(),
        namespace: result.namespace.clone(),
        reason: result.lost.as_ref().map(|l| Reason { reason: l.reason.clone(), source: l.source }),
        notes: result.notes.clone(),
        findings: result.findings.iter().map(ClientFinding::of).collect(),
        rendered: Rendered {
            input_schema: result.input.clone(),
            output_schema: result.output.clone(),
        },
        drift: result.comparison.drifts.clone(),
        comparison_stopped: result.comparison.stopped.clone(),
        canaries: result
            .canaries
            .canaries
            .iter()
            .map(|c| ClientFinding::of_canary(tool, adapter, c))
            .collect(),
        canary_notes: result.canaries.notes.clone(),
    }
}

fn entry(tool: &str, result: &AdapterResult) -> AdapterEntry {
    let rendering = &result.rendering;
    AdapterEntry {
        adapter: rendering.adapter.into(),
        status: if rendering.rejected() { RenderStatus::Rejected } else { RenderStatus::Accepted },
        shown_name: None,
        namespace: None,
        reason: None,
        notes: Vec::new(),
        findings: rendering.findings.iter().map(ClientFinding::of).collect(),
        rendered: Rendered {
            input_schema: rendering.input.clone(),
            output_schema: rendering.output.clone(),
        },
        drift: result.comparison.drifts.clone(),
        comparison_stopped: result.comparison.stopped.clone(),
        canaries: result
            .canaries
            .canaries
            .iter()
            .map(|c| ClientFinding::of_canary(tool, rendering.adapter.into(), c))
            .collect(),
        canary_notes: result.canaries.notes.clone(),
    }
}

/// Counts findings by severity; an ambiguous finding counts only as ambiguous.
fn count(row: &mut AdapterSummary, findings: &[Finding]) {
    for f in findings {
        match (f.ambiguous, f.severity) {
            (true, _) => row.ambiguous += 1,
            (false, Severity::Fail) => row.fail += 1,
            (false, Severity::Warn) => row.warn += 1,
            (false, Severity::Info) => row.info += 1,
        }
    }
}

/// A finding's stable identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ClientsIdentity {
    /// The adapter's name (`openai-strict`...).
    pub adapter: String,
    /// The rule id.
    pub rule: String,
    /// The tool (absent for findings about the whole listing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// JSON pointer into the tool definition.
    pub pointer: String,
}

impl Key for ClientsIdentity {
    const FIELDS: &'static str = r#""adapter", "rule", "tool", "pointer""#;
}

impl ClientFinding {
    /// The stable identity.
    #[must_use]
    pub fn identity(&self) -> ClientsIdentity {
        ClientsIdentity {
            adapter: self.adapter.as_str().to_owned(),
            rule: self.rule.to_owned(),
            tool: self.tool.clone(),
            pointer: self.pointer.clone(),
        }
    }
}
