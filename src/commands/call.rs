//! `mcp-fuzz call`: one tool, once, judged as `run` judges it; the replay line of a finding.
//! Prints `{"outcome": ..., "result": ...}`: the judgement and, when the server answered with a
//! result, that result as it came (content, structuredContent, isError).

use crate::cli::CallArgs;
use crate::errors::CliError;
use crate::exit_code;
use crate::output::write_stdout;
use crate::{config, session};
use mcp_fuzz_engine::server::Keep;
use serde_json::{Map, Value, json};

/// `mcp-fuzz call`.
pub fn run(args: &CallArgs) -> anyhow::Result<u8> {
    let spec = config::server(&args.target)?;
    let arguments: Map<String, Value> = serde_json::from_str(&args.arguments)
        .map_err(|e| CliError::Usage(format!("--args must be a JSON object: {e}")))?;
    let keep = Keep { result: true, ..Keep::default() };
    let called = session::block_on(async {
        let mut server = session::start(&spec).await?;
        let called = server.call(&args.tool, &arguments, None, keep).await;
        server.close().await;
        Ok(called.map_err(|e| session::start_error(&e, &spec.target))?)
    })?;
    let outcome = called.outcome;
    let mut printed = json!({ "outcome": outcome });
    if let Some(result) = called.result {
        printed["result"] = result;
    }
    let mut text = serde_json::to_string_pretty(&printed).expect("JSON values serialise");
    text.push('\n');
    write_stdout(&text)?;
    Ok(if outcome.is_failure() { exit_code::FINDINGS } else { exit_code::SUCCESS })
}
