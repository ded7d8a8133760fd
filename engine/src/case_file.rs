//! Case files: one failure finding, with everything needed to report and replay it.
//!
//! `mcp-fuzz run --artifacts DIR` writes one per failure finding; `mcp-fuzz replay FILE` re-runs
//! its minimal arguments. The shape is versioned ([`CASE_VERSION`]) and described by
//! `docs/case.schema.json`. Secrets stay out: the target is redacted like the report's, and the
//! known environment and header values are replaced by `[REDACTED]` in the exchange and stderr.

use crate::classify::{Outcome, classify};
use crate::client::{ConnectError, ConnectOptions, Connection, Exchange, Target, redact};
use crate::plan::CaseLabel;
use crate::run::{Finding, Report};
use crate::shrink::{ShrinkStats, Signature};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

/// The version of the case file's shape.
pub const CASE_VERSION: u32 = 1;

/// One failure finding, replayable.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseFile {
    /// Version of this shape.
    pub case_version: u32,
    /// The mcp-fuzz version that wrote it.
    pub tool_version: String,
    /// The tool called.
    pub tool: String,
    /// The finding kind (`exited`, `internal-error`...).
    pub kind: String,
    /// The finding's one-line explanation.
    pub message: String,
    /// How the case was made.
    pub case: CaseLabel,
    /// The run seed.
    pub seed: u64,
    /// For random cases: the sampler draw that made the case (with the seed, it regenerates it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draw: Option<u64>,
    /// The arguments of the original failing call.
    pub arguments: Map<String, Value>,
    /// The smallest arguments that still failed the same way: what `replay` sends.
    pub minimal_arguments: Map<String, Value>,
    /// The outcome of the original call.
    pub outcome: Outcome,
    /// The outcome of the last re-run of the minimal arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimal_outcome: Option<Outcome>,
    /// What "fails the same way" means for this case.
    pub signature: Signature,
    /// Whether the minimal case failed the same way only some of the time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaky: Option<bool>,
    /// What shrinking did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shrink: Option<ShrinkStats>,
    /// The JSON-RPC exchange of the last re-run of the minimal arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<Exchange>,
    /// The server's last stderr lines after that call.
    pub stderr: Vec<String>,
    /// The server, redacted as in the report.
    pub target: Value,
    /// The tool's outputSchema, to judge a replay the same way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Per-call timeout of the run, in seconds.
    pub timeout_secs: f64,
}

impl CaseFile {
    /// The case file of a failure finding about a case; `None` for other findings.
    #[must_use]
    pub fn from_finding(
        report: &Report,
        f: &Finding,
        target: &Target,
        timeout_secs: f64,
    ) -> Option<Self> {
        if f.severity != "failure" {
            return None;
        }
        let (tool, case, arguments, outcome) =
            (f.tool.clone()?, f.case.clone()?, f.arguments.clone()?, f.outcome.clone()?);
        let secrets: Vec<(String, String)> = match target {
            Target::Stdio { env, .. } => env.clone(),
            Target::Http { headers, .. } => headers.clone(),
        };
        let clean = |v: &Value| -> Value {
            serde_json::from_str(&redact(&v.to_string(), &secrets)).unwrap_or(Value::Null)
        };
        let evidence = f.evidence.as_deref().cloned().unwrap_or_default();
        Some(Self {
            case_version: CASE_VERSION,
            tool_version: report.tool_version.to_owned(),
            tool,
            kind: f.kind.clone(),
            message: f.message.clone(),
            case,
            seed: report.seed,
            draw: evidence.draw,
            minimal_arguments: f.minimal_arguments.clone().unwrap_or_else(|| arguments.clone()),
            arguments,
            signature: Signature::of(&outcome),
            outcome,
            minimal_outcome: evidence.minimal_outcome,
            flaky: f.flaky,
            shrink: f.shrink.clone(),
            exchange: evidence.exchange.map(|e| Exchange {
                request: clean(&e.request),
                response: e.response.as_ref().map(clean),
                raw: e.raw,
            }),
            stderr: evidence.stderr.iter().map(|l| redact(l, &secrets)).collect(),
            target: report.target.clone(),
            output_schema: evidence.output_schema,
            timeout_secs,
        })
    }

    /// Calls the tool once with the minimal arguments on a fresh server and judges the reply as
    /// the run did (with the tool's outputSchema).
    ///
    /// # Errors
    /// When the server cannot be started or initialised.
    pub async fn replay(
        &self,
        target: &Target,
        opts: &ConnectOptions,
        timeout: Duration,
    ) -> Result<Outcome, ConnectError> {
        let output = self
            .output_schema
            .as_ref()
            .and_then(|s| jsonschema::options().should_validate_formats(false).build(s).ok());
        let conn = Connection::connect(target, opts).await?;
        let reply = conn.call_tool(&self.tool, &self.minimal_arguments, timeout).await;
        let outcome = classify(reply, output.as_ref(), || conn.stderr_tail());
        conn.close().await;
        Ok(outcome)
    }

    /// A file name from the finding's identity (tool, kind, case label): stable across runs, so
    /// a re-run overwrites the same file.
    #[must_use]
    pub fn file_name(&self) -> String {
        let identity = format!(
            "{}\u{0}{}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{:?}",
            self.tool,
            self.kind,
            self.case.mode,
            self.case.mutation,
            self.case.pointer,
            self.case.fed
        );
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in identity.as_bytes() {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let label = self.case.mutation.clone().unwrap_or_else(|| {
            serde_json::to_value(self.case.mode)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        });
        let safe = |s: &str| -> String {
            s.chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                .take(40)
                .collect()
        };
        format!("{}-{}-{}-{:08x}.json", safe(&self.tool), safe(&self.kind), safe(&label), h as u32)
    }

    /// The server recorded in the file, when it can be started again: a stdio command (its
    /// environment values were redacted and must be given again) or an HTTP URL (its headers too).
    #[must_use]
    pub fn recorded_target(&self) -> Option<Target> {
        match self.target.get("transport").and_then(Value::as_str)? {
            "stdio" => {
                let command: Vec<String> =
                    serde_json::from_value(self.target.get("command")?.clone()).ok()?;
                (!command.is_empty()).then(|| Target::Stdio {
                    command,
                    env: Vec::new(),
                    inherit_env: self.target.get("inheritEnv").and_then(Value::as_bool)
                        == Some(true),
                    cwd: self.target.get("cwd").and_then(Value::as_str).map(Into::into),
                })
            }
            "streamable-http" => Some(Target::Http {
                url: self.target.get("url")?.as_str()?.to_owned(),
                headers: Vec::new(),
            }),
            _ => None,
        }
    }
}
