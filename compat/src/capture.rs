//! Reading a saved `tools/list` answer, in every shape people keep them in.
//!
//! Accepted documents:
//!
//! - `{"tools": [...]}`, also with extra keys (the corpus files carry `package`, `version`,
//!   `serverInfo`, ... next to `tools`; a page's `nextCursor` is ignored);
//! - a JSON-RPC response `{"jsonrpc": "2.0", "id": 1, "result": {"tools": [...]}}`;
//! - a bare array of tools, or an array of pages (each of the two shapes above), concatenated;
//! - a single tool object `{"name": ..., "inputSchema": ...}`;
//! - several JSON values in a row (a JSON Lines transcript of a session): the tools of every
//!   `tools/list` answer in it, in order; other messages (`initialize`, notifications) are skipped.
//!
//! See: <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#listing-tools>.

use serde_json::{Map, Value};
use std::fmt;

/// One tool of a capture: its name and its schemas, as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// The tool's `name`.
    pub name: String,
    /// The tool's `inputSchema`; the spec requires it, but a capture may lack it.
    pub input_schema: Option<Value>,
    /// The tool's `outputSchema`, when it declares one (`null` counts as absent).
    pub output_schema: Option<Value>,
    /// The whole tool object as listed (name, title, description, annotations, schemas...).
    pub raw: Value,
}

impl Tool {
    /// A tool with an input schema and nothing else (for schemas read on their own).
    #[must_use]
    pub fn new(name: &str, input_schema: Value) -> Self {
        let raw = serde_json::json!({"name": name, "inputSchema": input_schema});
        Self { name: name.to_owned(), input_schema: Some(input_schema), output_schema: None, raw }
    }

    /// The input schema; `null` when the capture lacks one (which is itself a finding).
    #[must_use]
    pub fn input(&self) -> &Value {
        self.input_schema.as_ref().unwrap_or(&Value::Null)
    }

    /// `annotations.readOnlyHint`, when it is a boolean.
    #[must_use]
    pub fn read_only_hint(&self) -> Option<bool> {
        self.raw.get("annotations")?.get("readOnlyHint")?.as_bool()
    }

    /// Parses one item of a live `tools/list` strictly, as a server must list a tool it wants
    /// called: a name, an object `inputSchema`, an object (or absent) `outputSchema`, boolean
    /// annotation hints.
    ///
    /// # Errors
    /// A reason naming the bad field, for a `malformed-tool` finding.
    pub fn parse_listed(item: &Value) -> Result<Self, String> {
        let obj = item.as_object().ok_or("the tool is not a JSON object")?;
        let name =
            obj.get("name").and_then(Value::as_str).ok_or("`name` is missing or not a string")?;
        let input_schema = match obj.get("inputSchema") {
            Some(v @ Value::Object(_)) => v.clone(),
            Some(other) => {
                return Err(format!("`inputSchema` must be an object, got {}", excerpt(other)));
            }
            None => return Err("`inputSchema` is missing".into()),
        };
        let output_schema = match obj.get("outputSchema") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(other) => {
                return Err(format!("`outputSchema` must be an object, got {}", excerpt(other)));
            }
        };
        match obj.get("annotations") {
            None | Some(Value::Null) => {}
            Some(Value::Object(a)) => {
                let hints = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
                for (key, hint) in a.iter().filter(|(k, _)| hints.contains(&k.as_str())) {
                    if !hint.is_boolean() && !hint.is_null() {
                        return Err(format!(
                            "`annotations.{key}` must be a boolean, got {}",
                            excerpt(hint)
                        ));
                    }
                }
            }
            Some(other) => {
                return Err(format!("`annotations` must be an object, got {}", excerpt(other)));
            }
        }
        Ok(Self {
            name: name.to_owned(),
            input_schema: Some(input_schema),
            output_schema,
            raw: item.clone(),
        })
    }
}

/// A short printable excerpt of a JSON value (at most 300 bytes, cut at a character boundary).
#[must_use]
pub fn excerpt(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s
    }
}

