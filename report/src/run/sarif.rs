//! The run report as a SARIF 2.1.0 log: every finding kind is a rule with a stable id
//! (the engine's catalogue), every finding a result on the tool's logical location, identified across
//! runs by `partialFingerprints["mcpFuzzIdentity/v1"]` (tool, kind, mutation, pointer, and the
//! cause or surface when the identity has one: the same identity the baseline uses). With `--baseline`, results carry `baselineState` (`new` or
//! `unchanged`) and stale baseline entries appear as `absent` results of level `none`.

use super::replay::replay_line;
use crate::writers::sarif::{
    BaselineState, Level, Log, LogicalLocation, Rule, SarifResult, fingerprint,
};
use mcp_fuzz_model::finding::{FindingKind, Identity, KINDS, UNKNOWN_RULE};
use mcp_fuzz_model::report::{Finding, Report};
use serde_json::{Map, Value, json};

/// The fingerprint key.
pub const IDENTITY_KEY: &str = "mcpFuzzIdentity/v1";

/// The SARIF log as JSON.
#[must_use]
pub fn render(r: &Report) -> Value {
    let server = r.server.name.clone().unwrap_or_else(|| "server".to_owned());
    let rules = KINDS
        .iter()
        .map(|(kind, rule)| (Some(kind), rule))
        .chain(std::iter::once((None, &UNKNOWN_RULE)))
        .map(|(kind, rule)| Rule {
            id: rule.id.into(),
            name: rule.name.into(),
            short_description: rule.short.into(),
            full_description: format!("{} Expected: {}.", rule.short, rule.expected),
            help: rule.help.into(),
            default_level: match kind {
                Some(
                    FindingKind::AcceptsInvalid
                    | FindingKind::UnflaggedError
                    | FindingKind::Slow
                    | FindingKind::Flaky
                    | FindingKind::GaveUp
                    | FindingKind::MisnamedAnnotation
                    | FindingKind::RoundTripMismatch,
                ) => Level::Warning,
                Some(
                    FindingKind::ValidCallFailed
                    | FindingKind::NullAsAbsent
                    | FindingKind::LaxCoercion
                    | FindingKind::UpstreamTimeout,
                ) => Level::Note,
                _ => Level::Error,
            },
        })
        .collect();
    let mut results: Vec<SarifResult> = r.findings.iter().map(|f| result(r, &server, f)).collect();
    if let Some(b) = &r.baseline {
        for id in &b.stale {
            results.push(SarifResult {
                rule_id: id.kind.rule().id.into(),
                level: Some(Level::None),
                message: "A baselined finding that no longer occurs; --update-baseline drops it."
                    .into(),
                locations: vec![location(&server, id.tool.as_deref())],
                partial_fingerprints: vec![(IDENTITY_KEY.into(), identity_fingerprint(id))],
                baseline_state: Some(BaselineState::Absent),
                properties: Map::new(),
            });
        }
    }
    let mut properties = Map::new();
    properties.insert("seed".into(), json!(r.seed));
    properties.insert("target".into(), serde_json::to_value(&r.target).unwrap_or(Value::Null));
    properties.insert("score".into(), serde_json::to_value(&r.score).unwrap_or(Value::Null));
    if let Some(p) = &r.partition {
        properties.insert("partition".into(), json!(p));
    }
    Log {
        tool_name: "mcp-fuzz".into(),
        tool_version: r.tool_version.clone(),
        information_uri: None,
        rules,
        results,
        execution_successful: true,
        properties,
    }
    .to_json()
}

/// The stable fingerprint of an identity.
#[must_use]
///
/// The cause and the surface are parts only when the identity has them, so that the fingerprints
/// of identities without them stay what they were; with them, two rule families of one tool
/// (`accepts-invalid`), two causes grouped across tools, or two protocol checks no longer share
/// one fingerprint.
pub fn identity_fingerprint(id: &Identity) -> String {
    let cause = id.cause.as_ref().map(|c| format!("cause={c}"));
    let surface = id.surface.as_ref().map(|s| format!("surface={s}"));
    let mut parts = vec![
        id.tool.as_deref().unwrap_or(""),
        id.kind.as_str(),
        id.mutation.as_deref().unwrap_or(""),
        id.pointer.as_deref().unwrap_or(""),
    ];
    parts.extend(cause.as_deref());
    parts.extend(surface.as_deref());
    fingerprint(&parts)
}

