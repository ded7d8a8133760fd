//! `mcp-fuzz call`: one tool, once, judged as `run` judges it; the replay line of a finding.

use crate::cli::CallArgs;
use crate::errors::CliError;
use crate::exit_code;
use crate::output::write_stdout;
use crate::{config, session};
use mcp_fuzz_engine::server::Keep;
use serde_json::{Map, Value};

/// `mcp-fuzz call`.
pub fn run(args: &CallArgs) -> anyhow::Result<u8> {
    let spec = config::server(&args.target)?;
    let arguments: Map<String, Value> = serde_json::from_str(&args.arguments)
        .map_err(|e| CliError::Usage(format!("--args must be a JSON object: {e}")))?;
    let outcome = session::block_on(async {
        let mut server = session::start(&spec).await?;
        let called = server.call(&args.tool, &arguments, None, Keep::default()).await;
        server.close().await;
        Ok(called.map_err(|e| session::start_error(&e, &spec.target))?.outcome)
    })?;
    let mut text = serde_json::to_string_pretty(&outcome).expect("an outcome serialises");
    text.push('\n');
    write_stdout(&text)?;
    Ok(if outcome.is_failure() { exit_code::FINDINGS } else { exit_code::SUCCESS })
}