/// A parsed capture: its tools and, when the document says, the server it came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Capture {
    /// The tools, in listed order.
    pub tools: Vec<Tool>,
    /// `serverInfo.name` (or a snapshot's `server.name`).
    pub server_name: Option<String>,
    /// `serverInfo.version` (or a snapshot's `server.version`).
    pub server_version: Option<String>,
    /// The protocol version, when recorded.
    pub protocol_version: Option<String>,
}

/// Why a capture could not be read: what was wrong, and where.
#[derive(Debug, thiserror::Error)]
pub enum ToolsListError {
    /// The text is not JSON (or not a sequence of JSON values).
    #[error("not valid JSON: {0}")]
    Json(serde_json::Error),
    /// The text holds no JSON value at all.
    #[error("the input is empty")]
    Empty,
    /// The JSON is well-formed but not a shape this module knows.
    #[error("{0}")]
    Shape(String),
}

/// Parses a capture; see the module docs for the accepted shapes.
///
/// An empty list of tools is not an error here: the caller decides what "no tools" means.
///
/// # Errors
/// [`ToolsListError`] saying what is wrong and where (`result.tools[3]`, ...).
pub fn parse(text: &str) -> Result<Vec<Tool>, ToolsListError> {
    parse_capture(text).map(|capture| capture.tools)
}

/// Parses a capture with its server details: a snapshot's `server`, a corpus file's top-level
/// `serverInfo` (and `protocolVersion`), or the `initialize` answer of a transcript.
///
/// # Errors
/// As [`parse`].
pub fn parse_capture(text: &str) -> Result<Capture, ToolsListError> {
    let documents = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect::<Result<Vec<_>, _>>()
        .map_err(ToolsListError::Json)?;
    let tools = tools_of(&documents)?;
    let mut capture = Capture { tools, ..Capture::default() };
    for document in &documents {
        let Some(object) = document.as_object() else { continue };
        let holder = object.get("result").and_then(Value::as_object).unwrap_or(object);
        let info = holder.get("server").or_else(|| holder.get("serverInfo"));
        let text_of = |value: Option<&Value>, key: &str| {
            value.and_then(|v| v.get(key)).and_then(Value::as_str).map(str::to_owned)
        };
        capture.server_name = capture.server_name.or_else(|| text_of(info, "name"));
        capture.server_version = capture.server_version.or_else(|| text_of(info, "version"));
        capture.protocol_version = capture
            .protocol_version
            .or_else(|| text_of(info, "protocolVersion"))
            .or_else(|| holder.get("protocolVersion").and_then(Value::as_str).map(str::to_owned));
    }
    Ok(capture)
}

fn tools_of(documents: &[Value]) -> Result<Vec<Tool>, ToolsListError> {
    let _ = ();
    match documents {
        [] => Err(ToolsListError::Empty),
        [document] => from_document(document),
        documents => from_transcript(documents),
    }
}

/// One JSON document: strict, every shape is recognised or rejected with a reason.
fn from_document(document: &Value) -> Result<Vec<Tool>, ToolsListError> {
    match document {
        Value::Array(items) => {
            let mut tools = Vec::new();
            for (index, item) in items.iter().enumerate() {
                let path = format!("[{index}]");
                if is_page(item) {
                    tools.extend(from_page(item, &path)?);
                } else {
                    tools.push(tool(item, &path)?);
                }
            }
            Ok(tools)
        }
        Value::Object(object) if object.contains_key("name") && !is_page(document) => {
            Ok(vec![tool(document, "the tool")?])
        }
        Value::Object(_) => from_page(document, ""),
        other => Err(shape(format!("expected a JSON object or array, found {}", kind_of(other)))),
    }
}

