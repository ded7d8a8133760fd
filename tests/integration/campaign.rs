//! Campaigns (issue 4): shrinking to exact minimal inputs, case files and `replay`, budgets,
//! output feeding, and `--jobs` giving the same report as one job.
//!
//! See: issue 4, "Property-based campaigns".

use crate::run::run_json_at;
use crate::util::{OwnServer, TempDir};
use crate::util::{command, finish};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const FINDINGS: i32 = 1;
const SUCCESS: i32 = 0;
const USAGE: i32 = 2;

/// The path of a fixture server, as text.
fn server_path(fixture: &str) -> String {
    crate::run::server(fixture).display().to_string()
}

/// `run --json ARGS` against the fixture under a name of its own.
fn run_json(fixture: &str, args: &[&str]) -> (i32, Value, String) {
    let own = OwnServer::new(fixture);
    run_json_at(own.path(), args)
}

/// The kinds of a report's findings, in order.
fn kinds(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect()
}

/// The one failure finding about `tool`.
fn failure<'a>(report: &'a Value, tool: &str) -> &'a Value {
    let all: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["tool"] == tool && f["severity"] == "failure")
        .collect();
    assert_eq!(all.len(), 1, "one failure finding for {tool}: {all:#?}");
    all[0]
}

fn failures(report: &Value) -> usize {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "failure")
        .count()
}

#[test]
fn combination_bugs_shrink_to_the_exact_minimal_input() {
    // The default --cases and a run budget: what a newcomer's first run does.
    let (code, r, _) = run_json("fx-combo", &["--cases", "10", "--time-budget", "60s"]);
    assert_eq!(code, FINDINGS);
    let expected = [
        ("search", json!({"query": "", "exact": true})),
        ("batch", json!({"items": [{"id": 0}, {"id": 0}, {"id": 0}]})),
        ("code", json!({"code": "AAAAAAAA"})),
        ("nested", json!({"config": {"limits": {"max": 1001}}})),
    ];
    for (tool, minimal) in expected {
        let f = failure(&r, tool);
        assert_eq!(f["minimalArguments"], minimal, "{tool}: {f:#}");
        assert!(f["arguments"].is_object(), "the original stays in the report");
        assert_eq!(f["flaky"], false, "{tool}");
        assert_eq!(f["shrink"]["reruns"], 4, "{tool}: three, and one on a fresh process");
        assert_eq!(f["shrink"]["reproduced"], 4, "{tool}");
        assert_eq!(f["shrink"]["freshReproduced"], 1, "{tool}");
    }
    assert_eq!(failure(&r, "nested")["outcome"]["exit"]["code"], 5);
    assert_eq!(failure(&r, "search")["outcome"]["exit"]["code"], 4);
    assert!(
        failure(&r, "batch")["shrink"]["accepted"].as_u64().expect("accepted") > 0,
        "the batch case was shrunk, not found minimal"
    );
    assert!(r.get("stopped").is_none(), "60 s is plenty: {r:#}");
}

#[test]
fn a_crash_that_depends_on_the_call_count_is_flaky_and_its_call_limit_proved() {
    // fx-crash-every-40 dies on every 40th call, whatever the input: the re-runs of the minimal
    // case do not reproduce it, and six fresh processes each die on exactly call 40.
    let (_, r, _) = run_json("fx-crash-every-40", &["--cases", "30"]);
    let findings = r["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{r:#}");
    let d = &findings[0];
    assert_eq!(d["kind"], "dies-after-calls", "{d:#}");
    assert_eq!(d["severity"], "failure");
    assert_eq!(d["atCall"], 40, "{d:#}");
    assert_eq!(d["tools"], json!(["count"]));
    assert!(d.get("tool").is_none(), "server-wide: {d:#}");
    let message = d["message"].as_str().expect("message");
    assert!(message.contains("answered 39 calls of that input and died on call 40"), "{message}");
    // The death it stands for, as the campaign judged it.
    let f = &d["members"][0];
    assert_eq!(f["kind"], "flaky", "never on a fresh process: {f:#}");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["outcome"]["kind"], "exited", "what it was is kept: {f:#}");
    assert_eq!(f["deathCalls"], json!([40]), "{f:#}");
    assert_eq!(f["flaky"], true, "{f:#}");
    assert_eq!(f["shrink"]["freshReruns"], 1, "the last re-run is on a fresh process: {f:#}");
    assert!(f["shrink"]["reproduced"].as_u64() < f["shrink"]["reruns"].as_u64(), "{f:#}");
    assert_eq!(f["minimalArguments"], f["arguments"], "nothing to shrink against: {f:#}");
}

