//! `mcp-fuzz clients` with the real clients (issue 14): one report shape for modelled and real
//! adapters (`lost` with the client's reason, a culprit finding when a client loses the whole
//! listing, names as the client shows them, each client's handshake), and canaries through
//! mcpo's `POST /<tool>`, gated by `readOnlyHint`.
//!
//! These tests need the five clients (`scripts/install-clients.sh`, which installs into
//! `target/clients`, or `MCP_FUZZ_CLIENTS_DIR`). A client that is not installed FAILS the test
//! with the install command; nothing is skipped.
//!
//! See: issue 14.

use super::clients::{adapter, check_schema, rules};
use crate::run::server;
use crate::util::{TempDir, mcp_fuzz};
use serde_json::{Value, json};

const FINDINGS: i32 = 1;
/// The five real clients, in report order.
const CLIENTS: [&str; 5] = ["inspector", "mcpo", "codex-cli", "claude-code", "gemini-cli"];
const SUCCESS: i32 = 0;

/// The clients directory: `MCP_FUZZ_CLIENTS_DIR`, else the repository's `target/clients`.
fn clients_dir() -> String {
    std::env::var("MCP_FUZZ_CLIENTS_DIR")
        .unwrap_or_else(|_| format!("{}/target/clients", env!("CARGO_MANIFEST_DIR")))
}

/// The edge tools of the recorded captures named `names`, in that order.
fn edge(names: &[&str]) -> Vec<Value> {
    let doc = crate::util::fixture_json("clients/real/edge.json");
    let all = doc["tools"].as_array().expect("tools");
    names
        .iter()
        .map(|n| all.iter().find(|t| t["name"] == *n).unwrap_or_else(|| panic!("{n}")).clone())
        .collect()
}

const LONG: &str = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

/// Runs `mcp-fuzz clients --format json ARGS -- fx-serve-tools` serving `tools`; checks the
/// report against `docs/clients.schema.json` and that every real client named was captured.
fn real_report(dir: &TempDir, tools: &[Value], args: &[&str]) -> (i32, Value) {
    let file = dir.join("tools.json");
    std::fs::write(&file, json!({ "tools": tools }).to_string()).expect("tools file");
    let fx = server("fx-serve-tools");
    let env = format!("FX_TOOLS_FILE={}", file.display());
    let dir_arg = clients_dir();
    let mut all = vec!["clients", "--format", "json", "--clients-dir", &dir_arg, "--env", &env];
    all.extend_from_slice(args);
    all.extend(["--", fx.to_str().expect("utf-8")]);
    let run = mcp_fuzz(&all);
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr:\n{}", run.stderr));
    check_schema(&report);
    for c in report["realClients"].as_array().expect("realClients") {
        assert_eq!(
            c["status"], "captured",
            "{} was not captured (install it with scripts/install-clients.sh): {c:#}",
            c["adapter"]
        );
        assert_eq!(c["version"], c["pinnedVersion"], "{c:#}");
        assert_eq!(c["served"], "server", "each client ran the server itself");
    }
    (run.code, report)
}

fn run_of<'a>(report: &'a Value, client: &str) -> &'a Value {
    crate::util::entry(report, "realClients", "adapter", client)
}

