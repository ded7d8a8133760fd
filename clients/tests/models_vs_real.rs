//! The modelled adapters held to the real clients, on the recorded captures of
//! `fixtures/clients/real/<client>@<pinned version>/` (no client is run here):
//! mcp ↔ inspector, openapi ↔ mcpo, openai-strict ↔ codex-cli, anthropic ↔ claude-code,
//! gemini ↔ gemini-cli.
//!
//! For every tool of every recorded listing: does the model predict the client's acceptance or
//! rejection, the same dropped keywords (the same `(pointer, keyword)` pairs missing from the
//! rendering), the same rendered schema (after the normalisations in [`normalise`])? And for
//! every rule the model fires: does the client do what the rule says?
//!
//! The numbers are pinned in `tests/snapshots/models_vs_real.json`, and the tables in
//! `clients/README-real.md` (between the `models-vs-real` markers) must be what this test
//! computes. After re-recording or changing an adapter, regenerate both with
//! `MCP_FUZZ_BLESS=1 cargo test -p mcp-fuzz-clients --test models_vs_real` and review the diff.

use mcp_fuzz_clients::real::RealClient;
use mcp_fuzz_clients::{Adapter, Finding, Severity, Tool, render};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What the real client did with one tool.
#[derive(Debug, Clone)]
enum Real {
    /// Exposed, with the schema it sent (`None`: mcpo's operation without a request body).
    Exposed(Option<Value>),
    /// Skipped on its own.
    Skipped,
    /// The tool made the client lose the whole listing (or mcpo refuse to start).
    LostListing,
}

impl Real {
    fn rejected(&self) -> bool {
        !matches!(self, Real::Exposed(_))
    }
}

/// One tool of one recorded listing.
struct Case {
    /// `<source stem>/<tool>`.
    id: String,
    edge: bool,
    tool: Tool,
    real: Real,
}

/// The recorded captures of `client`, one case per listed tool whose fate is known; also the
/// number of listed tools whose fate is unknown (a shown name not mapped back).
fn cases(client: RealClient) -> (Vec<Case>, usize) {
    let dir = root().join(format!("fixtures/clients/real/{client}@{}", client.pinned_version()));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!("{}: {e} (record with fixtures/clients/real/record.sh)", dir.display())
        })
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let (mut out, mut unknown) = (Vec::new(), 0);
    for file in files {
        let rec = read_json(&file);
        let source = rec["source"].as_str().expect("source");
        let listed = read_json(&root().join(source))["tools"].as_array().expect("tools").clone();
        let stem = file.file_stem().expect("stem").to_string_lossy().into_owned();
        let mut fate: BTreeMap<String, Real> = BTreeMap::new();
        let by_name: BTreeMap<&str, &Value> =
            listed.iter().filter_map(|t| Some((t["name"].as_str()?, t))).collect();
        let exposed = |t: &Value| -> Option<(String, Real)> {
            let name = t["serverName"].as_str()?.to_owned();
            let schema = if t["sameSchema"] == true {
                by_name.get(name.as_str()).and_then(|s| s.get("inputSchema")).cloned()
            } else {
                t.get("inputSchema").filter(|s| !s.is_null()).cloned()
            };
            Some((name, Real::Exposed(schema)))
        };
        for t in rec["tools"].as_array().expect("tools") {
            fate.extend(exposed(t));
        }
        for l in rec["lost"].as_array().expect("lost") {
            fate.insert(l["name"].as_str().expect("name").to_owned(), Real::Skipped);
        }
        if let Some(failure) = rec["listingFailure"].as_object() {
            for c in failure["culprits"].as_array().expect("culprits") {
                fate.insert(c["name"].as_str().expect("name").to_owned(), Real::LostListing);
            }
            for t in failure["others"].as_array().into_iter().flatten() {
                fate.extend(exposed(t));
            }
            for l in failure["othersLost"].as_array().into_iter().flatten() {
                fate.insert(l["name"].as_str().expect("name").to_owned(), Real::Skipped);
            }
        }
        for t in &listed {
            let name = t["name"].as_str().expect("name");
            let Some(real) = fate.get(name) else {
                unknown += 1;
                continue;
            };
            let tool = Tool {
                name: name.to_owned(),
                input_schema: t.get("inputSchema").cloned(),
                output_schema: t.get("outputSchema").filter(|o| !o.is_null()).cloned(),
                raw: t.clone(),
            };
            out.push(Case {
                id: format!("{stem}/{name}"),
                edge: stem == "edge",
                tool,
                real: real.clone(),
            });
        }
    }
    (out, unknown)
}

