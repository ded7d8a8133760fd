//! MCP Inspector CLI: `inspector --cli --format json --method tools/list -e K=V -- CMD ARGS`.
//! It prints `{"result": {"tools": [...]}}` and leaves out, without a word, tools whose
//! `inputSchema` it does not accept (the capture reports them as lost, silently).

use super::{Failed, Outcome, Run, command, spawn, timeout, tool};
use crate::real::RealError;
use serde_json::Value;

/// The Inspector CLI with `method` (and its extra arguments) against the run's server.
fn inspector(run: &Run<'_>, method: &[&str]) -> Result<std::process::Command, Failed> {
    let home = run.scratch.dir("home")?;
    let work = run.scratch.dir("work")?;
    let mut c = command(run, &home, &work);
    // `--cli` must come first.
    c.args(["--cli", "--format", "json", "--method"]).args(method);
    for (k, v) in &run.server.env {
        c.arg("-e").arg(format!("{k}={v}"));
    }
    c.arg("--").arg(&run.server.program).args(&run.server.args);
    Ok(c)
}

/// `tools/call` of `tool` with `arguments` (passed verbatim with `--tool-args-json`): what the
/// CLI printed on stdout, or why it did not finish.
pub(super) fn call(run: &Run<'_>, tool: &str, arguments: &Value) -> Result<String, Failed> {
    let json = arguments.to_string();
    let c = inspector(run, &["tools/call", "--tool-name", tool, "--tool-args-json", &json])?;
    let mut proc = spawn(run, c)?;
    let status = proc.wait_until(run.deadline);
    let output = proc.finish();
    if status.is_none() {
        return Err(Failed::with_stderr(timeout(run, "calling a tool"), output.stderr));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

pub(super) fn run(run: &Run<'_>) -> Result<Outcome, Failed> {
    let c = inspector(run, &["tools/list"])?;
    let mut proc = spawn(run, c)?;
    let status = proc.wait_until(run.deadline);
    let output = proc.finish();
    if status.is_none() {
        return Err(Failed::with_stderr(timeout(run, "listing tools"), output.stderr));
    }
    let document: Option<Value> = serde_json::from_slice(&output.stdout).ok();
    let Some(tools) =
        document.as_ref().and_then(|d| d.pointer("/result/tools")).and_then(Value::as_array)
    else {
        let said = document
            .as_ref()
            .and_then(|d| d.pointer("/error/message"))
            .and_then(Value::as_str)
            .map_or_else(
                || String::from_utf8_lossy(&output.stdout).chars().take(300).collect(),
                str::to_owned,
            );
        let said = if said.trim().is_empty() { "(nothing on stdout)".to_owned() } else { said };
        let reason = format!(
            "{}, no `result.tools` in its output: {said}",
            status.map_or_else(|| "exit status unknown".to_owned(), |s| s.to_string())
        );
        return Err(Failed::with_stderr(
            RealError::NoOutput { client: run.install.client, reason },
            output.stderr,
        ));
    };
    let tools = tools
        .iter()
        .map(|t| {
            let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
            let mut captured = tool(name, t.get("description"), t.get("inputSchema"));
            captured.server_name = Some(name.to_owned());
            captured.output_schema = t.get("outputSchema").filter(|o| !o.is_null()).cloned();
            captured
        })
        .collect();
    let mut notes = Vec::new();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if let Some(line) = stderr.lines().find(|l| l.starts_with("Schema portability:")) {
        notes.push(line.trim().to_owned());
    }
    Ok(Outcome {
        request: document.unwrap_or(Value::Null),
        tools,
        lost: Vec::new(),
        loss: None,
        notes,
    })
}