#[test]
fn real_clients_share_the_report_shape_with_lost_tools_culprits_and_shown_names() {
    let dir = TempDir::new("real-clients-shape");
    let tools = edge(&["plain", "root_array", "dot.name", LONG]);
    let (code, report) = real_report(&dir, &tools, &["--adapter", "mcp,real"]);
    assert_eq!(code, FINDINGS, "tool-lost and listing-lost fail: {:#}", report["summary"]);
    assert_eq!(
        report["adapters"],
        json!(["mcp", "inspector", "mcpo", "codex-cli", "claude-code", "gemini-cli"])
    );
    // The Inspector leaves a non-object root out without a word: `lost`, one failure.
    let inspector = adapter(&report, "root_array", "inspector");
    assert_eq!(inspector["status"], "lost", "{inspector:#}");
    assert_eq!(inspector["reason"]["source"], "silent");
    assert_eq!(rules(inspector), ["inspector/tool-lost"]);
    assert_eq!(adapter(&report, "dot.name", "inspector")["shownName"], "dot.name");
    // Claude Code loses every tool because of it: one finding on the culprit, with a pointer.
    let claude = run_of(&report, "claude-code");
    assert_eq!(claude["listingFailure"]["culprits"], json!(["root_array"]), "{claude:#}");
    assert_eq!(claude["exposed"], 0);
    let culprit = adapter(&report, "root_array", "claude-code");
    assert_eq!(culprit["status"], "lost");
    assert_eq!(rules(culprit), ["claude-code/listing-lost"]);
    assert!(culprit["findings"][0]["pointer"].is_string(), "{culprit:#}");
    let victim = adapter(&report, "plain", "claude-code");
    assert_eq!(victim["status"], "lost", "{victim:#}");
    assert!(rules(victim).is_empty(), "went down with the listing: no finding of its own");
    // Names as each client shows them to the model.
    let codex = adapter(&report, "dot.name", "codex-cli");
    assert_eq!(codex["status"], "accepted");
    assert_eq!(codex["shownName"], "dot_name");
    assert_eq!(codex["namespace"], "mcp__srv");
    assert!(rules(codex).contains(&"codex-cli/name-rewritten"), "{codex:#}");
    assert_eq!(adapter(&report, "dot.name", "mcpo")["shownName"], "tool_dot_name_post");
    // Gemini CLI rejects the listing on the same tool (its own words on stderr).
    let gemini = run_of(&report, "gemini-cli");
    assert_eq!(gemini["listingFailure"]["culprits"], json!(["root_array"]), "{gemini:#}");
    assert_eq!(gemini["listingFailure"]["source"], "stderr");
    assert_eq!(rules(adapter(&report, "root_array", "gemini-cli")), ["gemini-cli/listing-lost"]);
    assert_eq!(adapter(&report, LONG, "codex-cli")["shownName"], LONG, "64+ characters kept");
    // The schema exactly as the client sent it.
    let plain = adapter(&report, "plain", "codex-cli");
    assert_eq!(plain["rendered"]["inputSchema"]["properties"]["q"]["type"], "string");
    // Each client's own handshake.
    let version = |c: &str| run_of(&report, c)["handshake"]["protocolVersion"].clone();
    assert_eq!(version("inspector"), "2025-11-25");
    assert_eq!(version("codex-cli"), "2025-06-18");
    assert_eq!(version("gemini-cli"), "2025-06-18");
    assert_eq!(run_of(&report, "mcpo")["listed"], 4);
    // The summary counts a real client's lost tools as rejected.
    let row = report["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .find(|r| r["adapter"] == "claude-code")
        .expect("claude-code row");
    assert_eq!(row["rejected"], 4, "{row:#}");
    assert_eq!(row["notListed"], 0);
}

#[test]
fn mcpo_canaries_go_through_its_post_and_are_gated_by_read_only_hint() {
    let dir = TempDir::new("real-clients-call");
    let schema = json!({
        "type": "object",
        "properties": {"q": {"type": "string", "minLength": 3}},
        "required": ["q"]
    });
    let closed = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let tools = [
        json!({"name": "search", "inputSchema": schema, "annotations": {"readOnlyHint": true}}),
        json!({"name": "erase", "inputSchema": schema}),
        json!({"name": "status", "inputSchema": closed, "annotations": {"readOnlyHint": true}}),
    ];
    let (code, report) = real_report(&dir, &tools, &["--adapter", "mcpo", "--call"]);
    assert_eq!(code, SUCCESS, "the server answers the canary with a tool error: {report:#}");
    assert_eq!(report["canaryCallFailures"], 0);
    let search = adapter(&report, "search", "mcpo");
    let sent = search["canaries"]
        .as_array()
        .expect("canaries")
        .iter()
        .find(|c| c["direction"] == "rendered-allows-server-rejects")
        .unwrap_or_else(|| panic!("mcpo drops minLength, so a short q is a canary: {search:#}"));
    let outcome = &sent["outcome"];
    assert_eq!(outcome["status"], "called", "{sent:#}");
    assert_eq!(outcome["through"]["client"], "mcpo", "sent through mcpo's POST /search");
    assert_eq!(outcome["verdict"], "graceful");
    assert_eq!(outcome["outcome"]["kind"], "tool-error");
    assert!(outcome["through"].get("sent").is_none(), "mcpo sent it as it was: {sent:#}");
    // mcpo's OpenAPI leaves `additionalProperties: false` out, so an extra property is a canary;
    // its model drops the property on the way, and the report says what the server received.
    let status = adapter(&report, "status", "mcpo");
    let extra = status["canaries"]
        .as_array()
        .expect("canaries")
        .iter()
        .find(|c| c["direction"] == "rendered-allows-server-rejects")
        .unwrap_or_else(|| panic!("an undeclared property is a canary: {status:#}"));
    assert_ne!(extra["witness"], json!({}), "{extra:#}");
    assert_eq!(extra["outcome"]["through"]["sent"], json!({}), "{extra:#}");
    assert_eq!(extra["outcome"]["verdict"], "accepted", "{extra:#}");
    let erase = adapter(&report, "erase", "mcpo");
    let gated = erase["canaries"]
        .as_array()
        .expect("canaries")
        .iter()
        .find(|c| c["direction"] == "rendered-allows-server-rejects")
        .expect("the same canary");
    assert_eq!(gated["outcome"]["status"], "skipped", "{gated:#}");
    assert!(
        gated["outcome"]["reason"].as_str().expect("reason").contains("readOnlyHint"),
        "{gated:#}"
    );
}

/// `mcp-fuzz clients --format json --clients-dir DIR ARGS -- fx-serve-tools`, run from `dir`
/// without MCP_FUZZ_CLIENTS_DIR and with a bare PATH: only `dir` can hold a client (neither the
/// repository's `target/clients`, the environment's directory nor a PATH entry is searched).
fn isolated_clients(dir: &std::path::Path, args: &[&str]) -> crate::util::Run {
    let fx = server("fx-serve-tools");
    let clients = dir.display().to_string();
    let mut all = vec!["clients", "--format", "json", "--clients-dir", &clients];
    all.extend_from_slice(args);
    all.extend(["--", fx.to_str().expect("utf-8")]);
    crate::util::finish(
        crate::util::command(&all)
            .current_dir(dir)
            .env_remove("MCP_FUZZ_CLIENTS_DIR")
            .env("PATH", "/usr/bin:/bin")
            .spawn()
            .expect("mcp-fuzz starts"),
    )
}

/// [`isolated_clients`] where a real client was not captured: exit 6 and a valid report.
fn uncaptured_report(dir: &std::path::Path, args: &[&str]) -> (crate::util::Run, Value) {
    let run = isolated_clients(dir, args);
    assert_eq!(run.code, 6, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr:\n{}", run.stderr));
    check_schema(&report);
    (run, report)
}

/// A client that is not installed is reported as such, with the command that installs it; it
/// never blocks the modelled adapters, and the run exits 6 (a real client was not captured).
#[test]
fn a_missing_client_is_not_installed_with_its_install_command_and_exit_6() {
    let empty = TempDir::new("no-clients");
    let (_, report) = uncaptured_report(empty.path(), &["--adapter", "inspector,openai-strict"]);
    let inspector = run_of(&report, "inspector");
    assert_eq!(inspector["status"], "not-installed", "{inspector:#}");
    let text = inspector.to_string();
    assert!(text.contains("install-clients.sh"), "says how to install it: {inspector:#}");
    let tools = report["tools"].as_array().expect("tools");
    assert!(
        tools.iter().all(|t| t["adapters"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["adapter"] == "openai-strict"))),
        "the modelled adapter still ran: {report:#}"
    );
}

/// With `--pin`, a client found at another version than the pinned one is `wrong-version`,
/// named with both versions, and not run; the run exits 6.
#[test]
fn pin_refuses_another_version() {
    let dir = TempDir::new("old-inspector");
    // Were it run, it would say so: the test asserts it is not.
    fake_inspector(&dir, "0.0.1", "echo ran >&2\nexit 3");
    let (run, report) = uncaptured_report(dir.path(), &["--pin", "--adapter", "inspector"]);
    let inspector = run_of(&report, "inspector");
    assert_eq!(inspector["status"], "wrong-version", "{inspector:#}");
    assert_eq!(inspector["version"], "0.0.1", "{inspector:#}");
    assert!(inspector["pinnedVersion"].is_string(), "{inspector:#}");
    assert!(!run.stderr.contains("ran"), "a client at the wrong version is not run");
}

/// An `inspector` installed in `dir` (the layout of scripts/install-clients.sh) at `version`,
/// whose program is the shell `script`.
fn fake_inspector(dir: &TempDir, version: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("node/node_modules/.bin");
    let pkg = dir.join("node/node_modules/@modelcontextprotocol/inspector");
    std::fs::create_dir_all(&bin).expect("bin dir");
    std::fs::create_dir_all(&pkg).expect("package dir");
    let exe = bin.join("inspector");
    std::fs::write(&exe, format!("#!/bin/sh\n{script}\n")).expect("script");
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let manifest = json!({"name": "@modelcontextprotocol/inspector", "version": version});
    std::fs::write(pkg.join("package.json"), manifest.to_string()).expect("package.json");
}

/// A client that fails is `broken`, with the reason and the tail of its stderr; the modelled
/// adapters still run and the run exits 6.
#[test]
fn a_client_that_fails_is_broken_with_its_stderr_tail() {
    let dir = TempDir::new("broken-inspector");
    let version = mcp_fuzz_clients::real::RealClient::Inspector.pinned_version();
    fake_inspector(&dir, version, "echo 'Error: Cannot find module ./cli.js' >&2\nexit 1");
    let (_, report) = uncaptured_report(dir.path(), &["--adapter", "inspector,openapi"]);
    let inspector = run_of(&report, "inspector");
    assert_eq!(inspector["status"], "broken", "{inspector:#}");
    assert_eq!(inspector["version"], version, "{inspector:#}");
    assert!(
        inspector.to_string().contains("Cannot find module ./cli.js"),
        "the client's stderr tail: {inspector:#}"
    );
    assert!(
        report["tools"][0]["adapters"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["adapter"] == "openapi")),
        "the modelled adapter still ran: {report:#}"
    );
}

