//! `mcp-fuzz clients`: exit codes, the JSON report against `docs/clients.schema.json`, exact
//! findings and canaries on the converter-breaking fixture capture, and a live fixture server.

use crate::run::server;
use crate::util::{TempFile, fixture, mcp_fuzz, mcp_fuzz_with_stdin};
use serde_json::{Value, json};

/// The exit codes, repeated here on purpose: changing one must break a test.
const SUCCESS: i32 = 0;
const FINDINGS: i32 = 1;
const USAGE: i32 = 2;
const SERVER_START: i32 = 3;
const NO_TOOLS: i32 = 4;

fn check_schema(report: &Value) {
    let schema: Value = serde_json::from_str(include_str!("../../docs/clients.schema.json"))
        .expect("clients schema is JSON");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("clients schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(report).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "the report breaks docs/clients.schema.json: {errors:#?}");
}

fn json_report(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["clients", "--format", "json"];
    all.extend_from_slice(args);
    let run = mcp_fuzz(&all);
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr:\n{}", run.stderr));
    check_schema(&report);
    (run.code, report)
}

fn adapter<'a>(report: &'a Value, tool: &str, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == tool)
        .and_then(|t| {
            t["adapters"].as_array().expect("adapters").iter().find(|a| a["adapter"] == name)
        })
        .unwrap_or_else(|| panic!("no {name} result for {tool}"))
}

fn rules(result: &Value) -> Vec<&str> {
    result["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule"].as_str().expect("rule"))
        .collect()
}

#[test]
fn a_clean_capture_passes_with_exit_0() {
    let capture = fixture("clients/clean.json");
    let run = mcp_fuzz(["clients", "--tools", capture.to_str().expect("utf-8")]);
    run.assert_code(SUCCESS);
    assert!(run.stdout.contains("Verdict: pass"), "{}", run.stdout);
    let (code, report) = json_report(&["--tools", capture.to_str().expect("utf-8")]);
    assert_eq!(code, SUCCESS);
    assert_eq!(report["verdict"], "pass");
    assert_eq!(report["failures"], 0);
    assert_eq!(report["adapters"].as_array().expect("adapters").len(), 6);
}

#[test]
fn converter_breakers_fail_with_exact_findings_and_canaries() {
    let capture = fixture("clients/breakers.json");
    let (code, report) = json_report(&["--tools", capture.to_str().expect("utf-8")]);
    assert_eq!(code, FINDINGS);
    assert_eq!(report["verdict"], "fail");

    let root_union = adapter(&report, "fetch_either", "openai-strict");
    assert_eq!(root_union["status"], "rejected");
    assert!(rules(root_union).contains(&"openai-strict/root-union"));
    assert_eq!(
        root_union["drift"],
        json!([{"kind": "tool-missing", "schema": "input", "pointer": "", "detail": "the client rejects the tool; the model cannot call it"}])
    );
    assert!(
        rules(adapter(&report, "fetch_either", "anthropic")).contains(&"anthropic/root-combinator")
    );

    let mcpo = adapter(&report, "fetch_either", "openapi");
    assert_eq!(mcpo["status"], "accepted");
    let kinds: Vec<(&str, &str)> = mcpo["drift"]
        .as_array()
        .expect("drift")
        .iter()
        .map(|d| (d["kind"].as_str().expect("kind"), d["pointer"].as_str().expect("pointer")))
        .collect();
    assert!(kinds.contains(&("root-union-ignored", "/inputSchema/anyOf")), "{kinds:?}");
    assert!(
        kinds.contains(&("property-missing", "/inputSchema/anyOf/0/properties/url")),
        "{kinds:?}"
    );
    assert_eq!(mcpo["canaries"][0]["direction"], "rendered-allows-server-rejects");
    assert_eq!(
        mcpo["canaries"][0]["witness"],
        json!({}),
        "without the root anyOf, no argument is needed"
    );

    let bounds = adapter(&report, "deploy", "anthropic-strict");
    assert!(rules(bounds).contains(&"anthropic-strict/numeric-constraint"));
    let canary = &bounds["canaries"][0];
    assert_eq!(canary["direction"], "rendered-allows-server-rejects");
    assert_eq!(canary["witness"], json!({"config": {"replicas": 0}}));
    assert_eq!(canary["detail"], "/config/replicas: 0 is less than the minimum of 1");
    assert_eq!(canary["openContent"], false);
    // A canary is a finding of its adapter's canary rule, with source, fix and outcome.
    assert_eq!(canary["adapter"], "anthropic-strict");
    assert_eq!(canary["rule"], "anthropic-strict/canary-server-refuses");
    assert_eq!(canary["severity"], "warn");
    assert_eq!(canary["tool"], "deploy");
    assert_eq!(canary["pointer"], "/inputSchema/properties/config/properties/replicas/minimum");
    assert!(canary["source"]["url"].as_str().is_some_and(|u| u.starts_with("https://")));
    assert!(canary["fix"].as_str().is_some_and(|f| !f.is_empty()));
    assert_eq!(canary["outcome"]["status"], "skipped");

    let nullable = adapter(&report, "search", "openai-strict");
    let values: Vec<&Value> =
        nullable["canaries"].as_array().expect("canaries").iter().map(|c| &c["witness"]).collect();
    assert_eq!(values.len(), 2, "{nullable:#}");
    let alone = nullable["canaries"][1]["witness"].as_object().expect("an object");
    assert!(
        alone.len() == 1 && alone["q"].is_string(),
        "the server takes q alone; strict mode requires every property: {alone:?}"
    );

    assert_eq!(adapter(&report, "tree", "anthropic-strict")["status"], "rejected");
    assert_eq!(adapter(&report, "tree", "openapi")["status"], "rejected");
    assert!(
        !adapter(&report, "tree", "mcp")["comparisonStopped"]
            .as_array()
            .expect("stopped")
            .is_empty()
    );

    let boolean = adapter(&report, "anything", "mcp");
    assert_eq!(boolean["status"], "rejected");
    assert_eq!(rules(boolean), ["mcp/boolean-property-schema", "mcp/boolean-property-schema"]);
    let gemini_format = adapter(&report, "fetch_either", "gemini");
    assert_eq!(gemini_format["status"], "accepted", "gemini/format is ambiguous: it never rejects");
}

