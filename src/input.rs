//! Reading the files a command is given (`-` is standard input): schemas, captures, snapshots,
//! baselines, reports; how messages name them; and picking one tool out of a capture.

use crate::errors::CliError;
use mcp_fuzz_compat::capture::{Capture, Tool, capture_like, names, parse_capture};
use mcp_fuzz_report::baseline::{Baseline, Key};
use serde_json::Value;
use std::io;
use std::path::Path;

/// How messages name an input path.
pub fn origin(path: &Path) -> String {
    if is_stdin(path) { "standard input".to_owned() } else { format!("`{}`", path.display()) }
}

fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// The text of `path` (`-`: standard input); `origin` names it in the error.
pub fn read(path: &Path, origin: &str) -> Result<String, CliError> {
    let text = if is_stdin(path) {
        io::read_to_string(io::stdin().lock())
    } else {
        std::fs::read_to_string(path)
    };
    text.map_err(|error| CliError::Read { origin: origin.to_owned(), error })
}

/// The text of `path`, or `None` when it does not exist (a first `--update-baseline`).
fn read_optional(path: &Path, origin: &str) -> Result<Option<String>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(CliError::Read { origin: origin.to_owned(), error }),
    }
}

/// Reads `--baseline FILE`; a missing file is an empty baseline when `may_be_missing` (the
/// first `--update-baseline`).
pub fn read_baseline<K: Key>(path: &Path, may_be_missing: bool) -> Result<Baseline<K>, CliError> {
    let origin = format!("baseline {}", path.display());
    let text =
        if may_be_missing { read_optional(path, &origin)? } else { Some(read(path, &origin)?) };
    match text {
        None => Ok(Baseline::default()),
        Some(t) => Baseline::parse(&t, &path.display().to_string())
            .map_err(|e| CliError::Usage(e.to_string())),
    }
}

/// A saved `tools/list` answer in any shape `compat::capture` reads, with its origin.
pub fn read_capture(path: &Path) -> Result<(Capture, String), CliError> {
    let origin = origin(path);
    let text = read(path, &origin)?;
    let capture = parse_capture(&text)
        .map_err(|error| CliError::Capture { origin: origin.clone(), error })?;
    Ok((capture, origin))
}

/// A `--schema FILE`: one JSON Schema, not a capture or a tool. Returns it with its origin.
pub fn read_schema(path: &Path) -> Result<(Value, String), CliError> {
    let origin = origin(path);
    let text = read(path, &origin)?;
    let schema: Value = serde_json::from_str(&text)
        .map_err(|error| CliError::SchemaJson { origin: origin.clone(), error })?;
    if let Some(what) = capture_like(&schema) {
        return Err(CliError::SchemaIsCapture { origin, what });
    }
    Ok((schema, origin))
}

/// The tool named by `--tool`, or the only tool of the capture.
pub fn select(tools: Vec<Tool>, name: Option<&str>, origin: &str) -> Result<Tool, CliError> {
    if tools.is_empty() {
        return Err(CliError::NoTools { origin: origin.to_owned() });
    }
    match name {
        Some(name) => match tools.iter().position(|tool| tool.name == name) {
            Some(index) => Ok(tools.into_iter().nth(index).expect("index from position")),
            None => Err(CliError::UnknownTool {
                origin: origin.to_owned(),
                name: name.to_owned(),
                available: names(&tools),
            }),
        },
        None if tools.len() == 1 => Ok(tools.into_iter().next().expect("exactly one tool")),
        None => Err(CliError::ToolRequired {
            origin: origin.to_owned(),
            count: tools.len(),
            available: names(&tools),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            input_schema: Some(json!({})),
            output_schema: None,
            raw: json!({"name": name}),
        }
    }

    #[test]
    fn select_picks_the_only_tool_or_the_named_one_and_errors_list_the_names() {
        assert_eq!(select(vec![tool("a")], None, "f").expect("one tool").name, "a");
        let tools = vec![tool("a"), tool("b")];
        assert_eq!(select(tools, Some("b"), "f").expect("named").name, "b");
        let message = select(vec![tool("a"), tool("b")], None, "`f`").expect_err("ambiguous");
        assert_eq!(message.to_string(), "`f` lists 2 tools; choose one with --tool NAME: a, b");
        let message = select(vec![tool("a")], Some("z"), "`f`").expect_err("unknown");
        assert_eq!(message.to_string(), "`f` has no tool named `z`; available: a");
        assert!(matches!(select(vec![], Some("a"), "f"), Err(CliError::NoTools { .. })));
    }
}
