//! `mcp-fuzz run` against real servers from other SDKs, installed at pinned versions by
//! `scripts/install-e2e.sh` (part of the README's test command): the TypeScript SDK's
//! `@modelcontextprotocol/server-everything`, a TypeScript `McpServer` server and a Python
//! FastMCP server, each with a correct tool, a tool whose handler throws on bad input, and a tool
//! that validates. The installs are required: a missing one fails the test with the command to
//! run, it is never skipped.

use crate::util::{command, finish, tool};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn require(path: &Path) {
    assert!(
        path.exists(),
        "{} is missing: run `bash scripts/install-e2e.sh` first (the README's test command does)",
        path.display()
    );
}

fn fuzz(server: &[&str]) -> (i32, Value) {
    fuzz_with(server, "20")
}

fn fuzz_with(server: &[&str], timeout: &str) -> (i32, Value) {
    fuzz_over(&[], server, timeout)
}

/// The same server fuzzed over streamable HTTP (`--http URL -- SERVER http`: mcp-fuzz starts
/// it on a port of its own), with the same arguments as [`fuzz_with`].
fn fuzz_http(server: &[&str], timeout: &str) -> (i32, Value) {
    fuzz_over(&["--http", "http://127.0.0.1:{port}/mcp"], server, timeout)
}

/// `mcp-fuzz --json --cases 3 --timeout TIMEOUT TRANSPORT -- SERVER`: its exit code and report.
fn fuzz_over(transport: &[&str], server: &[&str], timeout: &str) -> (i32, Value) {
    let mut args = vec!["--json", "--cases", "3", "--timeout", timeout];
    args.extend_from_slice(transport);
    args.push("--");
    args.extend_from_slice(server);
    let run = finish(
        command(&args).current_dir(env!("CARGO_MANIFEST_DIR")).spawn().expect("mcp-fuzz starts"),
    );
    let report = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}); stderr:\n{}", run.stderr));
    (run.code, report)
}

/// What a run found about the server's tools, prompts and resources (not the protocol checks,
/// which differ by transport): item, kind and severity of each finding.
fn verdicts(r: &Value) -> Vec<(String, String, String, String)> {
    let mut v: Vec<(String, String, String, String)> = r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["check"].is_null())
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (s(&f["tool"]), s(&f["surface"]["name"]), s(&f["kind"]), s(&f["severity"]))
        })
        .collect();
    v.sort();
    v
}

/// The same server over stdio and over streamable HTTP: the same verdicts about its tools,
/// prompts and resources (issue 31 item 2).
fn assert_same_verdicts(stdio: &Value, http: &Value) {
    assert_eq!(verdicts(stdio), verdicts(http), "stdio and HTTP judge the server differently");
    assert_eq!(http["target"]["transport"], "streamable-http");
    let checks = http["protocol"]["checks"].as_array().expect("HTTP checks");
    // The transport's own checks, the JSON-RPC request checks of stdio's table (the same ids),
    // and those of what the run heard (nothing sent for them).
    let ids = |r: &Value| -> Vec<String> {
        let checks = r["protocol"]["checks"].as_array().expect("checks");
        checks.iter().filter_map(|c| c["id"].as_str()).map(str::to_owned).collect()
    };
    let (over_http, over_stdio) = (ids(http), ids(stdio));
    assert!(over_http.iter().any(|i| i.starts_with("http-")), "{over_http:?}");
    for id in ["ping", "unknown-method", "tools-call-no-name", "resource-not-found"] {
        assert!(over_http.iter().any(|i| i == id) && over_stdio.iter().any(|i| i == id), "{id}");
    }
    assert!(checks.iter().any(|c| c["status"] == "pass"), "{checks:#?}");
}

fn findings<'a>(r: &'a Value, tool: &str) -> Vec<&'a Value> {
    r["findings"].as_array().expect("findings").iter().filter(|f| f["tool"] == tool).collect()
}

