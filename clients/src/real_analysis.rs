//! A real client's capture judged tool by tool, into the same parts as a modelled adapter's
//! result: whether the model sees the tool, the schema the client sent, its drift from the
//! server's schema, findings of the client's rules ([`crate::REAL_RULES`]) and canaries.
//!
//! Pure: the capture was made by [`crate::real`]; nothing here runs a client.
//!
//! - A tool the client shows is compared with what the server listed *to that client* (its own
//!   handshake): every drift that loosens the schema is a `schema-loosened` warning, one that
//!   only narrows it `schema-narrowed`, a lost description `description-lost` (info); a name
//!   shown differently from the server's (beyond the client's fixed prefix) is `name-rewritten`
//!   (info).
//! - A tool the client skipped is `lost` with the client's reason and one `tool-lost` failure.
//! - When the client lost the whole listing because of some tools, each culprit is one
//!   `listing-lost` failure naming the tool and a pointer (from the client's own words where it
//!   gives a path, else where the modelled counterpart places the failure); the tools that went
//!   down with it are `lost` without a finding of their own.
//! - A tool the server did not list to this client is `not-listed`: servers may list tools by
//!   the capabilities a client declares.

use crate::canary::{self, Canaries};
use crate::diff::{Comparison, Drift, DriftKind, Part, compare_schemas};
use crate::real::{Capture, CapturedTool, ListingFailure, LostTool, RealClient, ReasonSource};
use crate::{Finding, RealRule, Tool, render};
use serde::Serialize;
use serde_json::{Value, json};

/// Whether the model sees a tool through a real client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Seen {
    /// The client shows the tool to the model.
    Exposed,
    /// The server listed the tool to the client, which does not show it.
    Lost,
    /// The server did not list the tool to this client.
    NotListed,
}

/// One real client's result for one tool.
#[derive(Debug, Clone)]
pub struct CapturedResult {
    /// Whether the model sees the tool.
    pub seen: Seen,
    /// The name the client shows the model (prefixes, rewritten characters, cut length).
    pub shown_name: Option<String>,
    /// The namespace the client puts the tool in (Codex CLI: `mcp__srv`).
    pub namespace: Option<String>,
    /// Why the client does not show it, in its own words where it gave any.
    pub lost: Option<LostTool>,
    /// The input schema exactly as the client sent it (`None`: lost, or sent without one).
    pub input: Option<Value>,
    /// The output schema the client keeps, if any.
    pub output: Option<Value>,
    /// How that differs from what the server listed to this client.
    pub comparison: Comparison,
    /// Findings of the client's rules.
    pub findings: Vec<Finding>,
    /// Values the client's rendering and the server disagree on.
    pub canaries: Canaries,
    /// What the client's log says about the tool, and other facts worth knowing.
    pub notes: Vec<String>,
}

/// One real client's capture, judged.
#[derive(Debug, Clone)]
pub struct CaptureAnalysis {
    /// The client.
    pub client: RealClient,
    /// Per tool, in the order of the tools given ([`analyse_capture`]).
    pub results: Vec<CapturedResult>,
    /// Findings about the whole listing: a lost listing whose culprit was not found, or a
    /// culprit that is not among the tools given (a malformed listed item).
    pub listing: Vec<Finding>,
}

/// Judges `capture` for each of `tools` (the report's tools, in report order); `seed` seeds the
/// canary samples. A capture that is not [`crate::real::CaptureStatus::Captured`] gives no result.
#[must_use]
pub fn analyse_capture(tools: &[Tool], capture: &Capture, seed: u64) -> CaptureAnalysis {
    let client = capture.client;
    if !capture.is_captured() {
        return CaptureAnalysis { client, results: Vec::new(), listing: Vec::new() };
    }
    let failure = capture.listing_failure.as_ref();
    let listed = capture.server_tools.as_deref();
    let results = tools.iter().map(|tool| judge(capture, listed, failure, tool, seed)).collect();
    let mut listing = Vec::new();
    if let Some(f) = failure {
        if f.culprits.is_empty() {
            listing.push(finding(
                client,
                RealRule::ListingLost,
                None,
                "",
                format!(
                    "{}: {}; the culprit was not found (the client names none, and re-running it \
                     on parts of the listing was not possible or ran out of runs)",
                    lost_listing_words(client, listed.map_or(0, <[Value]>::len)),
                    f.reason
                ),
            ));
        }
        for c in f.culprits.iter().filter(|c| !tools.iter().any(|t| t.name == c.name)) {
            listing.push(culprit_finding(client, None, c, listed, f));
        }
        // Culprits were found by re-running the client, and the run without them still failed:
        // more tools cause it, past the runs allowed.
        if !f.culprits.is_empty() && f.others.is_none() && f.probes > 0 {
            listing.push(finding(
                client,
                RealRule::ListingLost,
                None,
                "",
                format!(
                    "{client} still loses the listing without the {} culprit{} found: more tools \
                     cause it (the search stopped after {} runs); fix the culprits and run again",
                    f.culprits.len(),
                    if f.culprits.len() == 1 { "" } else { "s" },
                    f.probes
                ),
            ));
        }
    }
    CaptureAnalysis { client, results, listing }
}

