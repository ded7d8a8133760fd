//! Beyond tools (issue 15): prompts, resources, resource templates and completions fuzzed and
//! judged like tools, and the protocol conformance phase with its own section and score.

use crate::run::{run_json, run_json_with_protocol};
use serde_json::Value;

fn findings(r: &Value) -> &Vec<Value> {
    r["findings"].as_array().expect("findings")
}

/// The findings about a surface of `kind` named `name`.
fn about<'a>(r: &'a Value, kind: &str, name: &str) -> Vec<&'a Value> {
    findings(r)
        .iter()
        .filter(|f| f["surface"]["kind"] == kind && f["surface"]["name"] == name)
        .collect()
}

#[test]
fn a_prompt_that_crashes_without_its_argument_is_one_shrunk_failure() {
    let (code, r, _) = run_json("fx-prompts", &["--no-protocol", "--no-stateful"]);
    assert_eq!(code, 1, "two failures fail the run: {r:#}");
    let crash = about(&r, "prompt", "summarize");
    assert_eq!(crash.len(), 1, "one finding per item and kind: {r:#}");
    let f = crash[0];
    assert_eq!((f["kind"].as_str(), f["severity"].as_str()), (Some("exited"), Some("failure")));
    assert_eq!(f["outcome"]["exit"]["code"], 101, "{f:#}");
    assert_eq!(f["request"]["method"], "prompts/get");
    assert!(f["request"]["params"]["arguments"].get("topic").is_none(), "{f:#}");
    assert!(f.get("tool").is_none(), "not about a tool: {f:#}");
    // The healthy prompt `greet` refuses bad input with -32602: nothing to report.
    assert!(about(&r, "prompt", "greet").is_empty(), "{r:#}");
    let greet = &r["surfaces"]["prompts"][0];
    assert_eq!(greet["name"], "greet");
    assert!(greet["succeeded"].as_u64() >= Some(2), "valid calls succeed: {greet:#}");
    assert!(greet["outcomes"]["invalid-params"].as_u64() > Some(0), "{greet:#}");
}

#[test]
fn a_completion_past_100_values_is_a_protocol_violation_and_a_good_one_feeds_the_prompt() {
    let (_, r, _) = run_json("fx-prompts", &["--no-protocol", "--no-stateful"]);
    let over = about(&r, "completion", "ref/prompt greet");
    assert_eq!(over.len(), 1, "only `style` overflows: {r:#}");
    assert_eq!(over[0]["surface"]["argument"], "style");
    assert_eq!(over[0]["kind"], "protocol-violation");
    assert!(over[0]["message"].as_str().expect("message").contains("101 values"), "{:#}", over[0]);
    // `name` completes to Alice, Bob, Carol: the valid prompt call used the first.
    let completions = r["surfaces"]["completions"].as_array().expect("completions");
    assert!(completions.iter().any(|c| c["name"] == "prompt greet: name" && c["succeeded"] == 5));
}

#[test]
fn a_template_read_that_hangs_on_a_long_variable_is_a_hang_and_the_rest_is_clean() {
    let (code, r, _) =
        run_json("fx-resources", &["--no-protocol", "--no-stateful", "--timeout", "1"]);
    assert_eq!(code, 1, "{r:#}");
    let kinds: Vec<&str> = findings(&r).iter().filter_map(|f| f["kind"].as_str()).collect();
    assert_eq!(kinds, ["hang"], "{r:#}");
    let hang = about(&r, "resource-template", "mem://notes/{id}");
    assert_eq!(hang.len(), 1);
    let uri = hang[0]["request"]["params"]["uri"].as_str().expect("uri");
    assert!(uri.len() > 200, "the long id: {uri}");
    let s = &r["surfaces"];
    assert_eq!(s["resources"][0]["name"], "mem://readme");
    assert_eq!(s["resources"][0]["succeeded"], 1, "listed resources are read: {s:#}");
    let unknown = s["resources"].as_array().expect("resources").last().expect("unknown");
    assert_eq!(unknown["name"], "unknown URIs");
    assert_eq!(unknown["errors"], unknown["requests"], "each unknown URI refused: {unknown:#}");
    assert!(s["skipped"]["prompts"].as_str().expect("why").contains("capability"), "{s:#}");
}