/// The shared expectations for the two SDK servers: `shout`'s exception is found, `checked`'s
/// validation is graceful, `greet` is clean.
fn check_sdk_server(r: &Value) {
    let shout = findings(r, "shout");
    assert!(shout.iter().any(|f| f["kind"] == "handler-exception"), "shout: {shout:#?}");
    // `shout`'s schema accepts anything (`text` is untyped and optional), so `{}` is valid input
    // on which the handler throws: found on valid cases, with the SDK's own text.
    assert!(
        shout.iter().any(|f| f["kind"] == "handler-exception" && f["severity"] == "failure"),
        "{shout:#?}"
    );
    let checked = findings(r, "checked");
    assert!(checked.iter().all(|f| f["severity"] != "failure"), "checked: {checked:#?}");
    assert!(tool(r, "checked")["graceful"].as_u64().expect("graceful") > 0);
    assert!(
        findings(r, "greet").iter().all(|f| f["severity"] != "failure"),
        "{:#?}",
        findings(r, "greet")
    );
    // Beyond tools (issue 15): the healthy prompt, resource and template are called and none
    // of them is a failure (the SDKs' own odd error codes are warnings at most).
    let s = &r["surfaces"];
    for list in ["prompts", "resources", "templates", "completions"] {
        let items = s[list].as_array().unwrap_or_else(|| panic!("{list}: {s:#}"));
        assert!(items.iter().any(|i| i["requests"].as_u64() > Some(0)), "{list}: {s:#}");
    }
    let prompt = &s["prompts"][0];
    assert!(prompt["succeeded"].as_u64() > Some(0), "a valid prompt call succeeds: {s:#}");
    let beyond: Vec<&Value> = r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| !f["surface"].is_null() && f["severity"] == "failure")
        .collect();
    assert!(beyond.is_empty(), "no false failure beyond tools: {beyond:#?}");
    assert!(r["protocol"]["checks"].as_array().is_some_and(|c| c.len() >= 15), "{r:#}");
}

#[test]
fn typescript_sdk_mcpserver() {
    let script = repo("fixtures/e2e/ts-server.mjs");
    require(&repo("fixtures/e2e/node_modules/@modelcontextprotocol/sdk"));
    let (code, r) = fuzz(&["node", script.to_str().expect("utf-8")]);
    assert_eq!(code, 1, "the throwing tool is a finding: {r:#}");
    check_sdk_server(&r);
    let (_, http) = fuzz_http(&["node", script.to_str().expect("utf-8"), "http"], "20");
    assert_same_verdicts(&r, &http);
}

#[test]
fn python_sdk_fastmcp() {
    let python = repo("target/e2e-venv/bin/python");
    require(&python);
    let script = repo("fixtures/e2e/py_server.py");
    let (code, r) = fuzz(&[python.to_str().expect("utf-8"), script.to_str().expect("utf-8")]);
    assert_eq!(code, 1, "the throwing tool is a finding: {r:#}");
    check_sdk_server(&r);
    let (code, http) = fuzz_http(
        &[python.to_str().expect("utf-8"), script.to_str().expect("utf-8"), "http"],
        "20",
    );
    assert_same_verdicts(&r, &http);
    // FastMCP keeps every transport rule the HTTP checks test (the auth check needs a token);
    // the JSON-RPC request checks fail over HTTP as over stdio (its -32602 for an unknown
    // method, its code 0 for an unknown resource).
    let failed = |r: &Value| -> Vec<String> {
        let checks = r["protocol"]["checks"].as_array().expect("checks");
        let ids = checks.iter().filter(|c| c["status"] == "fail").filter_map(|c| c["id"].as_str());
        ids.map(str::to_owned).collect()
    };
    assert!(failed(&http).iter().all(|id| !id.starts_with("http-")), "{:?}", failed(&http));
    assert_eq!(failed(&http), failed(&r), "the same JSON-RPC checks fail over both transports");
    assert_eq!(code, 1, "the throwing tool is a finding over HTTP too");
}

