//! `--baseline` / `--update-baseline`: known findings stop failing the run, stale entries are
//! reported, and the file is rewritten atomically only after a completed run.

use crate::formats::{FINDINGS, SUCCESS, USAGE, assert_report_schema, fuzz, read_json};
use crate::util::TempDir;
use serde_json::{Value, json};

const SERVER_START: i32 = 3;

#[test]
fn an_updated_baseline_makes_the_next_run_pass() {
    let dir = TempDir::new("baseline");
    let file = dir.join("baseline.json");
    let b = file.display().to_string();
    // First run: the file does not exist yet; every finding is new, so the run still fails.
    let first = fuzz("example-notes", &["--json", "--baseline", &b, "--update-baseline"]);
    first.assert_code(FINDINGS);
    let written = read_json(&file);
    assert_eq!(written["baselineVersion"], 1);
    let report: Value = serde_json::from_str(&first.stdout).expect("JSON");
    let expected: usize = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] != "info")
        .count();
    let entries = written["findings"].as_array().expect("entries");
    assert_eq!(entries.len(), expected, "{written:#}");
    assert!(entries.iter().any(|e| e["tool"] == "get_note"
        && e["kind"] == "handler-exception"
        && e["pointer"] == "/id"));

    // Second run: everything is known.
    let second = fuzz("example-notes", &["--json", "--baseline", &b]);
    second.assert_code(SUCCESS);
    let r: Value = serde_json::from_str(&second.stdout).expect("JSON");
    assert_report_schema(&r);
    assert_eq!(r["baseline"]["new"], 0, "{:#}", r["baseline"]);
    assert_eq!(r["baseline"]["stale"], json!([]));
    assert!(
        r["findings"]
            .as_array()
            .expect("f")
            .iter()
            .filter(|f| f["severity"] != "info")
            .all(|f| f["baselined"] == true)
    );
    // Human output says so too.
    let human = fuzz("example-notes", &["--baseline", &b]);
    human.assert_code(SUCCESS);
    assert!(human.stdout.contains("baselined not shown"), "{}", human.stdout);
    // --fail-under still judges the score (91.7% here), which a baseline does not change.
    fuzz("example-notes", &["--baseline", &b, "--fail-under", "95"]).assert_code(FINDINGS);
}

#[test]
fn entries_that_no_longer_occur_are_stale_and_dropped_on_update() {
    let dir = TempDir::new("stale");
    let file = dir.join("b.json");
    let baseline = json!({"baselineVersion": 1, "findings": [
        {"tool": "get_note", "kind": "exited", "mutation": "wrong-type", "pointer": "/id", "message": "fixed long ago"},
        {"tool": "delete_note", "kind": "exited", "message": "not called in this run: never stale"},
        {"tool": "gone_tool", "kind": "timeout"}
    ]});
    std::fs::write(&file, serde_json::to_vec_pretty(&baseline).expect("json")).expect("write");
    let b = file.display().to_string();
    let run = fuzz("example-notes", &["--json", "--baseline", &b]);
    run.assert_code(FINDINGS);
    let r: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_report_schema(&r);
    assert_eq!(
        r["baseline"]["stale"],
        json!([
            {"tool": "get_note", "kind": "exited", "mutation": "wrong-type", "pointer": "/id"},
            {"tool": "gone_tool", "kind": "timeout"}
        ])
    );
    assert_eq!(r["baseline"]["known"], 0);
    let sarif = fuzz("example-notes", &["--format", "sarif", "--baseline", &b]);
    let log: Value = serde_json::from_str(&sarif.stdout).expect("SARIF");
    let states: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["baselineState"].as_str().expect("baselineState"))
        .collect();
    assert_eq!(states.iter().filter(|s| **s == "absent").count(), 2, "{states:?}");
    assert!(states.contains(&"new"));
    let md = fuzz("example-notes", &["--format", "markdown", "--baseline", &b]);
    assert!(md.stdout.contains("### Stale baseline entries (2)"), "{}", md.stdout);

    fuzz("example-notes", &["--baseline", &b, "--update-baseline"]).assert_code(FINDINGS);
    let updated = read_json(&file);
    let entries = updated["findings"].as_array().expect("entries");
    assert!(entries.iter().any(|e| e["tool"] == "delete_note"), "kept: the tool was not called");
    assert!(!entries.iter().any(|e| e["tool"] == "gone_tool" || (e["tool"] == "get_note" && e["kind"] == "exited")), "stale entries dropped: {updated:#}");
    fuzz("example-notes", &["--baseline", &b]).assert_code(SUCCESS);
}

#[test]
fn a_run_that_does_not_complete_leaves_the_baseline_byte_for_byte() {
    let dir = TempDir::new("untouched");
    let file = dir.join("b.json");
    // Unusual formatting on purpose: any rewrite would change the bytes.
    let original = b"{\"baselineVersion\":1,   \"findings\":[{\"kind\":\"junk-on-stdout\"}]}";
    std::fs::write(&file, original).expect("write");
    let b = file.display().to_string();
    let run =
        fuzz("fx-no-init", &["--startup-timeout", "1", "--baseline", &b, "--update-baseline"]);
    run.assert_code(SERVER_START);
    assert_eq!(std::fs::read(&file).expect("read"), original);
    let names: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
    assert_eq!(names.len(), 1, "no temp file left behind");
}

#[test]
fn a_bad_baseline_is_a_usage_error_before_the_server_starts() {
    let dir = TempDir::new("bad");
    let file = dir.join("b.json");
    std::fs::write(&file, "{\"findings\": 3}").expect("write");
    let run = fuzz("fx-healthy", &["--baseline", &file.display().to_string()]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("failed to parse baseline"), "{}", run.stderr);
    assert!(run.stderr.contains("--update-baseline"), "says what to do: {}", run.stderr);
    std::fs::write(&file, "{\"baselineVersion\": 9, \"findings\": []}").expect("write");
    let run = fuzz("fx-healthy", &["--baseline", &file.display().to_string()]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("baselineVersion 9"), "{}", run.stderr);
    let missing = dir.join("missing.json").display().to_string();
    let run = fuzz("fx-healthy", &["--baseline", &missing]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("missing.json"), "{}", run.stderr);
    let run = fuzz("fx-healthy", &["--update-baseline"]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("--baseline"), "{}", run.stderr);
}