fn location(server: &str, tool: Option<&str>) -> LogicalLocation {
    match tool {
        Some(t) => LogicalLocation {
            name: t.into(),
            fully_qualified_name: format!("{server}/{t}"),
            kind: "function".into(),
        },
        None => LogicalLocation {
            name: server.into(),
            fully_qualified_name: server.into(),
            kind: "module".into(),
        },
    }
}

fn result(r: &Report, server: &str, f: &Finding) -> SarifResult {
    let level = crate::severity::Level::from(f.severity).sarif();
    let subject = f.subject();
    let mut message =
        if subject == "server" { f.message.clone() } else { format!("{subject}: {}", f.message) };
    if let (Some(request), None) = (&f.request, &f.arguments) {
        message.push_str(&format!(" Request: {request}"));
    }
    if let Some(a) = &f.arguments {
        message.push_str(&format!(" Arguments: {}", Value::Object(a.clone())));
    }
    let mut properties = Map::new();
    properties.insert("severity".into(), json!(f.severity));
    if let Some(c) = &f.case {
        properties.insert("case".into(), serde_json::to_value(c).unwrap_or(Value::Null));
    }
    if let Some(a) = &f.arguments {
        properties.insert("arguments".into(), Value::Object(a.clone()));
    }
    if let Some(o) = &f.outcome {
        properties.insert("outcome".into(), serde_json::to_value(o).unwrap_or(Value::Null));
    }
    // What the JSON report carries after the message, in its order.
    if let Some(m) = &f.minimal_arguments {
        properties.insert("minimalArguments".into(), Value::Object(m.clone()));
    }
    if let Some(flaky) = f.flaky {
        properties.insert("flaky".into(), json!(flaky));
    }
    if let Some(s) = &f.shrink {
        properties.insert("shrink".into(), serde_json::to_value(s).unwrap_or(Value::Null));
    }
    if !f.sequence.is_empty() {
        properties.insert("sequence".into(), json!(f.sequence));
        if let Some(m) = &f.minimal_sequence {
            properties.insert("minimalSequence".into(), json!(m));
        }
        message.push_str(&format!(
            " Sequence: {} call(s) from a fresh process.",
            f.smallest_sequence().len()
        ));
    }
    for (k, v) in &f.extra {
        properties.insert(k.clone(), v.clone());
    }
    if !f.sequence.is_empty() {
        if let Some(line) = super::sequence_replay(f) {
            properties.insert("replay".into(), json!(line));
        }
    } else if let (Some(tool), Some(a)) = (f.case_tool(), f.smallest_arguments()) {
        properties.insert("replay".into(), json!(replay_line(&r.target, tool, a)));
    }
    SarifResult {
        rule_id: f.kind.rule().id.into(),
        level: Some(level),
        message,
        locations: vec![location(
            server,
            f.tool.as_deref().or((subject != "server").then_some(subject.as_str())),
        )],
        partial_fingerprints: vec![(IDENTITY_KEY.into(), identity_fingerprint(&f.identity()))],
        baseline_state: r
            .baseline
            .as_ref()
            .map(|_| if f.baselined { BaselineState::Unchanged } else { BaselineState::New }),
        properties,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_or_a_surface_separates_identities_and_their_absence_changes_nothing() {
        let id = |cause: Option<&str>, surface: Option<&str>| Identity {
            tool: Some("t".into()),
            kind: FindingKind::AcceptsInvalid,
            mutation: None,
            pointer: None,
            cause: cause.map(str::to_owned),
            surface: surface.map(str::to_owned),
        };
        assert_eq!(
            identity_fingerprint(&id(None, None)),
            fingerprint(&["t", "accepts-invalid", "", ""])
        );
        assert_ne!(
            identity_fingerprint(&id(Some("bounds"), None)),
            identity_fingerprint(&id(Some("unknown-properties"), None))
        );
        assert_ne!(
            identity_fingerprint(&id(Some("x"), None)),
            identity_fingerprint(&id(None, Some("x")))
        );
    }
}
