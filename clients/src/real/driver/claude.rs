//! Claude Code: `claude -p hi --bare --strict-mcp-config --mcp-config FILE ...` with
//! `ANTHROPIC_BASE_URL` at the loopback stand-in. `--bare` keeps MCP tools from being deferred
//! (without it the first request carries only their names). The tools are `body.tools[]` named
//! `mcp__srv__<tool>`. It validates the listing and writes what it skips, or why the whole
//! listing failed, as JSON lines under `$HOME/.cache/claude-cli-nodejs/<cwd>/mcp-logs-srv/`.

use super::{
    Culprit, Failed, ListingLoss, Outcome, Run, command, drive_agent, index_after_tools, tool,
};
use crate::real::RealError;
use crate::real::names::SERVER_KEY;
use crate::real::provider::{Provider, Wire};
use crate::real::spec::{LostTool, ReasonSource};
use serde_json::{Value, json};
use std::path::Path;

pub(super) fn run(run: &Run<'_>) -> Result<Outcome, Failed> {
    let provider = Provider::start(Wire::AnthropicMessages)
        .map_err(|source| RealError::Provider { source })?;
    let home = run.scratch.dir("home")?;
    let work = run.scratch.dir("work")?;
    let config_dir = run.scratch.dir("home/.claude")?;
    let server = run.server;
    let mcp = json!({"mcpServers": {SERVER_KEY: {
        "type": "stdio",
        "command": server.program,
        "args": server.args,
        "env": server.env,
    }}});
    let mcp_config = run.scratch.write("mcp.json", mcp.to_string().as_bytes())?;
    let mut c = command(run, &home, &work);
    c.env("ANTHROPIC_BASE_URL", provider.base_url())
        .env("ANTHROPIC_API_KEY", "dummy-key")
        .env("CLAUDE_CONFIG_DIR", &config_dir)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("MCP_TIMEOUT", run.timeout.as_millis().to_string())
        .args(["-p", "hi", "--bare", "--strict-mcp-config", "--mcp-config"])
        .arg(&mcp_config)
        .args([
            "--no-session-persistence",
            "--output-format",
            "json",
            "--model",
            "claude-sonnet-4-5",
        ]);
    let (body, _output) = drive_agent(run, &provider, c)?;
    let prefix = format!("mcp__{SERVER_KEY}__");
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let name = t.get("name").and_then(Value::as_str)?;
            name.starts_with(&prefix)
                .then(|| tool(name, t.get("description"), t.get("input_schema")))
        })
        .collect();
    let mut outcome =
        Outcome { request: body, tools, lost: Vec::new(), loss: None, notes: Vec::new() };
    read_logs(&home, &mut outcome);
    Ok(outcome)
}

/// The JSON lines of every `mcp-logs-srv` file under `home`, in file-name (time) order.
fn log_entries(home: &Path) -> Vec<Value> {
    let mut files = Vec::new();
    let base = home.join(".cache/claude-cli-nodejs");
    for project in std::fs::read_dir(&base).into_iter().flatten().flatten() {
        let dir = project.path().join(format!("mcp-logs-{SERVER_KEY}"));
        for file in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            files.push(file.path());
        }
    }
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).collect::<Vec<_>>()
        })
        .collect()
}

/// Skipped tools, a failed listing (with the indices its validation error names) and per-tool
/// normalisations, from the client's MCP log.
fn read_logs(home: &Path, outcome: &mut Outcome) {
    for entry in log_entries(home) {
        if let Some(error) = entry.get("error").and_then(Value::as_str) {
            if let Some(rest) = error.strip_prefix("Skipping tool \"")
                && let Some((name, why)) = rest.split_once("\": ")
            {
                outcome.lost.push(LostTool {
                    name: name.to_owned(),
                    reason: why
                        .trim_end_matches(" Other tools from this server remain available.")
                        .to_owned(),
                    source: ReasonSource::ClientLog,
                });
            } else if let Some(why) = error.strip_prefix("Failed to fetch tools: ") {
                outcome.loss = Some(ListingLoss {
                    reason: why.to_owned(),
                    source: ReasonSource::ClientLog,
                    culprits: culprits(why),
                });
            } else {
                outcome.notes.push(error.to_owned());
            }
        } else if let Some(debug) = entry.get("debug").and_then(Value::as_str)
            && let Some(rest) = debug.strip_prefix("Normalized input schema for tool \"")
            && let Some((name, what)) = rest.split_once("\" ")
        {
            let shown = crate::real::names::shown(crate::real::RealClient::ClaudeCode, name);
            let note = format!("normalised by the client {what}");
            match outcome.tools.iter_mut().find(|t| t.shown_name == shown) {
                Some(t) => t.notes.push(note),
                None => outcome.notes.push(format!("{name}: {note}")),
            }
        }
    }
}

/// `Invalid result for tools/list: tools.1.inputSchema.type: <why>, tools.3...`: one culprit per
/// issue, by index.
fn culprits(message: &str) -> Vec<Culprit> {
    let mut found = Vec::new();
    let mut starts: Vec<usize> = message.match_indices("tools.").map(|(i, _)| i).collect();
    starts.retain(|&i| message[i + 6..].starts_with(|c: char| c.is_ascii_digit()));
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(message.len());
        let issue = message[start..end].trim_end_matches([',', ' ']).to_owned();
        if let Some(index) = index_after_tools(&issue) {
            found.push(Culprit { name: None, index: Some(index), reason: issue });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_issues_name_their_tool_indices() {
        let found = culprits(
            "Invalid result for tools/list: tools.1.inputSchema.type: Invalid input: expected \"object\", \
             tools.12.inputSchema.type: Invalid input: expected \"object\"",
        );
        let indices: Vec<usize> = found.iter().filter_map(|c| c.index).collect();
        assert_eq!(indices, [1, 12]);
        assert_eq!(found[0].reason, "tools.1.inputSchema.type: Invalid input: expected \"object\"");
    }
}
