//! `--partition hash:M/N | count:M/N` and `mcp-fuzz report merge`: every tool runs in exactly
//! one shard, and the merged shards give the same findings and score as one whole run.

use crate::formats::{FINDINGS, SUCCESS, USAGE, assert_report_schema, fuzz, read_json};
use crate::util::{TempDir, mcp_fuzz, statuses};
use serde_json::Value;
use std::collections::BTreeMap;

fn json(run: &crate::util::Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr))
}

#[test]
fn every_tool_is_tested_in_exactly_one_shard() {
    for scheme in ["hash", "count"] {
        let mut owners: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut sizes = Vec::new();
        for m in 1..=3 {
            let spec = format!("{scheme}:{m}/3");
            let run = fuzz("fx-paged", &["--json", "--partition", &spec]);
            run.assert_code(SUCCESS);
            let r = json(&run);
            assert_report_schema(&r);
            assert_eq!(r["partition"], spec.as_str());
            let mut size = 0;
            for (name, (status, reason)) in statuses(&r) {
                if status == "tested" {
                    owners.entry(name).or_default().push(m);
                    size += 1;
                } else {
                    assert_eq!(status, "skipped");
                    assert_eq!(reason, format!("not in partition {m}/3"));
                }
            }
            sizes.push(size);
        }
        assert_eq!(owners.len(), 7, "{scheme}: {owners:?}");
        assert!(owners.values().all(|o| o.len() == 1), "{scheme}: {owners:?}");
        if scheme == "count" {
            assert_eq!(sizes, [3, 2, 2], "round-robin over tool_1..tool_7");
        }
    }
    // The same spec picks the same tools every time.
    let a = statuses(&json(&fuzz("fx-paged", &["--json", "--partition", "hash:2/3"])));
    let b =
        statuses(&json(&fuzz("fx-paged", &["--json", "--partition", "hash:2/3", "--seed", "99"])));
    assert_eq!(a, b);
}

#[test]
fn merged_shards_equal_the_whole_run() {
    merged_equals_whole("example-notes");
}

#[test]
fn one_cause_on_tools_of_different_shards_is_one_finding_after_merge() {
    // fx-shared-bug's lookups get_user and get_invoice fall in shard 1 of count:M/2, get_order in
    // shard 2: each shard reports its part of the shared panic; the merge makes it one again.
    let merged = merged_equals_whole("fx-shared-bug");
    let exited: Vec<&Value> = crate::run::findings_of_kind(&merged, "exited");
    assert_eq!(exited.len(), 1, "{merged:#}");
    assert_eq!(exited[0]["tools"].as_array().map(Vec::len), Some(3), "{merged:#}");
}