#[test]
fn a_call_limit_seen_twice_is_recycled_before_it_kills_again() {
    // Two processes die on call 40: every process after them is replaced before its 40th
    // call, so the run sees no third death, and the limit is still proved from the two.
    let (_, r, _) = run_json("fx-crash-every-40", &["--cases", "200"]);
    assert!(r["recycled"].as_u64().expect("recycled: processes replaced") >= 1, "{r:#}");
    let d = &r["findings"].as_array().expect("findings")[0];
    assert_eq!(d["kind"], "dies-after-calls", "{r:#}");
    assert_eq!(d["members"][0]["deathCalls"], json!([40, 40]), "two deaths, no third: {d:#}");
    assert_eq!(r["tools"][0]["status"], "tested", "no case was lost to the limit: {r:#}");
}

#[test]
fn a_class_of_cases_that_keeps_killing_the_server_is_not_sent_again() {
    // fx-slow-start's `scale` exits on every negative factor: after three such deaths (and no
    // negative factor that survived), the other negative factors are not sent; the positive
    // ones and the invalid cases still are, so the tool does not give up.
    let (_, r, _) = run_json("fx-slow-start", &["--cases", "100", "--no-stateful"]);
    let scale = &r["tools"][0];
    assert_eq!(scale["name"], "scale");
    assert_eq!(scale["status"], "tested", "{scale:#}");
    let not_sent = &scale["notSent"][0];
    assert!(not_sent["cases"].as_u64().expect("cases") >= 10, "{scale:#}");
    assert_eq!(not_sent["class"], "negative number at `/factor`", "{scale:#}");
    assert!(not_sent["cause"].as_str().expect("cause").contains("status 7"), "{scale:#}");
    // Three deaths make the class; a negative fraction may still widen it (from "negative
    // whole number" to "negative number") before the restart budget of five.
    let deaths = scale["outcomes"]["exited"].as_u64().expect("deaths");
    assert!((3..=5).contains(&deaths), "{scale:#}");
    let kinds = kinds(&r);
    assert!(kinds.contains(&"exited") && !kinds.contains(&"gave-up"), "{kinds:?}");
    let exe = server_path("fx-slow-start");
    let human = finish(
        command(["-q", "--cases", "100", "--no-stateful", "--no-protocol", "--", &exe])
            .spawn()
            .expect("starts"),
    )
    .stdout;
    assert!(human.contains("not sent: same cause as exited"), "{human}");
}

#[test]
fn a_server_that_dies_at_random_after_a_warm_up_has_no_call_limit() {
    // fx-flaky dies one time in three once a process has had 20 calls: deaths on scattered
    // call numbers, which six fresh processes in a row repeat one time in 729 at worst.
    let (_, r, _) = run_json("fx-flaky", &["--cases", "50"]);
    assert_eq!(kinds(&r), ["flaky"], "{r:#}");
}

#[test]
fn no_shrink_keeps_the_original_and_still_reruns() {
    let (_, r, _) = run_json("fx-combo", &["--cases", "10", "--no-shrink"]);
    let f = failure(&r, "nested");
    assert_eq!(f["minimalArguments"], f["arguments"]);
    assert_eq!(f["shrink"]["steps"], 0);
    assert_eq!(f["shrink"]["reruns"], 4, "three where it failed, one on a fresh process");
    assert_eq!(f["shrink"]["freshReruns"], 1);
    assert_eq!(f["shrink"]["freshReproduced"], 1, "{f:#}");
}

#[test]
fn shrinking_is_bounded_by_steps() {
    let (_, r, _) = run_json("fx-combo", &["--cases", "10", "--max-shrink-steps", "2"]);
    let f = failure(&r, "nested");
    assert_eq!(f["shrink"]["steps"], 2, "{f:#}");
    assert_eq!(f["shrink"]["exhausted"], "steps");
    assert_ne!(f["minimalArguments"], json!({"config": {"limits": {"max": 1001}}}));
}

