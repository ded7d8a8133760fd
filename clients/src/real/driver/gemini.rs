//! Gemini CLI: `gemini -p hi --debug --output-format json -m gemini-2.5-flash` with
//! `GOOGLE_GEMINI_BASE_URL` at the loopback stand-in and `$HOME/.gemini/settings.json` holding the
//! server. `-m` avoids a model-routing call that wants a JSON answer; `--debug` is the only way
//! listing failures show (on stderr, with the validation issues as JSON). The tools are
//! `body.tools[].functionDeclarations[]` named `mcp_srv_<tool>`, with the schema in
//! `parametersJsonSchema`.

use super::{Culprit, Failed, ListingLoss, Outcome, Run, command, drive_agent, tool};
use crate::real::RealError;
use crate::real::names::SERVER_KEY;
use crate::real::provider::{Provider, Wire};
use crate::real::spec::ReasonSource;
use serde_json::{Value, json};

const DISCOVERY_ERROR: &str = "Error discovering tools from ";

/// Gemini CLI's own tools that its headless mode (`-p`) leaves out, by name; an MCP tool with the
/// same bare name is left out with them, without a word (seen with 0.61.0: each name served by
/// the stand-in next to `read_file`, `glob` and others that stay).
const HEADLESS_EXCLUDED: &[&str] =
    &["write_file", "replace", "run_shell_command", "web_fetch", "ask_user", "write_todos"];

/// Why Gemini CLI left out `name` without a word, when the name says it.
pub(super) fn silent_reason(name: &str) -> Option<String> {
    HEADLESS_EXCLUDED.contains(&name).then(|| {
        format!(
            "`{name}` is also the name of one of Gemini CLI's own tools, which headless mode \
             leaves out, taking the MCP tool of that name with it; seen with 0.61.0: rename the \
             tool"
        )
    })
}

pub(super) fn run(run: &Run<'_>) -> Result<Outcome, Failed> {
    let provider =
        Provider::start(Wire::Gemini).map_err(|source| RealError::Provider { source })?;
    let home = run.scratch.dir("home")?;
    let work = run.scratch.dir("work")?;
    let server = run.server;
    let timeout_ms = u64::try_from(run.timeout.as_millis()).unwrap_or(u64::MAX);
    // Folder trust off: otherwise headless mode exits 55 in an untrusted directory.
    let settings = json!({
        "mcpServers": {SERVER_KEY: {
            "command": server.program, "args": server.args, "env": server.env,
            "trust": true, "timeout": timeout_ms,
        }},
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false},
    });
    run.scratch.write("home/.gemini/settings.json", settings.to_string().as_bytes())?;
    let mut c = command(run, &home, &work);
    // GEMINI_CLI_NO_RELAUNCH: otherwise it re-spawns itself with larger heap flags (a second
    // node start-up).
    c.env("GOOGLE_GEMINI_BASE_URL", provider.base_url())
        .env("GEMINI_API_KEY", "dummy-key")
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .args(["-p", "hi", "--debug", "--output-format", "json", "-m", "gemini-2.5-flash"]);
    let (body, output) = drive_agent(run, &provider, c)?;
    let prefix = format!("mcp_{SERVER_KEY}_");
    let mut tools = Vec::new();
    for group in body.get("tools").and_then(Value::as_array).into_iter().flatten() {
        for declaration in
            group.get("functionDeclarations").and_then(Value::as_array).into_iter().flatten()
        {
            let Some(name) = declaration.get("name").and_then(Value::as_str) else { continue };
            if !name.starts_with(&prefix) {
                continue;
            }
            let (schema, field) = match declaration.get("parametersJsonSchema") {
                Some(s) => (Some(s), "parametersJsonSchema"),
                None => (declaration.get("parameters"), "parameters"),
            };
            let mut t = tool(name, declaration.get("description"), schema);
            if field == "parameters" {
                t.notes.push(
                    "sent as the OpenAPI-subset `parameters`, not `parametersJsonSchema`".into(),
                );
            }
            tools.push(t);
        }
    }
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut outcome = Outcome {
        request: body,
        tools,
        lost: Vec::new(),
        loss: discovery_failure(&stderr),
        notes: Vec::new(),
    };
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("Truncating MCP tool name \"")
            && let Some((full, _)) = rest.split_once('"')
        {
            let note = format!("name cut to fit 64 characters (was {full})");
            let shown = crate::real::names::shown(
                crate::real::RealClient::GeminiCli,
                full.strip_prefix(&prefix).unwrap_or(full),
            );
            if let Some(t) = outcome.tools.iter_mut().find(|t| t.shown_name == shown)
                && !t.notes.contains(&note)
            {
                t.notes.push(note);
            }
        } else if line.starts_with("[MCP error]")
            && !line.contains(DISCOVERY_ERROR)
            && !line.contains("Error during discovery")
            && outcome.notes.len() < 10
        {
            outcome.notes.push(line.trim().to_owned());
        }
    }
    Ok(outcome)
}

/// `[MCP error] Error discovering tools from srv: [<zod issues as JSON>] $ZodError...`: the whole
/// listing failed; each issue's `path` is `["tools", N, ...]`.
fn discovery_failure(stderr: &str) -> Option<ListingLoss> {
    let marker = format!("{DISCOVERY_ERROR}{SERVER_KEY}: ");
    let start = stderr.find(&marker)? + marker.len();
    let rest = &stderr[start..];
    let issues: Option<Value> =
        serde_json::Deserializer::from_str(rest).into_iter::<Value>().next().and_then(Result::ok);
    let first_line = rest.lines().next().unwrap_or_default().trim();
    let Some(Value::Array(issues)) = issues else {
        return Some(ListingLoss {
            reason: first_line.to_owned(),
            source: ReasonSource::Stderr,
            culprits: Vec::new(),
        });
    };
    let mut culprits = Vec::new();
    let mut summary = Vec::new();
    for issue in &issues {
        let path: Vec<String> = issue
            .get("path")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
            .collect();
        let message = issue.get("message").and_then(Value::as_str).unwrap_or("invalid");
        let text = format!("{}: {message}", path.join("."));
        let index =
            issue.pointer("/path/1").and_then(Value::as_u64).and_then(|i| usize::try_from(i).ok());
        if path.first().is_some_and(|p| p == "tools")
            && let Some(index) = index
        {
            culprits.push(Culprit { name: None, index: Some(index), reason: text.clone() });
        }
        summary.push(text);
    }
    Some(ListingLoss {
        reason: format!("tools/list result rejected: {}", summary.join(", ")),
        source: ReasonSource::Stderr,
        culprits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_errors_name_the_tool_indices() {
        let stderr = "noise\n[MCP error] Error discovering tools from srv: [\n  {\n    \"code\": \"invalid_value\",\n    \
                      \"path\": [\"tools\", 3, \"inputSchema\", \"type\"],\n    \"message\": \"Invalid input: expected \\\"object\\\"\"\n  }\n] $ZodError: [\n";
        let loss = discovery_failure(stderr).expect("a failure");
        assert_eq!(loss.culprits.len(), 1);
        assert_eq!(loss.culprits[0].index, Some(3));
        assert_eq!(
            loss.culprits[0].reason,
            "tools.3.inputSchema.type: Invalid input: expected \"object\""
        );
        assert!(discovery_failure("all fine").is_none());
    }
}
