//! The real clients, end to end: each one captures listings served by `fx-serve-tools`.
//!
//! These tests need the clients (`scripts/install-clients.sh`, or `MCP_FUZZ_CLIENTS_DIR`); a
//! client that is not installed FAILS its test with the install command, it is never skipped.
//! Every test holds one lock, so captures never overlap and the timings they print are clean.
//! Each test marks the client and the server with its own environment variable and checks that
//! no process carrying it is left afterwards.
//!
//! ```sh
//! scripts/install-clients.sh
//! cargo test -p mcp-fuzz-clients --test real -- --nocapture   # prints the timings
//! ```

use mcp_fuzz_clients::real::{
    CLIENTS_DIR_VAR, Call, Capture, CaptureOptions, CaptureStatus, Installation, RealClient,
    ReasonSource, ServerSpec, SubsetServer, Through, call_through, capture_all, capture_with,
    discover,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

/// The deadline of one client run in these tests.
const TIMEOUT: Duration = Duration::from_secs(60);

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fixture server (`fx-serve-tools`, `fx-crash-on-valid`), built once per test binary next to
/// it.
fn fixture(name: &str) -> PathBuf {
    static BUILD: Once = Once::new();
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>").to_path_buf();
    BUILD.call_once(|| {
        // `cargo test --workspace` has built them already. Building with `-p` would resolve the
        // fixtures' features alone and compile rmcp and its dependencies a second time (3
        // minutes on 2 cores: issue 28); `--workspace` builds what every other target uses.
        if ["fx-serve-tools", "fx-crash-on-valid"].iter().all(|b| profile_dir.join(b).exists()) {
            return;
        }
        let mut cmd = std::process::Command::new(env!("CARGO"));
        cmd.args(["build", "--quiet", "--workspace", "--bins"]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let status = cmd.current_dir(root()).status().expect("cargo runs");
        assert!(status.success(), "building the fixture servers failed");
    });
    profile_dir.join(name)
}

fn fx_serve_tools() -> PathBuf {
    fixture("fx-serve-tools")
}

/// `MCP_FUZZ_CLIENTS_DIR`, else the repository's `target/clients` (tests run in `clients/`).
fn clients_dir() -> PathBuf {
    std::env::var_os(CLIENTS_DIR_VAR).map_or_else(|| root().join("target/clients"), PathBuf::from)
}

/// The installed client, or a loud failure that says how to install it.
fn installed(client: RealClient) -> Installation {
    match discover(client, Some(&clients_dir())) {
        Ok(install) => install,
        Err(e) => panic!(
            "\n\n{client} is needed by this test and is not installed.\n{e}\n\
             Install every client with: scripts/install-clients.sh\n\n"
        ),
    }
}

fn unique() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A throwaway directory for tools files.
fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-fuzz-real-test-{}", unique()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn edge() -> Vec<Value> {
    let text =
        std::fs::read_to_string(root().join("fixtures/clients/real/edge.json")).expect("edge.json");
    let doc: Value = serde_json::from_str(&text).expect("edge.json is JSON");
    doc["tools"].as_array().expect("tools").clone()
}

/// The edge tools named `names`, in that order.
fn pick(names: &[&str]) -> Vec<Value> {
    let all = edge();
    names
        .iter()
        .map(|n| {
            all.iter()
                .find(|t| t["name"] == *n)
                .unwrap_or_else(|| panic!("{n} in edge.json"))
                .clone()
        })
        .collect()
}

const LONG: &str = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

/// Four tools every client should expose: a plain one and three whose names clients rewrite.
fn base() -> Vec<Value> {
    pick(&["plain", "dot.name", "space name", LONG])
}

/// A capture setup: the tools file, the marker, the options with a subset server.
struct Setup {
    dir: PathBuf,
    marker: String,
    options: CaptureOptions,
}

const TEST_MARKER: &str = "MCP_FUZZ_REAL_TEST";

impl Setup {
    fn new() -> Self {
        let dir = temp_dir();
        let marker = unique();
        let program = fx_serve_tools();
        let (subset_dir, subset_marker) = (dir.clone(), marker.clone());
        let counter = Arc::new(AtomicU64::new(0));
        let subset: SubsetServer = Arc::new(move |tools: &[Value]| {
            let path =
                subset_dir.join(format!("subset-{}.json", counter.fetch_add(1, Ordering::Relaxed)));
            std::fs::write(&path, json!({ "tools": tools }).to_string())
                .map_err(|e| e.to_string())?;
            Ok(ServerSpec::new(&program)
                .env("FX_TOOLS_FILE", path.to_string_lossy())
                .env(TEST_MARKER, subset_marker.clone()))
        });
        let mut options = CaptureOptions {
            timeout: TIMEOUT,
            subset_server: Some(subset),
            clients_dir: Some(clients_dir()),
            ..CaptureOptions::default()
        };
        options.client_env.insert(TEST_MARKER.into(), marker.clone());
        Self { dir, marker, options }
    }

    /// The spec serving `tools`, logging what the client sends.
    fn spec(&self, tools: &[Value]) -> ServerSpec {
        let file = self.dir.join(format!("tools-{}.json", unique()));
        std::fs::write(&file, json!({ "tools": tools }).to_string()).expect("tools file");
        ServerSpec::new(fx_serve_tools())
            .env("FX_TOOLS_FILE", file.to_string_lossy())
            .env("FX_LOG_FILE", self.dir.join("requests.jsonl").to_string_lossy())
            .env(TEST_MARKER, self.marker.clone())
    }

    #[expect(clippy::print_stderr, reason = "each capture reports its time (see --nocapture)")]
    fn capture(&self, install: &Installation, tools: &[Value]) -> Capture {
        let c = capture_with(install, &self.spec(tools), &self.options);
        eprintln!(
            "{} {}: {} exposed, {} lost in {:.2} s",
            c.client,
            c.version.as_deref().unwrap_or("?"),
            c.tools.len(),
            c.lost.len(),
            c.elapsed.as_secs_f64()
        );
        assert!(c.elapsed < TIMEOUT, "{}: {:?}", c.client, c.elapsed);
        c
    }

    /// Pids still carrying this setup's marker.
    fn leftovers(&self) -> Vec<u32> {
        marked(&format!("{TEST_MARKER}={}", self.marker))
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The pids (not ours) whose environment holds `needle`.
fn marked(needle: &str) -> Vec<u32> {
    let own = std::process::id();
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|e| e == needle.as_bytes()))
        })
        .collect()
}