/// A real-client document with what cannot repeat redacted: the capture times (JSON
/// `elapsedMs`, the human `TIME` column, the Markdown `Time` column) and the clients' directory.
fn redact_real(text: &str) -> String {
    let text = text.replace(&clients_dir(), "[CLIENTS]");
    let text = crate::snapshots::redact_numbers_after(&text, "\"elapsedMs\": ", "");
    let seconds = |word: &str, unit: &str| {
        word.strip_suffix(unit).is_some_and(|n| n.contains('.') && n.parse::<f64>().is_ok())
    };
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        // The human table's columns are as wide as their widest cell, so a time of 10.0 s moves
        // the columns after it: its rows and header are compared with single spaces.
        let human_row = CLIENTS.iter().any(|c| line.starts_with(&format!("{c} ")))
            || line.starts_with("REAL CLIENT ");
        let markdown_row = CLIENTS.iter().any(|c| line.starts_with(&format!("| `{c}` |")));
        if human_row {
            let words: Vec<&str> = line.split(' ').collect();
            let words: Vec<&str> =
                words.iter().map(|w| if seconds(w, "s") { "[TIME]" } else { w }).collect();
            out.push(words.iter().filter(|w| !w.is_empty()).copied().collect::<Vec<_>>().join(" "));
        } else if markdown_row {
            let cells: Vec<&str> = line.split(" | ").collect();
            let cells: Vec<&str> =
                cells.iter().map(|c| if seconds(c, " s") { "[TIME]" } else { c }).collect();
            out.push(cells.join(" | "));
        } else {
            out.push(line.to_owned());
        }
    }
    out.join("\n") + if text.ends_with('\n') { "\n" } else { "" }
}