#[test]
fn a_prompt_answered_past_the_timeout_is_slow_not_a_hang_and_shrinks() {
    // See: issue 30 item 9 (basic-memory answered a 100,000-character prompt argument after
    // 15.5 s: a `hang` failure, with no shrinking and no replay line).
    let (code, r, _) =
        run_json("fx-slow-prompt", &["--no-protocol", "--no-stateful", "--timeout", "1"]);
    assert_eq!(code, 0, "a slow answer is a warning: {r:#}");
    let slow = about(&r, "prompt", "digest");
    assert_eq!(slow.len(), 1, "{r:#}");
    let f = slow[0];
    assert_eq!((f["kind"].as_str(), f["severity"].as_str()), (Some("slow"), Some("warning")));
    let text = |v: &Value| v["text"].as_str().map_or(0, |t| t.chars().count());
    let shrunk = text(&f["minimalArguments"]);
    assert!(shrunk > 10_000 && shrunk < 100_000, "halved while still slow: {shrunk}");
    assert_eq!(
        text(&f["request"]["params"]["arguments"]),
        shrunk,
        "the request is the minimal one"
    );
}

#[test]
fn call_sends_a_prompt_or_a_resource_as_the_replay_line_says() {
    let prompts = crate::run::server("fx-prompts").display().to_string();
    let call = |args: &[&str]| {
        let run = crate::util::finish(crate::util::command(args).spawn().expect("starts"));
        (run.code, serde_json::from_str::<Value>(&run.stdout).unwrap_or(Value::Null))
    };
    // The crash needs no `arguments` member: the replay line sends none.
    let (code, out) = call(&["call", "--prompt", "summarize", "--", &prompts]);
    assert_eq!((code, out["outcome"]["kind"].as_str()), (1, Some("exited")), "{out:#}");
    let (code, out) =
        call(&["call", "--prompt", "greet", "--args", r#"{"name":"Ann"}"#, "--", &prompts]);
    assert_eq!(code, 0, "{out:#}");
    assert_eq!(out["result"]["messages"][0]["content"]["text"], "Please greet Ann");
    let complete =
        r#"{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"style","value":""}}"#;
    let (code, out) = call(&["call", "--complete", complete, "--", &prompts]);
    assert_eq!((code, out["outcome"]["kind"].as_str()), (1, Some("protocol-violation")));
    let resources = crate::run::server("fx-resources").display().to_string();
    let (code, out) = call(&["call", "--resource", "mem://readme", "--", &resources]);
    assert_eq!((code, out["outcome"]["kind"].as_str()), (0, Some("ok")), "{out:#}");
    let (code, _) = call(&["call", "--", &resources]);
    assert_eq!(code, 2, "nothing to call is a usage error");
}

#[test]
fn the_protocol_phase_reports_each_check_with_its_spec_and_its_own_score() {
    let (code, r, _) = run_json_with_protocol("fx-protocol-lax", &["--no-stateful"]);
    assert_eq!(code, 0, "conformance warnings do not fail the run: {r:#}");
    let p = &r["protocol"];
    let status = |id: &str| {
        p["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["status"].clone())
    };
    assert_eq!(status("unknown-method"), Some("fail".into()), "{p:#}");
    assert_eq!(status("initialize-unsupported-version"), Some("fail".into()));
    assert_eq!(status("tools-call-arguments-array"), Some("fail".into()));
    assert_eq!(status("ping"), Some("pass".into()));
    assert_eq!(status("unknown-notification"), Some("pass".into()));
    assert!(p["checks"].as_array().expect("checks").iter().all(|c| {
        c["specUrl"].as_str().is_some_and(|u| u.starts_with("https://"))
            && c["rationale"].is_string()
    }));
    // Its `{}` to any method it does not serve answers `resources/read` of a resource that
    // does not exist too.
    assert_eq!(status("resource-not-found"), Some("fail".into()));
    assert_eq!(p["failed"], 6, "{p:#}");
    // 11 of 17 run (the checks of what the run heard that had nothing to judge are skipped).
    assert_eq!(p["score"], 64.7);
    assert_eq!(r["score"]["percent"], 100.0, "the crash-resilience score is untouched");
    // One cause, one finding: the three non-object `arguments` answered -32603 alike.
    let internal: Vec<&Value> =
        findings(&r).iter().filter(|f| f["kind"] == "invalid-params-as-internal-error").collect();
    assert_eq!(internal.len(), 1, "{r:#}");
    let checks: Vec<&str> = internal[0]["members"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|m| m["check"].as_str())
        .collect();
    assert_eq!(
        checks,
        [
            "tools-call-arguments-array",
            "tools-call-arguments-string",
            "tools-call-arguments-number"
        ]
    );
    assert_eq!(internal[0]["severity"], "warning");
}

#[test]
fn a_server_that_answers_notifications_fails_the_notification_checks() {
    let (code, r, _) = run_json_with_protocol("fx-answers-notification", &["--no-stateful"]);
    assert_eq!(code, 1, "{r:#}");
    let failed: Vec<&str> = findings(&r)
        .iter()
        .filter(|f| f["kind"] == "protocol-nonconformance")
        .filter_map(|f| f["check"].as_str())
        .collect();
    assert_eq!(failed, ["cancel-in-flight", "unknown-notification"], "{r:#}");
}

#[test]
fn the_protocol_phase_runs_past_a_banner_on_stdout() {
    // See: issue 30 item 4. The raw session skips the banner as the main client does (before:
    // "not run: the raw handshake failed: a line that is not JSON").
    let (_, r, _) = run_json_with_protocol("fx-wire-banner", &["--no-stateful"]);
    let p = &r["protocol"];
    assert!(p.get("reason").is_none(), "{p:#}");
    assert_eq!(p["failed"], 0, "{p:#}");
    let sent = p["checks"].as_array().expect("checks").iter().filter(|c| c["status"] != "skip");
    assert_eq!(p["passed"].as_u64(), Some(sent.count() as u64), "{p:#}");
    assert!(p["skippedLines"].as_u64().is_some_and(|n| n >= 1), "{p:#}");
}

#[test]
fn each_phase_beyond_tools_can_be_turned_off() {
    let (_, r, _) = run_json(
        "fx-prompts",
        &["--no-prompts", "--no-resources", "--no-protocol", "--no-stateful"],
    );
    assert!(r.get("protocol").is_none(), "{r:#}");
    assert!(findings(&r).is_empty(), "{r:#}");
    assert!(r.get("surfaces").is_none() || r["surfaces"]["requests"] == 0, "{r:#}");
}

#[test]
fn every_format_shows_the_sections_beyond_tools() {
    for (format, needles) in [
        ("human", vec!["Beyond tools: 2 prompts", "Protocol: ", "prompt summarize: exited"]),
        ("markdown", vec!["- Beyond tools:", "- Protocol:", "`prompt summarize`"]),
        (
            "junit",
            vec![
                "<testsuite name=\"protocol\"",
                "<testsuite name=\"beyond-tools\"",
                "name=\"exited\"",
            ],
        ),
        ("sarif", vec!["MCPF0029", "prompt summarize", "protocol tools-call-no-name"]),
    ] {
        let out = crate::util::mcp_fuzz([
            "--format",
            format,
            "--cases",
            "2",
            "--no-stateful",
            "--",
            &crate::run::server("fx-prompts").display().to_string(),
        ])
        .stdout;
        for n in needles {
            assert!(out.contains(n), "{format} lacks {n:?}:\n{out}");
        }
    }
}
