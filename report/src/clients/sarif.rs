//! The `clients` document as SARIF 2.1.0: the clients rule ids as rules, every finding a result
//! on the tool (logical location `adapter/tool`), fingerprinted by its identity. A result's level
//! is `error` when it fails the policy, else its severity's (`warning`, `note`). With a baseline,
//! results carry `baselineState` and stale entries appear as `absent` results of level `none`.

use super::model::{ClientFinding, ClientsReport};
use super::policy::{ClientsIdentity, fails};
use crate::severity::Level;
use crate::writers::sarif;
use mcp_fuzz_clients::{Severity, catalogue};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The SARIF fingerprint key.
pub const IDENTITY_KEY: &str = "mcpFuzzClients/v1";

fn location(tool: Option<&str>, adapter: &str) -> sarif::LogicalLocation {
    let tool = tool.unwrap_or("tools/list");
    sarif::LogicalLocation {
        name: tool.to_owned(),
        fully_qualified_name: format!("{adapter}/{tool}"),
        kind: "function".into(),
    }
}

fn fingerprint(id: &ClientsIdentity) -> String {
    sarif::fingerprint(&[&id.adapter, &id.rule, id.tool.as_deref().unwrap_or(""), &id.pointer])
}

fn level(severity: Severity) -> sarif::Level {
    Level::from(severity).sarif()
}

fn value(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The SARIF log as JSON.
#[must_use]
pub fn render(report: &ClientsReport) -> Value {
    let fail_on = report.fail_on;
    let all: Vec<&ClientFinding> = report.findings().collect();
    let stale: &[ClientsIdentity] = report.baseline.as_ref().map_or(&[], |b| &b.stale);
    let used: BTreeSet<&str> = all
        .iter()
        .map(|f| f.rule)
        .chain(stale.iter().map(|id| id.rule.as_str()))
        .filter(|id| catalogue().any(|r| r.id == *id))
        .collect();
    let rules = catalogue()
        .filter(|r| used.contains(r.id))
        .map(|r| sarif::Rule {
            id: r.id.into(),
            name: r.id.rsplit('/').next().unwrap_or(r.id).into(),
            short_description: r.title.into(),
            full_description: format!("{} Source: {} {}", r.title, r.source.url, r.source.summary),
            help: r.fix.into(),
            default_level: if r.ambiguous { sarif::Level::Note } else { level(r.severity) },
        })
        .collect();
    let with_baseline = report.baseline.is_some();
    let mut results: Vec<sarif::SarifResult> = all
        .iter()
        .filter(|f| used.contains(f.rule))
        .map(|f| {
            let mut properties = Map::new();
            properties.insert("adapter".into(), value(f.adapter));
            properties.insert("severity".into(), value(f.severity));
            properties.insert("ambiguous".into(), json!(f.ambiguous));
            properties.insert("pointer".into(), json!(f.pointer));
            properties.insert("fix".into(), json!(f.fix));
            properties.insert("source".into(), value(f.source));
            if let Some(c) = &f.canary {
                properties.insert("direction".into(), value(c.direction));
                properties.insert("witness".into(), c.witness.clone());
                properties.insert("outcome".into(), value(&c.outcome));
            }
            let lvl = if fails(f, fail_on) {
                sarif::Level::Error
            } else if f.ambiguous || f.baselined {
                sarif::Level::Note
            } else {
                level(f.severity)
            };
            let tool = f.tool.as_deref().unwrap_or("tools/list");
            sarif::SarifResult {
                rule_id: f.rule.into(),
                level: Some(lvl),
                message: format!("{} ({}): {}", tool, f.adapter.as_str(), f.detail),
                locations: vec![location(f.tool.as_deref(), f.adapter.as_str())],
                partial_fingerprints: vec![(IDENTITY_KEY.into(), fingerprint(&f.identity()))],
                baseline_state: with_baseline.then_some(if f.baselined {
                    sarif::BaselineState::Unchanged
                } else {
                    sarif::BaselineState::New
                }),
                properties,
            }
        })
        .collect();
    for id in stale.iter().filter(|id| used.contains(id.rule.as_str())) {
        results.push(sarif::SarifResult {
            rule_id: id.rule.clone(),
            level: Some(sarif::Level::None),
            message: "A baselined finding that no longer occurs; --update-baseline drops it."
                .into(),
            locations: vec![location(id.tool.as_deref(), &id.adapter)],
            partial_fingerprints: vec![(IDENTITY_KEY.into(), fingerprint(id))],
            baseline_state: Some(sarif::BaselineState::Absent),
            properties: Map::new(),
        });
    }
    let mut properties = Map::new();
    properties.insert("source".into(), json!(report.source));
    properties.insert("seed".into(), json!(report.seed));
    properties.insert("adapters".into(), value(&report.adapters));
    properties.insert("failOn".into(), value(report.fail_on));
    properties.insert("verdict".into(), value(report.verdict));
    properties.insert("failures".into(), json!(report.failures));
    if !report.real_clients.is_empty() {
        let runs: Vec<Value> = report
            .real_clients
            .iter()
            .map(|r| json!({"adapter": r.adapter, "status": r.status_name(), "version": r.version}))
            .collect();
        properties.insert("realClients".into(), Value::Array(runs));
    }
    sarif::Log {
        tool_name: "mcp-fuzz".into(),
        tool_version: report.tool_version.clone(),
        information_uri: None,
        rules,
        results,
        // A real client asked for that did not run leaves the analysis incomplete.
        execution_successful: report.real_clients.iter().all(|r| r.is_captured()),
        properties,
    }
    .to_json()
}
