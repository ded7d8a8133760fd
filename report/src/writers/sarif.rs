//! SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format) logs, for code-scanning
//! dashboards (GitHub code scanning, Azure DevOps, SonarQube, VS Code's SARIF viewer).
//!
//! A [`Log`] holds one run: the tool's [`Rule`]s (stable ids, short and full descriptions, help)
//! and its [`SarifResult`]s, each naming a rule by id. [`Log::to_json`] writes the log with `$schema`,
//! `version`, `ruleIndex` filled from the rule list, and `partialFingerprints` so dashboards keep
//! one alert per problem across runs. [`fingerprint`] gives a stable hash of identity parts
//! (FNV-1a, 64 bit: the same on every platform and version).
//!
//! The output validates against the official schema (`fixtures/sarif/sarif-schema-2.1.0.json`;
//! see the test in `tests/integration/formats.rs`).

use serde_json::{Map, Value, json};

/// The `$schema` URI written into every log.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A result's or rule's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A serious problem.
    Error,
    /// A problem that does not fail the run.
    Warning,
    /// Worth knowing.
    Note,
    /// Not a problem (e.g. a passed check).
    None,
}

impl Level {
    /// The SARIF spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Note => "note",
            Self::None => "none",
        }
    }
}

/// How a result relates to a baseline (SARIF `baselineState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineState {
    /// Not in the baseline.
    New,
    /// In the baseline and still present.
    Unchanged,
    /// In the baseline, no longer present.
    Absent,
}

impl BaselineState {
    fn as_str(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::Unchanged => "unchanged",
            Self::Absent => "absent",
        }
    }
}

/// A kind of problem the tool reports (`reportingDescriptor`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Stable opaque id, e.g. `MCPF0001`. Never reuse one for another meaning.
    pub id: String,
    /// Readable kebab-case or camelCase name, e.g. `handler-exception`.
    pub name: String,
    /// One sentence.
    pub short_description: String,
    /// A paragraph: what the rule checks and why.
    pub full_description: String,
    /// How to fix it (plain text).
    pub help: String,
    /// The level a result of this rule has unless it says otherwise.
    pub default_level: Level,
}

/// A logical place a result is about (a tool, a function, a module): SARIF `logicalLocation`.
#[derive(Debug, Clone, PartialEq)]
pub struct LogicalLocation {
    /// Short name, e.g. the tool name.
    pub name: String,
    /// Fully qualified name, e.g. `server/tool`.
    pub fully_qualified_name: String,
    /// SARIF kind: `function`, `module`, `namespace`, `member`, `resource`...
    pub kind: String,
}

/// One result.
#[derive(Debug, Clone, PartialEq)]
pub struct SarifResult {
    /// The rule's id; it must be in [`Log::rules`].
    pub rule_id: String,
    /// Overrides the rule's default level.
    pub level: Option<Level>,
    /// The message (plain text).
    pub message: String,
    /// What the result is about (a tool of a server; no file, MCP tools have none).
    pub locations: Vec<LogicalLocation>,
    /// Identity: name → stable value (see [`fingerprint`]); e.g. `{"mcpFuzzIdentity/v1": ...}`.
    pub partial_fingerprints: Vec<(String, String)>,
    /// Relation to a baseline, when one was used.
    pub baseline_state: Option<BaselineState>,
    /// Free-form extra data (`properties`).
    pub properties: Map<String, Value>,
}

/// A SARIF log with one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Log {
    /// The tool's name (`tool.driver.name`).
    pub tool_name: String,
    /// The tool's version.
    pub tool_version: String,
    /// Where to read about the tool (absolute URI), if anywhere.
    pub information_uri: Option<String>,
    /// Every rule the results use.
    pub rules: Vec<Rule>,
    /// The results, in report order.
    pub results: Vec<SarifResult>,
    /// Whether the run finished (`invocations[0].executionSuccessful`).
    pub execution_successful: bool,
    /// Free-form data about the run (`runs[0].properties`).
    pub properties: Map<String, Value>,
}

