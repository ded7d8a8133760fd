//! Diffing two 1,000-tool surfaces built from the corpus (`fixtures/tools-list/`), the new one
//! with changes in one tool of ten, with the default budget.
//!
//! `cargo bench -p mcp-fuzz-compat --bench diff`

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_fuzz_compat::capture::{Capture, parse_capture};
use mcp_fuzz_compat::diff::{Options, diff};
use serde_json::{Value, json};
use std::hint::black_box;

fn corpus_tools() -> Vec<Value> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/tools-list");
    let mut files: Vec<_> = ["npm", "pypi"]
        .iter()
        .flat_map(|e| {
            std::fs::read_dir(format!("{root}/{e}"))
                .expect("corpus")
                .map(|f| f.expect("entry").path())
        })
        .collect();
    files.sort();
    let mut tools = Vec::new();
    for path in files {
        let capture =
            parse_capture(&std::fs::read_to_string(&path).expect("read")).expect("parses");
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("x").to_owned();
        for tool in capture.tools {
            let mut raw = tool.raw;
            raw["name"] = json!(format!("{stem}/{}", tool.name));
            tools.push(raw);
        }
    }
    tools.truncate(1000);
    tools
}

/// One tool in ten changed: a property made required, an enum narrowed, a bound added, the
/// description edited, or the tool renamed.
fn changed(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let mut tool = tool.clone();
            if index % 10 != 0 {
                return tool;
            }
            let schema = &mut tool["inputSchema"];
            let first = schema
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|p| p.keys().next().cloned());
            match (index / 10) % 5 {
                0 => {
                    if let Some(name) = first {
                        schema["required"] = json!([name]);
                    }
                }
                1 => {
                    if let Some(name) = first {
                        schema["properties"][&name] = json!({"enum": ["only"]});
                    }
                }
                2 => {
                    if let Some(name) = first {
                        schema["properties"][&name] = json!({"type": "integer", "minimum": 3});
                    }
                }
                3 => tool["description"] = json!("changed"),
                _ => tool["name"] = json!(format!("{}-v2", tool["name"].as_str().unwrap_or(""))),
            }
            tool
        })
        .collect()
}

fn capture(tools: &[Value]) -> Capture {
    parse_capture(&json!({"tools": tools}).to_string()).expect("parses")
}

fn bench(c: &mut Criterion) {
    let tools = corpus_tools();
    assert_eq!(tools.len(), 1000);
    let (old, new) = (capture(&tools), capture(&changed(&tools)));
    let options = Options::default();
    let result = diff(&old, &new, &options);
    assert!(!result.budget_exhausted);
    let mut group = c.benchmark_group("diff");
    group.sample_size(10);
    group.bench_function("1000-tools/identical", |b| {
        b.iter(|| diff(black_box(&old), black_box(&old), &options))
    });
    group.bench_function("1000-tools/10%-changed", |b| {
        b.iter(|| diff(black_box(&old), black_box(&new), &options))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