const MAP_KEYWORDS: &[&str] =
    &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const ARRAY_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Every `(pointer of a schema object, keyword)` pair in `schema`.
fn keywords(schema: &Value, ptr: &str, depth: usize, out: &mut BTreeSet<(String, String)>) {
    let Some(object) = schema.as_object() else { return };
    if depth > 64 {
        return;
    }
    for (key, value) in object {
        out.insert((ptr.to_owned(), key.clone()));
        let at = mcp_fuzz_generators::pointer::push(ptr, key);
        if MAP_KEYWORDS.contains(&key.as_str()) {
            for (name, sub) in value.as_object().into_iter().flatten() {
                keywords(sub, &mcp_fuzz_generators::pointer::push(&at, name), depth + 1, out);
            }
        } else if ARRAY_KEYWORDS.contains(&key.as_str()) || (key == "items" && value.is_array()) {
            for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                keywords(sub, &format!("{at}/{i}"), depth + 1, out);
            }
        } else if SCHEMA_KEYWORDS.contains(&key.as_str()) {
            keywords(value, &at, depth + 1, out);
        }
    }
}

/// The `(pointer, keyword)` pairs of `original` that `rendered` lacks.
fn dropped(original: &Value, rendered: &Value) -> BTreeSet<(String, String)> {
    let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
    keywords(original, "", 0, &mut a);
    keywords(rendered, "", 0, &mut b);
    a.difference(&b).cloned().collect()
}

/// The rendering as compared: mcpo's missing request body is an object without properties;
/// for the mcpo pair, pydantic's `title`s, empty `description`s and `additionalProperties: true`
/// (the default) are removed from both sides; Gemini CLI's injected `wait_for_previous` property
/// is removed; an empty `required` is removed everywhere.
fn normalise(client: RealClient, schema: Option<&Value>) -> Value {
    let mut value = schema.cloned().unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    fn walk(v: &mut Value, mcpo: bool) {
        match v {
            Value::Object(o) => {
                if o.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
                    o.remove("required");
                }
                if mcpo {
                    // Property maps hold names, not keywords: only strip keywords of schemas.
                    if o.get("title").is_some_and(Value::is_string) {
                        o.remove("title");
                    }
                    if o.get("description").is_some_and(|d| d == "") {
                        o.remove("description");
                    }
                    if o.get("additionalProperties") == Some(&Value::Bool(true)) {
                        o.remove("additionalProperties");
                    }
                }
                for (k, child) in o.iter_mut() {
                    if k == "properties"
                        || k == "$defs"
                        || k == "definitions"
                        || k == "patternProperties"
                    {
                        if let Value::Object(map) = child {
                            for sub in map.values_mut() {
                                walk(sub, mcpo);
                            }
                        }
                    } else {
                        walk(child, mcpo);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, mcpo)),
            _ => {}
        }
    }
    walk(&mut value, client == RealClient::Mcpo);
    if client == RealClient::GeminiCli
        && let Some(Value::Object(props)) = value.get_mut("properties")
    {
        props.remove("wait_for_previous");
    }
    value
}

/// Whether `pointer` (JSON pointer, `/inputSchema` stripped) resolves in `schema`.
fn resolves(schema: &Value, pointer: &str) -> bool {
    schema.pointer(pointer).is_some()
}

/// What a model finding claims, checked against the client.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Agrees,
    Disagrees,
    /// The claim cannot be checked on this tool (the client lost it, or the rule is advice).
    Unchecked,
}

fn check(finding: &Finding, real: &Real) -> Verdict {
    let drops = finding.detail.contains("is dropped") || finding.detail.contains("is not carried");
    if finding.severity == Severity::Fail && !drops {
        return if real.rejected() { Verdict::Agrees } else { Verdict::Disagrees };
    }
    if drops {
        let Real::Exposed(schema) = real else { return Verdict::Unchecked };
        let pointer = finding.pointer.strip_prefix("/inputSchema").unwrap_or(&finding.pointer);
        let schema = schema.clone().unwrap_or(Value::Null);
        return if resolves(&schema, pointer) { Verdict::Disagrees } else { Verdict::Agrees };
    }
    Verdict::Unchecked
}

#[derive(Default)]
struct Tally {
    tools: usize,
    unknown: usize,
    acceptance: usize,
    model_rejects_client_keeps: Vec<String>,
    model_keeps_client_rejects: Vec<String>,
    both_kept: usize,
    same_dropped: usize,
    same_schema: usize,
    different_dropped_edge: Vec<String>,
    different_schema_edge: Vec<String>,
    /// rule → [agrees, disagrees, unchecked]
    rules: BTreeMap<&'static str, [usize; 3]>,
}