#[test]
fn real_client_documents_are_unchanged_in_every_format() {
    // Seven edge tools that show each client's ways: a name rewritten, a non-object root (lost
    // in silence by the Inspector, the whole listing lost by Claude Code and Gemini CLI), a closed
    // object and string bounds opened, Gemini CLI's own `write_file`, nullable types.
    let tools = edge(&[
        "plain",
        "dot.name",
        "root_array",
        "additional_false",
        "string_bounds",
        "write_file",
        "nullable",
    ]);
    let dir = TempDir::new("real-clients-snapshots");
    std::fs::write(dir.join("tools.json"), json!({ "tools": tools }).to_string())
        .expect("tools file");
    let clients = clients_dir();
    let out = dir.join("out");
    let run = crate::util::finish(
        crate::util::command([
            "clients",
            "--clients-dir",
            &clients,
            "--adapter",
            "real,openapi,openai-strict",
            "--tools",
            "tools.json",
            "--format",
            "human,json,markdown,junit,sarif",
            "--output-dir",
            out.to_str().expect("utf-8"),
        ])
        .current_dir(dir.path())
        .spawn()
        .expect("mcp-fuzz starts"),
    );
    assert_eq!(run.code, FINDINGS, "{}", run.stderr);
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report.json")).expect("report.json"),
    )
    .expect("JSON");
    check_schema(&report);
    for c in report["realClients"].as_array().expect("realClients") {
        assert_eq!(c["status"], "captured", "install with scripts/install-clients.sh: {c:#}");
    }
    let mut differences = Vec::new();
    let documents = [
        ("human", format!("exit {}\n{}", run.code, run.stdout)),
        ("json", std::fs::read_to_string(out.join("report.json")).expect("json")),
        ("markdown", std::fs::read_to_string(out.join("report.md")).expect("markdown")),
        ("junit", std::fs::read_to_string(out.join("report.junit.xml")).expect("junit")),
        ("sarif", std::fs::read_to_string(out.join("report.sarif")).expect("sarif")),
    ];
    for (format, text) in documents {
        differences.extend(crate::snapshots::check(
            &format!("clients/real.{format}"),
            &redact_real(&text),
        ));
    }
    crate::snapshots::assert_all(differences);
}

