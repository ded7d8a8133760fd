//! `mcp-fuzz snapshot` and `mcp-fuzz diff`: exit codes, formats, the JSON against
//! `docs/diff.schema.json`, and snapshots of a live fixture server.

use crate::run::server;
use crate::util::{TempFile, code, fixture, mcp_fuzz};
use serde_json::{Value, json};

const FINDINGS: i32 = 1;

fn real(name: &str) -> String {
    fixture(&format!("diff/real/{name}")).display().to_string()
}

fn check_schema(report: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/diff.schema.json")).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("diff schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(report).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the report breaks docs/diff.schema.json: {errors:#?}");
}

fn diff_json(old: &str, new: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["diff", old, new, "--format", "json"];
    args.extend(extra);
    let run = mcp_fuzz(&args);
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}); stderr:\n{}", run.stderr));
    check_schema(&report);
    (run.code, report)
}

fn pair(old: &Value, new: &Value) -> (TempFile, TempFile) {
    (
        TempFile::new("old.json", &json!({"tools": [old]}).to_string()),
        TempFile::new("new.json", &json!({"tools": [new]}).to_string()),
    )
}

#[test]
fn compatible_pair_exits_0_and_breaking_pair_exits_1() {
    let (status, report) = diff_json(
        &real("server-memory@2025.4.25.json"),
        &real("server-memory@2026.8.31.json"),
        &[],
    );
    assert_eq!(status, code::SUCCESS);
    assert_eq!(report["passed"], true);
    assert_eq!(report["summary"]["breaking"], 0);
    assert_eq!(report["old"]["server"]["version"], "0.6.3");
    let (status, report) = diff_json(
        &real("server-filesystem@2025.8.21.json"),
        &real("server-filesystem@2026.8.31.json"),
        &[],
    );
    assert_eq!(status, FINDINGS);
    assert_eq!(report["summary"]["breaking"], 13);
    let entry = report["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["tool"] == "read_file" && e["direction"] == "input")
        .expect("read_file input");
    assert_eq!((&entry["witness"], &entry["keyword"]), (&json!({}), &json!("required")));
}

#[test]
fn fail_on_review_and_open_content_policy() {
    let memory = (real("server-memory@2025.4.25.json"), real("server-memory@2026.8.31.json"));
    let run = mcp_fuzz(["diff", &memory.0, &memory.1, "--fail-on", "review"]);
    run.assert_code(FINDINGS);
    assert!(run.stdout.contains("policy --fail-on review: FAILED"), "{}", run.stdout);

    let old = json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
    let mut new = old.clone();
    new["inputSchema"]["additionalProperties"] = json!(false);
    let (o, n) = pair(&old, &new);
    let (o, n) = (o.path().display().to_string(), n.path().display().to_string());
    let (status, report) = diff_json(&o, &n, &[]);
    assert_eq!(status, code::SUCCESS, "open content counts as review by default");
    let input = &report["entries"][0];
    assert_eq!(
        (&input["verdict"], &input["counted"], &input["openContent"]),
        (&json!("breaking"), &json!("review"), &json!(true))
    );
    let (status, report) = diff_json(&o, &n, &["--open-content", "strict"]);
    assert_eq!(status, FINDINGS);
    assert_eq!(report["entries"][0]["counted"], "breaking");
}

#[test]
fn every_format_renders() {
    let (old, new) =
        (real("server-everything@2025.11.25.json"), real("server-everything@2026.8.31.json"));
    let human = mcp_fuzz(["diff", &old, &new]);
    human.assert_code(FINDINGS);
    assert!(
        human.stdout.contains("BREAKING") && human.stdout.contains("tool-removed"),
        "{}",
        human.stdout
    );
    let md = mcp_fuzz(["diff", &old, &new, "--format", "markdown"]);
    assert!(
        md.stdout.contains("| Tool | Direction | Verdict | Changes | Evidence |"),
        "{}",
        md.stdout
    );
    let junit = mcp_fuzz(["diff", &old, &new, "--format", "junit"]);
    assert!(junit.stdout.starts_with("<?xml"));
    assert_eq!(
        junit.stdout.matches("<testcase ").count(),
        junit.stdout.matches("</testcase>").count()
    );
    assert_eq!(junit.stdout.matches("<failure ").count(), 10, "{}", junit.stdout);
    let sarif = mcp_fuzz(["diff", &old, &new, "--format", "sarif"]);
    let doc: Value = serde_json::from_str(&sarif.stdout).expect("SARIF is JSON");
    assert_eq!(doc["version"], "2.1.0");
    let results = doc["runs"][0]["results"].as_array().expect("results");
    assert!(results.iter().any(|r| r["ruleId"] == "tool-removed" && r["level"] == "error"));
    let rules = doc["runs"][0]["tool"]["driver"]["rules"].as_array().expect("rules");
    assert!(rules.iter().any(|r| r["id"] == "tool-removed"));
    let official: Value =
        serde_json::from_str(include_str!("../../fixtures/sarif/sarif-schema-2.1.0.json"))
            .expect("SARIF schema is JSON");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&official)
        .expect("SARIF schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the SARIF log breaks the official schema: {errors:#?}");
}

#[test]
fn output_file_holds_what_stdout_shows() {
    let (old, new) = (real("server-memory@2025.4.25.json"), real("server-memory@2026.8.31.json"));
    let out = TempFile::new("diff.md", "");
    let path = out.path().to_str().expect("utf-8");
    let run = mcp_fuzz(["diff", &old, &new, "--format", "markdown", "--output", path]);
    run.assert_code(code::SUCCESS);
    assert_eq!(std::fs::read_to_string(out.path()).expect("written"), run.stdout);
    let run = mcp_fuzz(["diff", &old, &new, "--output", "/nonexistent-dir/diff.json"]);
    run.assert_code(code::USAGE);
    assert!(run.stderr.contains("/nonexistent-dir"), "{}", run.stderr);
}

