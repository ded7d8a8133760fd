//! Case files: one failure finding, with everything needed to report and replay it.
//!
//! `mcp-fuzz run --artifacts DIR` writes one per failure finding; `mcp-fuzz replay FILE` re-runs
//! its minimal arguments (or, for a prompt, resource or completion, its minimal request). The shape is versioned ([`CASE_VERSION`]) and described by
//! `docs/case.schema.json`. Secrets stay out: the target is redacted like the report's, and the
//! known environment and header values are replaced by `[REDACTED]` in the exchange and stderr.

use crate::case::{CaseLabel, Mode};
use crate::finding::{FindingKind, Severity};
use crate::outcome::Outcome;
use crate::report::{Finding, Report, SurfaceRef};
use crate::shrink::{ShrinkStats, Signature};
use crate::steps::SeqStep;
use crate::target::{Exchange, Target, TargetInfo, redact};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The version of the case file's shape: 2 added `sequence`, 3 added `surface` and `request` (a
/// request beside tools, with no `case`); older files read the same.
pub const CASE_VERSION: u32 = 3;

/// The oldest case file version this one reads.
pub const OLDEST_CASE_VERSION: u32 = 1;

/// One failure finding, replayable.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseFile {
    /// Version of this shape.
    pub case_version: u32,
    /// The mcp-fuzz version that wrote it.
    pub tool_version: String,
    /// The tool called (for a request beside tools: the prompt's name, the resource's URI or the
    /// template).
    pub tool: String,
    /// A finding about a prompt, resource, template or completion: which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<SurfaceRef>,
    /// For such a finding: the smallest request that failed (`method` and `params`): what
    /// `replay` sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// The finding kind (`exited`, `internal-error`...).
    pub kind: FindingKind,
    /// The finding's one-line explanation.
    pub message: String,
    /// How the case was made (absent for a request beside tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<CaseLabel>,
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
    pub target: TargetInfo,
    /// The tool's outputSchema, to judge a replay the same way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Per-call timeout of the run, in seconds (what `replay` waits, unless `--timeout` says
    /// otherwise).
    pub timeout_secs: f64,
    /// `--max-response-bytes` of the run (what `replay` allows, unless the flag says
    /// otherwise); absent in case files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// A failure that needs earlier calls: the smallest sequence that failed, from a fresh
    /// process (its last step is the failing call); what `replay` runs. Empty for a single call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequence: Vec<SeqStep>,
}

/// The case file name of a finding about `tool` of `kind` on a case labelled `case`: stable
/// across runs (`read_file-use-after-delete-valid-1f2e3d4c.json`).
#[must_use]
pub fn file_name(tool: &str, kind: &FindingKind, case: &CaseLabel) -> String {
    let mut identity = format!(
        "{}\u{0}{}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{:?}",
        tool,
        kind.as_str(),
        case.mode,
        case.mutation,
        case.pointer,
        case.fed
    );
    // Only hinted cases add their places, so that other names stay as they were.
    if !case.hinted.is_empty() {
        identity.push_str(&format!("\u{0}{:?}", case.hinted));
    }
    let h = mcp_fuzz_generators::hash::fnv1a(identity.as_bytes());
    let label = case.mutation.clone().unwrap_or_else(|| {
        serde_json::to_value(case.mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    });
    format!("{}-{}-{}-{:08x}.json", safe(tool), safe(kind.as_str()), safe(&label), h as u32)
}

/// A name part a file system takes: ASCII letters, digits, `-` and `_`, at most 40 characters.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(40)
        .collect()
}

/// The case file name of a finding about a prompt, resource, template or completion of `kind`
/// (`prompt-summarize-exited-1f2e3d4c.json`), stable across runs.
#[must_use]
pub fn surface_file_name(surface: &SurfaceRef, kind: &FindingKind) -> String {
    let identity = format!("{surface}\u{0}{}\u{0}{:?}", kind.as_str(), surface.argument);
    let h = mcp_fuzz_generators::hash::fnv1a(identity.as_bytes());
    format!(
        "{}-{}-{}-{:08x}.json",
        safe(surface.kind.as_str()),
        safe(&surface.name),
        safe(kind.as_str()),
        h as u32
    )
}

/// The case file name `run --artifacts` writes for a finding, when it writes one.
#[must_use]
pub fn file_name_of(f: &Finding) -> Option<String> {
    (f.severity == Severity::Failure).then_some(())?;
    if let Some(surface) = &f.surface {
        return f.request.is_some().then(|| surface_file_name(surface, &f.kind));
    }
    Some(file_name(f.case_tool()?, &f.kind, f.case.as_ref()?))
}

impl CaseFile {
    /// The case file of a failure finding about a case; `None` for other findings.
    #[must_use]
    pub fn from_finding(
        report: &Report,
        f: &Finding,
        target: &Target,
        (timeout_secs, max_response_bytes): (f64, u64),
    ) -> Option<Self> {
        if f.severity != Severity::Failure {
            return None;
        }
        let (tool, case, arguments, outcome) = match &f.surface {
            Some(s) => {
                f.request.as_ref()?;
                (s.name.clone(), None, f.arguments.clone().unwrap_or_default(), f.outcome.clone()?)
            }
            None => (
                f.case_tool()?.to_owned(),
                Some(f.case.clone()?),
                f.arguments.clone()?,
                f.outcome.clone()?,
            ),
        };
        let secrets: Vec<(String, String)> = match target {
            Target::Stdio { env, .. } => env.clone(),
            Target::Http { headers, launch, .. } => {
                headers.iter().chain(launch.iter().flat_map(|l| &l.env)).cloned().collect()
            }
        };
        let clean = |v: &Value| -> Value {
            serde_json::from_str(&redact(&v.to_string(), &secrets)).unwrap_or(Value::Null)
        };
        let evidence = f.evidence.as_deref().cloned().unwrap_or_default();
        let signature = Signature::of_call(&outcome, &arguments);
        Some(Self {
            case_version: CASE_VERSION,
            tool_version: report.tool_version.clone(),
            tool,
            surface: f.surface.clone(),
            request: f.surface.as_ref().and(f.request.as_ref()).map(clean),
            kind: f.kind.clone(),
            message: f.message.clone(),
            case,
            seed: report.seed,
            draw: evidence.draw,
            minimal_arguments: f.minimal_arguments.clone().unwrap_or_else(|| arguments.clone()),
            arguments,
            signature,
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
            max_response_bytes: Some(max_response_bytes),
            sequence: f.smallest_sequence().to_vec(),
        })
    }

    /// A file name from the finding's identity (tool, kind, case label): stable across runs, so
    /// a re-run overwrites the same file.
    #[must_use]
    pub fn file_name(&self) -> String {
        match (&self.surface, &self.case) {
            (Some(s), _) => surface_file_name(s, &self.kind),
            (None, Some(case)) => file_name(&self.tool, &self.kind, case),
            (None, None) => file_name(&self.tool, &self.kind, &CaseLabel::of(Mode::Valid)),
        }
    }

    /// The server recorded in the file, when it can be started again: a stdio command (its
    /// environment values were redacted and must be given again) or an HTTP URL (its headers too).
    #[must_use]
    pub fn recorded_target(&self) -> Option<Target> {
        self.target.restartable()
    }
}