fn tally(client: RealClient, adapter: Adapter) -> Tally {
    let (cases, unknown) = cases(client);
    let mut t = Tally { unknown, ..Tally::default() };
    for case in &cases {
        t.tools += 1;
        let rendering = render(adapter, &case.tool);
        let model_rejects = rendering.rejected();
        if model_rejects == case.real.rejected() {
            t.acceptance += 1;
        } else if model_rejects {
            t.model_rejects_client_keeps.push(case.id.clone());
        } else {
            t.model_keeps_client_rejects.push(case.id.clone());
        }
        for f in &rendering.findings {
            let v = check(f, &case.real);
            let entry = t.rules.entry(f.rule).or_default();
            entry[match v {
                Verdict::Agrees => 0,
                Verdict::Disagrees => 1,
                Verdict::Unchecked => 2,
            }] += 1;
        }
        let (Real::Exposed(real), false) = (&case.real, model_rejects) else { continue };
        t.both_kept += 1;
        let original = case.tool.input();
        let real_norm = normalise(client, real.as_ref());
        let model_norm = normalise(client, rendering.input.as_ref());
        let real_raw = real.clone().unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        let model_raw = rendering.input.clone().unwrap_or(Value::Null);
        if dropped(original, &real_raw) == dropped(original, &model_raw) {
            t.same_dropped += 1;
        } else if case.edge {
            t.different_dropped_edge.push(case.id.clone());
        }
        if real_norm == model_norm {
            t.same_schema += 1;
        } else if case.edge {
            t.different_schema_edge.push(case.id.clone());
        }
    }
    t
}

fn pairs() -> Vec<(RealClient, Adapter)> {
    RealClient::ALL.iter().map(|&c| (c, c.modelled())).collect()
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 { "n/a".into() } else { format!("{n}/{of} ({:.0}%)", 100.0 * n as f64 / of as f64) }
}

/// The markdown tables for the README.
fn tables(all: &[(RealClient, Adapter, Tally)]) -> String {
    let mut md = String::from(
        "| model ↔ client | tools | acceptance agrees | model rejects, client keeps | model keeps, client drops | same dropped keywords | same rendered schema |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (client, adapter, t) in all {
        md.push_str(&format!(
            "| `{adapter}` ↔ `{client}` | {} | {} | {} | {} | {} | {} |\n",
            t.tools,
            pct(t.acceptance, t.tools),
            t.model_rejects_client_keeps.len(),
            t.model_keeps_client_rejects.len(),
            pct(t.same_dropped, t.both_kept),
            pct(t.same_schema, t.both_kept),
        ));
    }
    md.push_str(
        "\nPer rule: how often the client does what the model's finding says (a rejection rule: the \
         client loses the tool; a drop: the keyword is missing from what the client sent). \
         \"unchecked\": the client lost the tool, or the rule is advice.\n\n\
         | rule | fired | client agrees | client disagrees | unchecked |\n|---|---:|---:|---:|---:|\n",
    );
    for (_, _, t) in all {
        for (rule, [agree, disagree, unchecked]) in &t.rules {
            md.push_str(&format!(
                "| `{rule}` | {} | {agree} | {disagree} | {unchecked} |\n",
                agree + disagree + unchecked
            ));
        }
    }
    md
}

fn snapshot(all: &[(RealClient, Adapter, Tally)]) -> Value {
    let pairs: Map<String, Value> = all
        .iter()
        .map(|(client, adapter, t)| {
            (
                format!("{adapter} <-> {client}"),
                json!({
                    "tools": t.tools,
                    "unknownFate": t.unknown,
                    "acceptanceAgrees": t.acceptance,
                    "modelRejectsClientKeeps": t.model_rejects_client_keeps,
                    "modelKeepsClientRejects": t.model_keeps_client_rejects,
                    "bothKept": t.both_kept,
                    "sameDroppedKeywords": t.same_dropped,
                    "sameRenderedSchema": t.same_schema,
                    "edgeToolsWithOtherDroppedKeywords": t.different_dropped_edge,
                    "edgeToolsWithAnotherSchema": t.different_schema_edge,
                    "rules": t.rules.iter().map(|(r, v)| (r.to_string(), json!(v))).collect::<Map<_, _>>(),
                }),
            )
        })
        .collect();
    Value::Object(pairs)
}

const BEGIN: &str =
    "<!-- models-vs-real:begin (generated by clients/tests/models_vs_real.rs) -->\n";
