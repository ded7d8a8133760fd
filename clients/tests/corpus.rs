//! The real corpus (`fixtures/tools-list/`, 40 captured `tools/list` answers): no panics, stable
//! findings (snapshot), rendering snapshots for a few tools, and canary validity on every
//! drifting tool.
//!
//! Snapshots live in `clients/tests/snapshots/`; after an intended change, regenerate them with
//! `MCP_FUZZ_BLESS=1 cargo test -p mcp-fuzz-clients --test corpus` and review the diff.

use mcp_fuzz_clients::canary::{self, Direction};
use mcp_fuzz_clients::diff::compare;
use mcp_fuzz_clients::{Adapter, Tool, render};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(file name, tools)` for every capture, sorted.
fn corpus() -> Vec<(String, Vec<Tool>)> {
    let mut files = Vec::new();
    for ecosystem in ["npm", "pypi"] {
        let dir = root().join("fixtures/tools-list").join(ecosystem);
        for entry in std::fs::read_dir(&dir).expect("corpus dir") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("readable");
            let document: Value = serde_json::from_str(&text).expect("JSON");
            let tools = document["tools"]
                .as_array()
                .expect("tools array")
                .iter()
                .map(|t| Tool {
                    name: t["name"].as_str().expect("name").to_owned(),
                    input_schema: t.get("inputSchema").cloned(),
                    output_schema: t.get("outputSchema").filter(|o| !o.is_null()).cloned(),
                    raw: t.clone(),
                })
                .collect();
            let name = path.file_name().expect("name").to_string_lossy().into_owned();
            files.push((format!("{ecosystem}/{name}"), tools));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

/// Compares `actual` with the snapshot file, or rewrites it under `MCP_FUZZ_BLESS=1`.
fn snapshot(name: &str, actual: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    let text = format!("{}\n", serde_json::to_string_pretty(actual).expect("serialises"));
    if std::env::var_os("MCP_FUZZ_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("snapshot dir");
        std::fs::write(&path, text).expect("snapshot written");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{}: {e}; run with MCP_FUZZ_BLESS=1 to create it", path.display())
    });
    assert!(
        expected == text,
        "{} differs from the snapshot; rerun with MCP_FUZZ_BLESS=1 and review the diff",
        path.display()
    );
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .or_else(|_| {
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(schema)
        })
        .expect("the schema compiles")
}

#[test]
fn findings_are_stable_over_the_corpus() {
    let mut summary = Map::new();
    let mut totals: BTreeMap<&str, [u64; 3]> = BTreeMap::new();
    for (file, tools) in corpus() {
        let mut per_adapter = Map::new();
        for adapter in Adapter::ALL {
            let mut rules: BTreeMap<&str, u64> = BTreeMap::new();
            let (mut rejected, mut drifting) = (0_u64, 0_u64);
            for tool in &tools {
                let rendering = render(adapter, tool);
                rejected += u64::from(rendering.rejected());
                drifting += u64::from(compare(tool, &rendering).drifts());
                for f in &rendering.findings {
                    *rules.entry(f.rule).or_default() += 1;
                }
            }
            let total = totals.entry(adapter.as_str()).or_default();
            total[0] += tools.len() as u64;
            total[1] += rejected;
            total[2] += drifting;
            per_adapter.insert(
                adapter.as_str().to_owned(),
                json!({"rejected": rejected, "drifting": drifting, "rules": rules}),
            );
        }
        summary.insert(file, json!({"tools": tools.len(), "adapters": per_adapter}));
    }
    let totals: Map<String, Value> = totals
        .into_iter()
        .map(|(a, [tools, rejected, drifting])| {
            (a.to_owned(), json!({"tools": tools, "rejected": rejected, "drifting": drifting}))
        })
        .collect();
    snapshot("corpus.json", &json!({"totals": totals, "files": summary}));
}

#[test]
fn rendering_snapshots_of_a_few_corpus_tools() {
    let picks = [
        ("npm/@modelcontextprotocol__server-everything@2026.8.31.json", "get-resource-links"),
        ("pypi/mcp-server-fetch@2026.10.24.json", "fetch"),
        ("npm/@modelcontextprotocol__server-filesystem@2026.8.31.json", "edit_file"),
    ];
    let corpus = corpus();
    for (file, name) in picks {
        let tools = &corpus.iter().find(|(f, _)| f == file).unwrap_or_else(|| panic!("{file}")).1;
        let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name}"));
        let adapters: Map<String, Value> = Adapter::ALL
            .iter()
            .map(|&adapter| {
                let rendering = render(adapter, tool);
                let comparison = compare(tool, &rendering);
                let findings: Vec<Value> = rendering
                    .findings
                    .iter()
                    .map(|f| json!({"rule": f.rule, "pointer": f.pointer, "detail": f.detail}))
                    .collect();
                (
                    adapter.as_str().to_owned(),
                    json!({
                        "rendered": rendering.input,
                        "findings": findings,
                        "drift": comparison.drifts,
                        "stopped": comparison.stopped,
                    }),
                )
            })
            .collect();
        snapshot(&format!("render-{name}.json"), &Value::Object(adapters));
    }
}

#[test]
fn every_canary_fits_the_schema_it_claims_and_fails_the_other() {
    let (mut checked, mut tools_seen) = (0, 0);
    // Every seventh tool of the corpus (about 200 tools): the search is costly in debug builds,
    // and the property is the same for every tool.
    for (_, tools) in corpus() {
        for tool in tools.iter().step_by(7) {
            tools_seen += 1;
            for adapter in Adapter::ALL {
                let rendering = render(adapter, tool);
                let Some(rendered) = &rendering.input else { continue };
                let directions = compare(tool, &rendering).canary_directions();
                if directions.is_empty() {
                    continue;
                }
                let found = canary::find_in(tool.input(), rendered, 0, &directions);
                if found.canaries.is_empty() {
                    continue;
                }
                let (server, client) = (validator(tool.input()), validator(rendered));
                for c in &found.canaries {
                    let (fits, fails) = match c.direction {
                        Direction::RenderedAllowsServerRejects => (&client, &server),
                        Direction::ServerAllowsRenderedRejects => (&server, &client),
                    };
                    assert!(
                        fits.is_valid(&c.value),
                        "{} {adapter}: {:?} does not fit",
                        tool.name,
                        c
                    );
                    assert!(
                        !fits.is_valid(&c.value) || !fails.is_valid(&c.value),
                        "{} {adapter}: {c:?} passes both",
                        tool.name
                    );
                    assert!(!c.detail.is_empty());
                    checked += 1;
                }
            }
        }
    }
    assert!(tools_seen > 150, "only {tools_seen} tools were searched");
    assert!(checked > 150, "only {checked} canaries were checked");
}