/// Runs `server` whole and in two `count:M/2` shards, merges the shards, checks the merge
/// against the whole run, and returns the merged report.
fn merged_equals_whole(server: &str) -> Value {
    let dir = TempDir::new("merge");
    // Each shard walks its own tools in the sequence phase (so a merge has more walks than
    // one run): the single-call phases alone are compared.
    let whole = json(&fuzz(server, &["--json", "--no-stateful"]));
    let mut files = Vec::new();
    for m in 1..=2 {
        let f = dir.join(&format!("shard{m}.json"));
        let run = fuzz(
            server,
            &[
                "--no-stateful",
                "--partition",
                &format!("count:{m}/2"),
                "--format",
                "json",
                "--output",
                &f.display().to_string(),
            ],
        );
        assert!(run.code == FINDINGS || run.code == SUCCESS, "{}", run.stderr);
        files.push(f.display().to_string());
    }
    let out = dir.join("merged.json");
    let mut args = vec!["report".to_owned(), "merge".to_owned()];
    args.extend(files.iter().cloned());
    args.extend([
        "--output".to_owned(),
        out.display().to_string(),
        "--format".to_owned(),
        "markdown".to_owned(),
    ]);
    let run = mcp_fuzz(&args);
    run.assert_code(FINDINGS);
    assert!(run.stdout.starts_with(&format!("## mcp-fuzz report: {server}")), "{}", run.stdout);
    let merged = read_json(&out);
    assert_report_schema(&merged);
    assert_eq!(merged["score"], whole["score"], "the merged score is the whole run's");
    assert_eq!(statuses(&merged), statuses(&whole));
    let ids = |r: &Value| -> Vec<String> {
        let mut v: Vec<String> = r["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| {
                format!(
                    "{} {} {} {} {}",
                    f["tool"], f["tools"], f["kind"], f["case"]["mutation"], f["case"]["pointer"]
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids(&merged), ids(&whole));
    assert_eq!(merged["calls"], whole["calls"]);
    assert!(merged.get("partition").is_none());
    assert_eq!(merged["mergedFrom"].as_array().expect("mergedFrom").len(), 2);
    merged
}

#[test]
fn merge_rejects_reports_of_different_runs() {
    let dir = TempDir::new("mismatch");
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    fuzz("fx-healthy", &["--partition", "count:1/2", "--output", &a.display().to_string()]);
    fuzz(
        "fx-healthy",
        &["--partition", "count:2/2", "--seed", "8", "--output", &b.display().to_string()],
    );
    let run = mcp_fuzz(["report", "merge", &a.display().to_string(), &b.display().to_string()]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("different seed"), "{}", run.stderr);

    fuzz("fx-paged", &["--partition", "count:2/2", "--output", &b.display().to_string()]);
    let run = mcp_fuzz(["report", "merge", &a.display().to_string(), &b.display().to_string()]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("different target"), "{}", run.stderr);

    let mut v = read_json(&a);
    v["reportVersion"] = 2.into();
    std::fs::write(&b, v.to_string()).expect("write");
    let run = mcp_fuzz(["report", "merge", &a.display().to_string(), &b.display().to_string()]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("different reportVersion"), "{}", run.stderr);

    // The same shard twice overlaps.
    let run = mcp_fuzz(["report", "merge", &a.display().to_string(), &a.display().to_string()]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("overlap"), "{}", run.stderr);

    std::fs::write(&b, "not json").expect("write");
    let run = mcp_fuzz(["report", "merge", &a.display().to_string(), &b.display().to_string()]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("as an mcp-fuzz JSON report"), "{}", run.stderr);
}

#[test]
fn bad_partitions_are_usage_errors() {
    for bad in ["3/2", "hash:0/2", "hash:3/2", "mod:1/2", "count:1"] {
        let run = fuzz("fx-healthy", &["--partition", bad]);
        run.assert_code(USAGE);
        assert!(run.stderr.contains("expected hash:M/N or count:M/N"), "{bad}: {}", run.stderr);
    }
}

#[test]
fn merged_shards_add_up_their_sequence_phases() {
    // Each shard walks the tools of its share; the merge adds the walks up and puts the tools,
    // families and links together.
    let dir = TempDir::new("merge-stateful");
    let mut files = Vec::new();
    for m in 1..=2 {
        let f = dir.join(&format!("shard{m}.json"));
        let spec = format!("count:{m}/2");
        let out = f.display().to_string();
        let args =
            ["--include-destructive", "--partition", &spec, "--format", "json", "--output", &out];
        let run = fuzz("fx-use-after-close", &args);
        assert!(run.code == FINDINGS || run.code == SUCCESS, "{}", run.stderr);
        files.push(out);
    }
    let out = dir.join("merged.json").display().to_string();
    let run = mcp_fuzz(["report", "merge", &files[0], &files[1], "--output", &out]);
    assert!(run.code == FINDINGS || run.code == SUCCESS, "{}", run.stderr);
    let merged = read_json(&dir.join("merged.json"));
    assert_report_schema(&merged);
    let s = &merged["stateful"];
    let shards: Vec<Value> = files.iter().map(|f| read_json(std::path::Path::new(f))).collect();
    let walked: Vec<u64> = shards
        .iter()
        .map(|r| r["stateful"]["sequences"].as_u64().expect("each shard has the phase"))
        .collect();
    // A shard with a producer and its consumers walks (until five walks in a row find nothing
    // new); one whose tools cannot chain skips.
    assert!(walked.iter().any(|&w| w > 0) && walked.contains(&0), "{walked:?}");
    assert_eq!(s["sequences"].as_u64(), Some(walked.iter().sum()), "{s:#}");
    assert!(s.get("skipped").is_none(), "a shard walked: {s:#}");
    let mut tools: Vec<&str> =
        s["tools"].as_array().expect("tools").iter().filter_map(Value::as_str).collect();
    tools.sort_unstable();
    assert_eq!(tools, ["close_file", "open_file", "read_file"], "{s:#}");
}
