//! Codex CLI: `codex exec --skip-git-repo-check --ephemeral --color never hi` with a throwaway
//! `CODEX_HOME` whose `config.toml` points a `fake` Responses-API provider at the loopback
//! stand-in. The tools sit in `body.tools[]` as the namespace `mcp__srv`
//! (`{"type":"namespace","tools":[{"type":"function","name","strict":false,"parameters"}]}`); a
//! tool it cannot convert is skipped with a `WARN` line on stderr (`RUST_LOG=warn`).

use super::{Failed, Outcome, Run, command, drive_agent, quoted, tool};
use crate::real::RealError;
use crate::real::names::SERVER_KEY;
use crate::real::provider::{Provider, Wire};
use crate::real::spec::{LostTool, ReasonSource};
use serde_json::Value;
use std::fmt::Write as _;

/// The variable holding the dummy key (`env_key` of the fake provider).
const KEY_VAR: &str = "MCP_FUZZ_STANDIN_KEY";

fn config(run: &Run<'_>, base_url: &str) -> String {
    let server = run.server;
    let args: Vec<String> = server.args.iter().map(|a| quoted(a)).collect();
    let env: Vec<String> =
        server.env.iter().map(|(k, v)| format!("{} = {}", quoted(k), quoted(v))).collect();
    let mut toml = String::new();
    // Without the `[features]` switches it makes background DNS lookups that fail but cost time.
    let _ = write!(
        toml,
        "model = \"gpt-5\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
         sandbox_mode = \"read-only\"\ncheck_for_update_on_startup = false\n\n\
         [model_providers.fake]\nname = \"fake\"\nbase_url = {}\nenv_key = \"{KEY_VAR}\"\n\
         wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n\
         [mcp_servers.{SERVER_KEY}]\ncommand = {}\nargs = [{}]\nstartup_timeout_sec = {}\n\
         required = true\n\
         env = {{ {} }}\n\n[analytics]\nenabled = false\n\n\
         [features]\nplugins = false\nremote_plugin = false\napps = false\ngoals = false\n\
         image_generation = false\n",
        quoted(&format!("{base_url}/v1")),
        quoted(&server.program.to_string_lossy()),
        args.join(", "),
        run.timeout.as_secs().max(1),
        env.join(", "),
    );
    toml
}

pub(super) fn run(run: &Run<'_>) -> Result<Outcome, Failed> {
    let provider =
        Provider::start(Wire::OpenAiResponses).map_err(|source| RealError::Provider { source })?;
    let home = run.scratch.dir("home")?;
    let work = run.scratch.dir("work")?;
    let codex_home = run.scratch.dir("home/.codex")?;
    run.scratch.write("home/.codex/config.toml", config(run, &provider.base_url()).as_bytes())?;
    let mut c = command(run, &home, &work);
    c.env("CODEX_HOME", &codex_home).env(KEY_VAR, "dummy-key").env("RUST_LOG", "warn").args([
        "exec",
        "--skip-git-repo-check",
        "--ephemeral",
        "--color",
        "never",
        "hi",
    ]);
    let (body, output) = drive_agent(run, &provider, c)?;
    let namespace = format!("mcp__{SERVER_KEY}");
    let mut tools = Vec::new();
    for entry in body.get("tools").and_then(Value::as_array).into_iter().flatten() {
        let kind = entry.get("type").and_then(Value::as_str);
        let name = entry.get("name").and_then(Value::as_str).unwrap_or_default();
        if kind == Some("namespace") && name == namespace {
            for function in entry.get("tools").and_then(Value::as_array).into_iter().flatten() {
                let shown = function.get("name").and_then(Value::as_str).unwrap_or_default();
                let mut t = tool(shown, function.get("description"), function.get("parameters"));
                t.namespace = Some(namespace.clone());
                t.strict = function.get("strict").and_then(Value::as_bool);
                tools.push(t);
            }
        } else if kind == Some("function") && name.starts_with(&format!("{namespace}__")) {
            // An older layout: MCP tools as top-level functions named `mcp__srv__<tool>`.
            let bare = &name[namespace.len() + 2..];
            let mut t = tool(bare, entry.get("description"), entry.get("parameters"));
            t.namespace = Some(namespace.clone());
            t.strict = entry.get("strict").and_then(Value::as_bool);
            tools.push(t);
        }
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut lost = Vec::new();
    let mut notes = Vec::new();
    for line in stderr.lines() {
        // `WARN codex_core::mcp_tool_exposure: Skipping MCP tool `mcp__srv<name>`: <why>`.
        if let Some(rest) = line.split("Skipping MCP tool `").nth(1)
            && let Some((shown, why)) = rest.split_once('`')
        {
            let bare = shown.strip_prefix(&namespace).unwrap_or(shown);
            let bare = bare.strip_prefix("__").unwrap_or(bare);
            lost.push(LostTool {
                name: bare.to_owned(),
                reason: why.trim_start_matches(':').trim().to_owned(),
                source: ReasonSource::Stderr,
            });
        } else if (line.contains(" WARN ") || line.contains(" ERROR "))
            && line.to_ascii_lowercase().contains("mcp")
        {
            notes.push(line.trim().to_owned());
        }
    }
    Ok(Outcome { request: body, tools, lost, loss: None, notes })
}