/// The case file of `tool` in `dir`.
fn case_file(dir: &Path, tool: &str) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("artifacts dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{tool}-")))
        })
        .collect();
    assert_eq!(files.len(), 1, "one case file for {tool}: {files:?}");
    files[0].clone()
}

/// Resolves the case schema's references to the report schema, and nothing else.
struct ReportSchema;

impl jsonschema::Retrieve for ReportSchema {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        if uri.as_str() == "https://mcp-fuzz.invalid/report.schema.json" {
            Ok(serde_json::from_str(include_str!("../../docs/report.schema.json"))?)
        } else {
            Err(format!("unexpected reference {}", uri.as_str()).into())
        }
    }
}

fn case_validator() -> jsonschema::Validator {
    let case: Value = serde_json::from_str(include_str!("../../docs/case.schema.json"))
        .expect("case schema is JSON");
    jsonschema::options().with_retriever(ReportSchema).build(&case).expect("case schema compiles")
}

fn replay(args: &[&str]) -> (i32, Value, String) {
    let run = finish(command(args).spawn().expect("mcp-fuzz starts"));
    let out = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    (run.code, out, run.stderr)
}

#[test]
fn a_case_file_replays_as_failing_against_the_bug_and_passing_against_the_fix() {
    let dir = TempDir::new("artifacts");
    let dir_arg = dir.path().display().to_string();
    // The case files record this command, so it must outlive the run.
    let own = OwnServer::new("fx-combo");
    let (code, r, _) = run_json_at(own.path(), &["--cases", "10", "--artifacts", &dir_arg]);
    assert_eq!(code, FINDINGS);
    let written = std::fs::read_dir(dir.path()).expect("artifacts dir").count();
    assert_eq!(written, failures(&r), "one case file per failure finding");
    let validator = case_validator();
    for tool in ["search", "batch", "code", "nested"] {
        let path = case_file(dir.path(), tool);
        let case: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        let errors: Vec<String> =
            validator.iter_errors(&case).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(
            errors.is_empty(),
            "{tool}: the case file breaks docs/case.schema.json: {errors:#?}"
        );
        assert_eq!(case["minimalArguments"], failure(&r, tool)["minimalArguments"]);
        assert_eq!(case["seed"], r["seed"]);
        let request = &case["exchange"]["request"];
        assert_eq!(request["method"], "tools/call");
        // The id the request went out with, also when no response came (`search` exits).
        assert!(request["id"].is_u64(), "{tool}: request id {}", request["id"]);
        if let Some(response) = case["exchange"]["response"].as_object() {
            assert_eq!(response["id"], request["id"], "{tool}");
        }
        assert_eq!(request["params"]["arguments"], case["minimalArguments"]);
    }
    // An error answer keeps the server's exact bytes.
    let batch: Value = serde_json::from_str(
        &std::fs::read_to_string(case_file(dir.path(), "batch")).expect("readable"),
    )
    .expect("JSON");
    assert_eq!(batch["exchange"]["raw"], true);
    assert_eq!(batch["exchange"]["response"]["error"]["code"], -32603);
    assert_eq!(batch["exchange"]["response"]["id"], batch["exchange"]["request"]["id"]);

    for tool in ["nested", "batch"] {
        let file = case_file(dir.path(), tool);
        let file = file.to_str().expect("utf-8");
        // Against the recorded command: the bug is still there.
        let (code, out, err) = replay(&["replay", file]);
        assert_eq!(code, FINDINGS, "{tool}: {err}");
        assert_eq!(out["verdict"], "still-fails", "{tool}");
        // The fixed server, through the recorded command with an extra --env: fixed.
        let (code, out, err) = replay(&["replay", file, "--env", "FX_COMBO_FIXED=1"]);
        assert_eq!(code, SUCCESS, "{tool}: {err}");
        assert_eq!(out["verdict"], "passes", "{tool}");
        // An explicit server command replaces the recorded one.
        let fx = OwnServer::new("fx-combo");
        let (code, _, err) = replay(&["replay", file, "--", fx.path().to_str().expect("utf-8")]);
        assert_eq!(code, FINDINGS, "{tool}: {err}");
    }
    // A file that is not a case file is a usage error that says so.
    let bad = crate::util::TempFile::new("case.json", "{\"caseVersion\": 1}");
    let (code, _, err) = replay(&["replay", bad.path().to_str().expect("utf-8")]);
    assert_eq!(code, USAGE, "{err}");
    assert!(err.contains("not an mcp-fuzz case file"), "{err}");
}

