//! The `clients` document (`docs/clients.schema.json`, `clientsVersion` 1) as typed data: built
//! from the clients crate's analysis, completed by `--call` (canary outcomes) and by the policy
//! (`--fail-on`, `--baseline`; see [`super::policy`]). The field order of every struct is the
//! order of the JSON document.

use mcp_fuzz_clients::analysis::{AdapterResult, Analysis};
use mcp_fuzz_clients::canary::{Canary, Direction};
use mcp_fuzz_clients::diff::Drift;
use mcp_fuzz_clients::{Adapter, Finding, Severity, Source, canary_rule, rule};
use mcp_fuzz_engine::classify::Outcome;
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
    /// The adapters applied, in report order.
    pub adapters: Vec<Adapter>,
    /// One row per adapter.
    pub summary: Vec<AdapterSummary>,
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
pub struct AdapterSummary {
    /// The adapter these counts are for.
    pub adapter: Adapter,
    /// Tools rendered.
    pub tools: u64,
    /// Tools the client rejects.
    pub rejected: u64,
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
pub struct ToolEntry {
    /// The tool's name.
    pub name: String,
    /// Each adapter's result, in adapter order.
    pub adapters: Vec<AdapterEntry>,
}

/// One adapter's result for one tool.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterEntry {
    /// The adapter that rendered the tool.
    pub adapter: Adapter,
    /// Whether the client rejects the tool.
    pub status: RenderStatus,
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
#[serde(rename_all = "lowercase")]
pub enum RenderStatus {
    /// The client sends it to the model.
    Accepted,
    /// The client refuses it.
    Rejected,
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
    pub adapter: Adapter,
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
    },
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
    pub stale: Vec<super::policy::ClientsIdentity>,
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
    pub fn of_canary(tool: &str, adapter: Adapter, c: &Canary) -> Self {
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
                adapter: *adapter,
                tools: analysis.tools.len() as u64,
                rejected: 0,
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
            adapters: analysis.adapters.clone(),
            summary,
            listing: Listing {
                problems: input.problems.clone(),
                truncated: input.truncated.clone(),
            },
            listing_findings,
            tools: analysis
                .tools
                .iter()
                .zip(per_tool)
                .map(|(tool, adapters)| ToolEntry { name: tool.name.clone(), adapters })
                .collect(),
            canary_call_failures: None,
            baseline: None,
            fail_on: FailOn::Fail,
            failures: 0,
            verdict: Verdict::Pass,
        }
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

fn entry(tool: &str, result: &AdapterResult) -> AdapterEntry {
    let rendering = &result.rendering;
    AdapterEntry {
        adapter: rendering.adapter,
        status: if rendering.rejected() { RenderStatus::Rejected } else { RenderStatus::Accepted },
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
            .map(|c| ClientFinding::of_canary(tool, rendering.adapter, c))
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