#[test]
fn bad_input_exits_2_with_a_reason() {
    let good = real("server-memory@2026.8.31.json");
    let run = mcp_fuzz(["diff", "/nonexistent/old.json", &good]);
    run.assert_code(code::USAGE);
    assert!(run.stderr.contains("failed to read"), "{}", run.stderr);
    let broken = TempFile::new("broken.json", "{\"tools\": [");
    let run = mcp_fuzz(["diff", broken.path().to_str().expect("utf-8"), &good]);
    run.assert_code(code::USAGE);
    assert!(
        run.stderr.contains("not valid JSON") && run.stderr.contains("mcp-fuzz snapshot"),
        "{}",
        run.stderr
    );
    mcp_fuzz(["diff", &good, &good, "--time-budget", "-1"]).assert_code(code::USAGE);
    mcp_fuzz(["diff", &good]).assert_code(code::USAGE);
}

#[test]
fn list_rules_prints_the_catalogue() {
    let run = mcp_fuzz(["diff", "--list-rules"]);
    run.assert_code(code::SUCCESS);
    for id in [
        "tool-removed",
        "input-enum-narrowed",
        "output-type-widened",
        "annotation-readonly-dropped",
    ] {
        assert!(run.stdout.lines().any(|l| l.starts_with(id)), "{id} missing:\n{}", run.stdout);
    }
}

#[test]
fn a_snapshot_diffs_compatible_with_itself() {
    let snapshot = real("server-everything@2026.8.31.json");
    let (status, report) = diff_json(&snapshot, &snapshot, &[]);
    assert_eq!(status, code::SUCCESS);
    assert!(
        report["entries"].as_array().expect("entries").iter().all(|e| e["verdict"] == "compatible")
    );
}

#[test]
fn normalize_accepts_every_shape_and_is_stable() {
    let out = TempFile::new("snap.json", "");
    let run = mcp_fuzz([
        "snapshot",
        "--normalize",
        fixture("tools-list-shapes/jsonrpc.json").to_str().expect("utf-8"),
        "--output",
        out.path().to_str().expect("utf-8"),
    ]);
    run.assert_code(code::SUCCESS);
    assert!(run.stdout.is_empty());
    let first = std::fs::read_to_string(out.path()).expect("written");
    let again = mcp_fuzz(["snapshot", "--normalize", out.path().to_str().expect("utf-8")]);
    again.assert_code(code::SUCCESS);
    assert_eq!(again.stdout, first);
    let doc: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(doc["snapshotVersion"], 1);
    let names: Vec<&str> =
        doc["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    mcp_fuzz(["snapshot", "--normalize", "/nonexistent.json"]).assert_code(code::USAGE);
}

#[test]
fn snapshot_of_a_live_server() {
    let path = server("fx-healthy");
    let run = mcp_fuzz(["snapshot", "--", path.to_str().expect("utf-8")]);
    run.assert_code(code::SUCCESS);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(doc["server"]["name"], "fx-healthy");
    assert!(doc["server"]["protocolVersion"].is_string());
    assert!(!doc["tools"].as_array().expect("tools").is_empty());
    let again = mcp_fuzz(["snapshot", "--", path.to_str().expect("utf-8")]);
    assert_eq!(again.stdout, run.stdout, "two snapshots of the same server are byte-identical");
    let run = mcp_fuzz(["snapshot", "--", "/nonexistent/server"]);
    run.assert_code(3);
}

#[test]
fn snapshot_over_http_lists_the_same_tools_and_keeps_headers_out() {
    let token = "diff-s3cr3t-789";
    let http = crate::http::HttpServer::start(token);
    let header = format!("Authorization: Bearer {token}");
    let run = mcp_fuzz(["snapshot", "--http", &http.url, "--header", &header]);
    run.assert_code(code::SUCCESS);
    assert!(!run.stdout.contains(token) && !run.stderr.contains(token));
    let over_http: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let stdio = mcp_fuzz(["snapshot", "--", server("fx-healthy").to_str().expect("utf-8")]);
    let over_stdio: Value = serde_json::from_str(&stdio.stdout).expect("JSON");
    assert_eq!(over_http["tools"], over_stdio["tools"]);
    let wrong =
        mcp_fuzz(["snapshot", "--http", &http.url, "--header", "Authorization: Bearer nope"]);
    wrong.assert_code(3);
}

#[test]
fn snapshot_reads_every_page_and_leaves_malformed_tools_out_with_a_warning() {
    let run = mcp_fuzz(["snapshot", "--", server("fx-paged").to_str().expect("utf-8")]);
    run.assert_code(code::SUCCESS);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let names: Vec<&str> =
        doc["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["tool_1", "tool_2", "tool_3", "tool_4", "tool_5", "tool_6", "tool_7"]);

    let run = mcp_fuzz(["snapshot", "--", server("fx-malformed-tool").to_str().expect("utf-8")]);
    run.assert_code(code::SUCCESS);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let names: Vec<&str> =
        doc["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["good"]);
    let skipped = doc["skipped"].as_array().expect("skipped items are recorded");
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        run.stderr.contains("broken_schema") && run.stderr.contains("left out"),
        "{}",
        run.stderr
    );

    let run = mcp_fuzz(["snapshot", "--", server("fx-cursor-loop").to_str().expect("utf-8")]);
    run.assert_code(code::SUCCESS);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert!(doc["truncated"].as_str().is_some_and(|t| t.contains("repeated the cursor")), "{doc}");
}
