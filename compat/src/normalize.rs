//! Normalized snapshots: one deterministic text per tool surface, so that it can live in git and
//! diff cleanly.
//!
//! A snapshot is `{"server": {...}, "snapshotVersion": 1, "tools": [...]}` where every object's
//! keys are sorted, tools are sorted by name (a stable sort: duplicates keep their listed order),
//! the text is indented by two spaces and ends with one newline. Normalizing a snapshot again
//! gives the same bytes.

use crate::capture::{Capture, Tool};
use serde_json::{Map, Value, json};

/// The version of the snapshot format, written as `snapshotVersion`.
pub const SNAPSHOT_VERSION: u64 = 1;

/// Where a snapshot came from, and what was left out of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotMeta {
    /// `serverInfo.name`.
    pub server_name: Option<String>,
    /// `serverInfo.version`.
    pub server_version: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// Listed items that are not usable tools, one line each (`item 3 (name): reason`).
    pub skipped: Vec<String>,
    /// Why listing stopped early, when it did.
    pub truncated: Option<String>,
}

/// Returns `value` with every object's keys sorted, at every depth.
#[must_use]
pub fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            let mut sorted = Map::with_capacity(object.len());
            for key in keys {
                sorted.insert(key.clone(), sort_keys(&object[key]));
            }
            Value::Object(sorted)
        }
        Value::Array(items) => Value::Array(items.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

/// Builds the normalized snapshot document of `tools`.
#[must_use]
pub fn snapshot(tools: &[Value], meta: &SnapshotMeta) -> Value {
    let mut tools: Vec<Value> = tools.iter().map(sort_keys).collect();
    tools.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    let mut server = Map::new();
    for (key, value) in [
        ("name", &meta.server_name),
        ("protocolVersion", &meta.protocol_version),
        ("version", &meta.server_version),
    ] {
        if let Some(value) = value {
            server.insert(key.to_owned(), Value::String(value.clone()));
        }
    }
    let mut document = json!({
        "server": server,
        "snapshotVersion": SNAPSHOT_VERSION,
        "tools": tools,
    });
    if !meta.skipped.is_empty() {
        document["skipped"] = json!(meta.skipped);
    }
    if let Some(truncated) = &meta.truncated {
        document["truncated"] = json!(truncated);
    }
    sort_keys(&document)
}

/// The snapshot of a parsed capture (`mcp-fuzz snapshot --normalize`).
#[must_use]
pub fn snapshot_of_capture(capture: &Capture) -> Value {
    let tools: Vec<Value> = capture.tools.iter().map(|tool: &Tool| tool.raw.clone()).collect();
    let meta = SnapshotMeta {
        server_name: capture.server_name.clone(),
        server_version: capture.server_version.clone(),
        protocol_version: capture.protocol_version.clone(),
        skipped: Vec::new(),
        truncated: None,
    };
    snapshot(&tools, &meta)
}

/// The deterministic bytes of a snapshot document: two-space indentation, one final newline.
#[must_use]
pub fn to_bytes(document: &Value) -> Vec<u8> {
    let mut bytes =
        serde_json::to_vec_pretty(&sort_keys(document)).expect("a JSON value always serializes");
    bytes.push(b'\n');
    bytes
}

fn name_of(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::parse_capture;

    #[test]
    fn keys_and_tools_are_sorted_and_normalizing_twice_is_stable() {
        let text = json!({
            "serverInfo": {"name": "demo", "version": "1.2.0"},
            "tools": [
                {"name": "zeta", "inputSchema": {"type": "object", "properties": {"b": {}, "a": {}}}},
                {"name": "alpha", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}
            ]
        })
        .to_string();
        let first = to_bytes(&snapshot_of_capture(&parse_capture(&text).expect("parses")));
        let text = String::from_utf8(first.clone()).expect("utf-8");
        assert!(text.find("\"alpha\"").expect("alpha") < text.find("\"zeta\"").expect("zeta"));
        assert!(text.find("\"a\"").expect("a") < text.find("\"b\"").expect("b"));
        assert!(text.contains("\"version\": \"1.2.0\""), "{text}");
        assert!(text.ends_with("}\n"));
        let second = to_bytes(&snapshot_of_capture(&parse_capture(&text).expect("reparses")));
        assert_eq!(first, second);
    }

    #[test]
    fn every_capture_shape_gives_the_same_snapshot() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        let shapes = [
            json!({"tools": [tool]}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
            json!([tool]),
        ];
        let snapshots: Vec<Vec<u8>> = shapes
            .iter()
            .map(|shape| {
                to_bytes(&snapshot_of_capture(&parse_capture(&shape.to_string()).expect("parses")))
            })
            .collect();
        assert!(snapshots.windows(2).all(|pair| pair[0] == pair[1]));
    }
}