fn judge(
    capture: &Capture,
    listed: Option<&[Value]>,
    failure: Option<&ListingFailure>,
    tool: &Tool,
    seed: u64,
) -> CapturedResult {
    let client = capture.client;
    let name = tool.name.as_str();
    // What the server listed to this client, when it is a well-formed tool; else ours.
    let as_listed = listed
        .and_then(|l| l.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(name)))
        .and_then(|t| Tool::parse_listed(t).ok());
    let advertised = as_listed.as_ref().unwrap_or(tool);
    let was_listed = listed.map(|l| l.iter().any(|t| t.get("name") == Some(&json!(name))));
    if let Some(shown) = capture.tool(name) {
        return exposed(client, advertised, shown, seed);
    }
    let mut result = CapturedResult {
        seen: Seen::Lost,
        shown_name: None,
        namespace: None,
        lost: None,
        input: None,
        output: None,
        comparison: Comparison {
            drifts: vec![Drift {
                kind: DriftKind::ToolMissing,
                schema: Part::Input,
                pointer: String::new(),
                detail: "the client does not show the tool; the model cannot call it".into(),
            }],
            stopped: Vec::new(),
        },
        findings: Vec::new(),
        canaries: Canaries::default(),
        notes: Vec::new(),
    };
    if was_listed == Some(false) {
        result.seen = Seen::NotListed;
        result.comparison = Comparison::default();
        result.notes.push(format!(
            "the server did not list this tool to {client} (it lists tools by the client's handshake)"
        ));
        return result;
    }
    let Some(lost) = capture.lost_tool(name) else {
        result.lost = Some(LostTool {
            name: name.to_owned(),
            reason: "not shown to the model; whether the server listed it to this client is \
                     unknown (its tools/list answer was not seen on the wire)"
                .into(),
            source: ReasonSource::Silent,
        });
        return result;
    };
    result.lost = Some(lost.clone());
    match failure {
        Some(f) if f.culprits.iter().any(|c| c.name == name) => {
            let culprit = f.culprits.iter().find(|c| c.name == name).expect("just found");
            result.findings.push(culprit_finding(client, Some(advertised), culprit, listed, f));
        }
        Some(f) => {
            if let Some(still) = f.others_lost.iter().find(|l| l.name == name) {
                // Lost even once the culprits are left out: a reason of its own.
                result.findings.push(lost_finding(client, name, still));
                result
                    .notes
                    .push(format!("without the culprits it is still lost: {}", still.reason));
            } else {
                let culprits: Vec<String> =
                    f.culprits.iter().map(|c| format!("`{}`", c.name)).collect();
                if !culprits.is_empty() {
                    result.notes.push(format!(
                        "lost only because of {}: without {} the client shows it{}",
                        culprits.join(", "),
                        if culprits.len() == 1 { "it" } else { "them" },
                        f.others
                            .iter()
                            .flatten()
                            .find(|t| t.server_name.as_deref() == Some(name))
                            .map(|t| format!(" as `{}`", t.shown_name))
                            .unwrap_or_default()
                    ));
                }
            }
        }
        None => result.findings.push(lost_finding(client, name, lost)),
    }
    result
}