#[test]
fn adapters_can_be_chosen_and_the_verdict_follows_them() {
    let capture = fixture("clients/breakers.json");
    let path = capture.to_str().expect("utf-8");
    let (code, report) =
        json_report(&["--tools", path, "--adapter", "anthropic", "--adapter", "mcp,anthropic"]);
    assert_eq!(code, FINDINGS);
    assert_eq!(report["adapters"], json!(["anthropic", "mcp"]));
    assert_eq!(report["summary"].as_array().expect("summary").len(), 2);
    // Only the non-strict Anthropic baseline on a tool it accepts: pass.
    let single = TempFile::new("single.json", &json!({"tools": [{"name": "deploy", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}]}).to_string());
    let (code, report) =
        json_report(&["--tools", single.path().to_str().expect("utf-8"), "--adapter", "anthropic"]);
    assert_eq!(code, SUCCESS, "{report:#}");
}

#[test]
fn list_rules_prints_the_catalogue() {
    let run = mcp_fuzz(["clients", "--list-rules"]);
    run.assert_code(SUCCESS);
    for id in [
        "openai-strict/root-union",
        "anthropic/root-combinator",
        "gemini/ref",
        "openapi/constraint-dropped",
        "mcp/input-root-type",
    ] {
        assert!(run.stdout.contains(id), "{id} missing");
    }
    assert!(run.stdout.contains("source: https://"));
    let run = mcp_fuzz(["clients", "--list-rules", "--format", "json"]);
    run.assert_code(SUCCESS);
    let rules: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let rules = rules.as_array().expect("array");
    assert!(rules.len() > 30);
    assert!(
        rules
            .iter()
            .all(|r| r["source"]["url"].as_str().is_some_and(|u| u.starts_with("https://"))
                && r["fix"].is_string())
    );
    assert!(rules.iter().any(|r| r["ambiguous"] == true));
}

#[test]
fn bad_input_exits_2_and_says_what_to_do() {
    let run = mcp_fuzz(["clients", "--tools", "/nonexistent/tools.json"]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("failed to read"), "{}", run.stderr);
    let broken = TempFile::new("broken.json", "{\"tools\": [");
    let run = mcp_fuzz(["clients", "--tools", broken.path().to_str().expect("utf-8")]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("not valid JSON"), "{}", run.stderr);
    mcp_fuzz(["clients", "--tools", "x.json", "--adapter", "bogus"]).assert_code(USAGE);
    let run = mcp_fuzz(["clients"]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("no server given"), "{}", run.stderr);
    let empty = TempFile::new("empty.json", "{\"tools\": []}");
    mcp_fuzz(["clients", "--tools", empty.path().to_str().expect("utf-8")]).assert_code(NO_TOOLS);
}

#[test]
fn captures_are_read_from_stdin_in_any_shape() {
    let text = std::fs::read_to_string(fixture("clients/clean.json")).expect("fixture");
    let tools: Value = serde_json::from_str(&text).expect("JSON");
    let envelope = json!({"jsonrpc": "2.0", "id": 1, "result": tools}).to_string();
    let run = mcp_fuzz_with_stdin(["clients", "--tools", "-", "--format", "json"], &envelope);
    run.assert_code(SUCCESS);
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(report["source"], "standard input");
    assert_eq!(report["tools"][0]["name"], "lookup");
}

