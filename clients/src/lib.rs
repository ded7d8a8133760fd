//! # mcp-fuzz-clients
//!
//! How model providers and MCP clients see a server's tools. A server can advertise a valid JSON
//! Schema and still break once a client converts it: a strict mode rejects it, or a converter
//! silently drops a constraint, a union branch or a property. This crate models those clients
//! offline and deterministically, and says what the drift means for the server with concrete
//! values.
//!
//! - An [`Adapter`] models one client or provider. [`render`] turns a [`Tool`] into a
//!   [`Rendering`]: the schema the client would send to the model (or a rejection), plus
//!   [`Finding`]s, each tied to a [`Rule`] of the static catalogue [`RULES`] (stable id, severity,
//!   the published source it rests on, a one-line fix).
//! - [`diff::compare`] walks the advertised and the rendered schema side by side and lists every
//!   [`diff::Drift`]: a property missing at any depth, a type lost or changed, a dropped
//!   `required`, description or constraint, a root union ignored, output-schema drift. Depth is
//!   bounded and `$ref` cycles are cut; where comparison stopped is reported.
//! - [`canary::find`] searches, in both directions, for a value one schema allows and the other
//!   rejects (each checked with the `jsonschema` crate against both schemas), shrunk to a small
//!   witness.
//!
//! Everything above is pure: synchronous, no I/O, never prints. The one exception is [`real`],
//! which runs the actual clients (processes and loopback sockets) to capture what they expose.
//!
//! ```
//! use mcp_fuzz_clients::{Adapter, Tool, render};
//! use serde_json::json;
//!
//! let tool = Tool::new("search", json!({
//!     "type": "object",
//!     "properties": {"q": {"type": "string", "minLength": 1}},
//!     "required": ["q"]
//! }));
//! let rendering = render(Adapter::Openapi, &tool);
//! assert!(!rendering.rejected());
//! // mcpo-style OpenAPI rendering keeps the type but drops `minLength`.
//! assert_eq!(rendering.input.as_ref().unwrap()["properties"]["q"], json!({"type": "string"}));
//! assert!(rendering.findings.iter().any(|f| f.rule == "openapi/constraint-dropped"));
//! ```
#![deny(missing_docs)]

mod adapters;
pub mod analysis;
pub mod canary;
pub mod diff;
pub mod real;
pub mod real_analysis;
mod rules;
mod walk;

pub use rules::{REAL_RULES, RULES, RealRule, canary_rule, catalogue, rule};

use real::RealClient;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// One tool as listed: the capture's tool type (the one parsed tool type of the workspace).
pub use mcp_fuzz_compat::capture::Tool;

/// A client or provider whose rendering of a tool is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub enum Adapter {
    /// OpenAI strict function calling (Structured Outputs subset, strict conversion).
    #[serde(rename = "openai-strict")]
    OpenaiStrict,
    /// Anthropic Messages API, non-strict tool use.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Anthropic strict tool use (`strict: true`), as the official SDKs send it: constraints
    /// strict mode does not support are stripped (and warned about) before the request.
    #[serde(rename = "anthropic-strict")]
    AnthropicStrict,
    /// Anthropic strict tool use sent to the Messages API directly (no SDK transform): the same
    /// unsupported constraints make the API answer 400.
    #[serde(rename = "anthropic-strict-api")]
    AnthropicStrictApi,
    /// Gemini function declarations (`parameters`: an OpenAPI 3.0 schema subset).
    #[serde(rename = "gemini")]
    Gemini,
    /// An MCP-to-OpenAPI proxy in the style of mcpo.
    #[serde(rename = "openapi")]
    Openapi,
    /// The tool definition itself against the MCP schema and real SDK clients.
    #[serde(rename = "mcp")]
    Mcp,
}

impl Adapter {
    /// The adapters `mcp-fuzz clients` runs by default, in report order.
    pub const ALL: [Adapter; 6] = [
        Adapter::OpenaiStrict,
        Adapter::Anthropic,
        Adapter::AnthropicStrict,
        Adapter::Gemini,
        Adapter::Openapi,
        Adapter::Mcp,
    ];

    /// Every built-in adapter: [`Self::ALL`] plus the modes that are chosen explicitly
    /// (`anthropic-strict-api`).
    pub const EVERY: [Adapter; 7] = [
        Adapter::OpenaiStrict,
        Adapter::Anthropic,
        Adapter::AnthropicStrict,
        Adapter::AnthropicStrictApi,
        Adapter::Gemini,
        Adapter::Openapi,
        Adapter::Mcp,
    ];

    /// The adapter's stable name (`openai-strict`, ...).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiStrict => "openai-strict",
            Self::Anthropic => "anthropic",
            Self::AnthropicStrict => "anthropic-strict",
            Self::AnthropicStrictApi => "anthropic-strict-api",
            Self::Gemini => "gemini",
            Self::Openapi => "openapi",
            Self::Mcp => "mcp",
        }
    }

    /// The adapter named `name`, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::EVERY.into_iter().find(|a| a.as_str() == name)
    }
}