/// Several JSON values: the `tools/list` answers among them, other messages skipped.
fn from_transcript(documents: &[Value]) -> Result<Vec<Tool>, ToolsListError> {
    let mut tools = Vec::new();
    let mut answers = 0_usize;
    for (index, document) in documents.iter().enumerate() {
        let Some(object) = document.as_object() else { continue };
        let listed = object.contains_key("tools")
            || object
                .get("result")
                .and_then(Value::as_object)
                .is_some_and(|r| r.contains_key("tools"));
        if listed {
            answers += 1;
            tools.extend(from_page(document, &format!("value {}: ", index + 1))?);
        }
    }
    if answers == 0 {
        return Err(shape(format!(
            "none of the {} JSON values is a tools/list answer (an object with `tools` or \
             `result.tools`)",
            documents.len()
        )));
    }
    Ok(tools)
}

/// Whether `value` looks like a page (`{"tools": ...}` or a JSON-RPC message) rather than a tool.
fn is_page(value: &Value) -> bool {
    value.as_object().is_some_and(|object| {
        ["tools", "result", "jsonrpc", "error", "method"]
            .iter()
            .any(|key| object.contains_key(*key))
    })
}

/// A page: `{"tools": [...], ...}` or a JSON-RPC response whose `result` is one.
fn from_page(page: &Value, path: &str) -> Result<Vec<Tool>, ToolsListError> {
    let object = page.as_object().expect("callers pass objects");
    if let Some(tools) = object.get("tools") {
        return tool_array(tools, &format!("{path}tools"));
    }
    if let Some(result) = object.get("result") {
        let Some(result_object) = result.as_object() else {
            return Err(shape(format!(
                "`{path}result` is {}, not an object with `tools`",
                kind_of(result)
            )));
        };
        let Some(tools) = result_object.get("tools") else {
            return Err(shape(format!(
                "the JSON-RPC result `{path}result` has no `tools` (it has {}): is this the \
                 answer to a `tools/list` request?",
                keys_of(result_object)
            )));
        };
        return tool_array(tools, &format!("{path}result.tools"));
    }
    if let Some(error) = object.get("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("no message");
        return Err(shape(format!(
            "`{}` is a JSON-RPC error response ({message}), not a tools/list answer",
            if path.is_empty() { "the document" } else { path.trim_end_matches(": ") }
        )));
    }
    if let Some(method) = object.get("method").and_then(Value::as_str) {
        return Err(shape(format!(
            "found a JSON-RPC request or notification (`method`: `{method}`), not the answer to \
             `tools/list`"
        )));
    }
    Err(shape(format!(
        "found an object with {}; expected `tools`, `result.tools`, or a tool's `name` and \
         `inputSchema`",
        keys_of(object)
    )))
}

fn tool_array(tools: &Value, path: &str) -> Result<Vec<Tool>, ToolsListError> {
    let Some(items) = tools.as_array() else {
        return Err(shape(format!("`{path}` is {}, not an array of tools", kind_of(tools))));
    };
    items.iter().enumerate().map(|(index, item)| tool(item, &format!("{path}[{index}]"))).collect()
}

fn tool(value: &Value, path: &str) -> Result<Tool, ToolsListError> {
    let Some(object) = value.as_object() else {
        return Err(shape(format!("`{path}` is {}, not a tool object", kind_of(value))));
    };
    let name = match object.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(other) => {
            return Err(shape(format!("`{path}.name` is {}, not a string", kind_of(other))));
        }
        None => {
            return Err(shape(format!(
                "`{path}` has no `name` (it has {}), so it is not a tool",
                keys_of(object)
            )));
        }
    };
    Ok(Tool {
        name,
        input_schema: schema(object, "inputSchema"),
        output_schema: schema(object, "outputSchema"),
        raw: value.clone(),
    })
}

fn schema(object: &Map<String, Value>, key: &str) -> Option<Value> {
    object.get(key).filter(|schema| !schema.is_null()).cloned()
}

fn shape(message: String) -> ToolsListError {
    ToolsListError::Shape(message)
}