const END: &str = "<!-- models-vs-real:end -->";

#[test]
fn every_model_is_held_to_its_real_client_and_the_numbers_are_pinned() {
    let all: Vec<(RealClient, Adapter, Tally)> =
        pairs().into_iter().map(|(c, a)| (c, a, tally(c, a))).collect();
    for (client, _, t) in &all {
        assert!(t.tools > 200, "{client}: only {} tools compared", t.tools);
        assert_eq!(t.unknown, 0, "{client}: tools whose fate is not recorded");
    }
    let bless = std::env::var_os("MCP_FUZZ_BLESS").is_some();
    let snap_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/models_vs_real.json");
    let text = format!("{}\n", serde_json::to_string_pretty(&snapshot(&all)).expect("serialises"));
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README-real.md");
    let readme = std::fs::read_to_string(&readme_path).expect("clients/README-real.md");
    let (head, rest) = readme.split_once(BEGIN).expect("the README has the begin marker");
    let (_, tail) = rest.split_once(END).expect("the README has the end marker");
    let generated = format!("{head}{BEGIN}{}{END}{tail}", tables(&all));
    if bless {
        std::fs::write(&snap_path, &text).expect("snapshot written");
        std::fs::write(&readme_path, &generated).expect("README written");
        return;
    }
    let expected = std::fs::read_to_string(&snap_path).unwrap_or_default();
    assert!(
        expected == text,
        "the agreement of the models with the real clients changed: rerun with MCP_FUZZ_BLESS=1 and review \
         the diff of {}",
        snap_path.display()
    );
    assert!(
        readme == generated,
        "clients/README-real.md tables are stale: rerun with MCP_FUZZ_BLESS=1"
    );
}

#[test]
fn known_disagreements_on_the_edge_schemas() {
    // A few disagreements spelled out, so the reason for each is on record next to the numbers.
    let find = |client: RealClient, id: &str| -> (bool, Real) {
        let (cases, _) = cases(client);
        let case = cases.into_iter().find(|c| c.id == id).unwrap_or_else(|| panic!("{id}"));
        (render(client.modelled(), &case.tool).rejected(), case.real)
    };
    // Claude Code flattens a root anyOf (the Messages API would refuse it, which the model says).
    let (model, real) = find(RealClient::ClaudeCode, "edge/root_anyof");
    assert!(model && !real.rejected());
    // Claude Code loses the whole listing for a non-object root; the model calls that ambiguous.
    let (model, real) = find(RealClient::ClaudeCode, "edge/root_array");
    assert!(!model && matches!(real, Real::LostListing));
    // Codex sends `strict: false`: what strict mode refuses (an open object) passes.
    let (model, real) = find(RealClient::CodexCli, "edge/additional_true");
    assert!(model && !real.rejected());
    // Gemini CLI sends `parametersJsonSchema` (full JSON Schema), not the OpenAPI subset.
    let (model, real) = find(RealClient::GeminiCli, "edge/defs_ref");
    assert!(model && !real.rejected());
    // Gemini CLI drops a tool named like one of its built-ins that headless mode excludes.
    let (model, real) = find(RealClient::GeminiCli, "edge/write_file");
    assert!(!model && matches!(real, Real::Skipped));
    // mcpo cannot resolve `#/definitions/...` and refuses to start, as the model predicts.
    let (model, real) = find(RealClient::Mcpo, "edge/definitions_ref");
    assert!(model && matches!(real, Real::LostListing));
    // The Inspector drops a non-object root alone; the model predicts the tool's rejection.
    let (model, real) = find(RealClient::Inspector, "edge/root_string");
    assert!(model && matches!(real, Real::Skipped));
}

#[test]
fn the_keyword_walk_and_the_normalisation_do_what_they_say() {
    let original =
        json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}});
    let rendered = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let got: Vec<(String, String)> = dropped(&original, &rendered).into_iter().collect();
    assert_eq!(got, [("/properties/a".to_owned(), "minLength".to_owned())]);
    let mcpo = json!({"type": "object", "title": "m", "required": [], "properties": {"title": {"type": "string", "title": "T", "description": ""}}});
    assert_eq!(
        normalise(RealClient::Mcpo, Some(&mcpo)),
        json!({"type": "object", "properties": {"title": {"type": "string"}}}),
        "a property named `title` survives, the keyword does not"
    );
    let gemini =
        json!({"type": "object", "properties": {"wait_for_previous": {"type": "boolean"}}});
    assert_eq!(
        normalise(RealClient::GeminiCli, Some(&gemini)),
        json!({"type": "object", "properties": {}})
    );
}