#[test]
fn server_everything() {
    let entry =
        repo("fixtures/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    require(&entry);
    // Some of its tools wait for the client (sampling, elicitation): a short timeout keeps it quick.
    let (_, r) = fuzz_with(&["node", entry.to_str().expect("utf-8"), "stdio"], "3");
    assert_eq!(r["server"]["name"], "mcp-servers/everything", "{:#}", r["server"]);
    let tools = r["tools"].as_array().expect("tools");
    assert!(tools.len() >= 10, "{tools:#?}");
    // Every tool not annotated read-only is skipped, with the reason.
    for t in tools {
        if t["status"] == "skipped" {
            assert!(
                t["reason"].as_str().expect("reason").contains("--include-destructive")
                    || t["reason"].as_str().expect("reason").contains("--tool"),
                "{t:#}"
            );
        }
    }
    assert_eq!(tool(&r, "echo")["status"], "tested");
    assert!(
        r["findings"].as_array().expect("findings").iter().all(|f| f["kind"] != "exited"),
        "{:#}",
        r["findings"]
    );
}

/// `@modelcontextprotocol/server-memory` with its write tools (`--include-destructive`), its
/// knowledge graph in a temporary file: the sequence phase names its families, chains the
/// entity names that `create_entities` returns into the tools that take them, and reports no
/// failure (the server answers a name it does not know with a tool error).
///
/// See: issue 13 (mcp-runtime-check's `--sequential` chained none of its three groups).
#[test]
fn server_memory_families_are_chained_without_a_false_failure() {
    let entry = repo("fixtures/e2e/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    require(&entry);
    let dir = crate::util::TempDir::new("server-memory");
    let file = format!("MEMORY_FILE_PATH={}", dir.join("memory.jsonl").display());
    let run = finish(
        command([
            "--json",
            "--include-destructive",
            "--env",
            &file,
            "--",
            "node",
            entry.to_str().expect("utf-8"),
        ])
        .spawn()
        .expect("mcp-fuzz starts"),
    );
    let r: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}); stderr:\n{}", run.stderr));
    // The protocol phase's warnings are about the TypeScript SDK (-32603 for invalid params).
    let failures: Vec<&Value> = r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] != "info" && f["check"].is_null())
        .collect();
    assert!(failures.is_empty(), "no failure and no warning: {failures:#?}");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s = &r["stateful"];
    let families: Vec<&str> = s["families"]
        .as_array()
        .expect("families")
        .iter()
        .filter_map(|f| f["noun"].as_str())
        .collect();
    for noun in ["entity", "relation", "observation"] {
        assert!(families.contains(&noun), "{noun} family named: {s:#}");
    }
    let links = s["links"].as_array().expect("links");
    let linked = |from: &str, to: &str| links.iter().any(|l| l["from"] == from && l["to"] == to);
    assert!(linked("create_entities", "delete_entities"), "a created name deleted: {s:#}");
    assert!(
        links.iter().any(|l| l["from"] == "create_entities" && l["to"] != "delete_entities"),
        "a created name used by another tool: {s:#}"
    );
    assert!(dir.join("memory.jsonl").exists(), "the graph went to the temporary file");
}

