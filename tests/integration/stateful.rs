//! The sequence phase (issue 13): walks of calls over the tools the gate allows, minimal failing
//! sequences with their data flow, the state checks (use after delete, unknown handle, created
//! not found), failures of the single-call phases replayed from their process's history, case
//! files and `replay` for sequences, and determinism for any `--jobs`.
//!
//! See: issue 13.

use crate::run::{findings_of_kind, run_json, server};
use crate::util::{TempDir, command, finish};
use serde_json::{Value, json};

const FINDINGS: i32 = 1;
const SUCCESS: i32 = 0;

/// The tools of a sequence, in order.
fn tools(steps: &Value) -> Vec<&str> {
    steps.as_array().expect("steps").iter().map(|s| s["tool"].as_str().expect("tool")).collect()
}

/// The one finding of `kind`.
fn only<'a>(r: &'a Value, kind: &str) -> &'a Value {
    let all = findings_of_kind(r, kind);
    assert_eq!(all.len(), 1, "one {kind} finding: {r:#}");
    all[0]
}

#[test]
fn a_read_after_close_is_found_and_shrunk_to_open_close_read_with_its_data_flow() {
    let (code, r, _) = run_json("fx-use-after-close", &["--include-destructive"]);
    assert_eq!(code, FINDINGS);
    let f = only(&r, "use-after-delete");
    assert_eq!((f["tool"].as_str(), f["severity"].as_str()), (Some("read_file"), Some("failure")));
    assert_eq!(f["outcome"]["exit"]["code"], 101, "{f:#}");
    let minimal = f.get("minimalSequence").unwrap_or(&f["sequence"]);
    assert_eq!(tools(minimal), ["open_file", "close_file", "read_file"], "{f:#}");
    // The close and the read take the handle the open returned, bound by name.
    for step in &minimal.as_array().expect("steps")[1..] {
        assert_eq!(step["bindings"], json!([{"pointer": "/handle", "step": 0, "from": "/handle"}]));
        assert_eq!(step["arguments"]["handle"], "fh-1", "the value sent on the last re-run");
    }
    assert_eq!(minimal[2]["check"], "after-delete");
    assert_eq!(minimal[2]["outcome"], "exited");
    assert_eq!(f["flaky"], false, "every re-run from a fresh process fails: {f:#}");
    assert_eq!(f["shrink"]["reproduced"], 3);
    let message = f["message"].as_str().expect("message");
    assert!(message.contains("`close_file` had just closed"), "{message}");
    // The phase names the family and the links it saw working.
    let s = &r["stateful"];
    assert_eq!(s["families"][0]["noun"], "file", "{s:#}");
    assert_eq!(s["families"][0]["deletes"], json!(["close_file"]));
    let links = s["links"].as_array().expect("links");
    assert!(links.iter().any(|l| l["from"] == "open_file" && l["to"] == "read_file"), "{s:#}");
    assert_eq!(s["sequences"], 20);
}

#[test]
fn the_gate_holds_in_the_sequence_phase() {
    // Without --include-destructive only the read-only tool is walked: no open, no close.
    let (code, r, _) = run_json("fx-use-after-close", &[]);
    assert_eq!(code, SUCCESS, "{r:#}");
    assert_eq!(r["stateful"]["tools"], json!(["read_file"]), "{r:#}");
    assert!(findings_of_kind(&r, "use-after-delete").is_empty());
    // One read-only tool that returns no value: nothing to chain, so no walk at all.
    assert_eq!(r["stateful"]["steps"], 0, "{r:#}");
    assert!(r["stateful"]["skipped"].is_string(), "{r:#}");
}

#[test]
fn a_well_formed_handle_nobody_issued_is_found_by_altering_a_returned_one() {
    let (code, r, _) = run_json("fx-unknown-handle", &["--include-destructive"]);
    assert_eq!(code, FINDINGS);
    let f = only(&r, "unknown-handle");
    let minimal = f.get("minimalSequence").unwrap_or(&f["sequence"]);
    assert_eq!(tools(minimal), ["create_job", "get_job"], "{f:#}");
    assert_eq!(minimal[1]["bindings"][0]["altered"], true);
    assert_eq!(minimal[1]["arguments"]["jobId"], "job-99998", "job-00001 altered: {f:#}");
    assert!(findings_of_kind(&r, "exited").is_empty(), "no generated id is well-formed: {r:#}");
}

#[test]
fn a_create_whose_id_the_read_cannot_find_is_created_not_found() {
    let (code, r, _) = run_json("fx-created-not-found", &["--include-destructive"]);
    assert_eq!(code, FINDINGS);
    let f = only(&r, "created-not-found");
    let minimal = f.get("minimalSequence").unwrap_or(&f["sequence"]);
    assert_eq!(tools(minimal), ["create_note", "get_note"], "{f:#}");
    assert_eq!(minimal[1]["check"], "after-create");
    assert_eq!(f["outcome"]["kind"], "tool-error", "a graceful answer, but the wrong one: {f:#}");
    assert!(f["outcome"]["text"].as_str().expect("text").contains("not found"));
}

#[test]
fn a_leak_that_kills_the_process_after_nine_opens_is_a_minimal_sequence_of_nine_opens() {
    // The single-call phase sees a death that a fresh process does not repeat; replayed with
    // the calls its process had been sent, it fails every time and shrinks to the opens.
    let (code, r, _) = run_json("fx-handle-leak", &["--include-destructive", "--cases", "10"]);
    assert_eq!(code, FINDINGS);
    let f = only(&r, "exited");
    assert_eq!(f["tool"], "open_session");
    assert_eq!(f["severity"], "failure", "{f:#}");
    let minimal = &f["minimalSequence"];
    assert_eq!(tools(minimal), vec!["open_session"; 9], "{f:#}");
    assert!(f["sequence"].as_array().expect("history").len() > 9, "the process's history: {f:#}");
    assert!(findings_of_kind(&r, "flaky").is_empty(), "{r:#}");
    assert!(findings_of_kind(&r, "dies-after-calls").is_empty(), "it is the opens that count");
}

