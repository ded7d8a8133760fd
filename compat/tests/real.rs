//! Real pairs: snapshots of published npm versions of reference MCP servers, taken with
//! `mcp-fuzz snapshot` (provenance in `fixtures/diff/README.md`). The verdicts asserted here were
//! checked by hand against the schemas.

use mcp_fuzz_compat::capture::{Capture, parse_capture};
use mcp_fuzz_compat::diff::{Diff, Direction, Options, Verdict, diff};
use mcp_fuzz_compat::normalize::{snapshot_of_capture, to_bytes};
use serde_json::json;

fn load(name: &str) -> (String, Capture) {
    let path = format!("{}/../fixtures/diff/real/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture");
    let capture = parse_capture(&text).expect("parses");
    (text, capture)
}

fn run(old: &str, new: &str) -> Diff {
    diff(&load(old).1, &load(new).1, &Options::default())
}

fn entry<'d>(d: &'d Diff, tool: &str, direction: Direction) -> &'d mcp_fuzz_compat::diff::Entry {
    d.entries
        .iter()
        .find(|e| e.tool == tool && e.direction == direction)
        .unwrap_or_else(|| panic!("no {} entry for {tool}", direction.as_str()))
}

#[test]
fn snapshots_are_normalized_and_stable() {
    for name in [
        "server-memory@2025.4.25.json",
        "server-memory@2026.8.31.json",
        "server-filesystem@2025.8.21.json",
        "server-filesystem@2026.1.14.json",
        "server-filesystem@2026.8.31.json",
        "server-everything@2026.7.4.json",
        "server-everything@2025.11.25.json",
        "server-everything@2026.8.31.json",
    ] {
        let (text, capture) = load(name);
        assert_eq!(
            String::from_utf8(to_bytes(&snapshot_of_capture(&capture))).expect("utf-8"),
            text,
            "{name}"
        );
        assert!(capture.server_version.is_some(), "{name}");
    }
}

#[test]
fn server_memory_only_adds_output_schemas_and_annotations() {
    let d = run("server-memory@2025.4.25.json", "server-memory@2026.8.31.json");
    assert!(d.passes(&[Verdict::Breaking, Verdict::Unknown]));
    let inputs: Vec<_> = d.entries.iter().filter(|e| e.direction == Direction::Input).collect();
    assert_eq!(inputs.len(), 9);
    assert!(inputs.iter().all(|e| e.verdict == Verdict::Compatible));
    let outputs_added = d
        .entries
        .iter()
        .filter(|e| {
            e.direction == Direction::Output
                && e.changes.iter().any(|c| c.id == "output-schema-added")
        })
        .count();
    assert_eq!(outputs_added, 9);
    // `read_graph` became explicitly read-only: a change, but not a risky one.
    let tool = entry(&d, "read_graph", Direction::Tool);
    assert!(
        tool.changes
            .iter()
            .any(|c| c.id == "annotation-changed" && c.detail.starts_with("readOnlyHint"))
    );
    assert!(!tool.changes.iter().any(|c| c.id == "annotation-readonly-dropped"));
}

#[test]
fn server_filesystem_2025_8_21_published_empty_input_schemas() {
    // That release listed every inputSchema as `{"$schema": draft-07}` (it accepts anything); the
    // next ones declare and require their arguments, which old clients sending `{}` violate.
    let d = run("server-filesystem@2025.8.21.json", "server-filesystem@2026.8.31.json");
    let breaking: Vec<&str> = d
        .entries
        .iter()
        .filter(|e| e.direction == Direction::Input && e.verdict == Verdict::Breaking)
        .map(|e| e.tool.as_str())
        .collect();
    assert_eq!(breaking.len(), 13, "{breaking:?}");
    for tool in breaking {
        let w = entry(&d, tool, Direction::Input).witness.as_ref().expect("witness");
        assert_eq!((w.value.clone(), w.keyword.as_str()), (json!({}), "required"), "{tool}");
    }
    assert_eq!(
        entry(&d, "list_allowed_directories", Direction::Input).verdict,
        Verdict::Compatible
    );
    assert!(!d.passes(&[Verdict::Breaking]));
}