#[test]
fn output_file_is_the_json_report() {
    let capture = fixture("clients/breakers.json");
    let dir = std::env::temp_dir().join(format!("mcp-fuzz-clients-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("report.json");
    let run = mcp_fuzz([
        "clients",
        "--tools",
        capture.to_str().expect("utf-8"),
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    run.assert_code(FINDINGS);
    assert!(run.stdout.contains("Verdict: fail"));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    check_schema(&written);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != "report.json")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn a_server_that_cannot_start_exits_3() {
    let run = mcp_fuzz(["clients", "--startup-timeout", "5", "--", "/nonexistent/mcp-server"]);
    run.assert_code(SERVER_START);
    assert!(run.stderr.contains("could not be started"), "{}", run.stderr);
}

#[test]
fn a_live_fixture_server_is_listed_and_checked() {
    let healthy = server("fx-healthy");
    let (code, report) = json_report(&["--", healthy.to_str().expect("utf-8")]);
    assert!(code == SUCCESS || code == FINDINGS, "exit {code}");
    assert!(report["source"].as_str().expect("source").contains("fx-healthy"));
    assert!(!report["tools"].as_array().expect("tools").is_empty());
    assert_eq!(report["listing"]["problems"], json!([]));
}

/// The real TypeScript SDK client (1.32.2, installed by `scripts/install-e2e.sh`) parses each
/// tool of a capture with its own `ListToolsResultSchema`; it must reject exactly the tools the
/// `mcp` adapter fails, on the SDK cases, the breakers and every corpus capture.
#[test]
fn the_mcp_adapter_agrees_with_the_real_typescript_sdk_client() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sdk = root.join("fixtures/e2e/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.exists(),
        "{} is missing: run `bash scripts/install-e2e.sh` first (the README's test command does)",
        sdk.display()
    );
    let mut captures =
        vec![fixture("clients/mcp-sdk-cases.json"), fixture("clients/breakers.json")];
    for ecosystem in ["npm", "pypi"] {
        let dir = fixture("tools-list").join(ecosystem);
        let mut files: Vec<_> =
            std::fs::read_dir(dir).expect("corpus").map(|e| e.expect("entry").path()).collect();
        files.sort();
        captures.extend(files);
    }
    let mut rejected_by_sdk = 0;
    for capture in &captures {
        let path = capture.to_str().expect("utf-8");
        let out = std::process::Command::new("node")
            .arg(root.join("fixtures/e2e/ts-client-check.mjs"))
            .arg(path)
            .output()
            .expect("node runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (_, report) = json_report(&["--tools", path, "--adapter", "mcp"]);
        for line in String::from_utf8(out.stdout).expect("utf-8").lines() {
            let verdict: Value = serde_json::from_str(line).expect("JSON line");
            let name = verdict["name"].as_str().expect("name");
            let sdk_rejects = verdict["accepted"] == false;
            let adapter_rejects = adapter(&report, name, "mcp")["status"] == "rejected";
            assert_eq!(adapter_rejects, sdk_rejects, "{path} `{name}`: the SDK says {verdict}");
            rejected_by_sdk += usize::from(sdk_rejects);
        }
    }
    assert_eq!(rejected_by_sdk, 7, "the six SDK cases and the breakers' `anything`");
}

/// `--call` sends the canaries the rendering allows and the server rejects: fx-healthy answers
/// them gracefully, fx-lenient accepts what its own schema forbids; neither is a failure.
#[test]
fn call_sends_canaries_and_judges_the_answers() {
    let healthy = server("fx-healthy");
    let (code, report) = json_report(&[
        "--call",
        "--adapter",
        "anthropic-strict",
        "--",
        healthy.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, SUCCESS, "{report:#}");
    assert_eq!(report["canaryCallFailures"], 0);
    let add = adapter(&report, "add", "anthropic-strict");
    let sent = &add["canaries"][0];
    assert_eq!(sent["direction"], "rendered-allows-server-rejects");
    assert_eq!(sent["outcome"]["status"], "called");
    assert_eq!(sent["outcome"]["verdict"], "graceful");
    assert_eq!(sent["outcome"]["outcome"]["kind"], "tool-error");
    let lenient = server("fx-lenient");
    let (code, report) = json_report(&[
        "--call",
        "--include-destructive",
        "--adapter",
        "openapi",
        "--",
        lenient.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, SUCCESS);
    let sent = &adapter(&report, "anything", "openapi")["canaries"][0];
    assert_eq!(sent["witness"], json!({"count": -1}));
    assert_eq!(
        sent["outcome"]["verdict"], "accepted",
        "the server takes a value its schema forbids"
    );
    assert!(
        mcp_fuzz(["clients", "--call", "--tools", "x.json"]).code == USAGE,
        "--call needs a live server"
    );
}
