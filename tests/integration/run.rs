//! `mcp-fuzz run` against the fixture servers of `fixtures/servers` (real rmcp stdio servers,
//! each misbehaving in one named way): the exact outcomes, the score, the exit code, and that no
//! process is left behind.

use crate::util::{command, finish, tool};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Once;

/// The exit codes, repeated here on purpose: changing one must break a test.
const FINDINGS: i32 = 1;
const SERVER_START: i32 = 3;
const SUCCESS: i32 = 0;
const INTERNAL_ERROR: i32 = 101;

/// Builds the fixture servers once (same profile as this test) and returns the path of one.
pub(crate) fn server(name: &str) -> PathBuf {
    static BUILD: Once = Once::new();
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test binary>
    let profile_dir = exe.parent().and_then(|d| d.parent()).expect("profile dir").to_path_buf();
    BUILD.call_once(|| {
        // `cargo test --workspace` has built them already (the fixtures crate has tests of its
        // own); building with `-p` would re-resolve features and rebuild dependencies, so a
        // missing one is built with the workspace's features.
        if ["fx-healthy", "fx-http", "example-notes"].iter().all(|b| profile_dir.join(b).exists()) {
            return;
        }
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut cmd = std::process::Command::new(env!("CARGO"));
        cmd.args(["build", "--quiet", "--workspace", "--bins"]);
        if release {
            cmd.arg("--release");
        }
        let status = cmd.current_dir(env!("CARGO_MANIFEST_DIR")).status().expect("cargo runs");
        assert!(status.success(), "building the fixture servers failed");
    });
    profile_dir.join(name)
}

/// Runs `mcp-fuzz --json ARGS -- <fixture>` and parses the report. The protocol conformance
/// phase is off (`--no-protocol`): every rmcp-based fixture gets the Rust SDK's -32601 answer to
/// a `tools/call` whose params do not parse, which is about the SDK, not what these tests judge;
/// [`run_json_with_protocol`] keeps it.
pub(crate) fn run_json(fixture: &str, args: &[&str]) -> (i32, Value, String) {
    run_json_at(&server(fixture), args)
}

/// [`run_json`] with the protocol conformance phase.
pub(crate) fn run_json_with_protocol(fixture: &str, args: &[&str]) -> (i32, Value, String) {
    run_json_inner(&server(fixture), args, true)
}

/// [`run_json`] for a server at `path`.
pub(crate) fn run_json_at(path: &std::path::Path, args: &[&str]) -> (i32, Value, String) {
    run_json_inner(path, args, false)
}

fn run_json_inner(path: &std::path::Path, args: &[&str], protocol: bool) -> (i32, Value, String) {
    let path = path.to_path_buf();
    let mut all: Vec<String> = vec!["--json".into()];
    if !protocol && !args.contains(&"--no-protocol") {
        all.push("--no-protocol".into());
    }
    if !args.contains(&"--cases") {
        all.extend(["--cases".to_owned(), "3".to_owned()]);
    }
    all.extend(args.iter().map(|s| (*s).to_owned()));
    // Every server process of this run carries a marker of its own in its environment, so the
    // leftover check sees this run's processes only, not a concurrent test's run of the fixture.
    let marker = run_marker();
    all.extend(["--env".to_owned(), marker.clone()]);
    all.push("--".into());
    all.push(path.display().to_string());
    let run = finish(command(&all).spawn().expect("mcp-fuzz starts"));
    let report: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!("report is not JSON ({e}); stderr:\n{}\nstdout:\n{}", run.stderr, run.stdout)
    });
    assert_no_marked_leftovers(&marker, &path);
    let schema: Value = serde_json::from_str(include_str!("../../docs/report.schema.json"))
        .expect("report schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("report schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(&report).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "the report breaks docs/report.schema.json: {errors:#?}");
    (run.code, report, run.stderr)
}

/// A `KEY=VALUE` environment entry unique to one run: given to its server with `--env`, it is
/// inherited by everything the server spawns, so [`assert_no_marked_leftovers`] sees that run's
/// processes only, never a concurrent test's run of the same fixture.
pub(crate) fn run_marker() -> String {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!(
        "MCP_FUZZ_TEST_RUN={}-{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// No process whose environment holds `marker` (a `KEY=VALUE` entry) survives the run of `path`.
pub(crate) fn assert_no_marked_leftovers(marker: &str, path: &std::path::Path) {
    // The kill is asynchronous; give the kernel a moment to reap.
    for _ in 0..50 {
        let alive = std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read(e.path().join("environ")).ok())
            .filter(|env| env.split(|b| *b == 0).any(|entry| entry == marker.as_bytes()))
            .count();
        if alive == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("processes left behind after the run of {}", path.display());
}

/// Every finding of `kind` in a run report.
pub(crate) fn findings_of_kind<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["findings"].as_array().expect("findings").iter().filter(|f| f["kind"] == kind).collect()
}

/// The first finding of `kind` in a run report; panics with the report when there is none.
pub(crate) fn finding_of_kind<'a>(report: &'a Value, kind: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} finding: {report:#}"))
}