/// A default run (default timeout, cases and limits) of the reference server passes: its
/// long-running tool is slow by design (progress notifications, or a `duration` it is asked to
/// wait), never a hang or a failure, and every slow case says why.
#[test]
fn server_everything_default_run_passes() {
    let entry =
        repo("fixtures/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    require(&entry);
    let entry = entry.to_str().expect("utf-8");
    let url = "http://127.0.0.1:{port}/mcp";
    // The same default run over stdio and over streamable HTTP, side by side (both mostly wait).
    let (run, http) = std::thread::scope(|s| {
        let http = s.spawn(|| {
            finish(
                command(["--json", "--http", url, "--", "node", entry, "streamableHttp"])
                    .current_dir(env!("CARGO_MANIFEST_DIR"))
                    .spawn()
                    .expect("mcp-fuzz starts"),
            )
        });
        let run = finish(
            command(["--json", "--", "node", entry, "stdio"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .spawn()
                .expect("mcp-fuzz starts"),
        );
        (run, http.join().expect("the HTTP run"))
    });
    let r: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}); stderr:\n{}", run.stderr));
    let h: Value = serde_json::from_str(&http.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}); stderr:\n{}", http.stderr));
    // Progress on the request's SSE stream extends the deadline as on stdio: the long-running
    // tool is `slow` over both, never a `hang` (issue 31's first observation).
    assert_same_verdicts(&r, &h);
    // The transport's MUSTs it breaks (issue 31's targets): a foreign Origin is served, and a
    // DELETEd session's id gets 400 instead of 404.
    let failed: Vec<&str> = h["protocol"]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["status"] == "fail")
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert!(failed.contains(&"http-origin-foreign"), "{failed:?}");
    assert!(failed.contains(&"http-session-deleted"), "{failed:?}");
    // It listens on `::` (every interface), found in the sockets of the process it was started as.
    assert!(failed.contains(&"http-binds-loopback"), "{failed:?}");
    assert_eq!(http.code, 1, "a broken MUST is a failure: {}", http.stderr);
    let all = r["findings"].as_array().expect("findings");
    assert!(all.iter().all(|f| f["severity"] != "failure"), "{all:#?}");
    assert_eq!(run.code, 0, "{all:#?}");
    let long = findings(&r, "trigger-long-running-operation");
    assert!(long.iter().all(|f| f["kind"] == "slow"), "{long:#?}");
    // The random `duration` cases: the time was seen to follow it.
    assert!(
        long.iter()
            .any(|f| f["message"].as_str().is_some_and(|m| m.contains("follows `duration`"))),
        "{long:#?}"
    );
    // Beyond tools (issue 15): its prompts, resources, templates and completions are all called,
    // and the TypeScript SDK's -32603 answers to invalid params are warnings, not failures.
    let s = &r["surfaces"];
    let called = |list: &str| {
        s[list]
            .as_array()
            .map_or(0, |l| l.iter().filter(|i| i["requests"].as_u64() > Some(0)).count())
    };
    assert!(called("prompts") >= 3, "{s:#}");
    assert!(called("resources") >= 3, "{s:#}");
    assert!(called("templates") >= 1, "{s:#}");
    assert!(called("completions") >= 2, "{s:#}");
    let args_prompt =
        s["prompts"].as_array().expect("prompts").iter().find(|p| p["name"] == "args-prompt");
    assert!(args_prompt.is_some_and(|p| p["succeeded"].as_u64() > Some(0)), "{s:#}");
    let p = &r["protocol"];
    assert!(p["passed"].as_u64() >= Some(10), "{p:#}");
    let sdk: Vec<&Value> =
        all.iter().filter(|f| f["kind"] == "invalid-params-as-internal-error").collect();
    assert!(!sdk.is_empty(), "the TypeScript SDK answers -32603 for a non-object `arguments`");
}