/// "an array", "a string", ... for messages.
#[must_use]
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// "keys `a`, `b`" (at most eight, then a count), or "no keys".
fn keys_of(object: &Map<String, Value>) -> impl fmt::Display + '_ {
    struct Keys<'a>(&'a Map<String, Value>);
    impl fmt::Display for Keys<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            const SHOWN: usize = 8;
            if self.0.is_empty() {
                return f.write_str("no keys");
            }
            f.write_str(if self.0.len() == 1 { "key " } else { "keys " })?;
            for (index, key) in self.0.keys().take(SHOWN).enumerate() {
                if index > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "`{key}`")?;
            }
            if self.0.len() > SHOWN {
                write!(f, " and {} more", self.0.len() - SHOWN)?;
            }
            Ok(())
        }
    }
    Keys(object)
}

/// Whether a document given as a JSON Schema is really a tools/list capture or a tool (a common
/// mix-up): `Some("a tools/list capture")`, `Some("a tool")`.
///
/// Only documents with none of the usual schema keywords are flagged, so a schema that happens to
/// have a `tools` property is still read as a schema.
#[must_use]
pub fn capture_like(document: &Value) -> Option<&'static str> {
    let object = document.as_object()?;
    let schema_keys = ["$schema", "type", "properties", "$ref", "anyOf", "oneOf", "allOf", "enum"];
    if schema_keys.iter().any(|key| object.contains_key(*key)) {
        return None;
    }
    if object.contains_key("jsonrpc") || object.get("tools").is_some_and(Value::is_array) {
        Some("a tools/list capture")
    } else if object.contains_key("inputSchema") && object.contains_key("name") {
        Some("a tool")
    } else {
        None
    }
}

/// How many tool names [`names`] lists before summarising the rest.
///
/// Why: some servers list hundreds of tools (`@azure/mcp` has 235); the full list would bury a
/// message.
const LISTED_NAMES: usize = 50;