fn kinds(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["kind"].as_str().expect("kind").to_owned())
        .collect()
}

#[test]
fn healthy_server_scores_100_and_passes() {
    let (code, r, _) = run_json("fx-healthy", &["--fail-under", "90"]);
    assert_eq!(code, SUCCESS, "{r:#}");
    assert_eq!(r["score"]["percent"], 100.0);
    assert_eq!(r["reportVersion"], 1);
    assert!(kinds(&r).is_empty(), "{r:#}");
    assert_eq!(tool(&r, "echo")["status"], "tested");
    assert_eq!(r["server"]["name"], "fx-healthy");
}

#[test]
fn crash_on_missing_required_is_an_exit_with_status() {
    let (code, r, _) = run_json("fx-crash-on-missing", &[]);
    assert_eq!(code, FINDINGS);
    let f = finding_of_kind(&r, "exited");
    assert_eq!(f["case"]["mutation"], "missing-required");
    assert_eq!(f["case"]["pointer"], "/key");
    assert_eq!(f["outcome"]["exit"]["code"], 3);
    assert!(r["restarts"].as_u64().expect("restarts") >= 1);
    assert!(r["score"]["percent"].as_f64().expect("score") < 100.0);
}

#[test]
fn exceptions_are_failures_whatever_their_transport() {
    let (code, r, _) = run_json("fx-internal-error", &[]);
    assert_eq!(code, FINDINGS);
    assert!(kinds(&r).iter().all(|k| k == "internal-error"), "{:?}", kinds(&r));
    assert_eq!(r["score"]["percent"], 0.0);
    let (code, r, _) = run_json("fx-exception-text", &[]);
    assert_eq!(code, FINDINGS);
    assert!(kinds(&r).contains(&"handler-exception".to_owned()), "{:?}", kinds(&r));
    assert_eq!(r["score"]["percent"], 0.0);
}

#[test]
fn graceful_servers_score_100() {
    for fx in ["fx-graceful-iserror", "fx-graceful-32602"] {
        let (code, r, _) = run_json(fx, &["--fail-under", "100"]);
        assert_eq!(code, SUCCESS, "{fx}: {r:#}");
        assert_eq!(r["score"]["percent"], 100.0, "{fx}");
    }
}

#[test]
fn unreachable_backend_is_unavailable_not_zero() {
    let (code, r, _) = run_json("fx-unavailable", &[]);
    assert_eq!(code, SUCCESS, "{r:#}");
    assert_eq!(tool(&r, "weather")["status"], "unavailable");
    assert_eq!(kinds(&r), ["tool-unavailable"]);
    assert!(r["score"]["percent"].is_null(), "left out of the score");
}

#[test]
fn lenient_tool_accepts_invalid_input() {
    let (_, r, _) = run_json("fx-lenient", &[]);
    let k = kinds(&r);
    assert!(k.contains(&"accepts-invalid".to_owned()), "{k:?}");
    assert!(k.iter().all(|k| k == "accepts-invalid" || k == "lax-coercion"), "{k:?}");
    for f in r["findings"].as_array().expect("findings") {
        let want = if f["kind"] == "lax-coercion" { "info" } else { "warning" };
        assert_eq!(f["severity"], want, "{f}");
    }
    // The string "0" for the integer `count`: coercion, reported once for the tool.
    let lax =
        r["findings"].as_array().expect("findings").iter().filter(|f| f["kind"] == "lax-coercion");
    assert_eq!(lax.count(), 1);
}

#[test]
fn output_schema_violations_are_failures() {
    let (code, r, _) = run_json("fx-output-violation", &[]);
    assert_eq!(code, FINDINGS);
    let k = kinds(&r);
    assert_eq!(k.iter().filter(|k| *k == "output-schema-violation").count(), 2, "{k:?}");
}