/// A tool the client shows: its rendering, drift, findings and canaries.
fn exposed(
    client: RealClient,
    advertised: &Tool,
    shown: &CapturedTool,
    seed: u64,
) -> CapturedResult {
    // mcpo gives a tool without parameters no request body: it takes an empty object.
    let compared = shown.input_schema.clone().unwrap_or_else(|| json!({"type": "object"}));
    let comparison = compare_schemas(advertised, Some(&compared), shown.output_schema.as_ref());
    let mut findings = Vec::new();
    for d in &comparison.drifts {
        let id = match d.kind {
            DriftKind::DescriptionLost => RealRule::DescriptionLost,
            DriftKind::OutputSchemaNotSent | DriftKind::ToolMissing => continue,
            k if k.loosens() => RealRule::SchemaLoosened,
            k if k.tightens() => RealRule::SchemaNarrowed,
            _ => continue,
        };
        findings.push(finding(client, id, Some(&advertised.name), &d.pointer, d.detail.clone()));
    }
    if let Some(detail) = renamed(client, &advertised.name, &shown.shown_name) {
        findings.push(finding(
            client,
            RealRule::NameRewritten,
            Some(&advertised.name),
            "/name",
            detail,
        ));
    }
    let directions = comparison.canary_directions();
    let canaries = if directions.is_empty() {
        Canaries::default()
    } else {
        canary::find_in(advertised.input(), &compared, seed, &directions)
    };
    CapturedResult {
        seen: Seen::Exposed,
        shown_name: Some(shown.shown_name.clone()),
        namespace: shown.namespace.clone(),
        lost: None,
        input: shown.input_schema.clone(),
        output: shown.output_schema.clone(),
        comparison,
        findings,
        canaries,
        notes: shown.notes.clone(),
    }
}

/// What the name change is, when the client shows the model another name than the server's
/// beyond its fixed prefix (mcpo's operation ids and the Inspector's names are not shown to a
/// model under a prefix, so only the agent CLIs are judged).
fn renamed(client: RealClient, name: &str, shown: &str) -> Option<String> {
    if !client.is_agent() {
        return None;
    }
    let bare = shown.strip_prefix(crate::real::name_prefix(client).as_str()).unwrap_or(shown);
    if bare == name {
        return None;
    }
    let how = if bare.contains("...") && bare.chars().count() < name.chars().count() {
        format!("cut to {} characters with the prefix", shown.chars().count())
    } else {
        "characters the client does not allow rewritten".to_owned()
    };
    Some(format!("shown to the model as `{shown}` ({how}); the server's name is `{name}`"))
}

fn finding(
    client: RealClient,
    kind: RealRule,
    tool: Option<&str>,
    pointer: &str,
    detail: String,
) -> Finding {
    let r = kind.of(client);
    Finding {
        adapter: client.into(),
        rule: r.id,
        severity: r.severity,
        ambiguous: r.ambiguous,
        tool: tool.map(str::to_owned),
        pointer: pointer.to_owned(),
        detail,
    }
}

fn lost_finding(client: RealClient, name: &str, lost: &LostTool) -> Finding {
    let how = match lost.source {
        ReasonSource::Silent => format!("without a word ({})", lost.reason),
        ReasonSource::ClientLog => format!("its log says: {}", lost.reason),
        ReasonSource::Stderr => format!("its stderr says: {}", lost.reason),
        ReasonSource::Bisection => lost.reason.clone(),
    };
    finding(
        client,
        RealRule::ToolLost,
        Some(name),
        "",
        format!("{client} {} the tool, {how}", leaves_out(client)),
    )
}

/// What leaving a tool out means for `client`: an agent does not offer it to its model, the
/// Inspector does not list it, mcpo does not serve it.
fn leaves_out(client: RealClient) -> &'static str {
    match client {
        RealClient::Inspector => "does not list",
        RealClient::Mcpo => "does not serve",
        _ => "does not offer its model",
    }
}

/// What the client did when it lost the listing.
fn lost_listing_words(client: RealClient, listed: usize) -> String {
    match client {
        RealClient::Mcpo => {
            format!("mcpo does not start, so none of the {listed} listed tools is served")
        }
        RealClient::Inspector => format!("the Inspector lists none of the {listed} listed tools"),
        _ => format!("{client} offers its model none of the {listed} listed tools"),
    }
}

