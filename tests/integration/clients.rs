//! `mcp-fuzz clients`: exit codes, the JSON report against `docs/clients.schema.json`, exact
//! findings and canaries on the converter-breaking fixture capture, and a live fixture server.

use crate::run::server;
use crate::util::{TempDir, TempFile, fixture, mcp_fuzz, mcp_fuzz_with_stdin};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The exit codes, repeated here on purpose: changing one must break a test.
const SUCCESS: i32 = 0;
const FINDINGS: i32 = 1;
const USAGE: i32 = 2;
const SERVER_START: i32 = 3;
const NO_TOOLS: i32 = 4;

pub(crate) fn check_schema(report: &Value) {
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

pub(crate) fn adapter<'a>(report: &'a Value, tool: &str, name: &str) -> &'a Value {
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

pub(crate) fn rules(result: &Value) -> Vec<&str> {
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

/// A schema whose only finding under `openapi` is a dropped `minLength` (warn) and whose canary
/// is `{"q": ""}` (warn).
const SEARCH: &str = r#"{"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}, "required": ["q"]}"#;

/// Writes `contents` as `dir/name` and returns the path as a string.
fn write(dir: &TempDir, name: &str, contents: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("temp dir is writable");
    path.display().to_string()
}

fn all_findings(report: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for tool in report["tools"].as_array().expect("tools") {
        for a in tool["adapters"].as_array().expect("adapters") {
            out.extend(a["findings"].as_array().expect("findings"));
            out.extend(a["canaries"].as_array().expect("canaries"));
        }
    }
    out.extend(report["listingFindings"].as_array().expect("listing findings"));
    out
}

#[test]
fn schema_is_one_tool_named_after_the_file() {
    let dir = TempDir::new("clients-schema");
    let schema = write(&dir, "search.json", SEARCH);
    let (code, report) = json_report(&["--schema", &schema, "--adapter", "openapi"]);
    assert_eq!(code, SUCCESS, "warn findings do not fail by default");
    assert_eq!(report["tools"].as_array().expect("tools").len(), 1);
    assert_eq!(report["tools"][0]["name"], "search");
    let result = adapter(&report, "search", "openapi");
    assert_eq!(rules(result), ["openapi/constraint-dropped"]);
    assert_eq!(result["canaries"][0]["witness"], json!({"q": ""}));
    assert_eq!(result["canaries"][0]["pointer"], "/inputSchema/properties/q/minLength");
    // Standard input works too; the tool is then called `schema`.
    let run = mcp_fuzz_with_stdin(
        ["clients", "--schema", "-", "--adapter", "openapi", "--format", "json"],
        SEARCH,
    );
    run.assert_code(SUCCESS);
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(report["tools"][0]["name"], "schema");
    // A capture given as a schema, or broken JSON, is a usage error that says what to do.
    let capture = fixture("clients/clean.json");
    let run = mcp_fuzz(["clients", "--schema", capture.to_str().expect("utf-8")]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("--tools"), "{}", run.stderr);
    let broken = write(&dir, "broken.json", "{\"type\": ");
    let run = mcp_fuzz(["clients", "--schema", &broken]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("JSON"), "{}", run.stderr);
}

#[test]
fn fail_on_picks_the_severities_that_fail_and_ambiguous_findings_never_do() {
    let dir = TempDir::new("clients-fail-on");
    let search = write(&dir, "search.json", SEARCH);
    let (code, report) =
        json_report(&["--schema", &search, "--adapter", "openapi", "--fail-on", "fail"]);
    assert_eq!((code, report["failOn"].as_str()), (SUCCESS, Some("fail")));
    assert_eq!((report["verdict"].as_str(), report["failures"].as_u64()), (Some("pass"), Some(0)));
    let (code, report) =
        json_report(&["--schema", &search, "--adapter", "openapi", "--fail-on", "warn"]);
    assert_eq!(code, FINDINGS);
    assert_eq!(report["verdict"], "fail");
    assert_eq!(report["failures"], 2, "the dropped minLength and its canary: {report:#}");

    // Only an ambiguous warn finding (a boolean property schema under openai-strict).
    let boolean = write(
        &dir,
        "flag.json",
        r#"{"type": "object", "properties": {"p": true}, "required": ["p"], "additionalProperties": false}"#,
    );
    let (code, report) =
        json_report(&["--schema", &boolean, "--adapter", "openai-strict", "--fail-on", "warn"]);
    let found = all_findings(&report);
    assert!(found.iter().any(|f| f["ambiguous"] == true && f["severity"] == "warn"), "{report:#}");
    assert_eq!(code, SUCCESS, "ambiguous findings never fail");
    // Only an ambiguous fail finding (a non-object root under anthropic).
    let string = write(&dir, "text.json", r#"{"type": "string"}"#);
    let (code, report) =
        json_report(&["--schema", &string, "--adapter", "anthropic", "--fail-on", "warn"]);
    assert!(
        all_findings(&report).iter().any(|f| f["ambiguous"] == true && f["severity"] == "fail"),
        "{report:#}"
    );
    assert_eq!(code, SUCCESS, "ambiguous findings never fail");
    // A fail finding fails under both policies.
    let breakers = fixture("clients/breakers.json");
    for policy in ["fail", "warn"] {
        let (code, _) =
            json_report(&["--tools", breakers.to_str().expect("utf-8"), "--fail-on", policy]);
        assert_eq!(code, FINDINGS, "--fail-on {policy}");
    }
    assert_eq!(mcp_fuzz(["clients", "--schema", &search, "--fail-on", "info"]).code, USAGE);
}

#[test]
fn every_json_finding_carries_its_identity_source_and_fix() {
    let capture = fixture("clients/breakers.json");
    let (_, report) = json_report(&["--tools", capture.to_str().expect("utf-8")]);
    let found = all_findings(&report);
    assert!(found.len() > 50, "{}", found.len());
    let mut canaries = 0;
    for f in found {
        for key in ["adapter", "rule", "severity", "pointer", "detail", "fix"] {
            assert!(f[key].is_string(), "{key} missing: {f}");
        }
        assert!(f.get("tool").is_some() && f["source"]["url"].is_string(), "{f}");
        if f.get("witness").is_some() {
            canaries += 1;
            assert!(f["outcome"]["status"].is_string(), "{f}");
            assert!(f["rule"].as_str().expect("rule").contains("/canary-"), "{f}");
        }
    }
    assert!(canaries >= 10, "{canaries}");
}

#[test]
fn every_format_agrees_with_the_json() {
    let dir = TempDir::new("clients-formats");
    let out = dir.join("out");
    let capture = fixture("clients/breakers.json");
    let run = mcp_fuzz([
        "clients",
        "--tools",
        capture.to_str().expect("utf-8"),
        "--format",
        "human,json,sarif,junit",
        "--format",
        "markdown",
        "--output-dir",
        out.to_str().expect("utf-8"),
    ]);
    run.assert_code(FINDINGS);
    assert!(run.stdout.contains("Verdict: fail"), "human goes to stdout: {}", run.stdout);
    let report = crate::formats::read_json(&out.join("report.json"));
    check_schema(&report);
    let found = all_findings(&report);

    // SARIF: valid, the clients rule ids, one result per finding, fingerprints stable.
    let log = crate::formats::read_json(&out.join("report.sarif"));
    crate::formats::assert_sarif_schema(&log);
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), found.len());
    let list = mcp_fuzz(["clients", "--list-rules"]).stdout;
    let catalogue: Vec<&str> = list
        .lines()
        .filter(|l| !l.starts_with(' ') && l.contains('/'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for (r, f) in results.iter().zip(&found) {
        assert_eq!(r["ruleId"], f["rule"]);
        assert!(catalogue.contains(&r["ruleId"].as_str().expect("id")), "{r}");
        let expected = match (f["severity"].as_str(), f["ambiguous"] == true) {
            (Some("fail"), false) => "error",
            (_, true) | (Some("info"), _) => "note",
            _ => "warning",
        };
        assert_eq!(r["level"], expected, "{f}");
    }
    let again =
        mcp_fuzz(["clients", "--tools", capture.to_str().expect("utf-8"), "--format", "sarif"]);
    let again: Value = serde_json::from_str(&again.stdout).expect("SARIF on stdout");
    assert_eq!(again["runs"][0]["results"], log["runs"][0]["results"], "stable across runs");

    // JUnit: one case per adapter and tool (plus the listing), failures = failing pairs.
    let xml = std::fs::read_to_string(out.join("report.junit.xml")).expect("junit written");
    let adapters = report["adapters"].as_array().expect("adapters");
    let tools = report["tools"].as_array().expect("tools");
    let listing: BTreeSet<&str> = report["listingFindings"]
        .as_array()
        .expect("listing")
        .iter()
        .map(|f| f["adapter"].as_str().expect("adapter"))
        .collect();
    let failing: BTreeSet<(&str, Option<&str>)> = found
        .iter()
        .filter(|f| f["severity"] == "fail" && f["ambiguous"] != true)
        .map(|f| (f["adapter"].as_str().expect("adapter"), f["tool"].as_str()))
        .collect();
    let root = xml.lines().find(|l| l.starts_with("<testsuites")).expect("root");
    assert_eq!(
        crate::formats::attr(root, "tests") as usize,
        adapters.len() * tools.len() + listing.len()
    );
    assert_eq!(crate::formats::attr(root, "failures") as usize, failing.len());
    assert_eq!(
        crate::formats::count(&xml, "<testcase "),
        adapters.len() * tools.len() + listing.len()
    );
    assert_eq!(crate::formats::count(&xml, "<failure "), failing.len());
    assert_eq!(crate::formats::count(&xml, "<testsuite "), adapters.len());

    // Markdown: a section per adapter, every canary's witness and outcome.
    let md = std::fs::read_to_string(out.join("report.md")).expect("markdown written");
    for a in adapters {
        assert!(md.contains(&format!("### `{}`", a.as_str().expect("name"))), "{md}");
    }
    for c in found.iter().filter(|f| f.get("witness").is_some()) {
        assert!(md.contains(&format!("`{}`", c["witness"])), "witness {} missing", c["witness"]);
    }
    assert!(md.contains("not sent: pass --call to send it to the server"));
    assert!(md.contains("**Verdict: fail**"));

    // Several documents need a directory.
    let run = mcp_fuzz([
        "clients",
        "--tools",
        capture.to_str().expect("utf-8"),
        "--format",
        "json,sarif",
    ]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("--output-dir"), "{}", run.stderr);
}

#[test]
fn the_markdown_shows_the_servers_outcome_of_called_canaries() {
    let healthy = server("fx-healthy");
    let run = mcp_fuzz([
        "clients",
        "--call",
        "--adapter",
        "anthropic-strict",
        "--format",
        "markdown",
        "--",
        healthy.to_str().expect("utf-8"),
    ]);
    run.assert_code(SUCCESS);
    assert!(run.stdout.contains("graceful: tool-error"), "{}", run.stdout);
}

#[test]
fn baselines_round_trip_report_stale_entries_and_survive_failures() {
    let dir = TempDir::new("clients-baseline");
    let file = dir.join("baseline.json");
    let baseline = file.to_str().expect("utf-8");
    let capture = fixture("clients/breakers.json");
    let capture = capture.to_str().expect("utf-8");
    // First run: the file is created with every non-ambiguous fail and warn finding; the run
    // still fails (the findings were new).
    let (code, report) =
        json_report(&["--tools", capture, "--baseline", baseline, "--update-baseline"]);
    assert_eq!(code, FINDINGS);
    let written: Value = crate::formats::read_json(&file);
    let entries = written["findings"].as_array().expect("entries");
    let expected: BTreeSet<(String, String, Option<String>, String)> = all_findings(&report)
        .into_iter()
        .filter(|f| f["ambiguous"] != true && f["severity"] != "info")
        .map(baseline_key)
        .collect();
    let stored: BTreeSet<(String, String, Option<String>, String)> =
        entries.iter().map(baseline_key).collect();
    assert_eq!(stored, expected);
    assert_eq!(written["baselineVersion"], 1);

    // Second run: everything is known, nothing fails, SARIF says unchanged.
    let (code, report) = json_report(&["--tools", capture, "--baseline", baseline]);
    assert_eq!(code, SUCCESS, "{:#}", report["baseline"]);
    assert_eq!(report["baseline"]["new"], 0);
    assert_eq!(report["baseline"]["stale"], json!([]));
    assert!(report["baseline"]["known"].as_u64().expect("known") >= entries.len() as u64);
    let sarif =
        mcp_fuzz(["clients", "--tools", capture, "--baseline", baseline, "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&sarif.stdout).expect("SARIF");
    crate::formats::assert_sarif_schema(&sarif);
    assert!(
        sarif["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .all(|r| r["baselineState"] != "new" || r["level"] != "error")
    );

    // A finding that no longer occurs is stale; an entry of an adapter not applied is not.
    let mut edited = written.clone();
    let list = edited["findings"].as_array_mut().expect("entries");
    list.push(json!({"adapter": "gemini", "rule": "gemini/ref", "tool": "gone", "pointer": "/inputSchema/$ref"}));
    std::fs::write(&file, serde_json::to_vec_pretty(&edited).expect("JSON")).expect("writable");
    let (code, report) = json_report(&["--tools", capture, "--baseline", baseline]);
    assert_eq!(code, SUCCESS);
    assert_eq!(
        report["baseline"]["stale"],
        json!([{"adapter": "gemini", "rule": "gemini/ref", "tool": "gone", "pointer": "/inputSchema/$ref"}])
    );
    let human = mcp_fuzz(["clients", "--tools", capture, "--baseline", baseline]);
    assert!(
        human.stdout.contains("1 stale")
            && human.stdout.contains("gemini/ref at /inputSchema/$ref of `gone`"),
        "{}",
        human.stdout
    );
    let (_, report) =
        json_report(&["--tools", capture, "--baseline", baseline, "--adapter", "openapi"]);
    assert_eq!(report["baseline"]["stale"], json!([]), "gemini was not applied");
    // --update-baseline with only openapi keeps the other adapters' entries, the stale one too.
    let (code, _) = json_report(&[
        "--tools",
        capture,
        "--baseline",
        baseline,
        "--adapter",
        "openapi",
        "--update-baseline",
    ]);
    assert_eq!(code, SUCCESS);
    let kept = crate::formats::read_json(&file);
    assert_eq!(kept["findings"].as_array().expect("entries").len(), entries.len() + 1);
    // Updating with every adapter drops the stale entry.
    json_report(&["--tools", capture, "--baseline", baseline, "--update-baseline"]);
    assert_eq!(crate::formats::read_json(&file), written);

    // A command that does not complete leaves the file byte for byte as it was.
    let before = std::fs::read(&file).expect("readable");
    let run = mcp_fuzz([
        "clients",
        "--baseline",
        baseline,
        "--update-baseline",
        "--",
        "/nonexistent/mcp-server",
    ]);
    run.assert_code(SERVER_START);
    assert_eq!(std::fs::read(&file).expect("readable"), before);
    let run = mcp_fuzz([
        "clients",
        "--schema",
        "/nonexistent/schema.json",
        "--baseline",
        baseline,
        "--update-baseline",
    ]);
    run.assert_code(USAGE);
    assert_eq!(std::fs::read(&file).expect("readable"), before);
    // A malformed baseline is a usage error naming the expected shape.
    let bad = write(&dir, "bad.json", r#"{"baselineVersion": 1, "findings": [{"kind": "x"}]}"#);
    let run = mcp_fuzz(["clients", "--tools", capture, "--baseline", &bad]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("\"adapter\", \"rule\", \"tool\", \"pointer\""), "{}", run.stderr);
}

/// What a clients baseline entry is keyed by: adapter, rule, tool and pointer.
fn baseline_key(f: &Value) -> (String, String, Option<String>, String) {
    (
        f["adapter"].as_str().expect("adapter").to_owned(),
        f["rule"].as_str().expect("rule").to_owned(),
        f["tool"].as_str().map(str::to_owned),
        f["pointer"].as_str().expect("pointer").to_owned(),
    )
}

/// `anthropic-strict-api` (the Messages API with `strict: true`) refuses what the SDKs strip:
/// the same keyword is a `warn` for `anthropic-strict` and a `fail` for the API; each adapter's
/// server-level line says whose it is when the rule id is shared.
#[test]
fn the_raw_messages_api_refuses_what_the_sdks_strip() {
    let dir = TempDir::new("clients-strict-api");
    let schema = write(&dir, "search.json", SEARCH);
    let chosen = ["--schema", &schema, "--adapter", "anthropic-strict,anthropic-strict-api"];
    let (code, report) = json_report(&chosen);
    assert_eq!(code, FINDINGS, "the API refuses minLength");
    let severities = |name: &str| -> Vec<(String, String)> {
        let findings = adapter(&report, "search", name)["findings"].as_array().expect("findings");
        findings
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().expect("rule").into(),
                    f["severity"].as_str().expect("severity").into(),
                )
            })
            .filter(|(rule, _): &(String, String)| rule.ends_with("/string-length"))
            .collect()
    };
    assert_eq!(
        severities("anthropic-strict"),
        [("anthropic-strict/string-length".into(), "warn".into())]
    );
    assert_eq!(
        severities("anthropic-strict-api"),
        [("anthropic-strict-api/string-length".into(), "fail".into())]
    );
    let mut args = vec!["clients"];
    args.extend(chosen);
    let run = mcp_fuzz(args);
    run.assert_code(FINDINGS);
    assert!(
        run.stdout.contains("\nanthropic-strict/request-complexity: ")
            && run.stdout.contains("\nanthropic-strict-api: anthropic-strict/request-complexity: "),
        "{}",
        run.stdout
    );
}