impl Log {
    /// The log as JSON.
    ///
    /// # Panics
    /// When a result names a rule id that is not in [`Log::rules`]: that is a bug in the caller.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let rules: Vec<Value> = self.rules.iter().map(rule_json).collect();
        let results: Vec<Value> = self
            .results
            .iter()
            .map(|f| {
                let index = self
                    .rules
                    .iter()
                    .position(|r| r.id == f.rule_id)
                    .expect("every SARIF result names a declared rule");
                result_json(f, index)
            })
            .collect();
        let mut driver = Map::new();
        driver.insert("name".into(), json!(self.tool_name));
        driver.insert("version".into(), json!(self.tool_version));
        driver.insert("semanticVersion".into(), json!(self.tool_version));
        if let Some(uri) = &self.information_uri {
            driver.insert("informationUri".into(), json!(uri));
        }
        driver.insert("rules".into(), Value::Array(rules));
        let mut run = Map::new();
        run.insert("tool".into(), json!({ "driver": driver }));
        run.insert(
            "invocations".into(),
            json!([{ "executionSuccessful": self.execution_successful }]),
        );
        run.insert("columnKind".into(), json!("unicodeCodePoints"));
        run.insert("results".into(), Value::Array(results));
        if !self.properties.is_empty() {
            run.insert("properties".into(), Value::Object(self.properties.clone()));
        }
        json!({ "$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run] })
    }
}

fn rule_json(r: &Rule) -> Value {
    json!({
        "id": r.id,
        "name": r.name,
        "shortDescription": { "text": r.short_description },
        "fullDescription": { "text": r.full_description },
        "help": { "text": r.help },
        "defaultConfiguration": { "level": r.default_level.as_str() },
    })
}

fn result_json(f: &SarifResult, rule_index: usize) -> Value {
    let mut r = Map::new();
    r.insert("ruleId".into(), json!(f.rule_id));
    r.insert("ruleIndex".into(), json!(rule_index));
    if let Some(level) = f.level {
        r.insert("level".into(), json!(level.as_str()));
    }
    r.insert("message".into(), json!({ "text": f.message }));
    if !f.locations.is_empty() {
        let locs: Vec<Value> = f
            .locations
            .iter()
            .map(|l| {
                json!({ "logicalLocations": [{
                    "name": l.name,
                    "fullyQualifiedName": l.fully_qualified_name,
                    "kind": l.kind,
                }] })
            })
            .collect();
        r.insert("locations".into(), Value::Array(locs));
    }
    if !f.partial_fingerprints.is_empty() {
        let fp: Map<String, Value> =
            f.partial_fingerprints.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        r.insert("partialFingerprints".into(), Value::Object(fp));
    }
    if let Some(b) = f.baseline_state {
        r.insert("baselineState".into(), json!(b.as_str()));
    }
    if !f.properties.is_empty() {
        r.insert("properties".into(), Value::Object(f.properties.clone()));
    }
    Value::Object(r)
}

/// A stable fingerprint of identity parts: FNV-1a 64 over the parts joined by U+001F, as 16
/// lowercase hex digits. The same parts give the same value on every platform and version.
#[must_use]
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h = mcp_fuzz_generators::hash::Fnv1a::default();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            h = h.write(&[0x1f]);
        }
        h = h.write(part.as_bytes());
    }
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str) -> Rule {
        Rule {
            id: id.into(),
            name: "crash".into(),
            short_description: "s".into(),
            full_description: "f".into(),
            help: "h".into(),
            default_level: Level::Error,
        }
    }

    #[test]
    fn fingerprints_are_stable_and_separate_parts() {
        // FNV-1a 64 of the empty input is the offset basis.
        assert_eq!(fingerprint(&[]), "cbf29ce484222325");
        assert_eq!(fingerprint(&["a"]), "af63dc4c8601ec8c");
        assert_eq!(fingerprint(&["ab", "c"]), fingerprint(&["ab", "c"]));
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }

    #[test]
    fn results_point_at_their_rule() {
        let log = Log {
            tool_name: "t".into(),
            tool_version: "1.0.0".into(),
            information_uri: None,
            rules: vec![rule("R1"), rule("R2")],
            results: vec![SarifResult {
                rule_id: "R2".into(),
                level: Some(Level::Warning),
                message: "m".into(),
                locations: vec![LogicalLocation {
                    name: "echo".into(),
                    fully_qualified_name: "srv/echo".into(),
                    kind: "function".into(),
                }],
                partial_fingerprints: vec![("id/v1".into(), fingerprint(&["x"]))],
                baseline_state: Some(BaselineState::Unchanged),
                properties: Map::new(),
            }],
            execution_successful: true,
            properties: Map::new(),
        };
        let v = log.to_json();
        assert_eq!(v["version"], "2.1.0");
        let r = &v["runs"][0]["results"][0];
        assert_eq!(r["ruleId"], "R2");
        assert_eq!(r["ruleIndex"], 1);
        assert_eq!(r["level"], "warning");
        assert_eq!(r["baselineState"], "unchanged");
        assert_eq!(r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], "srv/echo");
        assert_eq!(
            v["runs"][0]["tool"]["driver"]["rules"][1]["defaultConfiguration"]["level"],
            "error"
        );
        assert_valid(&v);
    }

    /// Checks a log against the official OASIS schema committed in `fixtures/sarif/`.
    fn assert_valid(log: &Value) {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&official_schema())
            .expect("the SARIF schema compiles");
        let errors: Vec<String> =
            validator.iter_errors(log).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "invalid SARIF: {errors:#?}\n{log:#}");
    }

    fn official_schema() -> Value {
        serde_json::from_str(include_str!("../../../fixtures/sarif/sarif-schema-2.1.0.json"))
            .expect("the SARIF schema is JSON")
    }

    #[test]
    fn the_schema_rejects_what_it_should() {
        // The validator is not vacuous: a result without a message breaks the schema.
        let validator = jsonschema::validator_for(&official_schema()).expect("compiles");
        let bad = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}},
            "results": [{"ruleId": "R1"}]}]});
        assert!(!validator.is_valid(&bad));
        let bad_level = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}},
            "results": [{"ruleId": "R1", "level": "fatal", "message": {"text": "m"}}]}]});
        assert!(!validator.is_valid(&bad_level));
    }

    #[test]
    fn empty_logs_are_valid() {
        let log = Log {
            tool_name: "t".into(),
            tool_version: "0.1.0".into(),
            information_uri: Some("https://example.invalid/t".into()),
            rules: vec![],
            results: vec![],
            execution_successful: false,
            properties: Map::new(),
        };
        assert_valid(&log.to_json());
    }
}