#[test]
fn destructive_tools_are_never_called_without_the_flag() {
    let marker = std::env::temp_dir().join(format!("mcp-fuzz-marker-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let env = format!("FX_MARKER_FILE={}", marker.display());
    let (_, r, _) = run_json("fx-destructive", &["--env", &env]);
    assert_eq!(tool(&r, "delete_all")["status"], "skipped");
    assert!(
        tool(&r, "delete_all")["reason"]
            .as_str()
            .expect("reason")
            .contains("--include-destructive")
    );
    assert!(!marker.exists(), "the destructive tool was called");
    let (_, r, _) = run_json("fx-destructive", &["--env", &env, "--include-destructive"]);
    assert_eq!(tool(&r, "delete_all")["status"], "tested");
    assert!(marker.exists(), "with --include-destructive it is called");
    let _ = std::fs::remove_file(&marker);
    assert!(
        r["target"]["env"][0].as_str().expect("env").ends_with("=[REDACTED]"),
        "env values are redacted"
    );
}

#[test]
fn listing_pages_cursor_loops_and_malformed_tools() {
    let (_, r, _) = run_json("fx-paged", &[]);
    assert_eq!(r["tools"].as_array().expect("tools").len(), 7);
    let (_, r, _) = run_json("fx-cursor-loop", &[]);
    assert!(kinds(&r).contains(&"tools-list-truncated".to_owned()), "{:?}", kinds(&r));
    let (_, r, _) = run_json("fx-malformed-tool", &[]);
    assert_eq!(kinds(&r).iter().filter(|k| *k == "malformed-tool").count(), 2, "{:?}", kinds(&r));
    assert_eq!(tool(&r, "good")["status"], "tested");
}

#[test]
fn a_tool_that_dies_on_every_valid_input_still_gets_its_invalid_cases_run() {
    let (code, r, _) = run_json("fx-crash-on-valid", &[]);
    assert_eq!(code, FINDINGS);
    let t = tool(&r, "greet");
    // Three deaths on a string `name`, which no case survived: the other valid cases (every
    // one has a string `name`) are not sent; the invalid ones all are.
    assert_eq!(t["status"], "tested", "{t:#}");
    assert_eq!(t["outcomes"]["exited"], 3, "valid cases stop after the third death: {t:#}");
    assert_eq!(t["notSent"][0]["class"], "string at `/name`", "{t:#}");
    assert!(t["notSent"][0]["cases"].as_u64().expect("cases") > 0, "{t:#}");
    assert!(t["cases"]["invalid"].as_u64().expect("invalid") >= 3, "{t:#}");
    assert_eq!(r["score"]["percent"], 100.0, "every invalid case is graceful: {r:#}");
    assert!(findings_of_kind(&r, "gave-up").is_empty(), "{r:#}");
}

#[test]
fn a_listing_with_ever_new_cursors_stops_at_100_pages() {
    let (_, r, _) = run_json("fx-cursor-loop", &["--env", "FX_FRESH_CURSORS=1", "--cases", "0"]);
    let tools = r["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 100, "one tool per page, 100 pages");
    assert_eq!(tools[99]["name"], "looped_99");
    let truncated: Vec<&Value> = findings_of_kind(&r, "tools-list-truncated");
    assert_eq!(truncated.len(), 1, "{r:#}");
    assert!(truncated[0]["message"].as_str().expect("message").contains("100"), "{r:#}");
}

#[test]
fn late_answers_are_slow_warnings_not_hangs_and_need_no_restart() {
    // `slow` sleeps 1.5 s by default and up to 5 s; it keeps answering ping meanwhile.
    // With --timeout 3 the 5 s sleeps are late, and answered well before a hang is called.
    let (code, r, _) = run_json("fx-slow", &["--timeout", "3", "--cases", "0"]);
    assert_eq!(code, SUCCESS, "slow is a warning, not a failure: {r:#}");
    assert_eq!(kinds(&r), ["slow"], "{r:#}");
    let slow = &r["findings"][0];
    assert_eq!(slow["severity"], "warning");
    let message = slow["message"].as_str().expect("message");
    assert!(message.starts_with("answered only after "), "{message}");
    assert!(message.contains("(--timeout 3 s): slow, not hung"), "{message}");
    assert!(slow.get("minimalArguments").is_none(), "a slow call is not shrunk: {slow}");
    assert_eq!(r["restarts"], 0, "a slow server answers ping: no restart");
    let counts = &tool(&r, "slow")["outcomes"];
    assert!(counts["ok"].as_u64().unwrap_or(0) >= 1, "short sleeps still answer: {counts}");
    assert!(counts["timeout"].as_u64().unwrap_or(0) >= 1, "long ones did not in time: {counts}");
}

#[test]
fn a_hang_whose_time_follows_a_number_is_slow_by_input() {
    // `slow` sleeps `ms` milliseconds (up to 5000): with --timeout 1 (so a watch of 2 s) its
    // longest sleeps get no answer in time, and the smaller values it is probed with are
    // answered in proportion to `ms`.
    let (code, r, _) = run_json("fx-slow", &["--timeout", "1", "--cases", "0"]);
    assert_eq!(code, SUCCESS, "slow by input is a warning: {r:#}");
    assert_eq!(kinds(&r), ["slow"], "{r:#}");
    let message = r["findings"][0]["message"].as_str().expect("message");
    assert!(message.starts_with("slow by input, not hung: the time follows `ms` ("), "{message}");
    assert!(message.contains("past --max-call-time 2 s"), "{message}");
}

#[test]
fn progress_extends_the_timeout_and_an_unbounded_rate_is_cancelled_at_once() {
    let (code, r, _) = run_json(
        "fx-progress",
        &["--timeout", "1", "--max-call-time", "10s", "--no-shrink", "--env", "FX_DELAY_SECS=1.5"],
    );
    assert_eq!(code, SUCCESS, "{r:#}");
    let long_op = tool(&r, "long_op");
    // The default operation (3 s, a report every 0.3 s) outlives --timeout 1 and answers.
    assert!(long_op["outcomes"]["ok"].as_u64().unwrap_or(0) >= 1, "{long_op}");
    let slow: Vec<&str> = r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["tool"] == "long_op" && f["kind"] == "slow")
        .filter_map(|f| f["message"].as_str())
        .collect();
    let estimate = slow
        .iter()
        .find(|m| m.contains("at the observed rate"))
        .unwrap_or_else(|| panic!("steps 2^31 - 1 must be cancelled on its rate: {slow:?}"));
    assert!(estimate.contains("days") || estimate.contains("years"), "{estimate}");
    assert!(estimate.contains("it cannot finish within 10 s, so it was cancelled"), "{estimate}");
    assert!(r["durationSecs"].as_f64().expect("duration") < 60.0, "no call ran to a limit");
}

#[test]
fn an_unreachable_upstream_makes_each_tool_unavailable_within_twelve_calls() {
    let log = std::env::temp_dir().join(format!("mcp-fuzz-upstream-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let env = format!("FX_LOG_FILE={}", log.display());
    let (code, r, _) = run_json("fx-upstream-down", &["--timeout", "3", "--env", &env]);
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert_eq!(code, SUCCESS, "an unavailable tool is a warning: {r:#}");
    // Named in an isError text, a retry loop on stderr, a JSON-RPC error's message or its data.
    // See: issue 29 item 6 (`@antv/mcp-server-chart` offline was called 89-175 times per tool).
    let tools =
        ["geocode", "get_quote", "sync_inventory", "search_catalog", "render_chart", "lookup_rate"];
    for name in tools {
        let t = tool(&r, name);
        assert_eq!(t["status"], "unavailable", "{t}");
        let n = calls.lines().filter(|l| *l == name).count();
        assert!((1..=12).contains(&n), "{name} was called {n} times");
        assert!(t["reason"].as_str().is_some_and(|m| m.contains("unreachable upstream")), "{t}");
    }
    // The retry loop on stderr makes the unanswered calls upstream timeouts, never hangs.
    assert_eq!(tool(&r, "sync_inventory")["outcomes"].get("timeout"), None, "{r:#}");
    assert!(!kinds(&r).iter().any(|k| k == "hang" || k == "timeout"), "{:?}", kinds(&r));
}

#[test]
fn junk_on_stdout_is_a_protocol_violation_of_the_call_or_of_the_server() {
    let (code, r, _) = run_json("fx-junk-stdout", &["--timeout", "20"]);
    assert_eq!(code, FINDINGS);
    assert_eq!(tool(&r, "echo")["status"], "tested");
    let findings = r["findings"].as_array().expect("findings");
    let of = |tool: Option<&str>| {
        findings
            .iter()
            .filter(|f| f["kind"] == "protocol-violation" && f["tool"].as_str() == tool)
            .collect::<Vec<_>>()
    };
    // `DEBUG: starting up` before initialize: one finding about the server, quoting it.
    let server = of(None);
    assert_eq!(server.len(), 1, "{findings:?}");
    assert!(server[0]["message"].as_str().is_some_and(|m| m.contains("DEBUG: starting up")));
    // `junk: <n>` before each answer: the call's own violation, quoted.
    let calls = of(Some("echo"));
    assert!(!calls.is_empty());
    assert!(calls[0]["message"].as_str().is_some_and(|m| m.contains("`junk: ")), "{calls:?}");
    // Each call ended on the junk line: none waited for the timeout.
    assert_eq!(tool(&r, "echo")["outcomes"].get("timeout"), None, "{}", tool(&r, "echo"));
}

#[test]
fn one_tool_with_two_wire_bugs_is_two_findings_each_shrunk_to_its_own_input() {
    // See: issue 30 item 4. Error replies carry the id as a string; a result holding a quote is
    // written unescaped. Each bug is its own finding, shrunk to an input that sets off that bug
    // (not the other, which fails with the same kind), and each minimal input replays its cause.
    let (code, r, _) = run_json("fx-wire-two-bugs", &["--cases", "10"]);
    assert_eq!(code, FINDINGS);
    let echo: Vec<&Value> = findings_of_kind(&r, "protocol-violation")
        .into_iter()
        .filter(|f| f["tool"] == "echo")
        .collect();
    assert_eq!(echo.len(), 2, "{echo:#?}");
    let by = |breach: &str| {
        echo.iter()
            .find(|f| f["message"].as_str().is_some_and(|m| m.contains(breach)))
            .unwrap_or_else(|| panic!("no finding for {breach}: {echo:#?}"))
    };
    let id = by("id has another JSON type");
    let quote = by("not JSON-RPC");
    assert_eq!(id["minimalArguments"], serde_json::json!({}), "{id:#}");
    let minimal = quote["minimalArguments"]["message"].as_str().expect("a message");
    assert!(minimal == "\"" || minimal == "\\", "{quote:#}");
    for (finding, breach) in [(id, "id has another JSON type"), (quote, "not JSON-RPC")] {
        let args = finding["minimalArguments"].to_string();
        let server = server("fx-wire-two-bugs").display().to_string();
        let replay =
            crate::util::mcp_fuzz(["call", "--tool", "echo", "--args", &args, "--", &server]);
        let out: Value = serde_json::from_str(&replay.stdout).expect("call prints JSON");
        let detail = out["outcome"]["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(breach), "{args} replays {breach}: {out:#}");
    }
}

#[test]
fn each_kind_of_breach_outside_a_call_is_its_own_finding_with_its_own_example() {
    // See: issue 30 item 4 (a banner and replies to notifications were one finding whose first
    // example was the banner).
    let (code, r, _) = run_json("fx-wire-banner-and-reply", &[]);
    assert_eq!(code, FINDINGS);
    let server: Vec<&str> = findings_of_kind(&r, "protocol-violation")
        .into_iter()
        .filter(|f| f["tool"].is_null())
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert_eq!(server.len(), 2, "{server:#?}");
    assert!(server.iter().any(|m| m.contains("Echo MCP Server running on stdio")), "{server:#?}");
    let reply = server.iter().find(|m| m.contains("a response to a notification"));
    assert!(reply.is_some_and(|m| m.contains("\"id\":null")), "{server:#?}");
}

#[test]
fn an_error_that_echoes_its_input_is_one_finding_whatever_the_input() {
    // See: issue 30 items 1 and 6 (30 findings of one "Entity with name X not found"). Before
    // the echo was elided from the cause, `--cases 20` made 26 findings here.
    let (code, r, _) = run_json("fx-echo-error", &["--cases", "20"]);
    assert_eq!(code, FINDINGS);
    let internal = findings_of_kind(&r, "internal-error");
    assert_eq!(internal.len(), 1, "{internal:#?}");
    assert!(internal[0]["occurrences"].as_u64().is_some_and(|n| n >= 10), "{:#}", internal[0]);
    assert_eq!(internal[0]["cause"], "internal-error: Entity with name … not found");
}

#[test]
fn stacks_of_several_runtimes_are_grouped_by_exception_and_place() {
    // See: issue 30 item 1 (three tools' three exceptions were one cause, the traceback's
    // header). Also caught: an empty value echoed made a traceback lose its frame (its
    // indentation was elided as an echoed gap), so one tool's bug had two causes.
    let (code, r, _) = run_json("fx-tracebacks", &["--cases", "3"]);
    assert_eq!(code, FINDINGS);
    let found = findings_of_kind(&r, "handler-exception");
    let causes: Vec<&str> = found.iter().filter_map(|f| f["cause"].as_str()).collect();
    assert_eq!(causes.len(), 4, "{found:#?}");
    let shared = found.iter().find(|f| f["tool"].is_null()).expect("one server-wide finding");
    assert_eq!(shared["tools"], serde_json::json!(["alpha", "beta"]), "{shared:#}");
    for (tool, place) in [
        ("gamma", "(at /app/gamma.py:7)"),
        ("delta", "(at /app/delta.js:3:9)"),
        ("epsilon", "(at src/epsilon.rs:10:5)"),
    ] {
        let own: Vec<&&Value> = found.iter().filter(|f| f["tool"] == tool).collect();
        assert_eq!(own.len(), 1, "{tool}: {own:#?}");
        assert!(own[0]["cause"].as_str().is_some_and(|c| c.ends_with(place)), "{:#}", own[0]);
    }
}

#[test]
fn a_bug_behind_an_open_circuit_breaker_is_found_on_a_fresh_process() {
    // See: issue 30 item 7 (`@jpisnice/shadcn-ui-mcp-server` 2.0.0: its TypeErrors were folded
    // into one "Service temporarily unavailable" finding, because a re-run that answered the
    // breaker's message counted as reproducing). The breaker opens on three unknown names,
    // before any invalid input: the TypeError shows only on a fresh process, and is the finding.
    let (code, r, _) = run_json("fx-breaker-open", &["--cases", "3"]);
    assert_eq!(code, FINDINGS);
    let internal = findings_of_kind(&r, "internal-error");
    assert_eq!(internal.len(), 2, "{internal:#?}");
    let by = |text: &str| {
        internal
            .iter()
            .find(|f| f["outcome"]["message"].as_str().is_some_and(|m| m.contains(text)))
            .unwrap_or_else(|| panic!("no finding for {text}: {internal:#?}"))
    };
    let type_error = by("Cannot read properties of undefined");
    assert_eq!(type_error["minimalArguments"], serde_json::json!({}), "{type_error:#}");
    let message = type_error["message"].as_str().unwrap_or_default();
    assert!(message.contains("found on a fresh process"), "{message}");
    assert!(message.contains("`Service temporarily unavailable due to previous failures`"));
    let unknown = by("not found in registry");
    assert_eq!(unknown["case"]["mode"], "boundary", "{unknown:#}");
    assert!(
        internal.iter().all(|f| !f["cause"].as_str().unwrap_or("").contains("temporarily")),
        "the breaker is a note, not a finding: {internal:#?}"
    );
}

#[test]
fn a_breaker_opened_by_an_unreachable_upstream_is_no_failure() {
    // See: issue 30 item 7 (shadcn-ui 2.0.0 offline: a 2-tool failure whose message was its
    // breaker's "Service temporarily unavailable due to previous failures").
    let (code, r, _) = run_json("fx-upstream-breaker", &["--cases", "3"]);
    assert_eq!(code, SUCCESS, "{r:#}");
    let breaker: Vec<&Value> = findings_of_kind(&r, "internal-error")
        .into_iter()
        .filter(|f| f["message"].as_str().is_some_and(|m| m.contains("temporarily unavailable")))
        .collect();
    assert_eq!(breaker.len(), 2, "one per tool: {r:#}");
    for f in breaker {
        assert_eq!(f["severity"], "info", "{f:#}");
        assert!(f["message"].as_str().is_some_and(|m| m.contains("a circuit breaker")), "{f:#}");
    }
}

#[test]
fn hangs_time_out_and_the_run_goes_on() {
    let marker = std::env::temp_dir().join(format!("mcp-fuzz-cancel-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let env = format!("FX_MARKER_FILE={}", marker.display());
    let (code, r, _) = run_json("fx-hang", &["--timeout", "1", "--no-shrink", "--env", &env]);
    assert_eq!(code, FINDINGS);
    assert_eq!(kinds(&r), ["hang"], "{r:#}");
    let message = r["findings"][0]["message"].as_str().expect("message");
    assert!(message.starts_with("no answer within "), "{message}");
    assert_eq!(tool(&r, "wait")["status"], "tested");
    // Every timed-out request was cancelled (`notifications/cancelled`), before any restart.
    let timeouts = tool(&r, "wait")["outcomes"]["timeout"].as_u64().expect("timeout count");
    assert!(timeouts >= 1);
    let cancelled = std::fs::read_to_string(&marker).unwrap_or_default();
    let _ = std::fs::remove_file(&marker);
    assert!(
        cancelled.lines().filter(|l| l.starts_with("cancelled ")).count() as u64 >= timeouts,
        "{timeouts} timeouts, cancellations seen by the server:\n{cancelled}"
    );
}

#[test]
fn a_hung_call_holds_up_no_other_case() {
    // One hung call waited for would take the whole --timeout, past the time budget, and stop
    // the tool's cases there; in the background it lets them all be sent within the budget.
    let args = ["--tool", "export_report", "--timeout", "8", "--time-budget", "5s", "--no-shrink"];
    let (code, r, _) = run_json("fx-seventeen", &args);
    assert_eq!(code, FINDINGS, "{r:#}");
    assert_eq!(kinds(&r), ["hang"], "{r:#}");
    let t = tool(&r, "export_report");
    assert!(t.get("reason").is_none(), "every case was sent within the budget: {t}");
    let sent: u64 =
        t["outcomes"].as_object().expect("outcomes").values().filter_map(Value::as_u64).sum();
    let planned: u64 =
        ["boundary", "valid", "invalid"].iter().filter_map(|k| t["cases"][k].as_u64()).sum();
    assert_eq!(sent, planned, "{t}");
    assert!(t["outcomes"]["timeout"].as_u64() >= Some(1), "{t}");
    assert_eq!(r["restarts"], 0, "the server served the other calls: {r:#}");
    let shrink = &r["findings"][0]["shrink"];
    assert_eq!((&shrink["reruns"], &shrink["reproduced"]), (&3.into(), &3.into()), "{shrink}");
}

#[test]
fn a_server_that_never_initializes_exits_3_quoting_stderr() {
    let path = server("fx-no-init");
    let marker = run_marker();
    let run = finish(
        command(["--startup-timeout", "1", "--env", &marker, "--", path.to_str().expect("utf-8")])
            .spawn()
            .expect("starts"),
    );
    assert_eq!(run.code, SERVER_START, "{}", run.stderr);
    assert!(run.stderr.contains("initialize"), "{}", run.stderr);
    assert_no_marked_leftovers(&marker, &path);
}

#[test]
fn a_dead_leader_with_a_child_holding_stdout_is_seen_and_the_group_killed() {
    let (code, r, _) = run_json("fx-fork-keeps-stdout", &["--include-destructive"]);
    assert_eq!(code, FINDINGS);
    assert!(kinds(&r).contains(&"exited".to_owned()), "{:?}", kinds(&r));
}

#[test]
fn our_own_panic_kills_every_server_group() {
    // Two server instances, each with a `sleep 300` child in its group; mcp-fuzz panics (a test
    // hook) once the first tool is planned, while all four processes are alive.
    let path = server("fx-fork-keeps-stdout");
    let marker = run_marker();
    let mut cmd =
        command(["--jobs", "2", "--env", marker.as_str(), "--", path.to_str().expect("utf-8")]);
    cmd.env("__MCP_FUZZ_TEST_PANIC_AFTER_CASES", "0");
    let run = finish(cmd.spawn().expect("mcp-fuzz starts"));
    assert_eq!(run.code, INTERNAL_ERROR, "{}", run.stderr);
    assert!(run.stderr.contains("__MCP_FUZZ_TEST_PANIC_AFTER_CASES reached"), "{}", run.stderr);
    assert!(run.stderr.contains("every server it started has been killed"), "{}", run.stderr);
    assert_no_marked_leftovers(&marker, &path);
}

#[test]
fn combination_bugs_are_found() {
    let (code, r, _) = run_json("fx-combo", &["--cases", "10"]);
    assert_eq!(code, FINDINGS);
    let failing: Vec<&str> = r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "failure")
        .filter_map(|f| f["tool"].as_str())
        .collect();
    for t in ["batch", "nested"] {
        assert!(failing.contains(&t), "{t} not found: {failing:?}");
    }
}

#[test]
fn same_seed_same_report() {
    let strip = |mut r: Value| {
        r["durationSecs"] = Value::Null;
        // Warm spares start only when the measured start is slow (a loaded machine): a statistic.
        r.as_object_mut().expect("report").remove("spares");
        r
    };
    let (_, a, _) = run_json("fx-combo", &["--seed", "7"]);
    let (_, b, _) = run_json("fx-combo", &["--seed", "7"]);
    assert_eq!(strip(a), strip(b));
}

#[test]
fn a_50_mb_response_is_oversize_and_survived() {
    let (code, r, _) = run_json(
        "fx-huge-response",
        &["--cases", "1", "--max-response-bytes", "1000000", "--timeout", "30"],
    );
    assert_eq!(code, FINDINGS);
    let f = finding_of_kind(&r, "oversize");
    assert!(f["outcome"]["bytes"].as_u64().expect("bytes") > 50_000_000);
    assert_eq!(r["restarts"], 0, "a dropped line does not need a restart");
}

#[test]
fn ctrl_c_kills_the_server_group_and_exits_130() {
    let path = server("fx-hang");
    let marker = run_marker();
    let child = command(["--timeout", "60", "--env", &marker, "--", path.to_str().expect("utf-8")])
        .spawn()
        .expect("starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    crate::session::stop(child, "INT");
    assert_no_marked_leftovers(&marker, &path);
}

#[test]
fn a_server_that_dies_every_40_calls_is_restarted_and_the_run_finishes() {
    let (code, r, _) = run_json("fx-crash-every-40", &["--cases", "30"]);
    assert_eq!(code, FINDINGS, "a proved call limit is a failure");
    assert!(r["calls"].as_u64().expect("calls") > 40, "the run went past the crash");
    assert!(r["restarts"].as_u64().expect("restarts") >= 1);
    assert_eq!(kinds(&r), ["dies-after-calls"], "{r:#}");
    assert_eq!(tool(&r, "count")["status"], "tested");
}

#[test]
fn one_bug_in_a_helper_shared_by_three_tools_is_one_finding_naming_them() {
    // See: issue 12, item 3 (a signature seen on several tools is reported once, server-wide).
    let (code, r, _) = run_json("fx-shared-bug", &[]);
    assert_eq!(code, FINDINGS);
    let exited: Vec<&Value> =
        findings_of_kind(&r, "exited").into_iter().filter(|f| f.get("tool").is_none()).collect();
    assert_eq!(exited.len(), 1, "one cause, one finding: {r:#}");
    let f = exited[0];
    assert!(f.get("tool").is_none(), "server-wide: {f:#}");
    assert_eq!(f["tools"], serde_json::json!(["get_invoice", "get_order", "get_user"]), "{f:#}");
    assert!(f["cause"].as_str().expect("cause").contains("panic at src/keys.rs:31:18"), "{f:#}");
    assert!(f["message"].as_str().expect("message").starts_with("in 3 tools ("), "{f:#}");
    let members = f["members"].as_array().expect("members: the per-tool findings");
    assert_eq!(members.len(), 3);
    let total: u64 = members.iter().map(|m| m["occurrences"].as_u64().expect("n")).sum();
    assert_eq!(f["occurrences"].as_u64(), Some(total));
    assert_eq!(f["minimalArguments"], serde_json::json!({"id": ""}), "{f:#}");
    // The tools' own counts and the gave-up notes are per tool; gave-up is a warning.
    for t in ["get_user", "get_order", "get_invoice"] {
        assert_eq!(tool(&r, t)["status"], "gave-up");
    }
    let gave_up = finding_of_kind(&r, "gave-up");
    assert_eq!(gave_up["severity"], "warning", "the crash is the failure: {gave_up:#}");
    // The human report shows it once, with a replay line on the first tool.
    let exe = server("fx-shared-bug").display().to_string();
    let human = finish(
        command(["-q", "--cases", "3", "--no-stateful", "--", &exe]).spawn().expect("starts"),
    )
    .stdout;
    assert_eq!(human.matches("exited - in 3 tools").count(), 1, "{human}");
    assert!(human.contains("same cause: 18 cases in all: `get_invoice` 6"), "{human}");
    assert!(
        human.contains("replay: mcp-fuzz call --tool get_invoice --args '{\"id\":\"\"}'"),
        "{human}"
    );
}

#[test]
fn a_tool_with_no_arguments_that_always_fails_is_a_failure_no_hint_can_help() {
    // See: issue 30 item 8 (`mcp-mathematics` 2.3.1 `list_functions {}`: "add value hints").
    let path = server("fx-no-args-fails").display().to_string();
    let run = crate::util::finish(
        crate::util::command(["--cases", "3", "--no-protocol", "--", path.as_str()])
            .spawn()
            .expect("starts"),
    );
    assert_eq!(run.code, FINDINGS, "{}", run.stdout);
    assert!(run.stdout.contains("[failure] list_constants: valid-call-failed"), "{}", run.stdout);
    assert!(run.stdout.contains("fix: No input is to blame"), "{}", run.stdout);
    let coverage = run.stdout.lines().find(|l| l.starts_with("Coverage:")).expect("coverage line");
    assert!(
        !coverage.contains("value hints"),
        "no hint can help a tool without arguments: {coverage}"
    );
}

/// `mcp-fuzz call` prints the judgement and the server's result, and exits 1 on a failure.
#[test]
fn call_prints_the_judgement_and_the_result() {
    let call = |fixture: &str, tool: &str, args: &str| {
        let path = server(fixture);
        let run = crate::util::mcp_fuzz([
            "call",
            "--tool",
            tool,
            "--args",
            args,
            "--",
            path.to_str().expect("utf-8"),
        ]);
        let printed: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
        (run.code, printed)
    };
    let (code, sum) = call("fx-healthy", "add", r#"{"a": 2, "b": 3}"#);
    assert_eq!(code, 0, "{sum:#}");
    assert_eq!(sum["outcome"]["kind"], "ok", "{sum:#}");
    assert_eq!(sum["result"]["content"][0]["text"], "5", "the server's result: {sum:#}");
    let (code, refused) = call("fx-healthy", "add", r#"{"a": "two"}"#);
    assert_eq!(code, 0, "a graceful refusal is not a failure: {refused:#}");
    assert_eq!(refused["result"]["isError"], true, "{refused:#}");
    let (code, died) = call("fx-crash-on-valid", "greet", r#"{"name": "x"}"#);
    assert_eq!(code, 1, "{died:#}");
    assert_eq!(died["outcome"]["kind"], "exited", "{died:#}");
    assert!(died.get("result").is_none(), "a dead server returned nothing: {died:#}");
}