fn culprit_finding(
    client: RealClient,
    tool: Option<&Tool>,
    culprit: &LostTool,
    listed: Option<&[Value]>,
    failure: &ListingFailure,
) -> Finding {
    let count = listed.map_or(0, <[Value]>::len);
    let (pointer, whence) = match pointer_in(&culprit.reason) {
        Some(p) => (p, String::new()),
        None => match tool.and_then(|t| modelled_pointer(client, t)) {
            Some(p) => (
                p,
                format!(
                    "; {client} does not say where, the pointer is where the `{}` model places it",
                    client.modelled()
                ),
            ),
            None => ("/inputSchema".to_owned(), format!("; {client} does not say where")),
        },
    };
    let how = match culprit.source {
        ReasonSource::Bisection => format!(
            "found by re-running the client on parts of the listing ({} runs)",
            failure.probes
        ),
        ReasonSource::ClientLog => "named in its log".to_owned(),
        ReasonSource::Stderr => "named on its stderr".to_owned(),
        ReasonSource::Silent => "named by no one".to_owned(),
    };
    let detail = format!(
        "because of this tool {}: {} [{how}{whence}]",
        lost_listing_words(client, count),
        culprit.reason
    );
    finding(client, RealRule::ListingLost, Some(&culprit.name), &pointer, detail)
}

/// The JSON pointer a client's message gives for a listed tool (`tools.3.inputSchema.type:
/// ...` is `/inputSchema/type`).
fn pointer_in(reason: &str) -> Option<String> {
    let rest = reason.split("tools.").nth(1)?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let path = rest[digits..].strip_prefix('.')?;
    let end = path.find(|c: char| c == ':' || c.is_whitespace() || c == ',').unwrap_or(path.len());
    let segments: Vec<String> = path[..end]
        .split('.')
        .filter(|s| !s.is_empty())
        .map(mcp_fuzz_generators::pointer::escape)
        .collect();
    (!segments.is_empty()).then(|| format!("/{}", segments.join("/")))
}