/// The adapters of `tool` with status `status`, by name.
fn with_status(report: &Value, tool: &str, status: &str) -> Vec<String> {
    crate::util::tool(report, tool)["adapters"]
        .as_array()
        .expect("adapters")
        .iter()
        .filter(|a| a["status"] == status)
        .map(|a| a["adapter"].as_str().expect("name").to_owned())
        .collect()
}

#[test]
fn each_client_sees_what_server_everything_lists_to_its_own_handshake() {
    // server-everything registers `get-roots-list` for clients that declare roots and the
    // elicitation tools for clients that declare elicitation; mcp-fuzz declares neither.
    let everything = format!(
        "{}/fixtures/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        env!("CARGO_MANIFEST_DIR")
    );
    assert!(
        std::path::Path::new(&everything).exists(),
        "{everything} is missing: run scripts/install-e2e.sh"
    );
    let dir_arg = clients_dir();
    let run = mcp_fuzz([
        "clients",
        "--format",
        "json",
        "--clients-dir",
        &dir_arg,
        "--adapter",
        "real",
        "--",
        "node",
        &everything,
        "stdio",
    ]);
    assert_eq!(run.code, SUCCESS, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON");
    check_schema(&report);
    for c in report["realClients"].as_array().expect("realClients") {
        assert_eq!(c["status"], "captured", "{c:#}");
    }
    let roots = ["inspector", "claude-code", "gemini-cli"];
    let elicitation = ["codex-cli", "claude-code"];
    for (tool, declared) in [
        ("get-roots-list", &roots[..]),
        ("trigger-elicitation-request", &elicitation[..]),
        ("trigger-url-elicitation", &elicitation[..]),
    ] {
        assert_eq!(crate::util::tool(&report, tool)["listedToMcpFuzz"], false, "{tool}");
        let shown = with_status(&report, tool, "accepted");
        assert_eq!(shown, declared, "{tool}: the clients that declared the capability see it");
        let others: Vec<&str> = CLIENTS.iter().copied().filter(|c| !declared.contains(c)).collect();
        assert_eq!(with_status(&report, tool, "not-listed"), others, "{tool}");
    }
    // A tool every handshake gets is listed to each client, and to mcp-fuzz.
    assert_eq!(with_status(&report, "echo", "accepted").len(), 5);
    // The human summary names them.
    let human = mcp_fuzz([
        "clients",
        "--clients-dir",
        &dir_arg,
        "--adapter",
        "inspector",
        "--",
        "node",
        &everything,
        "stdio",
    ]);
    assert!(human.stdout.contains("`get-roots-list`: not listed to mcp-fuzz"), "{}", human.stdout);
}