/// "a, b, c" for an error message: at most [`LISTED_NAMES`] names, then a count.
#[must_use]
pub fn names(tools: &[Tool]) -> String {
    let listed: Vec<&str> = tools.iter().take(LISTED_NAMES).map(|t| t.name.as_str()).collect();
    let mut s = listed.join(", ");
    if tools.len() > LISTED_NAMES {
        s.push_str(&format!(" and {} more", tools.len() - LISTED_NAMES));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_passed_as_schemas_are_caught() {
        use serde_json::json;
        assert_eq!(capture_like(&json!({"tools": []})), Some("a tools/list capture"));
        assert_eq!(
            capture_like(&json!({"jsonrpc": "2.0", "result": {}})),
            Some("a tools/list capture")
        );
        assert_eq!(capture_like(&json!({"name": "x", "inputSchema": {}})), Some("a tool"));
        assert_eq!(capture_like(&json!({"type": "object", "tools": []})), None);
        assert_eq!(capture_like(&json!(true)), None);
    }

    #[test]
    fn names_are_listed_up_to_a_limit() {
        let tools: Vec<Tool> =
            (0..60).map(|i| Tool::new(&format!("t{i}"), serde_json::json!({}))).collect();
        let listed = |t: &[Tool]| super::names(t);
        assert!(listed(&tools).ends_with("t48, t49 and 10 more"), "{}", listed(&tools));
        assert_eq!(listed(&tools[..2]), "t0, t1");
        assert_eq!(listed(&tools[..50]).matches(", ").count(), 49);
        assert_eq!(listed(&[]), "");
    }
    use serde_json::json;

    fn names(tools: &[Tool]) -> Vec<&str> {
        tools.iter().map(|tool| tool.name.as_str()).collect()
    }

    fn tool_json(name: &str) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "title": name}})
    }

    fn error(text: &str) -> String {
        parse(text).expect_err("should be rejected").to_string()
    }

    #[test]
    fn tools_object() {
        let text = json!({"tools": [tool_json("a"), tool_json("b")]}).to_string();
        let tools = parse(&text).expect("parses");
        assert_eq!(names(&tools), ["a", "b"]);
        assert_eq!(tools[0].input_schema, Some(json!({"type": "object", "title": "a"})));
        assert_eq!(tools[0].output_schema, None);
    }

    #[test]
    fn tools_object_with_extra_keys_like_the_corpus() {
        let text = json!({
            "package": "demo", "version": "1.0.0", "ecosystem": "npm",
            "serverInfo": {"name": "demo"}, "tools": [tool_json("a")], "nextCursor": null
        })
        .to_string();
        assert_eq!(names(&parse(&text).expect("parses")), ["a"]);
    }

    #[test]
    fn jsonrpc_envelope() {
        let text =
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool_json("a")]}}).to_string();
        assert_eq!(names(&parse(&text).expect("parses")), ["a"]);
    }

    #[test]
    fn bare_array_and_array_of_pages() {
        let text = json!([tool_json("a"), tool_json("b")]).to_string();
        assert_eq!(names(&parse(&text).expect("parses")), ["a", "b"]);
        let text = json!([
            {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool_json("a")], "nextCursor": "2"}},
            {"tools": [tool_json("b")]}
        ])
        .to_string();
        assert_eq!(names(&parse(&text).expect("parses")), ["a", "b"]);
    }

    #[test]
    fn single_tool() {
        let text = json!({"name": "a", "inputSchema": {}, "outputSchema": {"type": "object"}});
        let tools = parse(&text.to_string()).expect("parses");
        assert_eq!(names(&tools), ["a"]);
        assert_eq!(tools[0].output_schema, Some(json!({"type": "object"})));
    }

    #[test]
    fn transcript_skips_other_messages() {
        let text = [
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool_json("a")]}}),
        ]
        .map(|message| message.to_string())
        .join("\n");
        assert_eq!(names(&parse(&text).expect("parses")), ["a"]);
    }

    #[test]
    fn null_and_missing_schemas_are_absent() {
        let text = json!({"tools": [{"name": "a", "outputSchema": null}]}).to_string();
        let tools = parse(&text).expect("parses");
        assert_eq!(tools[0].input_schema, None);
        assert_eq!(tools[0].output_schema, None);
    }

    #[test]
    fn empty_list_is_not_an_error() {
        assert!(parse(r#"{"tools": []}"#).expect("parses").is_empty());
        assert!(parse("[]").expect("parses").is_empty());
    }

    #[test]
    fn malformed_inputs_say_what_is_wrong() {
        assert!(error("").contains("empty"));
        assert!(error("{\"tools\": [").contains("not valid JSON"));
        assert!(error("42").contains("found a number"));
        assert!(error(r#"{"tools": {}}"#).contains("`tools` is an object, not an array"));
        assert!(error(r#"{"tools": [{"title": "x"}]}"#).contains("`tools[0]` has no `name`"));
        assert!(error(r#"{"tools": [{"name": 3}]}"#).contains("`tools[0].name` is a number"));
        assert!(error(r#"{"result": {"content": []}}"#).contains("has no `tools`"));
        assert!(
            error(r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}}"#)
                .contains("JSON-RPC error response (nope)")
        );
        assert!(error(r#"{"jsonrpc": "2.0", "method": "tools/list"}"#).contains("`tools/list`"));
        assert!(error(r#"{"type": "object"}"#).contains("key `type`"));
        assert!(error("{\"a\": 1}\n{\"b\": 2}").contains("none of the 2 JSON values"));
    }

    #[test]
    fn every_corpus_capture_parses() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/tools-list");
        let mut files = 0;
        for ecosystem in ["npm", "pypi"] {
            for entry in std::fs::read_dir(format!("{root}/{ecosystem}")).expect("corpus dir") {
                let path = entry.expect("dir entry").path();
                let text = std::fs::read_to_string(&path).expect("readable");
                let tools = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!tools.is_empty(), "{}", path.display());
                assert!(tools.iter().all(|tool| tool.input_schema.is_some()), "{}", path.display());
                files += 1;
            }
        }
        assert_eq!(files, 40);
    }
}