#[test]
fn same_seed_same_report_for_one_and_two_jobs() {
    // Run statistics (calls, restarts: which instance restarts when; warm spares, started only
    // when the server's measured start is slow, which a loaded machine can make it) and times
    // may differ.
    let strip = |mut r: Value| {
        r["durationSecs"] = Value::Null;
        r["calls"] = Value::Null;
        r["restarts"] = Value::Null;
        if let Some(o) = r.as_object_mut() {
            o.remove("spares");
        }
        r
    };
    // fx-exit-on-input: cases not sent under a known death are decided as one job would.
    for (fixture, extra) in [
        ("fx-combo", &["--cases", "10"][..]),
        ("fx-ids", &[][..]),
        ("fx-exit-on-input", &["--cases", "60"][..]),
    ] {
        let one: Vec<&str> = [&["--seed", "7", "--jobs", "1"][..], extra].concat();
        let two: Vec<&str> = [&["--seed", "7", "--jobs", "2"][..], extra].concat();
        // One server path for both runs: the report records the command.
        let own = OwnServer::new(fixture);
        let (_, a, _) = run_json_at(own.path(), &one);
        let (_, b, _) = run_json_at(own.path(), &two);
        assert!(failures(&a) > 0, "{fixture}: the comparison covers findings");
        assert_eq!(strip(a), strip(b), "{fixture}");
    }
}

#[test]
fn max_failures_stops_the_run_at_the_same_place_for_any_jobs() {
    let (code, a, _) = run_json("fx-combo", &["--cases", "10", "--max-failures", "1"]);
    assert_eq!(code, FINDINGS);
    assert_eq!(failures(&a), 1, "{a:#}");
    assert!(a["stopped"].as_str().expect("stopped").contains("--max-failures 1"));
    let skipped: Vec<&Value> =
        a["tools"].as_array().expect("tools").iter().filter(|t| t["status"] == "skipped").collect();
    assert_eq!(skipped.len(), 3, "the tools after the first failure are not reached: {a:#}");
    assert!(
        skipped.iter().all(|t| t["reason"].as_str().expect("reason").starts_with("not reached"))
    );
    let human = finish(
        command(["--cases", "10", "--max-failures", "1", "--", server_path("fx-combo").as_str()])
            .spawn()
            .expect("starts"),
    );
    assert!(
        human.stdout.contains("Stopped early: --max-failures 1 was reached"),
        "{}",
        human.stdout
    );
    let (_, b, _) = run_json("fx-combo", &["--cases", "10", "--max-failures", "1", "--jobs", "2"]);
    assert_eq!(a["findings"], b["findings"]);
    assert_eq!(a["tools"], b["tools"]);
}

#[test]
fn time_budgets_stop_a_slow_tool_and_the_run() {
    let started = std::time::Instant::now();
    let (code, r, _) = run_json("fx-slow", &["--tool-time-budget", "1s"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "the budget bounded the run");
    assert_eq!(code, SUCCESS, "{r:#}");
    let slow = &r["tools"][0];
    assert!(slow["reason"].as_str().expect("reason").contains("time budget"), "{slow:#}");
    let (_, r, _) = run_json("fx-slow", &["--time-budget", "1s"]);
    assert_eq!(r["stopped"], "the run's --time-budget ran out", "{r:#}");
    let usage = finish(command(["--time-budget", "soon", "--", "x"]).spawn().expect("starts"));
    assert_eq!(usage.code, USAGE);
    assert!(usage.stderr.contains("--time-budget takes a positive duration"), "{}", usage.stderr);
}

#[test]
fn an_id_from_another_tools_result_reaches_the_bug_behind_it() {
    let (code, r, _) = run_json("fx-ids", &[]);
    assert_eq!(code, FINDINGS, "{r:#}");
    let f = failure(&r, "get_note");
    assert_eq!(f["kind"], "internal-error");
    assert_eq!(f["case"]["fed"], "noteId");
    assert_eq!(f["minimalArguments"], json!({"noteId": "n-7730"}));
    let (code, r, _) = run_json("fx-ids", &["--no-feed", "--no-stateful"]);
    assert_eq!(code, SUCCESS, "without feeding (and walks) the bug is out of reach: {r:#}");
}
