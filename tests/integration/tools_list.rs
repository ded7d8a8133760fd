//! `mcp-fuzz gen --tools`: every capture shape, tool selection, and the exit codes around it.

use crate::util::{Run, TempFile, check_lines, code, fixture, fixture_json, mcp_fuzz};
use serde_json::Value;
use std::ffi::OsStr;

/// The `server-everything` capture used by the README's quick start.
const EVERYTHING: &str = "tools-list/npm/@modelcontextprotocol__server-everything@2026.8.31.json";

/// Every file under `fixtures/tools-list-shapes/` that lists the tools `pick` and `other`.
const TWO_TOOL_SHAPES: [&str; 6] = [
    "tools-object.json",
    "tools-object-with-metadata.json",
    "jsonrpc.json",
    "array.json",
    "pages.json",
    "transcript.jsonl",
];

fn gen_tools(capture: &str, extra: &[&str]) -> Run {
    let path = fixture(capture);
    let mut args = vec![OsStr::new("gen"), OsStr::new("--tools"), path.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    mcp_fuzz(args)
}

/// The schema of tool `name` in the shapes fixture, read independently of the binary.
fn shape_schema(name: &str, key: &str) -> Value {
    let tools = fixture_json("tools-list-shapes/tools-object.json");
    let tools = tools["tools"].as_array().expect("tools");
    let tool = tools.iter().find(|tool| tool["name"] == name).expect("tool in fixture");
    tool[key].clone()
}

/// Checks the lines against the tool's schema, and that valid values are that tool's.
fn check_tool_lines(run: &Run, name: &str) {
    run.assert_code(code::SUCCESS);
    assert!(check_lines(&shape_schema(name, "inputSchema"), run) > 0);
    for line in run.lines() {
        if line["mode"] != "invalid" {
            assert_eq!(line["value"]["tool"], name, "{line}");
        }
    }
}

#[test]
fn every_capture_shape_with_tool_selection() {
    for shape in TWO_TOOL_SHAPES {
        let capture = format!("tools-list-shapes/{shape}");
        for name in ["pick", "other"] {
            let run = gen_tools(&capture, &["--tool", name, "--count", "5"]);
            check_tool_lines(&run, name);
        }
    }
}

#[test]
fn single_tool_needs_no_tool_flag() {
    let run = gen_tools("tools-list-shapes/single-tool.json", &["--count", "5"]);
    check_tool_lines(&run, "pick");
    let named =
        gen_tools("tools-list-shapes/single-tool.json", &["--tool", "pick", "--count", "5"]);
    assert_eq!(run.stdout, named.stdout);
}

#[test]
fn same_schema_same_output_whatever_the_shape() {
    let reference = gen_tools("tools-list-shapes/tools-object.json", &["--tool", "pick"]);
    reference.assert_code(code::SUCCESS);
    for shape in TWO_TOOL_SHAPES {
        let run = gen_tools(&format!("tools-list-shapes/{shape}"), &["--tool", "pick"]);
        assert_eq!(run.stdout, reference.stdout, "{shape}");
    }
}

#[test]
fn output_schema_flag() {
    let run = gen_tools(
        "tools-list-shapes/jsonrpc.json",
        &["--tool", "pick", "--output-schema", "--count", "5"],
    );
    run.assert_code(code::SUCCESS);
    assert!(check_lines(&shape_schema("pick", "outputSchema"), &run) > 0);

    let missing =
        gen_tools("tools-list-shapes/jsonrpc.json", &["--tool", "other", "--output-schema"]);
    missing.assert_code(code::USAGE);
    assert!(missing.stderr.contains("has no outputSchema"), "{}", missing.stderr);
}

#[test]
fn missing_tool_flag_with_several_tools_lists_the_names() {
    let run = gen_tools("tools-list-shapes/array.json", &[]);
    run.assert_code(code::USAGE);
    assert!(run.stderr.contains("--tool NAME: pick, other"), "{}", run.stderr);

    let run = gen_tools(EVERYTHING, &[]);
    run.assert_code(code::USAGE);
    for name in ["echo", "get-annotated-message", "get-sum", "simulate-research-query"] {
        assert!(run.stderr.contains(name), "{name} not listed: {}", run.stderr);
    }
    assert!(run.stdout.is_empty());
}

#[test]
fn unknown_tool_exits_4_listing_the_names() {
    let run = gen_tools("tools-list-shapes/pages.json", &["--tool", "nope"]);
    run.assert_code(code::NO_TOOLS);
    assert!(run.stderr.contains("no tool named `nope`; available: pick, other"), "{}", run.stderr);
}

#[test]
fn empty_capture_exits_4() {
    let run = gen_tools("tools-list-shapes/empty.json", &[]);
    run.assert_code(code::NO_TOOLS);
    assert!(run.stderr.contains("lists no tools"), "{}", run.stderr);
}

#[test]
fn malformed_captures_exit_2_saying_what_is_wrong() {
    for (contents, expected) in [
        ("{\"tools\": [", "not valid JSON"),
        ("{\"tools\": {}}", "`tools` is an object, not an array"),
        ("{\"tools\": [{\"title\": \"x\"}]}", "`tools[0]` has no `name`"),
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"error\": {\"code\": -1, \"message\": \"boom\"}}",
            "boom",
        ),
        ("\"tools\"", "found a string"),
        ("", "empty"),
    ] {
        let file = TempFile::new("capture.json", contents);
        let run = mcp_fuzz([OsStr::new("gen"), OsStr::new("--tools"), file.path().as_os_str()]);
        assert_eq!(run.code, code::USAGE, "{contents}: {}", run.stderr);
        assert!(run.stderr.contains("failed to read a tools/list capture"), "{}", run.stderr);
        assert!(run.stderr.contains(expected), "{contents}: {}", run.stderr);
    }
}

#[test]
fn readme_quick_start_tool() {
    let run = gen_tools(EVERYTHING, &["--tool", "get-annotated-message", "--count", "5"]);
    run.assert_code(code::SUCCESS);
    let capture = fixture_json(EVERYTHING);
    let tool = capture["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|tool| tool["name"] == "get-annotated-message")
        .expect("the quick-start tool is in the capture");
    check_lines(&tool["inputSchema"], &run);
}

#[test]
fn corpus_tools_with_output_schemas() {
    let run = gen_tools(EVERYTHING, &["--tool", "get-structured-content", "--output-schema"]);
    run.assert_code(code::SUCCESS);
    let capture = fixture_json(EVERYTHING);
    let tool = capture["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|tool| tool["name"] == "get-structured-content")
        .expect("tool in capture");
    check_lines(&tool["outputSchema"], &run);
}
