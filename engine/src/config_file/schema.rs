//! The JSON Schema of `mcp-fuzz.toml` (`docs/config.schema.json`), written from the key tables
//! and the built-in defaults, so that it cannot drift from what the reader accepts.

use super::keys::{DURATION_SCHEMA, KEYS, Key, OVERRIDE_KEYS, SERVER_KEYS};
use super::load::{DEFAULT_CONFIG, DEFAULT_PROFILE};
use serde_json::{Map, Value, json};

/// The schema, as a JSON value.
#[must_use]
pub fn json_schema() -> Value {
    let defaults: Value = toml::from_str::<toml::Table>(DEFAULT_CONFIG)
        .ok()
        .and_then(|t| serde_json::to_value(t).ok())
        .and_then(|v| v.pointer(&format!("/profile/{DEFAULT_PROFILE}")).cloned())
        .unwrap_or(Value::Null);
    let mut profile = table(KEYS, &defaults);
    profile["properties"]["overrides"] = json!({
        "description": "Per-tool settings, by glob on the tool name; for each setting the first override that matches and sets it wins, a profile's own before those of [profile.default].",
        "type": "array",
        "items": {"$ref": "#/$defs/override"}
    });
    let mut override_ = table(OVERRIDE_KEYS, &Value::Null);
    override_["required"] = json!(["tools"]);
    let mut server = table(SERVER_KEYS, &Value::Null);
    server["description"] = json!("The server: a command over stdio or a streamable HTTP URL.");
    server["oneOf"] = json!([{"required": ["command"]}, {"required": ["http"]}]);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://mcp-fuzz.invalid/config.schema.json",
        "title": "mcp-fuzz.toml",
        "description": "The configuration file of mcp-fuzz (TOML; this schema describes it as the JSON it maps to). Generated from engine/src/config_file/keys.rs and engine/default-config.toml: edit those, then regenerate it with `MCP_FUZZ_BLESS=1 cargo test --release --test integration config_schema`.",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "server": server,
            "profile": {
                "description": "Profiles by name: `default`, the base of every other, and `ci` are built in; `--profile NAME` picks one.",
                "type": "object",
                "additionalProperties": {"$ref": "#/$defs/profile"}
            },
            "hints": {
                "description": "Value hints. A key is a property name (at any depth), \"TOOLS./pointer\" (a tool glob, a dot, a JSON pointer; `*` for every item of an array) or \"format:NAME\".",
                "type": "object",
                "additionalProperties": {"$ref": "#/$defs/hint"}
            }
        },
        "$defs": {
            "profile": profile,
            "override": override_,
            "hint": {
                "description": "Known-good values (used in turn), one value, or a regex or glob that strings are drawn from.",
                "anyOf": [
                    {"type": "array", "minItems": 1},
                    {"type": ["string", "number", "boolean"]},
                    {"type": "object", "additionalProperties": false, "minProperties": 1, "maxProperties": 1,
                     "properties": {"regex": {"type": "string"}, "glob": {"type": "string"}}}
                ]
            },
            "duration": serde_json::from_str::<Value>(DURATION_SCHEMA).unwrap_or(Value::Null)
        }
    })
}

/// An object schema of `keys`, each with its doc and its default (from `defaults`).
fn table(keys: &[Key], defaults: &Value) -> Value {
    let properties: Map<String, Value> = keys
        .iter()
        .map(|k| {
            let mut schema: Value = serde_json::from_str(k.schema).unwrap_or(Value::Null);
            let doc: Vec<&str> = k.doc.lines().map(str::trim).collect();
            schema["description"] = json!(doc.join(" "));
            if let Some(d) = defaults.get(k.name) {
                schema["default"] = d.clone();
            }
            (k.name.to_owned(), schema)
        })
        .collect();
    json!({"type": "object", "additionalProperties": false, "properties": properties})
}
