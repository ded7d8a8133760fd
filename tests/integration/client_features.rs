//! The client's side: `--client-capabilities sampling,elicitation` and `--elicit` against
//! `fx-client-features`, whose tool asks for what the client declared (and, with
//! `FX_CLIENT_BUG=1`, for sampling whatever it declared, with `maxTokens: 0`, a log level that
//! does not exist and progress that goes backwards). The protocol section's checks of what the
//! run heard pass, fail or are skipped as each case says.
//!
//! See: issue 31 item 4.

use crate::run::{run_json_with_protocol, server};
use crate::util::mcp_fuzz;
use serde_json::Value;
use std::collections::BTreeMap;

/// The ids of the checks of what the run heard (nothing is sent for them).
pub(crate) const HEARD: [&str; 7] = [
    "client-capability-undeclared",
    "sampling-request",
    "elicitation-request",
    "logging-set-level",
    "log-message",
    "list-changed",
    "progress-increases",
];

/// The checks of what the run heard: id -> status.
fn heard(r: &Value) -> BTreeMap<String, String> {
    r["protocol"]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["id"].as_str().is_some_and(|id| HEARD.contains(&id)))
        .map(|c| {
            (
                c["id"].as_str().expect("id").to_owned(),
                c["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect()
}

fn expect(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn severity_of(r: &Value, check: &str) -> String {
    let f = r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["check"] == check)
        .unwrap_or_else(|| panic!("a finding for {check}: {r:#}"));
    f["severity"].as_str().expect("severity").to_owned()
}

#[test]
fn an_honest_server_passes_what_it_can_and_the_rest_is_skipped_with_the_reason() {
    let (code, r, stderr) = run_json_with_protocol("fx-client-features", &["--cases", "2"]);
    assert_eq!(code, 0, "{stderr}\n{r:#}");
    assert_eq!(
        heard(&r),
        expect(&[
            ("client-capability-undeclared", "pass"),
            ("sampling-request", "skip"),
            ("elicitation-request", "skip"),
            ("logging-set-level", "pass"),
            ("log-message", "pass"),
            ("list-changed", "pass"),
            ("progress-increases", "pass"),
        ])
    );
    let checks = r["protocol"]["checks"].as_array().expect("checks");
    let sampling = checks.iter().find(|c| c["id"] == "sampling-request").expect("row");
    assert!(
        sampling["observed"].as_str().is_some_and(|o| o.contains("--client-capabilities sampling"))
    );
}

#[test]
fn declared_features_are_answered_and_their_requests_judged() {
    let (code, r, stderr) = run_json_with_protocol(
        "fx-client-features",
        &["--cases", "2", "--client-capabilities", "sampling,elicitation", "--elicit", "accept"],
    );
    assert_eq!(code, 0, "{stderr}\n{r:#}");
    let h = heard(&r);
    assert_eq!(
        (h["sampling-request"].as_str(), h["elicitation-request"].as_str()),
        ("pass", "pass")
    );
    // The answers reach the tool: the fixed sampling text, and content the form's schema accepts.
    let fx = server("fx-client-features").display().to_string();
    let args = ["call", "--tool", "ask", "--args", r#"{"question":"hi"}"#];
    let declared =
        ["--client-capabilities", "sampling,elicitation", "--elicit", "accept", "--", &fx];
    let call = mcp_fuzz(args.iter().chain(&declared));
    call.assert_code(0);
    let out: Value = serde_json::from_str(&call.stdout).expect("json");
    let text = out["result"]["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("mcp-fuzz: a fixed sampling answer"), "{text}");
    let content = text.split("elicited: \"accept\" ").nth(1).and_then(|t| t.split("; ").next());
    let content: Value = serde_json::from_str(content.expect("accepted content")).expect("json");
    assert!(content["name"].as_str().is_some_and(|n| !n.is_empty()), "{content}");
    assert!(content.get("age").is_none_or(|a| a.as_i64().is_some_and(|a| a >= 18)), "{content}");
}

#[test]
fn a_server_that_breaks_the_rules_fails_each_check_once() {
    let (code, r, stderr) =
        run_json_with_protocol("fx-client-features", &["--cases", "2", "--env", "FX_CLIENT_BUG=1"]);
    assert_eq!(code, 1, "{stderr}\n{r:#}");
    let h = heard(&r);
    assert_eq!(h["client-capability-undeclared"], "fail", "asked for sampling undeclared");
    assert_eq!(h["log-message"], "fail", "level `verbose`");
    assert_eq!(h["progress-increases"], "fail", "2 then 1");
    assert_eq!(h["list-changed"], "fail", "tools.listChanged not declared");
    assert_eq!(severity_of(&r, "client-capability-undeclared"), "failure");
    assert_eq!(severity_of(&r, "progress-increases"), "failure");
    assert_eq!(severity_of(&r, "log-message"), "warning");
    // Declared, its sampling requests are judged: maxTokens 0.
    let (_, r, _) = run_json_with_protocol(
        "fx-client-features",
        &["--cases", "2", "--env", "FX_CLIENT_BUG=1", "--client-capabilities", "sampling"],
    );
    let h = heard(&r);
    assert_eq!(
        (h["client-capability-undeclared"].as_str(), h["sampling-request"].as_str()),
        ("pass", "fail")
    );
    let checks = r["protocol"]["checks"].as_array().expect("checks");
    let sampling = checks.iter().find(|c| c["id"] == "sampling-request").expect("row");
    assert!(
        sampling["observed"].as_str().is_some_and(|o| o.contains("`maxTokens` is 0")),
        "{sampling:#}"
    );
}

#[test]
fn unknown_capabilities_and_answers_are_refused() {
    let fx = server("fx-client-features").display().to_string();
    let run = mcp_fuzz(["--client-capabilities", "sampling,roots", "--", &fx]);
    run.assert_code(2);
    assert!(run.stderr.contains("--roots DIR"), "{}", run.stderr);
    let run = mcp_fuzz(["--elicit", "maybe", "--", &fx]);
    run.assert_code(2);
    assert!(run.stderr.contains("decline, accept, cancel"), "{}", run.stderr);
}
