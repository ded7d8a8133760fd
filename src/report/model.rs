//! The run report as the binary reads and writes it: the documented JSON shape
//! (`docs/report.schema.json`), owned and deserialisable, so that a report coming straight from
//! the engine and one read back from a shard's `report.json` (`mcp-fuzz report merge`) render
//! the same way. Fields this version does not know are kept in `extra` and written back.

use mcp_fuzz_engine::run::Report;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A run report.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Doc {
    /// Version of the shape.
    pub report_version: u32,
    /// mcp-fuzz version that wrote it.
    pub tool_version: String,
    /// The server, redacted.
    pub target: Value,
    /// What the server said about itself.
    pub server: Value,
    /// Run seed.
    pub seed: u64,
    /// The shard this report covers (`hash:M/N`, `count:M/N`), or the shards merged into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Per-tool status.
    pub tools: Vec<ToolDoc>,
    /// Every finding.
    pub findings: Vec<FindingDoc>,
    /// The score.
    pub score: ScoreDoc,
    /// Server restarts.
    pub restarts: u64,
    /// Calls made.
    pub calls: u64,
    /// Wall time, in seconds.
    pub duration_secs: f64,
    /// What the baseline did, when `--baseline` was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One tool's status.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDoc {
    /// The tool.
    pub name: String,
    /// `tested`, `skipped`, `unavailable`, `gave-up` or `schema-error`.
    pub status: String,
    /// Why it was skipped or stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cases executed, by mode.
    pub cases: CaseCounts,
    /// Invalid cases answered gracefully.
    pub graceful: u64,
    /// Invalid cases that count in the score.
    pub scored: u64,
    /// The tool's score in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Outcome kinds seen, with counts.
    pub outcomes: Map<String, Value>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolDoc {
    /// Whether the tool was called at all.
    pub fn was_called(&self) -> bool {
        matches!(self.status.as_str(), "tested" | "unavailable" | "gave-up")
    }

    /// Cases executed.
    pub fn total_cases(&self) -> u64 {
        self.cases.boundary + self.cases.valid + self.cases.invalid
    }
}

/// Cases executed, by mode.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct CaseCounts {
    /// Boundary cases.
    pub boundary: u64,
    /// Random valid cases.
    pub valid: u64,
    /// Invalid cases.
    pub invalid: u64,
}

/// How a case was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseDoc {
    /// `boundary`, `valid` or `invalid`.
    pub mode: String,
    /// The mutation, for invalid cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation: Option<String>,
    /// Where in the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The keyword violated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl std::fmt::Display for CaseDoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.mutation, &self.pointer) {
            (Some(m), Some(p)) => write!(f, "{m} at `{}`", if p.is_empty() { "/" } else { p }),
            _ => f.write_str(&self.mode),
        }
    }
}

/// One finding.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FindingDoc {
    /// The tool, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The finding kind.
    pub kind: String,
    /// `failure`, `warning` or `info`.
    pub severity: String,
    /// How the case was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<CaseDoc>,
    /// The exact arguments sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// The outcome, in full (tagged by `kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Value>,
    /// One line.
    pub message: String,
    /// True when the baseline lists this finding: it does not fail the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
    /// Fields this version does not know (e.g. the shrunk `minimalArguments`, `flaky`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A finding's stable identity: what a baseline stores and what SARIF fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Identity {
    /// The tool (absent for server-wide findings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The finding kind.
    pub kind: String,
    /// The case's mutation, for findings on invalid cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation: Option<String>,
    /// The case's JSON pointer, for findings on invalid cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

impl FindingDoc {
    /// The stable identity: tool, kind, and the case label's mutation and pointer.
    pub fn identity(&self) -> Identity {
        Identity {
            tool: self.tool.clone(),
            kind: self.kind.clone(),
            mutation: self.case.as_ref().and_then(|c| c.mutation.clone()),
            pointer: self.case.as_ref().and_then(|c| c.pointer.clone()),
        }
    }

    /// Whether it fails the run: a failure the baseline does not accept.
    pub fn fails(&self) -> bool {
        self.severity == "failure" && !self.baselined
    }

    /// The smallest arguments known to reproduce it: the shrunk ones when the run shrank the
    /// case (`minimalArguments`), else the ones sent.
    pub fn minimal_arguments(&self) -> Option<&Map<String, Value>> {
        self.extra.get("minimalArguments").and_then(Value::as_object).or(self.arguments.as_ref())
    }

    /// Whether a re-run told this failure apart as flaky, when the run checked.
    pub fn flaky(&self) -> Option<bool> {
        self.extra.get("flaky").and_then(Value::as_bool)
    }
}

/// The score.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScoreDoc {
    /// Graceful invalid cases.
    pub graceful: u64,
    /// Invalid cases that count.
    pub scored: u64,
    /// Percentage, when any case counted.
    pub percent: Option<f64>,
    /// Letter grade.
    pub grade: Option<String>,
}

/// What `--baseline` did.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

impl Doc {
    /// The engine's report, in this shape.
    ///
    /// # Panics
    /// Never in practice: the engine's report always serialises to this shape (checked by the
    /// integration tests against `docs/report.schema.json`).
    pub fn from_report(report: &Report) -> Self {
        let value = serde_json::to_value(report).expect("the engine's report serialises");
        serde_json::from_value(value).expect("the engine's report has the documented shape")
    }

    /// Tools actually called.
    pub fn tested(&self) -> usize {
        self.tools.iter().filter(|t| t.was_called()).count()
    }

    /// Findings that fail the run (failures not accepted by a baseline).
    pub fn failures(&self) -> usize {
        self.findings.iter().filter(|f| f.fails()).count()
    }

    /// The server's name, version and protocol version.
    pub fn server_field(&self, key: &str) -> Option<&str> {
        self.server.get(key).and_then(Value::as_str)
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
                       "graceful": 2, "scored": 3, "score": 66.7, "outcomes": {"ok": 3, "exited": 1},
                       "elapsedSecs": 0.5}],
            "findings": [{"tool": "t", "kind": "exited", "severity": "failure",
                          "case": {"mode": "invalid", "mutation": "wrong-type", "pointer": "/a", "keyword": "type"},
                          "arguments": {"a": 1, "b": [1, 2]}, "outcome": {"kind": "exited", "exit": {"code": 3, "signal": null}, "stderr": []},
                          "message": "m", "minimalArguments": {"a": 1}, "flaky": false, "evidence": {"stderr": ["x"]}}],
            "score": {"graceful": 2, "scored": 3, "percent": 66.7, "grade": "D"},
            "restarts": 1, "calls": 6, "durationSecs": 0.25, "stopped": "time budget"
        })
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let doc: Doc = serde_json::from_value(sample()).expect("reads");
        assert_eq!(serde_json::to_value(&doc).expect("writes"), sample());
        let f = &doc.findings[0];
        assert_eq!(f.minimal_arguments().map(Map::len), Some(1), "the shrunk arguments win");
        assert_eq!(f.flaky(), Some(false));
        assert_eq!(
            f.identity(),
            Identity {
                tool: Some("t".into()),
                kind: "exited".into(),
                mutation: Some("wrong-type".into()),
                pointer: Some("/a".into())
            }
        );
        assert_eq!(doc.failures(), 1);
    }

    #[test]
    fn baselined_failures_do_not_fail_the_run() {
        let mut doc: Doc = serde_json::from_value(sample()).expect("reads");
        doc.findings[0].baselined = true;
        assert_eq!(doc.failures(), 0);
        assert_eq!(serde_json::to_value(&doc).expect("writes")["findings"][0]["baselined"], true);
    }
}
