//! `fixtures/expected.toml` read as a strict baseline: every fixture server is fuzzed with the
//! arguments the file names, and the finding kinds must be exactly the expected ones - a missing
//! finding fails, and so does an unexpected one - as must the list of tools called and the exit
//! status of crashes, and the shrunk input where a `minimal` is given. Every case file the run
//! writes must replay as still failing with its own cause. Every `fx-*` binary must have an
//! entry, so a new fixture cannot go undocumented.

use crate::run::{run_json, server};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Entry {
    expect: Vec<String>,
    tools: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    exit_status: Option<i64>,
    exit_code: Option<i32>,
    /// Run the protocol conformance phase too (off otherwise: every rmcp-based fixture gets
    /// the Rust SDK's -32601 answer to a `tools/call` whose params do not parse, a finding about
    /// the SDK rather than the fixture).
    #[serde(default)]
    protocol: bool,
    /// The fixture serves streamable HTTP on `$PORT`: mcp-fuzz starts it with
    /// `--http http://127.0.0.1:{port}/mcp`.
    #[serde(default)]
    http: bool,
    /// The ids of the protocol checks that must fail (with `protocol`), exactly.
    checks_failed: Option<Vec<String>>,
    /// Per-tool expectations (`[fx-combo.search]`) and the prose keys (`trigger`, `notes`...).
    #[serde(flatten)]
    rest: BTreeMap<String, toml::Value>,
}

fn baseline() -> BTreeMap<String, Entry> {
    toml::from_str(include_str!("../../fixtures/expected.toml"))
        .unwrap_or_else(|e| panic!("fixtures/expected.toml does not parse: {e}"))
}

/// Kinds of the findings about `tool` (or about anything, with `None`).
fn kinds(report: &Value, tool: Option<&str>) -> BTreeSet<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| tool.is_none_or(|t| f["tool"] == t))
        .map(|f| f["kind"].as_str().expect("kind").to_owned())
        .collect()
}

/// What is wrong with one fixture's run, as readable lines (empty: it matched).
fn check(name: &str, entry: &Entry) -> Vec<String> {
    let args: Vec<&str> = entry.args.iter().map(String::as_str).collect();
    let mut problems = Vec::new();
    if let Some(code) = entry.exit_code {
        let path = server(name);
        let mut all: Vec<String> = entry.args.clone();
        all.extend(["--".to_owned(), path.display().to_string()]);
        let run = crate::util::finish(crate::util::command(&all).spawn().expect("starts"));
        if run.code != code {
            problems.push(format!("exit code {} instead of {code}: {}", run.code, run.stderr));
        }
        return problems;
    }
    let artifacts = crate::util::TempDir::new(&format!("expected-{name}"));
    let dir = artifacts.path().display().to_string();
    let http: &[&str] = if entry.http { &["--http", "http://127.0.0.1:{port}/mcp"] } else { &[] };
    let args: Vec<&str> = [http, &args[..], &["--artifacts", &dir]].concat();
    let (_, report, stderr) = if entry.protocol {
        crate::run::run_json_with_protocol(name, &args)
    } else {
        run_json(name, &args)
    };
    problems.extend(replays(artifacts.path()));
    let want: BTreeSet<String> = entry.expect.iter().cloned().collect();
    let got = kinds(&report, None);
    if got != want {
        problems.push(format!(
            "finding kinds {got:?}, expected {want:?}\n  missing: {:?}\n  unexpected: {:?}\n  stderr: {}",
            want.difference(&got).collect::<Vec<_>>(),
            got.difference(&want).collect::<Vec<_>>(),
            stderr.lines().last().unwrap_or("")
        ));
    }
    if let Some(want) = &entry.checks_failed {
        let failed: Vec<&str> = report["protocol"]["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["status"] == "fail")
            .filter_map(|c| c["id"].as_str())
            .collect();
        if failed != *want {
            problems.push(format!(
                "protocol checks failed {failed:?}, expected {want:?}: {}",
                report["protocol"]
            ));
        }
    }
    let called: Vec<&str> = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter(|t| t["status"] != "skipped")
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    if called != entry.tools {
        problems.push(format!("tools called {called:?}, expected {:?}", entry.tools));
    }
    if let Some(status) = entry.exit_status {
        let exits: Vec<&Value> = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["outcome"]["kind"] == "exited")
            .map(|f| &f["outcome"]["exit"]["code"])
            .collect();
        if exits.is_empty() || exits.iter().any(|c| c.as_i64() != Some(status)) {
            problems.push(format!("exit statuses {exits:?}, expected all {status}"));
        }
    }
    for (tool, sub) in &entry.rest {
        let Some(table) = sub.as_table() else { continue };
        let want: BTreeSet<String> = table
            .get("expect")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect();
        let got = kinds(&report, Some(tool));
        if got != want {
            problems.push(format!("tool {tool}: finding kinds {got:?}, expected {want:?}"));
        }
        // `minimal`: the shrunk input of the tool's failure finding, exactly.
        if let Some(text) = table.get("minimal").and_then(toml::Value::as_str) {
            let minimal: Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("[{name}.{tool}] minimal is not JSON: {e}"));
            let shrunk: Vec<&Value> = report["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .filter(|f| f["tool"] == tool.as_str() && f["severity"] == "failure")
                .map(|f| &f["minimalArguments"])
                .collect();
            if shrunk != [&minimal] {
                problems.push(format!("tool {tool}: shrunk to {shrunk:?}, expected {minimal}"));
            }
        }
    }
    problems
}