impl fmt::Display for Adapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An adapter of the clients report: a rendering modelled from documentation ([`Adapter`]), or a
/// real client whose rendering is captured by running it ([`RealClient`]). Serialised as its
/// name (`openai-strict`, `codex-cli`...); the names of the two kinds never collide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnyAdapter {
    /// A modelled rendering.
    Modelled(Adapter),
    /// A real client.
    Real(RealClient),
}

impl AnyAdapter {
    /// The adapter's stable name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Modelled(a) => a.as_str(),
            Self::Real(c) => c.as_str(),
        }
    }

    /// The adapter named `name` (modelled or real), if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Adapter::from_name(name)
            .map(Self::Modelled)
            .or_else(|| RealClient::from_name(name).map(Self::Real))
    }

    /// The real client, when this is one.
    #[must_use]
    pub fn real(self) -> Option<RealClient> {
        match self {
            Self::Real(c) => Some(c),
            Self::Modelled(_) => None,
        }
    }
}

impl From<Adapter> for AnyAdapter {
    fn from(a: Adapter) -> Self {
        Self::Modelled(a)
    }
}

impl From<RealClient> for AnyAdapter {
    fn from(c: RealClient) -> Self {
        Self::Real(c)
    }
}

impl PartialEq<Adapter> for AnyAdapter {
    fn eq(&self, other: &Adapter) -> bool {
        *self == Self::Modelled(*other)
    }
}

impl PartialEq<RealClient> for AnyAdapter {
    fn eq(&self, other: &RealClient) -> bool {
        *self == Self::Real(*other)
    }
}

impl fmt::Display for AnyAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AnyAdapter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The request or the whole listing is rejected.
    Fail,
    /// A constraint or a shape is silently dropped or changed.
    Warn,
    /// Worth knowing; no value is lost.
    Info,
}

impl Severity {
    /// `fail`, `warn` or `info`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Warn => "warn",
            Self::Info => "info",
        }
    }
}

/// A published document a rule rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Source {
    /// Where it is.
    pub url: &'static str,
    /// What it says, in one sentence of our own words.
    pub summary: &'static str,
}

/// One entry of the rule catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Stable id, `adapter/rule-name`.
    pub id: &'static str,
    /// The adapter that applies it.
    pub adapter: AnyAdapter,
    /// How bad a finding of this rule is.
    pub severity: Severity,
    /// The documents do not settle the case: findings are reported but never change the verdict.
    pub ambiguous: bool,
    /// What the rule checks, in one line.
    pub title: &'static str,
    /// The published source.
    pub source: Source,
    /// How to fix a finding, in one line.
    pub fix: &'static str,
}

/// One finding: a rule that applies at a place in a tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The adapter that reported it.
    pub adapter: AnyAdapter,
    /// The rule id (see [`RULES`]).
    pub rule: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// Whether the rule is ambiguous (never counts towards the verdict).
    pub ambiguous: bool,
    /// The tool, or `None` for a finding about the whole listing.
    pub tool: Option<String>,
    /// JSON pointer into the tool definition (`/inputSchema/properties/q/minLength`).
    pub pointer: String,
    /// What was found, specifically.
    pub detail: String,
}

impl Finding {
    /// Whether this finding makes the verdict fail: a `fail` rule that is not ambiguous.
    #[must_use]
    pub fn is_failure(&self) -> bool {
        self.severity == Severity::Fail && !self.ambiguous
    }
}

/// What an adapter makes of one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendering {
    /// The adapter whose rule applies.
    pub adapter: Adapter,
    /// The tool's name.
    pub tool: String,
    /// The input schema the client sends to the model; `None` when the tool is rejected.
    pub input: Option<Value>,
    /// The output schema the client keeps, if any (most providers have no place for one).
    pub output: Option<Value>,
    /// The findings, in schema order.
    pub findings: Vec<Finding>,
}

impl Rendering {
    /// Whether the client rejects the tool (a non-ambiguous `fail` finding).
    #[must_use]
    pub fn rejected(&self) -> bool {
        self.findings.iter().any(Finding::is_failure)
    }
}

/// Renders one tool as `adapter` would.
#[must_use]
pub fn render(adapter: Adapter, tool: &Tool) -> Rendering {
    let mut ctx = adapters::Ctx::new(adapter, &tool.name);
    let (input, output) = adapters::render(&mut ctx, tool);
    let findings = ctx.into_findings();
    let rejected = findings.iter().any(Finding::is_failure);
    Rendering {
        adapter,
        tool: tool.name.clone(),
        input: if rejected { None } else { input },
        output: if rejected { None } else { output },
        findings,
    }
}

/// Findings about a whole listing as `adapter` sends it in one request (per-request limits).
#[must_use]
pub fn listing_findings(adapter: Adapter, tools: &[Tool]) -> Vec<Finding> {
    adapters::listing(adapter, tools)
}