/// Where the modelled counterpart places its first failure on the tool.
fn modelled_pointer(client: RealClient, tool: &Tool) -> Option<String> {
    render(client.modelled(), tool)
        .findings
        .into_iter()
        .find(Finding::is_failure)
        .map(|f| f.pointer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real::{CaptureStatus, Handshake};
    use std::time::Duration;

    fn capture(client: RealClient, listed: &[Value]) -> Capture {
        Capture {
            client,
            version: Some(client.pinned_version().into()),
            program: None,
            status: CaptureStatus::Captured,
            tools: Vec::new(),
            lost: Vec::new(),
            listing_failure: None,
            handshake: None::<Handshake>,
            server_tools: Some(listed.to_vec()),
            request: Value::Null,
            notes: Vec::new(),
            elapsed: Duration::ZERO,
        }
    }

    fn shown(name: &str, shown: &str, schema: Value) -> CapturedTool {
        CapturedTool {
            server_name: Some(name.into()),
            shown_name: shown.into(),
            namespace: None,
            description: None,
            input_schema: Some(schema),
            output_schema: None,
            strict: None,
            notes: Vec::new(),
        }
    }

    fn tool(name: &str, schema: Value) -> Value {
        json!({"name": name, "inputSchema": schema})
    }

    fn rules(r: &CapturedResult) -> Vec<&str> {
        r.findings.iter().map(|f| f.rule).collect()
    }

    #[test]
    fn a_dropped_bound_is_a_loosened_schema_with_a_canary_and_a_rewritten_name_is_noted() {
        let listed = [tool(
            "dot.name",
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}),
        )];
        let mut c = capture(RealClient::CodexCli, &listed);
        c.tools.push(shown(
            "dot.name",
            "dot_name",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        ));
        let tools = [Tool::parse_listed(&listed[0]).expect("tool")];
        let a = analyse_capture(&tools, &c, 0);
        let r = &a.results[0];
        assert_eq!(r.seen, Seen::Exposed);
        assert_eq!(rules(r), ["codex-cli/schema-loosened", "codex-cli/name-rewritten"]);
        assert_eq!(r.findings[0].pointer, "/inputSchema/properties/n/minimum");
        assert_eq!(r.canaries.canaries[0].value, json!({"n": 0}));
        assert!(r.findings[1].detail.contains("`dot_name`"), "{}", r.findings[1].detail);
        assert!(a.listing.is_empty());
    }

    #[test]
    fn a_culprit_is_one_failure_with_the_clients_pointer_and_the_rest_is_lost_without_findings() {
        let listed = [tool("ok", json!({"type": "object"})), tool("bad", json!({"type": "array"}))];
        let mut c = capture(RealClient::ClaudeCode, &listed);
        let reason = "tools.1.inputSchema.type: Invalid input: expected \"object\"";
        c.lost.push(LostTool {
            name: "ok".into(),
            reason: "lost with the whole listing: Invalid result".into(),
            source: ReasonSource::ClientLog,
        });
        c.listing_failure = Some(ListingFailure {
            reason: "Invalid result".into(),
            source: ReasonSource::ClientLog,
            culprits: vec![LostTool {
                name: "bad".into(),
                reason: reason.into(),
                source: ReasonSource::ClientLog,
            }],
            others: Some(vec![shown("ok", "mcp__srv__ok", json!({"type": "object"}))]),
            others_lost: Vec::new(),
            probes: 1,
        });
        let tools: Vec<Tool> =
            listed.iter().map(|t| Tool::parse_listed(t).expect("tool")).collect();
        let a = analyse_capture(&tools, &c, 0);
        assert_eq!(a.results[0].seen, Seen::Lost);
        assert!(a.results[0].findings.is_empty(), "{:?}", a.results[0].findings);
        assert!(a.results[0].notes[0].contains("as `mcp__srv__ok`"), "{:?}", a.results[0].notes);
        let culprit = &a.results[1].findings;
        assert_eq!(culprit.len(), 1);
        assert_eq!(culprit[0].rule, "claude-code/listing-lost");
        assert_eq!(culprit[0].pointer, "/inputSchema/type");
        assert!(culprit[0].detail.contains("none of the 2 listed tools"), "{}", culprit[0].detail);
        assert!(culprit[0].is_failure());
    }

    #[test]
    fn a_culprit_without_a_path_takes_the_models_pointer_and_a_tool_not_listed_is_not_a_finding() {
        let recursive = json!({"type": "object", "properties": {"n": {"$ref": "#"}}});
        let listed = [tool("loop", recursive)];
        let mut c = capture(RealClient::Mcpo, &listed);
        c.listing_failure = Some(ListingFailure {
            reason: "mcpo refused to start".into(),
            source: ReasonSource::Stderr,
            culprits: vec![LostTool {
                name: "loop".into(),
                reason: "RecursionError".into(),
                source: ReasonSource::Bisection,
            }],
            others: None,
            others_lost: Vec::new(),
            probes: 3,
        });
        c.lost.push(LostTool {
            name: "loop".into(),
            reason: "RecursionError".into(),
            source: ReasonSource::Bisection,
        });
        let mut tools: Vec<Tool> =
            listed.iter().map(|t| Tool::parse_listed(t).expect("tool")).collect();
        tools.push(Tool::new("elsewhere", json!({"type": "object"})));
        let a = analyse_capture(&tools, &c, 0);
        let f = &a.results[0].findings[0];
        assert_eq!(f.rule, "mcpo/listing-lost");
        assert_eq!(f.pointer, "/inputSchema/properties/n/$ref");
        assert!(f.detail.contains("mcpo does not start"), "{}", f.detail);
        assert!(f.detail.contains("the `openapi` model places it"), "{}", f.detail);
        assert_eq!(a.results[1].seen, Seen::NotListed);
        assert!(a.results[1].findings.is_empty());
    }

    #[test]
    fn a_skipped_tool_is_lost_with_the_clients_reason() {
        let listed = [tool("t", json!({"type": "object"}))];
        let mut c = capture(RealClient::CodexCli, &listed);
        c.lost.push(LostTool {
            name: "t".into(),
            reason: "failed to build tool spec".into(),
            source: ReasonSource::Stderr,
        });
        let tools = [Tool::parse_listed(&listed[0]).expect("tool")];
        let r = &analyse_capture(&tools, &c, 0).results[0];
        assert_eq!(r.seen, Seen::Lost);
        assert_eq!(rules(r), ["codex-cli/tool-lost"]);
        assert!(r.findings[0].detail.ends_with("its stderr says: failed to build tool spec"));
        c.lost[0].source = ReasonSource::Silent;
        c.lost[0].reason = "the server listed it".into();
        let r = &analyse_capture(&tools, &c, 0).results[0];
        assert!(r.findings[0].detail.ends_with("without a word (the server listed it)"));
    }

    #[test]
    fn pointers_are_read_from_client_paths() {
        assert_eq!(
            pointer_in("tools.28.inputSchema.properties.anything: Invalid input").as_deref(),
            Some("/inputSchema/properties/anything")
        );
        assert_eq!(pointer_in("tools.3.inputSchema.type: x").as_deref(), Some("/inputSchema/type"));
        assert_eq!(pointer_in("no path here"), None);
        assert_eq!(pointer_in("tools.x"), None);
    }
}