#[test]
fn server_everything_renamed_its_tools() {
    let d = run("server-everything@2025.11.25.json", "server-everything@2026.8.31.json");
    let mut removed: Vec<&str> = d
        .entries
        .iter()
        .filter(|e| e.changes.iter().any(|c| c.id == "tool-removed"))
        .map(|e| e.tool.as_str())
        .collect();
    removed.sort_unstable();
    assert_eq!(
        removed,
        [
            "add",
            "annotatedMessage",
            "getResourceLinks",
            "getResourceReference",
            "getTinyImage",
            "longRunningOperation",
            "printEnv",
            "sampleLLM",
            "structuredContent",
            "zip"
        ]
    );
    assert!(
        d.entries
            .iter()
            .any(|e| e.tool == "get-sum" && e.changes.iter().any(|c| c.id == "tool-added"))
    );
    // `echo` dropped `additionalProperties: false`: inputs got wider, proved compatible.
    let echo = entry(&d, "echo", Direction::Input);
    assert_eq!(echo.verdict, Verdict::Compatible);
    assert!(echo.changes.iter().any(|c| c.id == "input-additional-properties-opened"));
}

#[test]
fn reversed_pairs_break_where_the_forward_ones_widened() {
    // Going back from 2026.8.31 to 2025.4.25 removes every outputSchema: review, not breaking.
    let d = run("server-memory@2026.8.31.json", "server-memory@2025.4.25.json");
    let removed =
        d.entries.iter().filter(|e| e.changes.iter().any(|c| c.id == "output-schema-removed"));
    assert!(removed.clone().count() == 9 && removed.clone().all(|e| e.verdict == Verdict::Review));
    // `echo` closing its arguments again is an open-content break, counted as review.
    let d = run("server-everything@2026.8.31.json", "server-everything@2025.11.25.json");
    let echo = entry(&d, "echo", Direction::Input);
    assert_eq!((echo.verdict, echo.counted), (Verdict::Breaking, Verdict::Review));
    assert!(echo.witness.as_ref().is_some_and(|w| w.open_content));
}

#[test]
fn server_filesystem_2026_8_31_widened_an_output() {
    // `read_media_file` items were `{type: image|audio|blob, data, mimeType}`; 2026.8.31 makes them
    // an `anyOf` that adds `{type: "resource", resource: {uri, blob}}`, which old clients never saw.
    let d = run("server-filesystem@2026.1.14.json", "server-filesystem@2026.8.31.json");
    let output = entry(&d, "read_media_file", Direction::Output);
    assert_eq!(output.verdict, Verdict::Breaking, "{}", output.reason);
    let w = output.witness.as_ref().expect("witness");
    assert_eq!(w.value["content"][0]["type"], "resource");
    assert_eq!((w.pointer.as_str(), w.keyword.as_str()), ("/content/0", "required"));
    assert!(output.changes.iter().any(|c| c.id == "output-combinator-changed"));
    // `move_file` now says it is destructive.
    let tool = entry(&d, "move_file", Direction::Tool);
    assert_eq!(tool.verdict, Verdict::Review);
    assert!(tool.changes.iter().any(|c| c.id == "annotation-destructive-added"));
    // Nothing else breaks: every input is compatible.
    assert!(
        d.entries
            .iter()
            .filter(|e| e.direction == Direction::Input)
            .all(|e| e.verdict == Verdict::Compatible)
    );
}

#[test]
fn server_everything_2026_7_4_to_2026_8_31_is_a_compatible_release() {
    let d = run("server-everything@2026.7.4.json", "server-everything@2026.8.31.json");
    assert!(d.entries.iter().all(|e| e.verdict == Verdict::Compatible));
    assert!(d.passes(&[Verdict::Breaking, Verdict::Unknown, Verdict::Review]));
}