#[test]
fn a_sequence_case_file_replays_the_whole_sequence_until_the_bug_is_fixed() {
    let dir = TempDir::new("sequence-cases");
    let art = dir.path().display().to_string();
    let (code, _, _) =
        run_json("fx-use-after-close", &["--include-destructive", "--artifacts", &art]);
    assert_eq!(code, FINDINGS);
    let files: Vec<_> = std::fs::read_dir(dir.path()).expect("artifacts").flatten().collect();
    assert_eq!(files.len(), 1, "one failure, one case file");
    let path = files[0].path();
    let case: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    assert_eq!(case["caseVersion"], 3);
    assert_eq!(case["kind"], "use-after-delete");
    assert_eq!(tools(&case["sequence"]), ["open_file", "close_file", "read_file"]);
    let exe = server("fx-use-after-close").display().to_string();
    let file = path.display().to_string();
    let run = finish(command(["replay", &file, "--", &exe]).spawn().expect("replay starts"));
    assert_eq!(run.code, FINDINGS, "{}{}", run.stdout, run.stderr);
    let out: Value = serde_json::from_str(&run.stdout).expect("replay prints JSON");
    assert_eq!((out["verdict"].as_str(), out["calls"].as_u64()), (Some("still-fails"), Some(3)));
    let fixed = finish(
        command(["replay", &file, "--env", "FX_FIXED=1", "--", &exe]).spawn().expect("starts"),
    );
    assert_eq!(fixed.code, SUCCESS, "{}{}", fixed.stdout, fixed.stderr);
    assert!(fixed.stdout.contains("\"passes\""), "{}", fixed.stdout);
}

#[test]
fn sequences_and_their_findings_are_the_same_for_any_number_of_jobs() {
    let strip = |mut r: Value| {
        for k in ["durationSecs", "calls", "restarts"] {
            r.as_object_mut().expect("report").remove(k);
        }
        r
    };
    let (_, one, _) = run_json("fx-use-after-close", &["--include-destructive", "--seed", "5"]);
    let (_, two, _) =
        run_json("fx-use-after-close", &["--include-destructive", "--seed", "5", "--jobs", "3"]);
    let (one, two) = (strip(one), strip(two));
    assert_eq!(one["stateful"], two["stateful"]);
    assert_eq!(one["findings"], two["findings"]);
}

#[test]
fn no_stateful_skips_the_phase() {
    let (_, r, _) = run_json("fx-use-after-close", &["--include-destructive", "--no-stateful"]);
    assert!(r.get("stateful").is_none(), "{r:#}");
    assert!(findings_of_kind(&r, "use-after-delete").is_empty());
}

#[test]
fn an_altered_handle_never_names_one_the_server_issued() {
    // With long walks, flipping `fh-7` gives `fh-2`, a handle that was issued and closed: a
    // crash on it is the use after close, not an unknown handle.
    let (_, r, _) =
        run_json("fx-use-after-close", &["--include-destructive", "--sequence-length", "20"]);
    assert!(findings_of_kind(&r, "unknown-handle").is_empty(), "{r:#}");
    only(&r, "use-after-delete");
}

#[test]
fn a_server_with_nothing_to_chain_skips_the_walks_and_says_why() {
    let (_, r, _) = run_json("fx-healthy", &[]);
    let st = &r["stateful"];
    assert_eq!(st["sequences"], 0, "{st:#}");
    assert!(
        st["skipped"].as_str().is_some_and(|s| s.contains("a later call could take")),
        "{st:#}"
    );
    // A server whose results feed others is walked.
    let (_, r, _) = run_json("fx-ids", &[]);
    assert_eq!(r["stateful"]["sequences"], 20, "{:#}", r["stateful"]);
    assert!(r["stateful"].get("skipped").is_none());
}

#[test]
fn the_human_and_markdown_reports_show_the_steps_and_the_replay() {
    let exe = server("fx-use-after-close").display().to_string();
    let human = finish(
        command(["-q", "--include-destructive", "--cases", "3", "--", &exe])
            .spawn()
            .expect("starts"),
    );
    let h = &human.stdout;
    assert!(h.contains("sequence: 3 call(s) from a fresh process, shrunk from"), "{h}");
    assert!(
        h.contains("2. close_file {\"handle\":\"fh-1\"} (`handle` as returned by call 1) → ok"),
        "{h}"
    );
    assert!(
        h.contains("3. read_file {\"handle\":\"fh-1\"} (`handle` as returned by call 1) → exited"),
        "{h}"
    );
    assert!(h.contains("replay: mcp-fuzz replay DIR/read_file-use-after-delete-valid-"), "{h}");
    let md = finish(
        command([
            "-q",
            "--include-destructive",
            "--cases",
            "3",
            "--format",
            "markdown",
            "--",
            &exe,
        ])
        .spawn()
        .expect("starts"),
    );
    let m = &md.stdout;
    assert!(m.contains("**Minimal sequence** (3 call(s) from a fresh process"), "{m}");
    assert!(m.contains("1. `open_file "), "{m}");
    assert!(m.contains("3. `read_file {\"handle\":\"fh-1\"}`"), "{m}");
    assert!(m.contains("mcp-fuzz replay cases/read_file-use-after-delete-valid-"), "{m}");
}