/// Finding kinds whose replay waits out a time limit: not replayed here (their shrinking and
/// settling have tests of their own).
const TIMED: [&str; 4] = ["timeout", "hang", "slow", "upstream-timeout"];

/// What is wrong with the replays of the case files in `dir`: each must still fail with its own
/// cause (`mcp-fuzz replay` compares the signature: kind, code, exit, the normalised message),
/// except a flaky one's and a timed one's.
fn replays(dir: &std::path::Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let case: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let kind = case["signature"]["kind"].as_str().unwrap_or_default();
        if case["flaky"] == true || TIMED.contains(&kind) {
            continue;
        }
        let path = file.display().to_string();
        let run = crate::util::finish(
            crate::util::command(["replay", path.as_str()]).spawn().expect("starts"),
        );
        let out: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
        if out["verdict"] != "still-fails" {
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
            problems.push(format!(
                "case file {} replays as {} (expected {}, got {}): {}",
                name.unwrap_or_default(),
                out["verdict"],
                case["signature"],
                out["outcome"],
                run.stderr.lines().last().unwrap_or("")
            ));
        }
    }
    problems
}

#[test]
fn every_fixture_reports_exactly_what_expected_toml_says() {
    let entries = baseline();
    let bins: BTreeSet<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/servers/src/bin"))
            .expect("fixture bins")
            .filter_map(|e| e.ok())
            .filter_map(|e| e.path().file_stem().map(|s| s.to_string_lossy().into_owned()))
            .filter(|n| n.starts_with("fx-"))
            .collect();
    let documented: BTreeSet<String> = entries.keys().cloned().collect();
    assert_eq!(
        bins.difference(&documented).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "fixture servers without an entry in fixtures/expected.toml"
    );
    // Fixture runs mostly wait on the server: four at a time, from a shared queue.
    let names: Vec<&String> = entries.keys().collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut found = Vec::new();
                    while let Some(name) =
                        names.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        let problems = check(name, &entries[*name]);
                        found.extend(problems.into_iter().map(|p| format!("[{name}] {p}")));
                    }
                    found
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("fixture check panicked")).collect()
    });
    failures.sort();
    assert!(failures.is_empty(), "fixtures/expected.toml does not hold:\n{}", failures.join("\n"));
}