/// mcp-fuzz declares no client capabilities, so server-filesystem keeps the directory it was
/// given; `--roots DIR` declares the `roots` capability and answers `roots/list` with DIR, which
/// server-filesystem then allows instead (why roots are off by default), already for the first
/// call.
///
/// See: issue 15 item 5.
#[test]
fn roots_are_declared_only_when_asked() {
    let entry =
        repo("fixtures/e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    require(&entry);
    let given = crate::util::TempDir::new("fs-given");
    let root = crate::util::TempDir::new("fs-root");
    let list_root = |extra: &[&str]| {
        let args_json = serde_json::json!({"path": root.path()}).to_string();
        let mut args: Vec<String> =
            ["call", "--tool", "list_directory", "--args", &args_json].map(String::from).to_vec();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args.extend([
            "--".to_owned(),
            "node".to_owned(),
            entry.display().to_string(),
            given.path().display().to_string(),
        ]);
        let run = finish(command(&args).spawn().expect("mcp-fuzz starts"));
        let printed: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
        printed
    };
    let without = list_root(&[]);
    let kind = &without["outcome"]["kind"];
    assert_eq!(kind, "tool-error", "outside the allowed directory: {without:#}");
    assert_eq!(without["result"]["isError"], true, "the server's own result: {without:#}");
    std::fs::write(root.join("listed.txt"), "").expect("a file to list");
    let with = list_root(&["--roots", &root.path().display().to_string()]);
    assert_eq!(with["outcome"]["kind"], "ok", "the declared root is allowed: {with:#}");
    assert!(with["result"].to_string().contains("listed.txt"), "the listing: {with:#}");
}

/// `@itseasy21/mcp-knowledge-graph` 1.0.7 (npm) with its write tools: one finding per tool and
/// cause (a message template such as "Entity with name X not found" is one cause whatever X
/// was), one `accepts-invalid` finding per tool and rule family with every case kept, and every
/// failure true when its smallest arguments are replayed on a fresh process. Before, 119
/// findings (55 failures, 58 `accepts-invalid`) for about 25 bugs.
///
/// See: issue 30 items 3 and 6.
#[test]
fn knowledge_graph_reports_each_bug_once() {
    let entry = repo("fixtures/e2e/node_modules/@itseasy21/mcp-knowledge-graph/dist/index.js");
    require(&entry);
    let dir = crate::util::TempDir::new("knowledge-graph");
    let memory = dir.join("memory.jsonl");
    let server =
        ["node", entry.to_str().expect("utf-8"), "--memory-path", memory.to_str().expect("utf-8")];
    let mut args = vec!["--json", "--include-destructive", "--"];
    args.extend(server);
    let run = finish(command(args).spawn().expect("mcp-fuzz starts"));
    let r: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}); stderr:\n{}", run.stderr));
    let findings = r["findings"].as_array().expect("findings");
    assert!(findings.len() <= 45, "{} findings: {findings:#?}", findings.len());
    // Per tool: each failure cause once, each accepts-invalid rule family once.
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for f in findings.iter().filter(|f| f["check"].is_null()) {
        let members = f["members"].as_array().cloned().unwrap_or_else(|| vec![f.clone()]);
        let cause = f["cause"].as_str().or(f["message"].as_str()).unwrap_or("");
        let mut keys: Vec<(String, String, String)> = members
            .iter()
            .map(|m| {
                let tool_name = m["tool"].as_str().unwrap_or("server");
                (tool_name.to_owned(), m["kind"].as_str().unwrap_or("").to_owned(), cause.into())
            })
            .collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            assert!(!seen.contains(&key), "{key:?} reported twice: {findings:#?}");
            seen.push(key);
        }
    }
    let unchecked: Vec<&Value> =
        findings.iter().filter(|f| f["kind"] == "accepts-invalid").collect();
    assert!(!unchecked.is_empty(), "its nested items are not validated: {findings:#?}");
    for f in &unchecked {
        let cases = 1 + f["otherCases"].as_array().map_or(0, Vec::len) as u64;
        assert_eq!(f["occurrences"].as_u64().unwrap_or(1), cases, "every case kept: {f:#}");
        assert!(f["cause"].is_string(), "its rule family: {f:#}");
    }
    assert!(
        unchecked.iter().any(|f| f["message"].as_str().is_some_and(
            |m| m.contains("does not check required and type in the items of `/entities`")
        )),
        "{unchecked:#?}"
    );
    // Every failure replays: the same kind of outcome from its smallest arguments, on a fresh
    // process with a small graph (the run's own calls filled the first one; some handlers only
    // crash while iterating over entities or relations).
    let fresh = dir.join("replay.jsonl");
    let server = [server[0], server[1], server[2], fresh.to_str().expect("utf-8")];
    let failures: Vec<&Value> = findings.iter().filter(|f| f["severity"] == "failure").collect();
    assert!(failures.len() >= 10, "{failures:#?}");
    for f in failures {
        let tool_name = f["tool"].as_str().or(f["tools"][0].as_str()).expect("a tool");
        let smallest = if f["minimalArguments"].is_object() {
            &f["minimalArguments"]
        } else {
            &f["arguments"]
        };
        let json = smallest.to_string();
        let mut call = vec!["call", "--tool", tool_name, "--args", &json, "--"];
        call.extend(server);
        std::fs::write(&fresh, SEED_GRAPH).expect("seed graph written");
        let replay = finish(command(call).spawn().expect("mcp-fuzz call starts"));
        let answer: Value = serde_json::from_str(&replay.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", replay.stdout));
        assert_eq!(answer["outcome"]["kind"], f["outcome"]["kind"], "{f:#}\nreplay: {answer:#}");
    }
}

/// Two entities and a relation, in `@itseasy21/mcp-knowledge-graph`'s JSON-lines format.
const SEED_GRAPH: &str = concat!(
    r#"{"type":"entity","name":"a","entityType":"t","observations":["o"]}"#,
    "\n",
    r#"{"type":"entity","name":"b","entityType":"t","observations":[]}"#,
    "\n",
    r#"{"type":"relation","from":"a","to":"b","relationType":"r"}"#,
    "\n",
);