fn assert_captured(c: &Capture) {
    assert_eq!(c.status, CaptureStatus::Captured, "{}: {:?}", c.client, c.status);
}

fn assert_pinned(c: &Capture) {
    assert_eq!(
        c.version.as_deref(),
        Some(c.client.pinned_version()),
        "{}: not the pinned version",
        c.client
    );
}

fn shown(c: &Capture, server_name: &str) -> String {
    c.tool(server_name)
        .unwrap_or_else(|| panic!("{}: {server_name} not exposed: {:#?}", c.client, c.tools))
        .shown_name
        .clone()
}

fn assert_no_leftovers(setup: &Setup) {
    let left = setup.leftovers();
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[test]
fn inspector_exposes_names_unchanged_and_leaves_out_non_object_roots_silently() {
    let _lock = serial();
    let install = installed(RealClient::Inspector);
    let setup = Setup::new();
    let mut tools = base();
    tools.extend(pick(&["root_array", "tuple_items"]));
    let c = setup.capture(&install, &tools);
    assert_captured(&c);
    assert_pinned(&c);
    assert_eq!(shown(&c, "dot.name"), "dot.name");
    assert_eq!(shown(&c, LONG), LONG);
    assert!(c.tool("tuple_items").is_some());
    let lost = c.lost_tool("root_array").expect("root_array is left out");
    assert_eq!(lost.source, ReasonSource::Silent);
    assert!(c.listing_failure.is_none());
    assert_eq!(c.server_tools.as_ref().map(Vec::len), Some(6), "what the server listed");
    let handshake = c.handshake.as_ref().expect("the tap saw initialize");
    assert_eq!(handshake.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(handshake.capabilities.get("roots").is_some(), "{:?}", handshake.capabilities);
    assert!(c.request.pointer("/result/tools").is_some(), "the raw CLI output");
    // The server's own log agrees with the tap: the client's handshake reached it.
    let log = std::fs::read_to_string(setup.dir.join("requests.jsonl")).expect("server log");
    assert!(log.contains("\"clientInfo\":{\"name\":\"inspector-cli\""), "{log}");
    assert_no_leftovers(&setup);
}

#[test]
fn mcpo_renders_operations_and_a_schema_it_cannot_model_stops_it_with_the_culprit_named() {
    let _lock = serial();
    let install = installed(RealClient::Mcpo);
    let setup = Setup::new();
    let c = setup.capture(&install, &base());
    assert_captured(&c);
    assert_pinned(&c);
    assert_eq!(shown(&c, "dot.name"), "tool_dot_name_post");
    let plain = c.tool("plain").expect("plain");
    let schema = plain.input_schema.as_ref().expect("a request body");
    assert_eq!(schema["properties"]["q"]["type"], "string");
    assert_eq!(schema["required"], json!(["q"]));
    assert_eq!(c.request["openapi"], "3.1.0");
    assert_eq!(
        c.handshake.as_ref().and_then(|h| h.protocol_version.as_deref()),
        Some("2025-11-25")
    );

    let mut tools = base();
    tools.insert(2, pick(&["definitions_ref"]).remove(0));
    let c = setup.capture(&install, &tools);
    assert_captured(&c);
    assert!(c.tools.is_empty(), "mcpo refused to start: nothing is exposed");
    let failure = c.listing_failure.as_ref().expect("a lost listing");
    assert!(failure.reason.contains("refused to start"), "{}", failure.reason);
    let culprits: Vec<&str> = failure.culprits.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(culprits, ["definitions_ref"]);
    assert_eq!(failure.culprits[0].source, ReasonSource::Bisection);
    assert!(
        failure.culprits[0].reason.contains("Custom field not found"),
        "{:?}",
        failure.culprits
    );
    let others = failure.others.as_ref().expect("re-run without the culprit");
    assert_eq!(others.len(), 4);
    assert!(failure.probes >= 2 && failure.probes <= 6, "{} probes", failure.probes);
    let lost = c.lost_tool("plain").expect("the others went down with the listing");
    assert!(lost.reason.starts_with("lost with the whole listing"));
    assert_no_leftovers(&setup);
}

#[test]
fn codex_rewrites_names_sends_strict_false_and_skips_what_it_cannot_convert() {
    let _lock = serial();
    let install = installed(RealClient::CodexCli);
    let setup = Setup::new();
    let mut tools = base();
    tools.extend(pick(&["tuple_items", "root_array"]));
    let c = setup.capture(&install, &tools);
    assert_captured(&c);
    assert_pinned(&c);
    assert_eq!(shown(&c, "dot.name"), "dot_name");
    assert_eq!(shown(&c, "space name"), "space_name");
    let plain = c.tool("plain").expect("plain");
    assert_eq!(plain.namespace.as_deref(), Some("mcp__srv"));
    assert_eq!(plain.strict, Some(false), "Codex does not use strict mode for MCP tools");
    let lost = c.lost_tool("tuple_items").expect("tuple_items is skipped");
    assert_eq!(lost.source, ReasonSource::Stderr);
    assert!(lost.reason.contains("failed to build tool spec"), "{}", lost.reason);
    assert!(c.tool("root_array").is_some(), "a non-object root is passed on");
    assert_eq!(
        c.handshake.as_ref().and_then(|h| h.protocol_version.as_deref()),
        Some("2025-06-18")
    );
    assert!(c.request["tools"].is_array(), "the raw Responses request");
    assert_no_leftovers(&setup);
}

#[test]
fn claude_code_prefixes_names_skips_with_a_reason_and_loses_a_listing_with_a_non_object_root() {
    let _lock = serial();
    let install = installed(RealClient::ClaudeCode);
    let setup = Setup::new();
    let mut tools = base();
    tools.push(pick(&["property_named_ref"]).remove(0));
    let c = setup.capture(&install, &tools);
    assert_captured(&c);
    assert_pinned(&c);
    assert_eq!(shown(&c, "dot.name"), "mcp__srv__dot_name");
    assert_eq!(shown(&c, "plain"), "mcp__srv__plain");
    let lost = c.lost_tool("property_named_ref").expect("skipped");
    assert_eq!(lost.source, ReasonSource::ClientLog);
    assert!(lost.reason.contains("would be rejected by the Anthropic API"), "{}", lost.reason);
    let methods = &c.handshake.as_ref().expect("handshake").methods;
    assert_eq!(methods.first().map(String::as_str), Some("server/discover"), "{methods:?}");

    let mut tools = base();
    tools.insert(1, pick(&["root_array"]).remove(0));
    let c = setup.capture(&install, &tools);
    assert_captured(&c);
    assert!(c.tools.is_empty(), "every tool is lost");
    let failure = c.listing_failure.as_ref().expect("a lost listing");
    assert_eq!(failure.source, ReasonSource::ClientLog);
    let culprits: Vec<&str> = failure.culprits.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(culprits, ["root_array"], "named from the log's tools.1 index");
    assert_eq!(failure.probes, 1, "no bisection: one re-run without the culprit");
    assert_eq!(failure.others.as_ref().map(Vec::len), Some(4));
    assert_no_leftovers(&setup);
}

#[test]
fn gemini_cli_cuts_long_names_drops_a_built_in_name_and_loses_a_listing_with_a_boolean_property() {
    let _lock = serial();
    let install = installed(RealClient::GeminiCli);
    let setup = Setup::new();
    let mut tools = base();
    tools.push(pick(&["write_file"]).remove(0));
    let c = setup.capture(&install, &tools);
    assert_captured(&c);
    assert_pinned(&c);
    assert_eq!(shown(&c, "dot.name"), "mcp_srv_dot.name");
    // Headless mode excludes its built-in `write_file`, and an MCP tool of that name with it.
    let lost = c.lost_tool("write_file").expect("write_file is dropped");
    assert_eq!(lost.source, ReasonSource::Silent);
    let cut = shown(&c, LONG);
    assert_eq!(cut.chars().count(), 63, "{cut}");
    assert!(cut.contains("..."), "{cut}");
    assert!(c.tool(LONG).expect("mapped back").notes.iter().any(|n| n.contains("cut")));
    let plain = c.tool("plain").and_then(|t| t.input_schema.as_ref()).expect("plain");
    assert!(plain["properties"].get("wait_for_previous").is_some(), "Gemini CLI adds a property");

    let mut tools = base();
    tools.push(pick(&["boolean_property"]).remove(0));
    let c = setup.capture(&install, &tools);
    assert_captured(&c);
    let failure = c.listing_failure.as_ref().expect("a lost listing");
    assert_eq!(failure.source, ReasonSource::Stderr);
    assert_eq!(
        failure.culprits.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["boolean_property"]
    );
    assert_eq!(failure.others.as_ref().map(Vec::len), Some(4));
    assert_no_leftovers(&setup);
}

#[test]
fn a_server_that_never_answers_times_out_and_leaves_nothing_behind() {
    let _lock = serial();
    let install = installed(RealClient::Inspector);
    let setup = Setup::new();
    // `sleep` never answers initialize; it carries the marker through the client's -e.
    let spec = ServerSpec::new("sleep").arg("300").env(TEST_MARKER, setup.marker.clone());
    let options = CaptureOptions { timeout: Duration::from_secs(3), ..setup.options.clone() };
    let started = Instant::now();
    let c = capture_with(&install, &spec, &options);
    let CaptureStatus::Broken { reason, .. } = &c.status else { panic!("{:?}", c.status) };
    assert!(reason.contains("did not finish within"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_no_leftovers(&setup);

    let missing = ServerSpec::new("no-such-server-program-anywhere");
    let c = capture_with(&install, &missing, &setup.options);
    let CaptureStatus::Broken { reason, .. } = &c.status else { panic!("{:?}", c.status) };
    assert!(reason.contains("is not on PATH"), "{reason}");
}

/// A read-only tool with a required integer `n` and an optional string `note`.
fn count_tool() -> Value {
    json!({
        "name": "count",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "note": {"type": "string"}},
            "required": ["n"]
        },
        "annotations": {"readOnlyHint": true}
    })
}

fn call(tool: &str, arguments: Value) -> Call {
    Call { tool: tool.into(), arguments }
}

#[test]
fn calls_through_mcpo_arrive_as_sent_rewritten_or_refused_and_a_dying_server_is_seen() {
    let _lock = serial();
    let install = installed(RealClient::Mcpo);
    let setup = Setup::new();
    let calls = [
        call("count", json!({"n": 2})),
        call("count", json!({"n": "many"})),
        call("count", json!({"n": 3, "extra": true})),
        call("count", json!({"n": 4, "note": null})),
    ];
    let out = call_through(&install, &setup.spec(&[count_tool()]), &calls, &setup.options)
        .expect("mcpo starts");
    assert_eq!(out.len(), calls.len());
    let Through::Answered { sent, response, client } = &out[0] else { panic!("{:?}", out[0]) };
    assert_eq!(sent, &json!({"n": 2}), "sent as given");
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert!(client.starts_with("HTTP 200"), "{client}");
    // mcpo's pydantic model refuses a string for an integer: the server never sees the call.
    let Through::NotSent { client } = &out[1] else { panic!("{:?}", out[1]) };
    assert!(client.starts_with("HTTP 422"), "{client}");
    // mcpo drops properties the schema does not declare on the way.
    let Through::Answered { sent, .. } = &out[2] else { panic!("{:?}", out[2]) };
    assert_eq!(sent, &json!({"n": 3}), "what the server received");
    // An optional property is not nullable to mcpo's model: null is refused too.
    let Through::NotSent { client } = &out[3] else { panic!("{:?}", out[3]) };
    assert!(client.starts_with("HTTP 422") && client.contains("note"), "{client}");

    let crash =
        ServerSpec::new(fixture("fx-crash-on-valid")).env(TEST_MARKER, setup.marker.clone());
    let out =
        call_through(&install, &crash, &[call("greet", json!({"name": "x"}))], &setup.options)
            .expect("mcpo starts");
    let Through::ServerExited { status, sent, .. } = &out[0] else { panic!("{:?}", out[0]) };
    assert_eq!(*status, Some(6), "fx-crash-on-valid exits 6 on valid input");
    assert_eq!(sent, &json!({"name": "x"}));
    assert_no_leftovers(&setup);
}

#[test]
fn calls_through_the_inspector_cli_reach_the_server_and_a_dying_server_is_seen() {
    let _lock = serial();
    let install = installed(RealClient::Inspector);
    let setup = Setup::new();
    let calls = [call("count", json!({"n": 2})), call("count", json!({"n": "many"}))];
    let out = call_through(&install, &setup.spec(&[count_tool()]), &calls, &setup.options)
        .expect("the Inspector CLI runs");
    let Through::Answered { sent, response, client } = &out[0] else { panic!("{:?}", out[0]) };
    assert_eq!(sent, &json!({"n": 2}));
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert!(client.contains("content"), "the CLI prints the result: {client}");
    // The Inspector CLI converts each argument to its schema's type before sending: "many" for an
    // integer becomes NaN, which goes on the wire as null; the server's validation answers that.
    let Through::Answered { sent, response, .. } = &out[1] else { panic!("{:?}", out[1]) };
    assert_eq!(sent, &json!({"n": null}), "the Inspector's rewrite");
    assert_eq!(response["result"]["isError"], true, "{response}");

    let crash =
        ServerSpec::new(fixture("fx-crash-on-valid")).env(TEST_MARKER, setup.marker.clone());
    let out =
        call_through(&install, &crash, &[call("greet", json!({"name": "x"}))], &setup.options)
            .expect("the Inspector CLI runs");
    let Through::ServerExited { status, .. } = &out[0] else { panic!("{:?}", out[0]) };
    assert_eq!(*status, Some(6));
    assert_no_leftovers(&setup);
}

#[test]
#[expect(clippy::print_stderr, reason = "the timing test prints its table")]
fn timing_one_capture_per_client_then_all_five_at_once() {
    let _lock = serial();
    let installs: Vec<Installation> = RealClient::ALL.iter().map(|&c| installed(c)).collect();
    let setup = Setup::new();
    let tools = base();
    let mut rows = Vec::new();
    for install in &installs {
        let c = setup.capture(install, &tools);
        assert_captured(&c);
        assert_eq!(c.tools.len(), 4, "{}: {:?}", c.client, c.lost);
        rows.push((c.client, c.elapsed));
    }
    let spec = setup.spec(&tools);
    let started = Instant::now();
    let all = capture_all(&RealClient::ALL, &spec, &setup.options);
    let wall = started.elapsed();
    for c in &all {
        assert_captured(c);
        assert_eq!(c.tools.len(), 4, "{}: {:?}", c.client, c.lost);
    }
    eprintln!("\ncapture timings (one server, 4 tools):");
    for ((client, alone), together) in rows.iter().zip(&all) {
        eprintln!(
            "  {client:<12} alone {:>5.2} s   in parallel {:>5.2} s",
            alone.as_secs_f64(),
            together.elapsed.as_secs_f64()
        );
    }
    eprintln!("  all five in parallel: {:.2} s wall", wall.as_secs_f64());
    // The targets (5 s per capture, 30 s for all five) are measured by `cargo bench --bench
    // clients`; these bounds only catch a capture gone badly wrong on a loaded machine.
    for (client, alone) in &rows {
        assert!(*alone < Duration::from_secs(15), "{client} took {alone:?} (target 5 s)");
    }
    assert!(wall < Duration::from_secs(60), "all five took {wall:?} (target 30 s)");
    assert_no_leftovers(&setup);
}
